// Package client is an OpenAI-compatible streaming client that measures
// each request: time to first token, the time of every content chunk, the
// end of the stream, token counts, and how it failed if it did.
package client

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fastjson"

	"github.com/benchci/benchci/internal/redact"
	"github.com/benchci/benchci/internal/untrusted"
	"github.com/benchci/benchci/internal/words"
)

// API names the OpenAI-compatible API a client speaks. The suite's own
// kind (suite.API) converts to it; the client does not import the suite.
type API string

// The APIs.
const (
	Chat        API = "chat"
	Completions API = "completions"
	// Embeddings is not streamed: its answers are vectors, not tokens.
	Embeddings API = "embeddings"
)

// Options configure a Client.
type Options struct {
	// BaseURL is the server's root, e.g. http://127.0.0.1:8000.
	BaseURL string
	// API is Chat, Completions or Embeddings.
	API API
	// KeepText keeps each answer's text and tool call in the result, for
	// checking structured answers; off, only counts are kept.
	KeepText bool
	// Model is sent as "model".
	Model string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// IgnoreEOS asks for exactly max_tokens (ignore_eos and min_tokens, as
	// vLLM and SGLang accept), so output lengths hold.
	IgnoreEOS bool
	// Extra is merged into every body.
	Extra map[string]any
	// Timeout bounds a request from send to the end of its stream.
	Timeout time.Duration
	// ConnectTimeout bounds a new connection's dial (default 30 s);
	// FirstTokenTimeout the wait from send to the first output chunk;
	// IdleTimeout the longest gap between chunks after it (0: unbounded
	// but by Timeout).
	ConnectTimeout, FirstTokenTimeout, IdleTimeout time.Duration
	// MaxConns bounds connections to the server (0: no bound).
	MaxConns int
	// MaxLine bounds one SSE line (default 8 MiB); MaxStream one response
	// body (default 256 MiB).
	MaxLine   int
	MaxStream int64
	// MaxChunks bounds the content chunks kept per stream (default 2^18):
	// each costs 12 bytes of timing and count, and a stream of tiny chunks
	// within MaxStream could otherwise hold hundreds of MB.
	MaxChunks int
	// Counter counts tokens in streamed text when the server gives no usage
	// (default: Words).
	Counter Counter
	// UntextedTokens: the server may generate tokens it never streams as
	// text (Ollama drops tokens that are not valid UTF-8 on their own,
	// which byte-token vocabularies make often), so a usage far above the
	// text's bytes can be true; it is then bounded by the stream's time
	// too (see plausibleUsage).
	UntextedTokens bool
	// TLS configures https targets (default: the system's roots).
	TLS *tls.Config
}

// Counter counts tokens in text.
type Counter interface {
	Count(text string) int
}

// CounterFunc adapts a function to Counter.
type CounterFunc func(string) int

// Count calls f.
func (f CounterFunc) Count(s string) int { return f(s) }

// Words counts whitespace-separated words: a rough tokenizer, exact for the
// simulator, which emits one word per token.
var Words Counter = CounterFunc(words.Count)

// Client sends requests and measures their streams. It is safe for
// concurrent use.
type Client struct {
	opts       Options
	continuous bool
	// stops: the bodies ask for stop sequences (Extra's "stop"), so a
	// finish_reason stop may be one of them rather than the end token.
	stops    bool
	tr       *transport
	bufs     sync.Pool // *bufio.Reader
	kernel   atomic.Int64
	readTime atomic.Int64
}

