package client

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// scripted serves a fixed sequence of raw writes, flushing each, with an
// optional pause before each write.
func scripted(t *testing.T, status int, pause time.Duration, writes ...string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(status)
		w.(http.Flusher).Flush()
		for _, s := range writes {
			time.Sleep(pause)
			if _, err := io.WriteString(w, s); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// afterTaken serves writes as scripted does, but each write after the
// first only once taken is closed (or after 5 s): a test closes it when
// the client has taken the first chunk, so no two chunks share a read
// however late the client's goroutine runs.
func afterTaken(t *testing.T, taken <-chan struct{}, writes ...string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for i, s := range writes {
			if i == 1 {
				select {
				case <-taken:
				case <-time.After(5 * time.Second):
				}
			}
			if _, err := io.WriteString(w, s); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newTestClient(t *testing.T, url string, api API) *Client {
	t.Helper()
	c, err := New(Options{BaseURL: url, API: api, Model: "m", Timeout: 5 * time.Second, MaxLine: 1 << 10, MaxStream: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdle)
	return c
}

func chatChunk(content string) string {
	b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": content}}}})
	return "data: " + string(b) + "\n\n"
}

const done = "data: [DONE]\n\n"

func TestClientStreams(t *testing.T) {
	t.Parallel()
	usage := `data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}` + "\n\n"
	tests := []struct {
		name        string
		api         API
		status      int
		writes      []string
		wantErr     ErrorKind
		wantChunks  int
		wantTokens  int
		wantSource  TokenSource
		wantPrompt  int
		wantReason  int
		answerAfter bool // first answer later than first token
	}{
		{
			name:       "chat with role chunk and usage",
			api:        "chat",
			writes:     []string{`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n", chatChunk(" a"), chatChunk(" b"), chatChunk(" c"), usage, done},
			wantChunks: 3, wantTokens: 3, wantSource: TokensFromUsage, wantPrompt: 12,
		},
		{
			name:       "completions without usage falls back to counting",
			api:        "completions",
			writes:     []string{`data: {"choices":[{"text":" one two"}]}` + "\n\n", `data: {"choices":[{"text":" three"}]}` + "\n\n", done},
			wantChunks: 2, wantTokens: 3, wantSource: TokensFromCounter,
		},
		{
			name: "usage with zeros on every chunk, keep-alives and empty choices",
			api:  "chat",
			writes: []string{
				": keep-alive\n\n",
				`data: {"choices":[{"delta":{"content":" x"}}],"usage":{"prompt_tokens":0,"completion_tokens":0}}` + "\n\n",
				`data: {"choices":[],"usage":null}` + "\n\n",
				`data: {"choices":[{"delta":{"content":" y"}}],"usage":{"prompt_tokens":0,"completion_tokens":0}}` + "\n\n",
				done,
			},
			wantChunks: 2, wantTokens: 2, wantSource: TokensFromCounter,
		},
		{
			name: "continuous usage gives tokens per chunk",
			api:  "chat",
			writes: []string{
				`data: {"choices":[{"delta":{"content":"abc"}}],"usage":{"prompt_tokens":5,"completion_tokens":3}}` + "\n\n",
				`data: {"choices":[{"delta":{"content":"d"}}],"usage":{"prompt_tokens":5,"completion_tokens":4}}` + "\n\n",
				done,
			},
			wantChunks: 2, wantTokens: 4, wantSource: TokensFromUsage, wantPrompt: 5,
		},
		{
			name: "reasoning before answer",
			api:  "chat",
			writes: []string{
				`data: {"choices":[{"delta":{"reasoning_content":" think think"}}]}` + "\n\n",
				chatChunk(" answer"), done,
			},
			wantChunks: 2, wantTokens: 3, wantSource: TokensFromCounter, wantReason: 2, answerAfter: true,
		},
		{name: "HTTP 503", api: "chat", status: 503, writes: []string{`{"error":"overloaded"}`}, wantErr: ErrHTTP},
		{name: "error object in stream", api: "chat", writes: []string{chatChunk(" a"), `data: {"error":{"message":"boom"}}` + "\n\n"}, wantErr: ErrServer, wantChunks: 1},
		{name: "cut before [DONE]", api: "chat", writes: []string{chatChunk(" a")}, wantErr: ErrStreamCut, wantChunks: 1},
		{name: "cut mid-line", api: "chat", writes: []string{chatChunk(" a"), `data: {"choi`}, wantErr: ErrStreamCut, wantChunks: 1},
		{name: "malformed JSON", api: "chat", writes: []string{"data: {not json}\n\n", done}, wantErr: ErrMalformed},
		{name: "no content", api: "chat", writes: []string{usage, done}, wantErr: ErrEmpty, wantPrompt: 12, wantSource: TokensFromUsage, wantTokens: 3},
		{name: "line over the limit", api: "chat", writes: []string{"data: " + strings.Repeat("x", 2000) + "\n\n"}, wantErr: ErrMalformed},
		{name: "stream over the byte limit", api: "chat", writes: repeat(": pad "+strings.Repeat("p", 900)+"\n", 100), wantErr: ErrStreamLimit},
		{name: "content after [DONE] ignored", api: "chat", writes: []string{chatChunk(" a"), done, chatChunk(" b")}, wantChunks: 1, wantTokens: 1, wantSource: TokensFromCounter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status := tt.status
			if status == 0 {
				status = 200
			}
			var taken chan struct{}
			var srv *httptest.Server
			if tt.answerAfter {
				// The answer must come in a later read than the
				// reasoning: 1 ms apart, a loaded machine read both at
				// once, and they shared its stamp.
				taken = make(chan struct{})
				srv = afterTaken(t, taken, tt.writes...)
			} else {
				srv = scripted(t, status, time.Millisecond, tt.writes...)
			}
			c := newTestClient(t, srv.URL, tt.api)
			if taken != nil {
				var once sync.Once
				c.opts.Counter = CounterFunc(func(s string) int {
					once.Do(func() { close(taken) })
					return Words.Count(s)
				})
			}
			var res Result
			c.Do(context.Background(), []byte(`{}`), "id-1", &res)
			if res.Err != tt.wantErr {
				t.Fatalf("error kind %q (%s), want %q", res.Err, res.Detail, tt.wantErr)
			}
			if len(res.ChunkAt) != tt.wantChunks {
				t.Errorf("%d content chunks, want %d", len(res.ChunkAt), tt.wantChunks)
			}
			if tt.wantErr == ErrNone || tt.wantErr == ErrEmpty {
				if res.OutputTokens != tt.wantTokens || res.TokenSource != tt.wantSource {
					t.Errorf("output tokens %d from %s, want %d from %s", res.OutputTokens, res.TokenSource, tt.wantTokens, tt.wantSource)
				}
			}
			if res.PromptTokens != tt.wantPrompt {
				t.Errorf("prompt tokens %d, want %d", res.PromptTokens, tt.wantPrompt)
			}
			if res.ReasoningTokens != tt.wantReason {
				t.Errorf("reasoning tokens %d, want %d", res.ReasoningTokens, tt.wantReason)
			}
			if tt.wantChunks > 0 {
				// Ordering invariants of the timeline.
				if !(0 < res.FirstToken && res.FirstToken == res.ChunkAt[0] && res.ChunkAt[len(res.ChunkAt)-1] <= res.End) {
					t.Errorf("timeline out of order: first %v chunks %v end %v", res.FirstToken, res.ChunkAt, res.End)
				}
				if tt.answerAfter != (res.FirstAnswer > res.FirstToken) {
					t.Errorf("first answer %v, first token %v", res.FirstAnswer, res.FirstToken)
				}
			}
			if tt.wantErr == ErrHTTP && (res.Status != status || !strings.Contains(res.Detail, "overloaded")) {
				t.Errorf("status %d detail %q", res.Status, res.Detail)
			}
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestClientTimeoutAndCancel(t *testing.T) {
	t.Parallel()
	// An endless stream of keep-alives: only the timeout ends it.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for r.Context().Err() == nil {
			io.WriteString(w, ": ping\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond)
		}
	}))
	defer srv.Close()
	c, err := New(Options{BaseURL: srv.URL, API: "chat", Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var res Result
	c.Do(context.Background(), []byte(`{}`), "", &res)
	if res.Err != ErrTimeout {
		t.Errorf("endless stream: error %q (%s), want timeout", res.Err, res.Detail)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	c.Do(ctx, []byte(`{}`), "", &res)
	if res.Err != ErrCanceled {
		t.Errorf("canceled run: error %q (%s), want canceled", res.Err, res.Detail)
	}
}

func TestClientConnectError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	c, err := New(Options{BaseURL: url, API: "chat", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var res Result
	c.Do(context.Background(), []byte(`{}`), "", &res)
	if res.Err != ErrConnect {
		t.Errorf("error %q (%s), want connect", res.Err, res.Detail)
	}
}

func TestBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		api       API
		ignoreEOS bool
		want      string
	}{
		{"chat", true, `{"ignore_eos":true,"max_tokens":7,"messages":[{"role":"user","content":"hi there"}],"min_tokens":7,"model":"m","stream":true,"stream_options":{"include_usage":true},"temperature":0}`},
		{"completions", false, `{"max_tokens":7,"model":"m","prompt":"hi there","stream":true,"stream_options":{"include_usage":true},"temperature":0}`},
	}
	for _, tt := range tests {
		c, err := New(Options{API: tt.api, Model: "m", IgnoreEOS: tt.ignoreEOS, Extra: map[string]any{"temperature": 0}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Body("", "hi there", 7)
		if err != nil || string(got) != tt.want {
			t.Errorf("%s body:\n got %s\nwant %s (%v)", tt.api, got, tt.want, err)
		}
	}
}

func TestRequestHeaders(t *testing.T) {
	t.Parallel()
	// The handler's writes reach the test through the socket, which the
	// race detector does not see as synchronization; the mutex says it.
	var (
		mu   sync.Mutex
		got  http.Header
		path string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got, path = r.Header.Clone(), r.URL.Path
		mu.Unlock()
		io.WriteString(w, chatChunk("x")+done)
	}))
	defer srv.Close()
	c, err := New(Options{BaseURL: srv.URL + "/", API: "completions", APIKey: "sk-test", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var res Result
	c.Do(context.Background(), []byte(`{}`), "req-9", &res)
	mu.Lock()
	defer mu.Unlock()
	if path != "/v1/completions" || got.Get("Authorization") != "Bearer sk-test" || got.Get("X-Request-Id") != "req-9" || got.Get("Accept-Encoding") != "identity" {
		t.Errorf("path %q headers %v", path, got)
	}
}

func TestBodySystem(t *testing.T) {
	t.Parallel()
	chat, _ := New(Options{API: "chat", Model: "m"})
	got, _ := chat.Body("be brief", "hi", 3)
	if !strings.Contains(string(got), `"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]`) {
		t.Errorf("chat body %s", got)
	}
	comp, _ := New(Options{API: "completions", Model: "m"})
	got, _ = comp.Body("be brief", "hi", 3)
	if !strings.Contains(string(got), `"prompt":"be brief\n\nhi"`) {
		t.Errorf("completions body %s", got)
	}
}

// An answer of no text is an answer, not an error, named by what its
// stream showed: the end token first (llama.cpp, Ollama), a stop sequence
// the request asked for, max_tokens of tokens that decode to no valid
// text, the content filter. It has no first token (no TTFT, no TPOT).
// Without a finish reason, an empty stream is an error.
func TestClientEmptyAnswerKinds(t *testing.T) {
	t.Parallel()
	role := `data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}` + "\n\n"
	finish := func(reason, extra, usage string) string {
		return `data: {"choices":[{"index":0,"delta":{"content":""},"finish_reason":"` + reason + `"` + extra + `}],"usage":` + usage + "}\n\n"
	}
	stop := map[string]any{"stop": []any{"\n\n", "END"}}
	for _, tc := range []struct {
		name      string
		extra     map[string]any
		ignoreEOS bool
		writes    []string
		want      FinishKind
		tokens    int
	}{
		{"end token", nil, false, []string{role, finish("stop", "", `{"prompt_tokens":7,"completion_tokens":1}`), done}, FinishEndToken, 1},
		// Ollama's usage counts the tokens it generated and dropped as no
		// valid text.
		{"ollama end token, usage 5", nil, false, []string{role, finish("stop", "", `{"prompt_tokens":7,"completion_tokens":5}`), done}, FinishEndToken, 5},
		{"stop sequence named by the server (vLLM)", stop, false, []string{role, finish("stop", `,"stop_reason":"END"`, `{"prompt_tokens":7,"completion_tokens":2}`), done}, FinishStopSequence, 2},
		{"stop sequence named by the server (SGLang)", stop, false, []string{finish("stop", `,"matched_stop":"END"`, `{"prompt_tokens":7,"completion_tokens":2}`), done}, FinishStopSequence, 2},
		{"stop asked, ignore_eos sent, server silent", stop, true, []string{role, finish("stop", "", `{"prompt_tokens":7,"completion_tokens":2}`), done}, FinishStopSequence, 2},
		{"stop asked, no ignore_eos, server silent", stop, false, []string{role, finish("stop", "", `{"prompt_tokens":7,"completion_tokens":2}`), done}, FinishStop, 2},
		{"stop asked, server says none matched", stop, true, []string{role, finish("stop", `,"stop_reason":null`, `{"prompt_tokens":7,"completion_tokens":1}`), done}, FinishEndToken, 1},
		// llama.cpp under ignore_eos: 4 byte tokens that decode to no valid
		// text, no content chunk, cut at max_tokens.
		{"length, no decodable text", nil, true, []string{role, finish("length", "", `{"prompt_tokens":7,"completion_tokens":4}`), done}, FinishLength, 4},
		{"content filter", nil, false, []string{finish("content_filter", "", `{"prompt_tokens":7,"completion_tokens":0}`), done}, FinishContentFilter, 0},
		{"unknown reason", nil, false, []string{finish("cancelled_by_moon", "", `{"prompt_tokens":7,"completion_tokens":1}`), done}, FinishUnknown, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := scripted(t, 200, 0, tc.writes...)
			c, err := New(Options{BaseURL: srv.URL, API: Chat, Model: "m", Timeout: 5 * time.Second, Extra: tc.extra, IgnoreEOS: tc.ignoreEOS})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.CloseIdle)
			var res Result
			c.Do(context.Background(), []byte(`{}`), "1", &res)
			if !res.OK() || !res.NoContent() || res.Finish != tc.want || res.PromptTokens != 7 || res.UsageImplausible {
				t.Errorf("got err %q finish %q, no content %v, prompt %d, implausible %v; want an answer of no text ending %q",
					res.Err, res.Finish, res.NoContent(), res.PromptTokens, res.UsageImplausible, tc.want)
			}
			if tc.tokens > 0 && (res.OutputTokens != tc.tokens || res.TokenSource != TokensFromUsage) {
				t.Errorf("%d output tokens from %s, want %d from usage", res.OutputTokens, res.TokenSource, tc.tokens)
			}
			if res.FirstToken != 0 || res.FirstAnswer != 0 || res.End <= 0 {
				t.Errorf("first token %v, first answer %v, end %v: an answer of no text has no first token, only an end", res.FirstToken, res.FirstAnswer, res.End)
			}
		})
	}
	srv := scripted(t, 200, 0, role, done)
	var res Result
	newTestClient(t, srv.URL, "chat").Do(context.Background(), []byte(`{}`), "2", &res)
	if res.Err != ErrEmpty {
		t.Errorf("no content and no finish: %s %q, want %s", res.Err, res.Detail, ErrEmpty)
	}
	// An answer with text is named by its finish too.
	srv = scripted(t, 200, 0, chatChunk("hi"), finish("length", "", `{"prompt_tokens":7,"completion_tokens":1}`), done)
	newTestClient(t, srv.URL, "chat").Do(context.Background(), []byte(`{}`), "3", &res)
	if !res.OK() || res.NoContent() || res.Finish != FinishLength || res.FirstToken <= 0 {
		t.Errorf("answer cut at max_tokens: %+v", res)
	}
}

// A usage object claiming absurd counts is not believed: the streamed
// text's own count stands in, and the result says so.
func TestClientImplausibleUsage(t *testing.T) {
	t.Parallel()
	for _, usage := range []string{
		`{"prompt_tokens":7,"completion_tokens":1000000000000000000}`,
		`{"prompt_tokens":100000000,"completion_tokens":2}`,
		`{"prompt_tokens":7,"completion_tokens":-5}`,
	} {
		srv := scripted(t, 200, 0, chatChunk("hello"), chatChunk(" world"), `data: {"choices":[],"usage":`+usage+"}\n\n", done)
		var res Result
		newTestClient(t, srv.URL, "chat").Do(context.Background(), []byte(`{"messages":[]}`), "1", &res)
		if !res.OK() || res.OutputTokens != 2 || res.OutputTokens < 0 || res.TokenSource != TokensFromCounter {
			t.Errorf("usage %s: %d tokens from %s, implausible %v", usage, res.OutputTokens, res.TokenSource, res.UsageImplausible)
		}
	}
}

// The usage bound: tokens must show as text, except on engines that drop
// tokens which are no valid text (Ollama), where the stream's time bounds
// them instead.
func TestPlausibleUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                 string
		usage, bytes, chunks int
		elapsed              time.Duration
		untexted, want       bool
	}{
		{"every token as text", 16, 40, 16, 50 * time.Millisecond, false, true},
		{"byte tokens, 4 per character", 64, 48, 16, 50 * time.Millisecond, false, true},
		{"length cut, no decodable text", 4, 0, 2, 10 * time.Millisecond, false, true},
		{"ollama: tokens dropped as partial UTF-8", 400, 12, 6, 900 * time.Millisecond, true, true},
		{"the same on an engine that streams every token", 400, 12, 6, 900 * time.Millisecond, false, false},
		{"hostile: 10^6 tokens for 3 bytes in 1 ms", 1_000_000, 3, 1, time.Millisecond, true, false},
		{"hostile: 10^18 tokens in an hour", 1e18, 3, 1, 2 * time.Hour, true, false},
	} {
		if got := plausibleUsage(tc.usage, tc.bytes, tc.chunks, tc.elapsed, tc.untexted); got != tc.want {
			t.Errorf("%s: plausible %v, want %v", tc.name, got, tc.want)
		}
	}
}

// On the wire: an Ollama-like stream whose usage counts tokens it never
// streamed is believed where the engine is known to drop them, and a
// hostile usage is not, whatever the engine.
func TestClientUntextedUsage(t *testing.T) {
	t.Parallel()
	usage := func(n int) string {
		return `data: {"choices":[{"index":0,"delta":{"content":""},"finish_reason":"length"}],"usage":{"prompt_tokens":7,"completion_tokens":` + strconv.Itoa(n) + "}}\n\n"
	}
	for _, tc := range []struct {
		name     string
		untexted bool
		usage    int
		believed bool
	}{
		{"ollama, 300 tokens, 2 characters", true, 300, true},
		{"an engine that streams every token", false, 300, false},
		{"hostile on ollama", true, 1_000_000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// 20 ms between writes: at least 60 ms of stream, which grants
			// 6,000 untexted tokens; a loopback stream takes far under the
			// 10 s a million would need.
			srv := scripted(t, 200, 20*time.Millisecond, chatChunk("é"), chatChunk("a"), usage(tc.usage), done)
			c, err := New(Options{BaseURL: srv.URL, API: Chat, Model: "m", Timeout: 5 * time.Second, UntextedTokens: tc.untexted})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.CloseIdle)
			var res Result
			c.Do(context.Background(), []byte(`{}`), "1", &res)
			if !res.OK() || res.UsageImplausible == tc.believed || (res.TokenSource == TokensFromUsage) != tc.believed {
				t.Errorf("%d tokens from %s, implausible %v; believed should be %v", res.OutputTokens, res.TokenSource, res.UsageImplausible, tc.believed)
			}
			if tc.believed && res.OutputTokens != tc.usage {
				t.Errorf("%d output tokens, want the usage's %d", res.OutputTokens, tc.usage)
			}
		})
	}
}

// Streams the client cannot read are named as what they are, not as cut
// streams: a compressed stream sent against "identity", and a whole JSON
// answer from a server that ignored stream: true.
func TestClientNamesUnreadableStreams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		header, value, body string
		want                ErrorKind
	}{
		{"Content-Encoding", "gzip", "\x1f\x8b\x08\x00garbage", ErrEncoding},
		{"Content-Type", "application/json", `{"choices":[{"message":{"content":"hi"}}]}`, ErrNotStreamed},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(tc.header, tc.value)
			io.WriteString(w, tc.body)
		}))
		var res Result
		newTestClient(t, srv.URL, "chat").Do(context.Background(), []byte(`{}`), "1", &res)
		srv.Close()
		if res.Err != tc.want {
			t.Errorf("%s: %s: %s %q, want %s", tc.header, tc.value, res.Err, res.Detail, tc.want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		v    string
		want time.Duration
	}{
		{"", 0}, {"2", 2 * time.Second}, {" 0 ", 0}, {"-5", 0}, {"soon", 0},
		{now.Add(45 * time.Second).Format(http.TimeFormat), 45 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		// A wait of a day, or a date in a later year, counts as the cap.
		{"86400", MaxRetryAfter},
		{now.AddDate(30, 0, 0).Format(http.TimeFormat), MaxRetryAfter},
	} {
		if got := retryAfter(c.v, now); got != c.want {
			t.Errorf("Retry-After %q: %v, want %v", c.v, got, c.want)
		}
	}
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"1", "Wed, 21 Oct 2015 07:28:00 GMT", "", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if d := retryAfter(v, time.Now()); d < 0 || d > MaxRetryAfter {
			t.Errorf("Retry-After %q gave %v", v, d)
		}
	})
}

// TestPartTimeouts: a server that waits before its first chunk trips the
// first-token timeout, one that stalls between chunks the idle timeout,
// one that holds its headers back the first-token timeout too; each is a
// timeout that names its wait, and a stream inside both limits is answered.
func TestPartTimeouts(t *testing.T) {
	chunk := `data: {"choices":[{"delta":{"content":"x"}}]}` + "\n\n"
	cases := []struct {
		name                string
		headerWait, preWait time.Duration
		midWait             time.Duration
		want                ErrorKind
		detail              string
	}{
		{"slow first token", 0, 1500 * time.Millisecond, 0, ErrTimeout, "first-token timeout: no output for 300ms"},
		{"slow headers", 1500 * time.Millisecond, 0, 0, ErrTimeout, "first-token timeout"},
		{"stall mid-stream", 0, 0, 1500 * time.Millisecond, ErrTimeout, "idle timeout: no output for 300ms"},
		{"within both", 0, 0, 0, ErrNone, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(c.headerWait)
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(200)
				w.(http.Flusher).Flush()
				time.Sleep(c.preWait)
				io.WriteString(w, chunk)
				w.(http.Flusher).Flush()
				time.Sleep(c.midWait)
				io.WriteString(w, chunk+"data: [DONE]\n\n")
			}))
			defer srv.Close()
			cl, err := New(Options{BaseURL: srv.URL, API: "chat", Model: "m", Timeout: 5 * time.Second,
				FirstTokenTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			var res Result
			cl.Do(context.Background(), []byte(`{}`), "", &res)
			if res.Err != c.want || !strings.Contains(res.Detail, c.detail) {
				t.Errorf("error %q %q, want %q %q", res.Err, res.Detail, c.want, c.detail)
			}
		})
	}
}
