package sim

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"image"
	_ "image/jpeg" // images of multimodal prompts
	_ "image/png"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/benchci/benchci/internal/clock"
	"github.com/benchci/benchci/internal/netstamp"
	"github.com/benchci/benchci/internal/words"
)

// Trace is the server's own account of one request, for measuring what a
// client adds on top of the engine's true timings.
type Trace struct {
	// ID is the request's X-Request-Id header, if any.
	ID string
	// Model is the model the request named.
	Model string
	// Arrived is when the request reached the server (the kernel's stamp
	// of its bytes, where the server traces; else when the handler
	// started); FirstToken when the first chunk with content was handed to
	// the connection; Done when the stream ended. These are the wire times
	// a client's measurement is checked against.
	Arrived, FirstToken, Done time.Time
	PromptTokens              int
	// CachedTokens is how many prompt tokens the prefix cache held.
	CachedTokens int
	OutputTokens int
	Chunks       int
	// Flushed holds when each content chunk was handed to the connection,
	// when the server was told to keep them (KeepChunkTimes); for
	// measuring ITL error.
	Flushed []time.Time
}

// Server is an OpenAI-compatible HTTP server over a simulated
// continuous-batching engine. Start must be called before serving.
type Server struct {
	p      Profile
	cl     *cluster
	nextID atomic.Uint64
	// ttftNanos and ttftCount sum streamed requests' server-side TTFT
	// (arrival to the first token handed over), exported as vLLM does.
	ttftNanos, ttftCount atomic.Int64
	model                []byte // JSON-quoted model name
	// seed keys the prompts' block hashes for the prefix cache.
	seed   maphash.Seed
	faults *dice // nil: a well-behaved server
	// OnTrace, when set before Listen, receives each finished request's
	// trace, and Listen then stamps requests' arrival from the kernel.
	OnTrace func(Trace)
	// KeepChunkTimes records every chunk's flush time in traces.
	KeepChunkTimes bool
}

// New returns a server for the profile.
func New(p Profile) *Server {
	if p.TokensPerStep < 1 {
		p.TokensPerStep = 1
	}
	m, _ := json.Marshal(p.Model)
	return &Server{p: p, cl: newCluster(p, false), model: m, seed: maphash.MakeSeed()}
}

// SetFaults makes the server misbehave as f says; call before serving.
func (s *Server) SetFaults(f Faults) { s.faults = newDice(f) }

// Profile returns the server's profile.
func (s *Server) Profile() Profile { return s.p }

// Start runs the engine until ctx ends.
func (s *Server) Start(ctx context.Context) { s.cl.start(ctx) }