// New returns a client.
func New(opts Options) (*Client, error) {
	if opts.API != Chat && opts.API != Completions && opts.API != Embeddings {
		return nil, fmt.Errorf("client: unknown API %q", opts.API)
	}
	if opts.MaxLine == 0 {
		opts.MaxLine = 8 << 20
	}
	if opts.MaxChunks == 0 {
		opts.MaxChunks = 1 << 18
	}
	if opts.MaxStream == 0 {
		opts.MaxStream = 256 << 20
	}
	if opts.Counter == nil {
		opts.Counter = Words
	}
	path := "/v1/chat/completions"
	switch opts.API {
	case Completions:
		path = "/v1/completions"
	case Embeddings:
		path = "/v1/embeddings"
	}
	if strings.ContainsAny(opts.APIKey, "\r\n") {
		return nil, errors.New("client: API key contains a line break")
	}
	c := &Client{opts: opts, stops: asksStop(opts.Extra["stop"])}
	if opts.BaseURL != "" { // without one, the client only builds bodies
		tr, err := newTransport(opts.BaseURL, path, opts.MaxConns, opts.TLS, opts.ConnectTimeout)
		if err != nil {
			return nil, err
		}
		c.tr = tr
	}
	// 2 KiB holds several chunks of any engine; longer lines span refills.
	c.bufs.New = func() any { return bufio.NewReaderSize(nil, 2<<10) }
	return c, nil
}

// Timing counts where content chunks' times came from.
type Timing struct {
	// Kernel chunks were stamped by the kernel on arrival; Read chunks got
	// the time their read returned (no stamp on this platform or socket).
	Kernel, Read int64
}

// Timing returns the counts so far.
func (c *Client) Timing() Timing { return Timing{c.kernel.Load(), c.readTime.Load()} }

// ClosesAfterResponse reports whether the server was found to close every
// connection after its response, so the client stopped reusing them.
func (c *Client) ClosesAfterResponse() bool { return c.tr.noPool.Load() }

// SetIgnoreEOS changes whether bodies ask for ignore_eos/min_tokens; call
// before building bodies.
func (c *Client) SetIgnoreEOS(on bool) { c.opts.IgnoreEOS = on }

// SetUntextedTokens says whether the server may generate tokens it does
// not stream as text (Options.UntextedTokens).
func (c *Client) SetUntextedTokens(on bool) { c.opts.UntextedTokens = on }

// asksStop reports whether a body's "stop" asks for any stop sequence:
// a non-empty string or a list holding one.
func asksStop(v any) bool {
	switch s := v.(type) {
	case string:
		return s != ""
	case []string:
		return slices.ContainsFunc(s, func(x string) bool { return x != "" })
	case []any:
		return slices.ContainsFunc(s, func(x any) bool { return asksStop(x) })
	}
	return false
}

// SetContinuousUsage asks for usage on every chunk (vLLM's
// continuous_usage_stats), which gives exact tokens per chunk; call before
// building bodies, for engines that support it.
func (c *Client) SetContinuousUsage(on bool) { c.continuous = on }

// CloseIdle closes idle connections.
func (c *Client) CloseIdle() {
	if c.tr != nil {
		c.tr.closeIdle()
	}
}

// Message is one chat message. With Images, its content is sent as parts:
// the text, then each image as an image_url (a data URL or an address).
type Message struct {
	Role    string   `json:"role"`
	Content string   `json:"content"`
	Images  []string `json:"-"`
}

// MarshalJSON writes the content as a string, or as parts with images.
func (m Message) MarshalJSON() ([]byte, error) {
	if len(m.Images) == 0 {
		type plain Message
		return json.Marshal(plain(m))
	}
	type url struct {
		URL string `json:"url"`
	}
	type part struct {
		Type     string `json:"type"`
		Text     string `json:"text,omitempty"`
		ImageURL *url   `json:"image_url,omitempty"`
	}
	parts := make([]part, 0, 1+len(m.Images))
	if m.Content != "" {
		parts = append(parts, part{Type: "text", Text: m.Content})
	}
	for _, u := range m.Images {
		parts = append(parts, part{Type: "image_url", ImageURL: &url{URL: u}})
	}
	return json.Marshal(struct {
		Role    string `json:"role"`
		Content []part `json:"content"`
	}{m.Role, parts})
}

// BodyMessages builds the body of a streaming request whose prompt is a
// conversation; completions get the messages' contents joined by blank
// lines.
func (c *Client) BodyMessages(msgs []Message, maxTokens int) ([]byte, error) {
	return c.BodyModel("", msgs, maxTokens)
}

