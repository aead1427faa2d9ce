package client

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
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
			srv := scripted(t, status, time.Millisecond, tt.writes...)
			c := newTestClient(t, srv.URL, tt.api)
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

// A model that chooses its end token first sends one empty chunk with a
// finish reason (llama.cpp, Ollama): a normal answer of no text, timed to
// the finish, not an error. Without a finish reason, an empty stream is.
func TestClientEOSFirstIsAnAnswer(t *testing.T) {
	t.Parallel()
	eos := `data: {"choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":1}}` + "\n\n"
	srv := scripted(t, 200, 0, `data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}`+"\n\n", eos, done)
	var res Result
	newTestClient(t, srv.URL, "chat").Do(context.Background(), []byte(`{}`), "1", &res)
	if !res.OK() || res.OutputTokens != 1 || res.PromptTokens != 7 || len(res.ChunkAt) != 0 || res.FirstToken <= 0 || res.FirstToken > res.End {
		t.Errorf("EOS first: %+v", res)
	}
	srv = scripted(t, 200, 0, `data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}`+"\n\n", done)
	res = Result{}
	newTestClient(t, srv.URL, "chat").Do(context.Background(), []byte(`{}`), "2", &res)
	if res.Err != ErrEmpty {
		t.Errorf("no content and no finish: %s %q, want %s", res.Err, res.Detail, ErrEmpty)
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