// Listen starts the engine and serves it on addr (e.g. "127.0.0.1:0") until
// ctx ends. It returns the base URL.
func (s *Server) Listen(ctx context.Context, addr string) (string, error) {
	var ln net.Listener
	var err error
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	if s.OnTrace != nil {
		ln, err = netstamp.Listen(ctx, addr)
		srv.ConnContext = netstamp.ConnContext
	} else {
		ln, err = net.Listen("tcp", addr)
	}
	if err != nil {
		return "", fmt.Errorf("sim: listen %s: %w", addr, err)
	}
	s.Start(ctx)
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/chat/completions":
		s.completion(w, r, true)
	case "/v1/completions":
		s.completion(w, r, false)
	case "/v1/embeddings":
		s.embeddings(w, r)
	case "/v1/models":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"object":"list","data":[{"id":%s,"object":"model","owned_by":"benchci-sim","max_model_len":%d}]}`, s.model, s.p.MaxModelLen)
	case "/health":
		w.WriteHeader(http.StatusOK)
	case "/reset_prefix_cache", "/flush_cache": // vLLM's, SGLang's
		if r.Method != http.MethodPost {
			writeError(w, http.StatusMethodNotAllowed, "use POST")
			return
		}
		if err := s.cl.reset(r.Context()); err != nil {
			return
		}
		w.WriteHeader(http.StatusOK)
	case "/metrics":
		// vLLM's names, so clients that read vLLM read the simulator.
		// Counters and gauges add up over a disaggregated server's
		// instances, as a router's aggregate would.
		sum := s.cl.sum
		running := sum(func(e *engine) int64 { return e.numRunning.Load() })
		// A request is queued once, at its entry (a decode instance's
		// admissions are of requests already counted).
		var admitted, queued int64
		for _, e := range s.cl.prefill {
			admitted += e.admitted.Load()
			queued += e.queueNanos.Load()
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running %d\n", running)
		fmt.Fprintf(w, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting %d\n", sum(func(e *engine) int64 { return e.waitingNow() }))
		// The simulator knows its queue between scrapes: its peak since
		// the last one, which benchci reads before vLLM's instant gauge.
		fmt.Fprintf(w, "# TYPE benchci_sim:num_requests_waiting_peak gauge\nbenchci_sim:num_requests_waiting_peak %d\n", sum(func(e *engine) int64 { return e.takePeak() }))
		// With a sized KV cache, its blocks in use; without, the batch's
		// fill, the closest stand-in.
		usage := float64(running) / float64(s.p.MaxNumSeqs)
		if blocks := s.cl.kvBlocks(); blocks > 0 {
			usage = float64(sum(func(e *engine) int64 { return e.usedBlocks.Load() })) / float64(blocks)
		}
		fmt.Fprintf(w, "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc %g\n", usage)
		fmt.Fprintf(w, "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total %d\n", sum(func(e *engine) int64 { return e.generated.Load() }))
		fmt.Fprintf(w, "# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total %d\n", sum(func(e *engine) int64 { return e.preemptions.Load() }))
		if s.p.PrefixCaching {
			fmt.Fprintf(w, "# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total %d\n", sum(func(e *engine) int64 { return e.prefixQueries.Load() }))
			fmt.Fprintf(w, "# TYPE vllm:prefix_cache_hits_total counter\nvllm:prefix_cache_hits_total %d\n", sum(func(e *engine) int64 { return e.prefixHits.Load() }))
		}
		fmt.Fprintf(w, "# TYPE vllm:request_queue_time_seconds histogram\nvllm:request_queue_time_seconds_bucket{le=\"+Inf\"} %d\nvllm:request_queue_time_seconds_sum %g\nvllm:request_queue_time_seconds_count %d\n",
			admitted, float64(queued)/1e9, admitted)
		n := s.ttftCount.Load()
		fmt.Fprintf(w, "# TYPE vllm:time_to_first_token_seconds histogram\nvllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} %d\nvllm:time_to_first_token_seconds_sum %g\nvllm:time_to_first_token_seconds_count %d\n",
			n, float64(s.ttftNanos.Load())/1e9, n)
	default:
		writeError(w, http.StatusNotFound, "not found: "+r.URL.Path)
	}
}

type message struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type request struct {
	Model               string    `json:"model"`
	Prompt              any       `json:"prompt"`
	Messages            []message `json:"messages"`
	MaxTokens           *int      `json:"max_tokens"`
	MaxCompletionTokens *int      `json:"max_completion_tokens"`
	Stream              bool      `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	Tools          []toolDef       `json:"tools"`
	ToolChoice     any             `json:"tool_choice"`
	ResponseFormat *responseFormat `json:"response_format"`
}