// BodyModel is BodyMessages for the named model rather than the client's
// ("": the client's): one model of a mix, or a LoRA adapter.
func (c *Client) BodyModel(model string, msgs []Message, maxTokens int) ([]byte, error) {
	if model == "" {
		model = c.opts.Model
	}
	if c.opts.API == Chat {
		return c.body(model, msgs, "", maxTokens)
	}
	if c.opts.API == Embeddings {
		return c.BodyEmbeddings(model, []string{Joined(msgs)})
	}
	return c.body(model, nil, Joined(msgs), maxTokens)
}

// Joined is the messages' contents as the one prompt a completions or
// embeddings body carries: separated by blank lines, roles and images
// left out.
func Joined(msgs []Message) string {
	parts := make([]string, len(msgs))
	for i, m := range msgs {
		parts[i] = m.Content
	}
	return strings.Join(parts, "\n\n")
}

// Body builds the JSON body of a streaming request for prompt and maxTokens;
// system, when not empty, goes first as a system message (chat) or before
// the prompt (completions). Bodies are built off the timed path.
func (c *Client) Body(system, prompt string, maxTokens int) ([]byte, error) {
	var msgs []Message
	if system != "" {
		msgs = append(msgs, Message{Role: "system", Content: system})
	}
	return c.BodyMessages(append(msgs, Message{Role: "user", Content: prompt}), maxTokens)
}

// HasExtra reports whether the client merges extra fields into its
// bodies (Options.Extra).
func (c *Client) HasExtra() bool { return len(c.opts.Extra) > 0 }

// API is the client's API: chat, completions or embeddings.
func (c *Client) API() API { return c.opts.API }

// BodyEmbeddings builds the body of an embeddings request for a batch of
// inputs ("": the client's model).
func (c *Client) BodyEmbeddings(model string, inputs []string) ([]byte, error) {
	if model == "" {
		model = c.opts.Model
	}
	m := make(map[string]any, 3+len(c.opts.Extra))
	for k, v := range c.opts.Extra {
		m[k] = v
	}
	m["model"], m["input"], m["encoding_format"] = model, inputs, "float"
	return json.Marshal(m)
}

func (c *Client) body(model string, msgs []Message, prompt string, maxTokens int) ([]byte, error) {
	m := make(map[string]any, 8+len(c.opts.Extra))
	for k, v := range c.opts.Extra {
		m[k] = v
	}
	m["model"] = model
	if c.opts.API == Chat {
		m["messages"] = msgs
	} else {
		m["prompt"] = prompt
	}
	m["max_tokens"] = maxTokens
	m["stream"] = true
	so := map[string]bool{"include_usage": true}
	if c.continuous {
		so["continuous_usage_stats"] = true
	}
	m["stream_options"] = so
	if c.opts.IgnoreEOS {
		m["ignore_eos"] = true
		m["min_tokens"] = maxTokens
	}
	return json.Marshal(m)
}

// Do sends one request with body and measures its stream into res, which it
// resets first. Failures are recorded in res, never returned: a failed
// request is a measurement too.
func (c *Client) Do(ctx context.Context, body []byte, id string, res *Result) {
	res.Reset()
	res.ID = id
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	if c.opts.FirstTokenTimeout > 0 || c.opts.IdleTimeout > 0 {
		var w *watchdog
		ctx, w = c.watch(ctx)
		defer w.stop()
		defer w.name(res)
	}
	var hv [4]string
	headers := hv[:0]
	if id != "" {
		if strings.ContainsAny(id, "\r\n") {
			res.Sent = time.Now()
			res.fail(ErrConnect, "request id contains a line break")
			return
		}
		headers = append(headers, "X-Request-Id", id)
	}
	if c.opts.APIKey != "" {
		headers = append(headers, "Authorization", "Bearer "+c.opts.APIKey)
	}

	res.Sent = time.Now()
	if c.tr == nil {
		res.fail(ErrConnect, "client has no base URL")
		return
	}
	resp, err := c.tr.roundTrip(ctx, body, headers)
	if err != nil {
		res.End = time.Since(res.Sent)
		kind := classify(ctx, err, ErrConnect)
		switch {
		case errors.Is(err, errHeadTooLarge):
			kind = ErrMalformed
		case localLimit(err):
			kind = ErrClientLimit
		}
		res.fail(kind, err.Error())
		return
	}
	defer resp.Close()
	res.Status = resp.StatusCode
	if refused(resp, res) {
		return
	}
	if c.opts.API == Embeddings {
		c.embeddings(resp, res, len(body))
		return
	}
	if unreadable(resp, res) {
		return
	}
	c.stream(ctx, resp, res, len(body))
}

// refused records an answer that is not a success (HTTP status not 2xx)
// and reports whether it was one.
func refused(resp *response, res *Result) bool {
	if resp.StatusCode/100 == 2 {
		return false
	}
	msg, _ := io.ReadAll(io.LimitReader(resp, 512))
	res.End = time.Since(res.Sent)
	if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && loc != "" {
		// Not followed: the extra hop would be measured as the
		// server's latency.
		res.fail(ErrHTTP, fmt.Sprintf("HTTP %d: redirected to %s; point the target at the final address", resp.StatusCode, loc))
		return true
	}
	res.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	res.fail(ErrHTTP, fmt.Sprintf("HTTP %d: %s", resp.StatusCode, msg))
	return true
}

// unreadable records a stream the client cannot read, named as what it
// is rather than as a cut stream: an encoding asked against, or a server
// that ignored "stream": true and answered in one JSON body.
func unreadable(resp *response, res *Result) bool {
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		res.End = time.Since(res.Sent)
		res.fail(ErrEncoding, fmt.Sprintf("the server sent a %s-encoded stream though the request asked for identity", enc))
		return true
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(strings.ToLower(ct), "application/json") {
		msg, _ := io.ReadAll(io.LimitReader(resp, 200))
		res.End = time.Since(res.Sent)
		res.fail(ErrNotStreamed, fmt.Sprintf("the server ignored stream: true and answered one JSON body: %s", msg))
		return true
	}
	return false
}

// streamRead is one stream's reading state. It lives on stream's stack
// and its phases take it by pointer, so splitting the loop into steps
// adds no allocation; the fastjson parser in it is reused for every
// chunk of the stream.
type streamRead struct {
	c       *Client
	body    *response
	res     *Result
	lim     *io.LimitedReader
	onFirst func(time.Duration)
	wd      *watchdog
	abandon int // tokens after which the workload abandons; 0: never
	parser  fastjson.Parser

	done         bool // [DONE] came
	usageTokens  int  // completion_tokens from the latest usage seen; -1: none
	lastUsage    int  // for per-chunk deltas of continuous usage
	countedTotal int
	kernel       int64         // chunks timed by the kernel's stamp
	finishedAt   time.Duration // when a finish_reason came; 0: none
	textBytes    int           // answer and reasoning text received
	silent       int           // chunks with choices but no output
	finish       FinishKind
	stopSaid     stopWord
}

// stream reads an answer's events until [DONE] and the body's end, then
// settles the result: read, classify each event, time its content, and
// finish.
func (c *Client) stream(ctx context.Context, body *response, res *Result, sentBytes int) {
	s := streamRead{c: c, body: body, res: res, usageTokens: -1, finish: FinishUnknown}
	s.abandon, _ = ctx.Value(abandonKey{}).(int)
	s.onFirst, _ = ctx.Value(firstTokenKey{}).(func(time.Duration))
	s.wd, _ = ctx.Value(watchdogKey{}).(*watchdog)
	br := c.bufs.Get().(*bufio.Reader)
	s.lim = &io.LimitedReader{R: body, N: c.opts.MaxStream + 1}
	br.Reset(s.lim)
	defer func() {
		br.Reset(nil)
		c.bufs.Put(br)
	}()
	events := NewEventReader(br, c.opts.MaxLine)
	defer func() {
		c.kernel.Add(s.kernel)
		c.readTime.Add(int64(len(res.ChunkAt)) - s.kernel)
	}()
	for {
		data, err := events.Next()
		// The event's last byte came with the latest read of the socket.
		now := max(body.Arrived().Sub(res.Sent), 0)
		if s.done {
			// After [DONE] only the end of the body is awaited, so that the
			// connection can be reused; what a server sends later, or how it
			// ends, no longer changes the measurement.
			if err != nil {
				break
			}
			continue
		}
		if err != nil {
			if !s.ended(ctx, err, now) {
				return
			}
			break
		}
		if !s.event(data, now) {
			return
		}
	}
	s.settle(sentBytes)
}