func (s *Server) completion(w http.ResponseWriter, r *http.Request, chat bool) {
	tr := Trace{ID: r.Header.Get("X-Request-Id"), Arrived: time.Now()}
	if c := netstamp.FromContext(r.Context()); c != nil {
		// The request's head came with the connection's latest read.
		if at := c.Arrived(); !at.IsZero() && at.Before(tr.Arrived) {
			tr.Arrived = at
		}
	}
	ft := faultNone
	if s.faults != nil {
		ft = s.faults.roll()
		if d := s.faults.f.SlowFirstByte; d > 0 {
			time.Sleep(d)
		}
		if ft == faultError {
			writeError(w, http.StatusServiceUnavailable, "simulated overload")
			return
		}
	}
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "use POST")
		return
	}
	var req request
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "bad JSON body: "+err.Error())
		return
	}
	pl, err := s.plan(&req, chat)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	prompt, hashes, maxTokens, ans, isStructured, finish := pl.prompt, pl.hashes, pl.maxTokens, pl.ans, pl.structured, pl.finish
	tr.PromptTokens, tr.Model = prompt, req.Model

	ctx := r.Context()
	if !s.requestPath(ctx) {
		return
	}
	sq := newSeq(prompt, maxTokens, hashes)
	if err := s.cl.submit(ctx, sq); err != nil {
		return
	}
	defer sq.live.canceled.Store(true) // harmless once finished; stops work if the client left

	id := s.nextID.Add(1)
	if !req.Stream {
		var st *structuredAnswer
		if isStructured {
			st = &ans
		}
		s.whole(ctx, w, sq, id, chat, &tr, st, finish)
		return
	}
	var includeUsage, continuous bool
	if o := req.StreamOptions; o != nil {
		includeUsage, continuous = o.IncludeUsage, o.ContinuousUsageStats
	}

	model := s.model
	if req.Model != "" && req.Model != s.p.Model {
		// Another name is an adapter (LoRA adapters are model names on
		// vLLM): served by the same engine at the same cost, and named
		// in the answer as asked.
		model, _ = json.Marshal(req.Model)
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	cw := chunkWriter{chat: chat, model: model, id: id, created: tr.Arrived.Unix(), buf: make([]byte, 0, 512), finish: finish}
	if isStructured {
		cw.pieces, cw.tool = pieces(ans.text, maxTokens), ans.tool
	}
	rc.Flush() // the head goes at once, as the engines send it
	var sent int64
	for !sq.live.finished.Load() || sent < sq.live.produced.Load() {
		select {
		case <-sq.live.notify:
		case <-ctx.Done():
			return
		}
		n := sq.live.produced.Load()
		if n == sent {
			continue
		}
		var usage *[3]int
		if continuous {
			usage = &[3]int{prompt, int(n), prompt + int(n)}
		}
		if chat && sent == 0 {
			// vLLM opens a chat stream with a role-only delta, sent with the
			// first token (it comes out of the first step's output): a
			// client that counts any chunk as the first token measures
			// the true TTFT only if the role chunk waits for it too.
			cw.roleChunk()
			if _, err := w.Write(cw.buf); err != nil {
				return
			}
		}
		final := sq.live.finished.Load() && n >= int64(maxTokens)
		cw.tokenChunk(int(sent), int(n), final, usage)
		// Stamped before the write: on loopback the bytes reach the
		// client's socket inside the write, so this is the lower bound of
		// their time on the wire.
		handed := time.Now()
		if _, err := w.Write(cw.buf); err != nil {
			return
		}
		// The last chunk goes out with [DONE] and the end of the chunked
		// body, in one write when the handler returns: one system call
		// instead of three, at the same moment.
		if !final || ft != faultNone {
			if err := rc.Flush(); err != nil {
				return
			}
		}
		if sent == 0 {
			tr.FirstToken = handed
			s.ttftNanos.Add(int64(handed.Sub(tr.Arrived)))
			s.ttftCount.Add(1)
			switch ft {
			case faultReset:
				panic(http.ErrAbortHandler) // net/http drops the connection
			case faultStall:
				select {
				case <-time.After(s.faults.f.Stall):
				case <-ctx.Done():
					return
				}
			case faultMalformed:
				w.Write([]byte("data: {\"choices\": [{\"delta\": {\"content\": \n\n"))
			}
		}
		tr.Chunks++
		if s.KeepChunkTimes {
			tr.Flushed = append(tr.Flushed, handed)
		}
		sent = n
	}
	if includeUsage {
		reported := int(sent)
		if ft == faultWrongUsage {
			reported = max(1, reported/2)
		}
		cw.usageChunk(prompt, reported)
		if _, err := w.Write(cw.buf); err != nil {
			return
		}
	}
	if _, err := w.Write([]byte("data: [DONE]\n\n")); err != nil {
		return
	}
	tr.Done = time.Now()
	tr.OutputTokens, tr.CachedTokens = int(sent), int(sq.live.hit.Load())
	if s.OnTrace != nil {
		s.OnTrace(tr)
	}
}

// embeddingDims is the length of the simulator's vectors: a small
// embedding model's, so the answer's bytes stay modest.
const embeddingDims = 64

// embeddings answers /v1/embeddings: each input is a sequence of the
// engine that only prefills (the token it samples is not returned), so
// the cost is the prompt's, batched with whatever else runs; the answer
// comes when the last input's prefill is done.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	tr := Trace{ID: r.Header.Get("X-Request-Id"), Arrived: time.Now()}
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "use POST")
		return
	}
	var req struct {
		Model string `json:"model"`
		Input any    `json:"input"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "bad JSON body: "+err.Error())
		return
	}
	var lengths []int
	switch in := req.Input.(type) {
	case string:
		lengths = []int{CountTokens(in)}
	case []any:
		if len(in) > 0 {
			if _, ids := in[0].(float64); ids { // one input of token ids
				lengths = []int{len(in)}
				break
			}
		}
		for i, x := range in {
			switch x := x.(type) {
			case string:
				lengths = append(lengths, CountTokens(x))
			case []any: // token ids
				lengths = append(lengths, len(x))
			default:
				writeError(w, http.StatusBadRequest, fmt.Sprintf("input[%d]: want a string or token ids", i))
				return
			}
		}
	}
	if len(lengths) == 0 {
		writeError(w, http.StatusBadRequest, "input: required, a string or a list of them")
		return
	}
	total := 0
	seqs := make([]*seq, len(lengths))
	for i, n := range lengths {
		n = max(n, 1)
		if n > s.p.MaxModelLen {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("input[%d] has %d tokens; this model's maximum context length is %d", i, n, s.p.MaxModelLen))
			return
		}
		total += n
		seqs[i] = newSeq(n, 1, nil)
	}
	ctx := r.Context()
	if !s.requestPath(ctx) {
		return
	}
	for _, sq := range seqs {
		if err := s.cl.submit(ctx, sq); err != nil {
			return
		}
		defer sq.live.canceled.Store(true)
	}
	for _, sq := range seqs {
		for !sq.live.finished.Load() {
			select {
			case <-sq.live.notify:
			case <-ctx.Done():
				return
			}
		}
	}
	model := s.model
	if req.Model != "" {
		model, _ = json.Marshal(req.Model)
	}
	buf := make([]byte, 0, 64+len(seqs)*(embeddingDims*8+48))
	buf = append(buf, `{"object":"list","data":[`...)
	for i := range seqs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"object":"embedding","index":`...)
		buf = strconv.AppendInt(buf, int64(i), 10)
		buf = append(buf, `,"embedding":[`...)
		for d := range embeddingDims {
			if d > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendFloat(buf, float64((i*31+d*17)%200-100)/100, 'f', 2, 64)
		}
		buf = append(buf, "]}"...)
	}
	buf = append(buf, `],"model":`...)
	buf = append(buf, model...)
	buf = append(buf, `,"usage":{"prompt_tokens":`...)
	buf = strconv.AppendInt(buf, int64(total), 10)
	buf = append(buf, `,"total_tokens":`...)
	buf = strconv.AppendInt(buf, int64(total), 10)
	buf = append(buf, "}}"...)
	w.Header().Set("Content-Type", "application/json")
	w.Write(buf)
	tr.FirstToken, tr.Done, tr.PromptTokens, tr.Model = time.Now(), time.Now(), total, req.Model
	if s.OnTrace != nil {
		s.OnTrace(tr)
	}
}