// ended records a read that ended the stream before [DONE]: true for the
// body's plain end (settle says what it lacked), false for a failure,
// recorded.
func (s *streamRead) ended(ctx context.Context, err error, now time.Duration) bool {
	s.res.End = now
	switch {
	case s.lim.N <= 0:
		s.res.fail(ErrStreamLimit, fmt.Sprintf("response exceeded %d bytes", s.c.opts.MaxStream))
	case errors.Is(err, ErrLineTooLong):
		s.res.fail(ErrMalformed, err.Error())
	case err == io.EOF:
		return true
	default:
		s.res.fail(classify(ctx, err, ErrStreamCut), err.Error())
	}
	return false
}

// event reads one SSE event's data; false: it failed the request (a
// malformed chunk, the server's error, a bound, or the workload
// abandoning), and the stream is not read further.
func (s *streamRead) event(data []byte, now time.Duration) bool {
	res := s.res
	if bytes.Equal(data, doneMarker) {
		s.done = true
		res.End = now
		return true
	}
	ch, err := parseChunk(&s.parser, data)
	if err != nil {
		res.End = now
		res.fail(ErrMalformed, "bad chunk: "+redact.Cut(string(data), 200))
		return false
	}
	if ch.errText != "" {
		res.End = now
		res.fail(ErrServer, ch.errText)
		return false
	}
	answer, reasoning := s.note(&ch, now)
	if answer == "" && reasoning == "" {
		if ch.choices {
			s.silent++
		}
		return true // role-only deltas, usage-only chunks, keep-alive JSON
	}
	return s.content(&ch, answer, reasoning, now)
}

// note keeps what a chunk says besides its timing: a tool call, the text
// when kept, the server's own timings, the finish and the usage. It
// returns the chunk's output, a tool call's arguments counted as answer.
func (s *streamRead) note(ch *chunkView, now time.Duration) (answer, reasoning string) {
	res, keep := s.res, s.c.opts.KeepText
	answer, reasoning = ch.answer, ch.reasoning
	if ch.toolCall {
		// A tool call's arguments are the answer's output: timed and
		// counted like text, and kept apart to be checked.
		if res.FirstToolCall == 0 {
			res.FirstToolCall = max(now, 1)
		}
		if keep {
			res.ToolName += ch.toolName
			res.ToolArgs = append(res.ToolArgs, ch.toolArgs...)
		}
		answer += ch.toolArgs
	}
	if keep && ch.answer != "" {
		res.Text = append(res.Text, ch.answer...)
	}
	if ch.hasTimings && ch.promptMs >= 0 && ch.predictedMs >= 0 && ch.predictedMs < 1e9 && ch.promptMs < 1e9 {
		res.ServerPrompt = time.Duration(ch.promptMs * float64(time.Millisecond))
		res.ServerPredict = time.Duration(ch.predictedMs * float64(time.Millisecond))
		res.ServerPredicted = max(ch.predictedN, 0)
	}
	if ch.finished && s.finishedAt == 0 {
		s.finishedAt = max(now, 1)
		s.finish, s.stopSaid = ch.finish, ch.stop
	}
	if ch.hasUsage {
		// Some servers put usage on every chunk, zeros included; keep
		// the latest non-zero figure.
		if ch.promptTokens > 0 {
			res.PromptTokens = ch.promptTokens
		}
		if ch.outputTk > 0 || s.usageTokens < 0 {
			s.usageTokens = ch.outputTk
		}
	}
	return answer, reasoning
}

// content times and counts a chunk with output; false: a bound or the
// workload ended the request.
func (s *streamRead) content(ch *chunkView, answer, reasoning string, now time.Duration) bool {
	res, counter := s.res, s.c.opts.Counter
	s.textBytes += len(answer) + len(reasoning)
	if res.FirstToken == 0 {
		res.FirstToken = now
		if s.onFirst != nil {
			s.onFirst(now)
		}
	}
	if s.wd != nil {
		s.wd.chunk()
	}
	if answer != "" && res.FirstAnswer == 0 {
		res.FirstAnswer = now
	}
	n := counter.Count(answer) + counter.Count(reasoning)
	if ch.hasUsage && s.usageTokens > s.lastUsage {
		n = s.usageTokens - s.lastUsage // continuous usage: exact tokens in this chunk
		s.lastUsage = s.usageTokens
	}
	n = max(n, 1) // a chunk with output carries at least one token
	if reasoning != "" {
		res.ReasoningTokens += counter.Count(reasoning)
	}
	s.countedTotal += n
	if s.body.FromKernel() {
		s.kernel++
	}
	if len(res.ChunkAt) >= s.c.opts.MaxChunks {
		res.End = now
		res.fail(ErrStreamLimit, fmt.Sprintf("response exceeded %d content chunks", s.c.opts.MaxChunks))
		return false
	}
	res.ChunkAt = append(res.ChunkAt, now)
	res.ChunkTokens = append(res.ChunkTokens, int32(n))
	res.ChunkRead = append(res.ChunkRead, uint32(s.body.Reads()))
	if s.abandon > 0 && s.countedTotal >= s.abandon {
		// The user stops reading and closes the connection, as a
		// browser tab does; the server sees the disconnect.
		res.End = now
		res.OutputTokens, res.TokenSource = s.countedTotal, TokensFromCounter
		res.fail(ErrAbandoned, fmt.Sprintf("abandoned by the workload after %d tokens", s.countedTotal))
		return false
	}
	return true
}

// settle decides a stream read to its end: its token count, from the
// usage when believable, and whether it was an answer.
func (s *streamRead) settle(sentBytes int) {
	res, usageTokens := s.res, s.usageTokens
	if !plausibleUsage(usageTokens, s.textBytes, len(res.ChunkAt)+s.silent, res.End, s.c.opts.UntextedTokens) || res.PromptTokens > sentBytes+4096 {
		// A figure built on an impossible usage would be nonsense (1e18
		// tokens became 4e18 tok/s): the text's own count stands in, and
		// the result says so. A prompt cannot be many more tokens than
		// the bytes sent, template included.
		res.UsageImplausible = true
		usageTokens, res.PromptTokens = -1, 0
	}
	switch {
	case usageTokens > 0:
		res.OutputTokens, res.TokenSource = usageTokens, TokensFromUsage
	default:
		res.OutputTokens, res.TokenSource = s.countedTotal, TokensFromCounter
	}
	switch {
	case !s.done:
		res.fail(ErrStreamCut, "stream ended without [DONE]")
	case len(res.ChunkAt) == 0 && s.finishedAt == 0:
		res.fail(ErrEmpty, "stream carried no content and no finish_reason")
	default:
		// An answer, possibly of no text (the end token first, a stop
		// sequence at once, or max_tokens of tokens that decode to no
		// valid text): it has no first token, so no TTFT and no TPOT; the
		// finish says which it was.
		res.Finish = s.c.finishKind(s.finish, s.stopSaid)
	}
}

// finishKind refines a finish_reason "stop" by what the server said of
// stop sequences and what the request asked: with no stop sequence
// asked, or none named where the server names them, the end token ended
// the answer; with stop sequences asked and ignore_eos sent, only one of
// them could. Otherwise the stream does not tell, and says so.
func (c *Client) finishKind(f FinishKind, said stopWord) FinishKind {
	if f != FinishStop {
		return f
	}
	switch {
	case said == stopSequence:
		return FinishStopSequence
	case said == stopNone || !c.stops:
		return FinishEndToken
	case c.opts.IgnoreEOS:
		return FinishStopSequence
	}
	return FinishStop
}