// whole answers a non-streaming request once generation ends: words, or
// the structured answer (st, when not nil) as a tool call or as the
// message's text, with the finish reason the handler settled.
func (s *Server) whole(ctx context.Context, w http.ResponseWriter, sq *seq, id uint64, chat bool, tr *Trace, st *structuredAnswer, finish string) {
	for !sq.live.finished.Load() {
		select {
		case <-sq.live.notify:
		case <-ctx.Done():
			return
		}
	}
	n := int(sq.live.produced.Load())
	var text []byte
	if st != nil {
		text = []byte(st.text)
	} else {
		text = make([]byte, 0, n*6)
		for i := range n {
			text = append(text, word(i)...)
		}
	}
	t, _ := json.Marshal(string(text))
	message := fmt.Sprintf(`{"role":"assistant","content":%s}`, t)
	if st != nil && st.tool != "" {
		name, _ := json.Marshal(st.tool)
		message = fmt.Sprintf(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":%s,"arguments":%s}}]}`, id, name, t)
	}
	w.Header().Set("Content-Type", "application/json")
	usage := fmt.Sprintf(`"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}`, sq.promptTokens, n, sq.promptTokens+n)
	if chat {
		fmt.Fprintf(w, `{"id":"chatcmpl-%d","object":"chat.completion","created":%d,"model":%s,"choices":[{"index":0,"message":%s,"finish_reason":%q}],%s}`, id, tr.Arrived.Unix(), s.model, message, finish, usage)
	} else {
		fmt.Fprintf(w, `{"id":"cmpl-%d","object":"text_completion","created":%d,"model":%s,"choices":[{"index":0,"text":%s,"finish_reason":%q}],%s}`, id, tr.Arrived.Unix(), s.model, t, finish, usage)
	}
	tr.FirstToken, tr.Done, tr.OutputTokens, tr.CachedTokens = time.Now(), time.Now(), n, int(sq.live.hit.Load())
	if s.OnTrace != nil {
		s.OnTrace(*tr)
	}
}

// badRequest is a refusal in the words of the engine it imitates.
type badRequest string

func (b badRequest) Error() string { return string(b) }

// admission is what a request asks of the engine, as the handler
// settles it before the engine sees the request.
type admission struct {
	prompt, maxTokens int
	hashes            []uint64
	ans               structuredAnswer
	structured        bool
	finish            string
}

// plan settles a decoded request: its prompt's tokens and block hashes,
// its output tokens (a structured answer's own length) and finish reason;
// an error is the server's 400. The HTTP handler and the virtual-time
// replay (Replay) both admit requests through it, so they count alike.
func (s *Server) plan(req *request, chat bool) (admission, error) {
	var a admission
	texts, roles, err := requestTexts(req, chat)
	if err != nil {
		return a, err
	}
	prompt, hashes := s.promptTokens(texts, roles, chat)
	maxTokens := 16
	if chat {
		maxTokens = s.p.MaxModelLen - prompt
	}
	if req.MaxCompletionTokens != nil {
		maxTokens = *req.MaxCompletionTokens
	}
	if req.MaxTokens != nil {
		maxTokens = *req.MaxTokens
	}
	if maxTokens < 1 {
		return a, errors.New("max_tokens must be at least 1")
	}
	ans, isStructured := planStructured(req.Tools, req.ToolChoice, req.ResponseFormat)
	if isStructured && ans.err != nil {
		// A schema whose answer would pass the generator's bounds: an
		// engine refuses what it cannot constrain, and so does this one.
		return a, errors.New("schema: " + ans.err.Error())
	}
	finish := "length"
	if isStructured {
		if s.faults != nil && s.faults.wrongStructured() {
			ans.text = ans.text[:len(ans.text)-1]
		}
		// About four characters a token; an answer longer than
		// max_tokens is cut there, as a model's would be.
		need := max(1, (len(ans.text)+3)/4)
		finish = "stop"
		if ans.tool != "" {
			finish = "tool_calls"
		}
		if need > maxTokens {
			ans.text = ans.text[:maxTokens*4]
			need, finish = maxTokens, "length"
		}
		maxTokens = need
	}
	if err := s.fits(prompt, maxTokens); err != nil {
		return a, err
	}
	return admission{prompt: prompt, maxTokens: maxTokens, hashes: hashes, ans: ans, structured: isStructured, finish: finish}, nil
}

// fits refuses a request whose prompt and answer exceed the context.
func (s *Server) fits(prompt, maxTokens int) error {
	if prompt+maxTokens > s.p.MaxModelLen {
		// vLLM's words, capitals and all: clients match on them.
		return badRequest(fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion).", s.p.MaxModelLen, prompt+maxTokens, prompt, maxTokens))
	}
	return nil
}

// planText settles a text request as plan settles the body that says the
// same (Request).
func (s *Server) planText(q Request) (admission, error) {
	if q.Chat && len(q.Texts) == 0 {
		return admission{}, errors.New("messages: required")
	}
	if !q.Chat && len(q.Texts) != 1 {
		return admission{}, errors.New("prompt: required")
	}
	if q.Chat && len(q.Roles) != len(q.Texts) {
		return admission{}, errors.New("messages: a role for every text")
	}
	if q.MaxTokens < 1 {
		return admission{}, errors.New("max_tokens must be at least 1")
	}
	prompt, hashes := s.promptTokens(q.Texts, q.Roles, q.Chat)
	if err := s.fits(prompt, q.MaxTokens); err != nil {
		return admission{}, err
	}
	return admission{prompt: prompt, maxTokens: q.MaxTokens, hashes: hashes, finish: "length"}, nil
}

// requestTexts reads a decoded request's texts: each chat message's (an
// image as the words ImageTokens counts) with its role, or the prompt.
func requestTexts(req *request, chat bool) (texts, roles []string, err error) {
	if chat {
		if len(req.Messages) == 0 {
			return nil, nil, errors.New("messages: required")
		}
		for i, m := range req.Messages {
			var text string
			switch c := m.Content.(type) {
			case string:
				text = c
			case []any: // content parts: text, and images (see ImageTokens)
				for j, part := range c {
					p, ok := part.(map[string]any)
					if !ok {
						continue
					}
					if t, ok := p["text"].(string); ok {
						text += " " + t
					}
					if p["type"] == "image_url" {
						u, _ := p["image_url"].(map[string]any)
						url, _ := u["url"].(string)
						words, err := imageWords(url)
						if err != nil {
							return nil, nil, fmt.Errorf("messages[%d].content[%d]: %w", i, j, err)
						}
						text += words
					}
				}
			default:
				return nil, nil, fmt.Errorf("messages[%d].content: want a string or content parts", i)
			}
			texts, roles = append(texts, text), append(roles, m.Role)
		}
	} else {
		switch p := req.Prompt.(type) {
		case string:
			texts = []string{p}
		case []any:
			str, ok := "", false
			if len(p) == 1 {
				str, ok = p[0].(string)
			}
			if !ok {
				return nil, nil, errors.New("prompt: batched prompts are not supported by the simulator")
			}
			texts = []string{str}
		default:
			return nil, nil, errors.New("prompt: required")
		}
	}
	return texts, roles, nil
}

// promptTokens counts the prompt as the sim's tokenizer does: one token per
// whitespace-separated word, plus the chat template's tokens per message
// and the assistant header. hashes are its whole blocks' prefix hashes,
// when the profile caches prefixes: the engine looks them up when it
// admits the request.
func (s *Server) promptTokens(texts, roles []string, chat bool) (total int, hashes []uint64) {
	if !s.p.PrefixCaching {
		for _, t := range texts {
			total += CountTokens(t)
		}
		if chat {
			total += len(texts)*s.p.ChatTemplateTokens + 3
		}
		return total, nil
	}
	b := newBlockHasher(s.seed, s.p.blockSize())
	hashPrompt(b, texts, roles, s.p.ChatTemplateTokens, chat)
	return b.n, b.hashes
}

// ImageTokens is what an image costs the simulated model, in the manner
// of Qwen2-VL: the image is resized to multiples of 28 pixels (at least
// 56 a side, at most 16,384 tokens) and each 28x28 patch is a token, plus
// two for the vision start and end markers. A 1024x768 image is 37 x 27 =
// 999 + 2 tokens.
func ImageTokens(w, h int) int {
	round := func(v int) int { return max(56, (v+14)/28*28) }
	return min(round(w)/28*round(h)/28, 16384) + 2
}

// imageWords turns an image given as a data URL into its tokens, as words
// of the simulator's tokenizer that depend on the image's bytes: the
// prefix cache then holds an image as vLLM's does, by its content.
func imageWords(url string) (string, error) {
	head, data, ok := strings.Cut(url, ",")
	if !ok || !strings.HasPrefix(head, "data:image/") || !strings.HasSuffix(head, ";base64") {
		return "", errors.New("image_url: the simulator reads images given as base64 data URLs (data:image/...;base64,...)")
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return "", fmt.Errorf("image_url: %w", err)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		return "", fmt.Errorf("image_url: not an image the simulator decodes (PNG, JPEG): %w", err)
	}
	n := ImageTokens(cfg.Width, cfg.Height)
	id := strconv.FormatUint(maphash.String(imageSeed, data), 36)
	var b strings.Builder
	b.Grow(n * (len(id) + 8))
	for k := range n {
		b.WriteString(" img")
		b.WriteString(id)
		b.WriteByte('.')
		b.WriteString(strconv.Itoa(k))
	}
	return b.String(), nil
}

var imageSeed = maphash.MakeSeed()

// CountTokens is the simulator's tokenizer: whitespace-separated words.
func CountTokens(s string) int { return words.Count(s) }

func writeError(w http.ResponseWriter, code int, msg string) {
	m, _ := json.Marshal(msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"error":{"message":%s,"type":"invalid_request_error","code":%d}}`, m, code)
}

var vocab = []string{" the", " of", " and", " to", " in", " is", " that", " for", " it", " as", " with", " was", " on", " be", " at", " by", " this", " had", " not", " are", " but", " from", " or", " have", " an", " they", " which", " one", " you", " were"}

// word is output token i's text: one vocabulary word, so the client's
// fallback count of words equals the token count.
func word(i int) string { return vocab[i%len(vocab)] }

// chunkWriter builds SSE events by appending, to keep the per-token cost of
// the simulator small next to the client it measures.
type chunkWriter struct {
	chat    bool
	model   []byte
	id      uint64
	created int64
	buf     []byte
	// finish is the last chunk's finish_reason; pieces, when set, are a
	// structured answer's escaped text by token, and tool the function a
	// tool call names.
	finish string
	pieces []string
	tool   string
}

func (c *chunkWriter) head() {
	c.buf = append(c.buf[:0], `data: {"id":"`...)
	if c.chat {
		c.buf = append(c.buf, "chatcmpl-"...)
	} else {
		c.buf = append(c.buf, "cmpl-"...)
	}
	c.buf = strconv.AppendUint(c.buf, c.id, 10)
	if c.chat {
		c.buf = append(c.buf, `","object":"chat.completion.chunk","created":`...)
	} else {
		c.buf = append(c.buf, `","object":"text_completion","created":`...)
	}
	c.buf = strconv.AppendInt(c.buf, c.created, 10)
	c.buf = append(c.buf, `,"model":`...)
	c.buf = append(c.buf, c.model...)
}

func (c *chunkWriter) roleChunk() {
	c.head()
	c.buf = append(c.buf, `,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
}

func (c *chunkWriter) tokenChunk(from, to int, last bool, usage *[3]int) {
	c.head()
	switch {
	case c.tool != "" && from == 0:
		c.buf = append(c.buf, `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_`...)
		c.buf = strconv.AppendUint(c.buf, c.id, 10)
		c.buf = append(c.buf, `","type":"function","function":{"name":`...)
		c.buf = strconv.AppendQuote(c.buf, c.tool) // a function name: letters, digits, _ and -
		c.buf = append(c.buf, `,"arguments":"`...)
	case c.tool != "":
		c.buf = append(c.buf, `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"`...)
	case c.chat:
		c.buf = append(c.buf, `,"choices":[{"index":0,"delta":{"content":"`...)
	default:
		c.buf = append(c.buf, `,"choices":[{"index":0,"text":"`...)
	}
	for i := from; i < to; i++ {
		if c.pieces != nil {
			if i < len(c.pieces) {
				c.buf = append(c.buf, c.pieces[i]...)
			}
			continue
		}
		c.buf = append(c.buf, word(i)...)
	}
	switch {
	case c.tool != "":
		c.buf = append(c.buf, `"}}]}`...) // arguments, function, call, calls, delta
	case c.chat:
		c.buf = append(c.buf, `"}`...) // close the delta object
	default:
		c.buf = append(c.buf, '"')
	}
	c.buf = append(c.buf, `,"logprobs":null,"finish_reason":`...)
	if last {
		c.buf = append(c.buf, '"')
		c.buf = append(c.buf, c.finish...)
		c.buf = append(c.buf, `"}]`...)
	} else {
		c.buf = append(c.buf, `null}]`...)
	}
	if usage != nil {
		c.appendUsage(usage[0], usage[1])
	}
	c.buf = append(c.buf, "}\n\n"...)
}

func (c *chunkWriter) usageChunk(prompt, completion int) {
	c.head()
	c.buf = append(c.buf, `,"choices":[]`...)
	c.appendUsage(prompt, completion)
	c.buf = append(c.buf, "}\n\n"...)
}

func (c *chunkWriter) appendUsage(prompt, completion int) {
	c.buf = append(c.buf, `,"usage":{"prompt_tokens":`...)
	c.buf = strconv.AppendInt(c.buf, int64(prompt), 10)
	c.buf = append(c.buf, `,"completion_tokens":`...)
	c.buf = strconv.AppendInt(c.buf, int64(completion), 10)
	c.buf = append(c.buf, `,"total_tokens":`...)
	c.buf = strconv.AppendInt(c.buf, int64(prompt+completion), 10)
	c.buf = append(c.buf, '}')
}

// requestPath waits out the profile's request overhead (the modelled
// engine's HTTP, template and tokenizer work) before a request reaches the
// scheduler, reporting false if the client left meanwhile.
func (s *Server) requestPath(ctx context.Context) bool {
	if s.p.RequestOverhead <= 0 {
		return true
	}
	return clock.SleepUntil(ctx, time.Now().Add(s.p.requestDelay(rand.Float64())), clock.DefaultSpin)
}