// MaxUntextedRate is the most tokens per second of a stream's time that
// plausibleUsage grants a server whose tokens need not show as text: tens
// of times the fastest single streams published (a few thousand tok/s),
// so that no true usage is doubted, while a claim of 10^6 tokens in 1 ms
// (10^9 tok/s) is, and no figure built on a usage believed can exceed
// it per stream.
const MaxUntextedRate = 100_000

// plausibleUsage reports whether usage output tokens could have come in a
// stream that carried textBytes of text in chunks content-bearing and
// silent chunks and lasted elapsed. Every streamed token decodes to text
// on most engines, so not many more tokens than bytes come (a byte-token
// vocabulary spells a character in up to 4 tokens of one byte each; twice
// the bytes, one per chunk and 16 for special and held-back tokens leave
// room). Where the engine drops tokens that are not text on their own
// (untexted), tokens may far outnumber bytes, and time bounds them
// instead: no stream makes more than MaxUntextedRate tokens a second.
// Either way the figure a usage feeds stays physically possible.
func plausibleUsage(usage, textBytes, chunks int, elapsed time.Duration, untexted bool) bool {
	limit := 2*textBytes + chunks + 16
	if untexted {
		limit += int(min(elapsed.Seconds(), 3600) * MaxUntextedRate)
	}
	return usage <= limit
}

var doneMarker = []byte("[DONE]")

// embeddings reads an embeddings answer: one JSON body, done when its
// last byte came. It counts the vectors and takes the server's prompt
// tokens; there is no first token and no output.
func (c *Client) embeddings(body *response, res *Result, sentBytes int) {
	data, err := io.ReadAll(io.LimitReader(body, c.opts.MaxStream+1))
	res.End = max(body.Arrived().Sub(res.Sent), 1)
	switch {
	case err != nil:
		res.fail(ErrStreamCut, err.Error())
		return
	case int64(len(data)) > c.opts.MaxStream:
		res.fail(ErrStreamLimit, fmt.Sprintf("response exceeded %d bytes", c.opts.MaxStream))
		return
	}
	n, prompt, errText, err := parseEmbeddings(data)
	switch {
	case err != nil:
		res.fail(ErrMalformed, "bad embeddings answer: "+err.Error()+": "+redact.Cut(string(data), 200))
		return
	case errText != "":
		res.fail(ErrServer, errText)
		return
	case n == 0:
		res.fail(ErrEmpty, "the answer carried no embeddings")
		return
	}
	res.Embeddings = n
	if prompt > sentBytes+4096 { // not believed, as for completions
		res.UsageImplausible = true
		prompt = 0
	}
	res.PromptTokens = prompt
}

// fail records the failure. Its detail is the server's text: secrets are
// masked before it is cut (redact.Cut, which sees through escapes and
// invisible characters), then control, bidirectional and invisible
// characters are neutralized (untrusted.Text), so it is safe wherever it
// is shown.
func (r *Result) fail(kind ErrorKind, detail string) {
	r.Err = kind
	r.Detail = untrusted.Text(redact.Cut(detail, 300))
}

// classify tells a timeout or a cancellation from the fallback kind.
func classify(ctx context.Context, err error, fallback ErrorKind) ErrorKind {
	switch {
	case errors.Is(context.Cause(ctx), errAbandonedAt):
		return ErrAbandoned
	case errors.Is(context.Cause(ctx), errFirstTokenTimeout), errors.Is(context.Cause(ctx), errIdleTimeout):
		return ErrTimeout
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return ErrTimeout
	case errors.Is(ctx.Err(), context.Canceled), errors.Is(err, context.Canceled):
		return ErrCanceled
	}
	return fallback
}

type abandonKey struct{}

// AbandonAfter returns a context under which Do closes the stream once
// tokens output tokens came, as a user who stops reading, and reports
// ErrAbandoned.
func AbandonAfter(ctx context.Context, tokens int) context.Context {
	return context.WithValue(ctx, abandonKey{}, tokens)
}

// Timeouts of a stream's parts, as causes of its context.
var (
	errFirstTokenTimeout = errors.New("first-token timeout")
	errIdleTimeout       = errors.New("idle timeout")
)

type watchdogKey struct{}

// watchdog ends a request that waits too long for its first token, or
// between chunks after it: one timer, reset per chunk.
type watchdog struct {
	t          *time.Timer
	idle       time.Duration
	cancel     context.CancelCauseFunc
	ctx        context.Context
	firstLimit time.Duration
	started    bool // a chunk came: the idle wait, not the first token's, runs
}

func (c *Client) watch(ctx context.Context) (context.Context, *watchdog) {
	cctx, cancel := context.WithCancelCause(ctx)
	w := &watchdog{idle: c.opts.IdleTimeout, cancel: cancel, firstLimit: c.opts.FirstTokenTimeout}
	w.ctx = context.WithValue(cctx, watchdogKey{}, w)
	if w.firstLimit > 0 {
		w.t = time.AfterFunc(w.firstLimit, func() { cancel(errFirstTokenTimeout) })
	}
	return w.ctx, w
}

// chunk notes a chunk with output: the first-token wait is over, and the
// idle wait starts again.
func (w *watchdog) chunk() {
	if w.started {
		if w.t != nil {
			w.t.Reset(w.idle)
		}
		return
	}
	w.started = true
	if w.t != nil {
		w.t.Stop()
		w.t = nil
	}
	if w.idle > 0 {
		w.t = time.AfterFunc(w.idle, func() { w.cancel(errIdleTimeout) })
	}
}

func (w *watchdog) stop() {
	if w.t != nil {
		w.t.Stop()
	}
	w.cancel(nil)
}

// name says which wait ran out in a request that timed out on one.
func (w *watchdog) name(res *Result) {
	cause := context.Cause(w.ctx)
	if res.Err != ErrTimeout || (cause != errFirstTokenTimeout && cause != errIdleTimeout) {
		return
	}
	limit := w.idle
	if cause == errFirstTokenTimeout {
		limit = w.firstLimit
	}
	res.Detail = fmt.Sprintf("%v: no output for %v", cause, limit)
}

// StoppedKind is the error kind of a request whose ctx ended while the
// client itself was waiting (a retry's backoff): abandoned by the
// workload's user, or canceled by the run.
func StoppedKind(ctx context.Context) ErrorKind {
	if errors.Is(context.Cause(ctx), errAbandonedAt) {
		return ErrAbandoned
	}
	return ErrCanceled
}

// retryAfter reads a Retry-After header: delay-seconds or an HTTP date
// (RFC 9110 10.2.3); 0 when absent or unreadable. Bounded to an hour: a
// header asking for more is not a retry a benchmark should wait for.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		d = time.Duration(max(n, 0)) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = max(t.Sub(now), 0)
	}
	return min(d, MaxRetryAfter)
}

// MaxRetryAfter caps the wait a Retry-After may ask: a benchmark waits
// out a server's brief refusal, not an hour's, and a date far in the
// future counts as the cap.
const MaxRetryAfter = time.Minute

// errAbandonedAt is the cause of a context AbandonAt ended.
var errAbandonedAt = errors.New("abandoned by the workload's user")

// AbandonAt returns a context under which Do gives up the request d after
// its send, as a user who stops waiting, and reports ErrAbandoned. stop
// releases its timer.
func AbandonAt(ctx context.Context, d time.Duration) (_ context.Context, stop context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d, errAbandonedAt)
}

type firstTokenKey struct{}

// OnFirstToken returns a context under which Do calls f with the TTFT as
// soon as the first token comes, before the stream ends: a load generator
// watching a queue grow cannot wait for answers that may take minutes.
// f runs on the request's goroutine and must be quick.
func OnFirstToken(ctx context.Context, f func(ttft time.Duration)) context.Context {
	return context.WithValue(ctx, firstTokenKey{}, f)
}

// localLimit reports whether err is this machine running out of something
// a connection needs: descriptors (EMFILE, ENFILE), ephemeral ports
// (EADDRNOTAVAIL) or kernel memory (ENOBUFS, ENOMEM).
func localLimit(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.EADDRNOTAVAIL, syscall.ENOBUFS, syscall.ENOMEM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
