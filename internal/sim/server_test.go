package sim

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func startServer(t *testing.T, p Profile) (*Server, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := New(p)
	u, err := s.Listen(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return s, u
}

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	return answer(t)(http.Post(url, "application/json", strings.NewReader(body)))
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	return answer(t)(http.Get(url))
}

// answer reads a whole response, failing the test on any error.
func answer(t *testing.T) func(*http.Response, error) (int, string) {
	return func(resp *http.Response, err error) (int, string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
}

func TestServerChatStream(t *testing.T) {
	t.Parallel()
	p, _ := Lookup("tiny")
	s, u := startServer(t, p)
	traces := make(chan Trace, 1)
	s.OnTrace = func(tr Trace) { traces <- tr }
	code, body := post(t, u+"/v1/chat/completions", `{"model":"x","messages":[{"role":"user","content":"a b c d"}],"max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}`)
	if code != 200 {
		t.Fatalf("HTTP %d: %s", code, body)
	}
	events := strings.Split(strings.TrimSpace(body), "\n\n")
	if events[len(events)-1] != "data: [DONE]" {
		t.Fatalf("last event %q", events[len(events)-1])
	}
	var text strings.Builder
	var usage map[string]int
	for _, ev := range events[:len(events)-1] {
		var ch struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
			Usage map[string]int `json:"usage"`
		}
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok {
			t.Fatalf("event %q", ev)
		}
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			t.Fatalf("event %q: %v", ev, err)
		}
		for _, c := range ch.Choices {
			text.WriteString(c.Delta.Content)
		}
		if ch.Usage != nil {
			usage = ch.Usage
		}
	}
	if got := CountTokens(text.String()); got != 5 {
		t.Errorf("streamed %d words, want 5: %q", got, text.String())
	}
	// 4 words + 5 template tokens for the message + 3 for the assistant header.
	if usage["prompt_tokens"] != 12 || usage["completion_tokens"] != 5 || usage["total_tokens"] != 17 {
		t.Errorf("usage %v", usage)
	}
	select {
	case tr := <-traces:
		if tr.OutputTokens != 5 || tr.PromptTokens != 12 || !tr.Arrived.Before(tr.FirstToken) || tr.FirstToken.After(tr.Done) {
			t.Errorf("trace %+v", tr)
		}
		// A lone request's first token takes one prefill step: it cannot
		// come sooner. (How much later depends on this machine's load; the
		// step times themselves are checked exactly, with an injected
		// sleep, by TestEngineSingleRequestSteps.)
		if got, want := tr.FirstToken.Sub(tr.Arrived), p.IdleTTFT(12); got < want {
			t.Errorf("server-side TTFT %v, shorter than the prefill step %v", got, want)
		}
	case <-time.After(30 * time.Second): // a hang guard, not a timing
		t.Error("no trace")
	}
}

// The role-only chunk comes with the first token, not before it: vLLM's
// benchmark client counts any chunk as the first token, and against an
// early role chunk it measured 2 ms where the truth was 35.
func TestServerRoleChunkComesWithFirstToken(t *testing.T) {
	t.Parallel()
	p, _ := Lookup("tiny")
	s, u := startServer(t, p)
	traces := make(chan Trace, 1)
	s.OnTrace = func(tr Trace) { traces <- tr }
	resp, err := http.Post(u+"/v1/chat/completions", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"a b c d"}],"max_tokens":3,"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	firstRead := time.Now()
	if err != nil || !strings.Contains(line, `"role":"assistant"`) {
		t.Fatalf("first line %q (%v), want the role chunk", line, err)
	}
	io.Copy(io.Discard, br)
	select {
	case tr := <-traces:
		// The server stamps the first token before writing it; a role chunk
		// written earlier could be read before that stamp.
		if firstRead.Before(tr.FirstToken) {
			t.Errorf("role chunk read %v before the first token was written", tr.FirstToken.Sub(firstRead))
		}
	case <-time.After(30 * time.Second): // a hang guard, not a timing
		t.Error("no trace")
	}
}

func TestServerCompletionsAndErrors(t *testing.T) {
	t.Parallel()
	p, _ := Lookup("tiny")
	_, u := startServer(t, p)
	tests := []struct {
		name, path, body string
		code             int
		contains         string
	}{
		{"completion whole", "/v1/completions", `{"prompt":"a b","max_tokens":3}`, 200, `"completion_tokens":3`},
		{"completion stream", "/v1/completions", `{"prompt":["a b"],"max_tokens":2,"stream":true}`, 200, `"logprobs":null,"finish_reason":"length"}]}`},
		{"chat parts", "/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"text","text":"a b"}]}],"max_tokens":1}`, 200, `"prompt_tokens":10`},
		{"too long", "/v1/completions", `{"prompt":"a","max_tokens":5000}`, 400, "maximum context length is 4096"},
		{"bad json", "/v1/completions", `{`, 400, "bad JSON"},
		{"no messages", "/v1/chat/completions", `{"max_tokens":1}`, 400, "messages: required"},
		{"zero max_tokens", "/v1/completions", `{"prompt":"a","max_tokens":0}`, 400, "at least 1"},
		{"unknown path", "/v2/x", `{}`, 404, "not found"},
	}
	for _, tt := range tests {
		code, body := post(t, u+tt.path, tt.body)
		if code != tt.code || !strings.Contains(body, tt.contains) {
			t.Errorf("%s: HTTP %d %s; want %d containing %q", tt.name, code, body, tt.code, tt.contains)
		}
		// A stream's tokens come in as many chunks as the handler found
		// them ready (one each, or two in one on a busy machine): their
		// text is the same.
		if tt.name == "completion stream" {
			if text := streamedText(t, body); text != " the of" {
				t.Errorf("%s: streamed text %q, want %q", tt.name, text, " the of")
			}
		}
	}
	resp, err := http.Get(u + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var models struct {
		Data []struct{ ID string } `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&models); err != nil || len(models.Data) != 1 || models.Data[0].ID != p.Model {
		t.Errorf("models %+v %v", models, err)
	}
}

func TestCountTokens(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{"": 0, "a": 1, " a  b\n\tc ": 3, "   ": 0} {
		if got := CountTokens(in); got != want {
			t.Errorf("CountTokens(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestServerPrefixCaching sends the same system prompt twice, then
// another question after it: the second request's prompt is held but for
// its last token, the third's up to the last whole block the two share.
// Counted, not timed: a sequence's prefill is its uncached tokens alone
// (TestCachedPrefill), so counting the hits is checking the saving.
func TestServerPrefixCaching(t *testing.T) {
	t.Parallel()
	p, _ := Lookup("tiny")
	p.PrefixCaching = true
	s, u := startServer(t, p)
	traces := make(chan Trace, 3)
	s.OnTrace = func(tr Trace) { traces <- tr }
	system := strings.Repeat("rule ", 200) // with its 5 template tokens: 205
	var cached []int
	for _, user := range []string{"hi", "hi", "something else entirely"} {
		body := `{"messages":[{"role":"system","content":"` + system + `"},{"role":"user","content":"` + user + `"}],"max_tokens":1,"stream":true}`
		if code, out := post(t, u+"/v1/chat/completions", body); code != 200 {
			t.Fatalf("HTTP %d %s", code, out)
		}
		cached = append(cached, (<-traces).CachedTokens)
	}
	// 214 tokens (205 + 5 + 1 + the 3 of the assistant header): 13 whole
	// blocks, 208 tokens. The third shares the system prompt and the user
	// role's template tokens (210): 13 blocks again, the 13th ending
	// inside the template.
	if want := []int{0, 208, 208}; !slices.Equal(cached, want) {
		t.Errorf("cached tokens %v, want %v", cached, want)
	}
}

// A non-streaming structured request gets its structured answer whole: a
// tool call whose arguments are an instance of the tool's schema, or JSON
// text for a response format, with the finish reason a model gives.
func TestWholeStructuredAnswers(t *testing.T) {
	t.Parallel()
	p, _ := Lookup("tiny")
	_, u := startServer(t, p)
	schema := `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city","days"]}`
	var tool struct {
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					Type     string `json:"type"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	code, out := post(t, u+"/v1/chat/completions", `{"messages":[{"role":"user","content":"weather?"}],"max_tokens":200,
		"tools":[{"type":"function","function":{"name":"forecast","parameters":`+schema+`}}],"tool_choice":"required"}`)
	if err := json.Unmarshal([]byte(out), &tool); code != 200 || err != nil || len(tool.Choices) != 1 {
		t.Fatalf("HTTP %d %v: %s", code, err, out)
	}
	c := tool.Choices[0]
	var args struct {
		City *string
		Days *int
	}
	if c.FinishReason != "tool_calls" || c.Message.Content != nil || len(c.Message.ToolCalls) != 1 ||
		c.Message.ToolCalls[0].Function.Name != "forecast" || json.Unmarshal([]byte(c.Message.ToolCalls[0].Function.Arguments), &args) != nil ||
		args.City == nil || args.Days == nil {
		t.Errorf("tool call answer: %s", out)
	}
	code, out = post(t, u+"/v1/chat/completions", `{"messages":[{"role":"user","content":"weather?"}],"max_tokens":200,
		"response_format":{"type":"json_schema","json_schema":{"name":"f","schema":`+schema+`}}}`)
	if err := json.Unmarshal([]byte(out), &tool); code != 200 || err != nil || len(tool.Choices) != 1 {
		t.Fatalf("HTTP %d %v: %s", code, err, out)
	}
	c = tool.Choices[0]
	args.City, args.Days = nil, nil
	if c.FinishReason != "stop" || c.Message.Content == nil || json.Unmarshal([]byte(*c.Message.Content), &args) != nil || args.City == nil || args.Days == nil {
		t.Errorf("JSON answer: %s", out)
	}
}

// streamedText joins the text of a completions stream's chunks.
func streamedText(t *testing.T, body string) string {
	t.Helper()
	var text strings.Builder
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Text string `json:"text"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil || len(c.Choices) != 1 {
			t.Fatalf("chunk %q: %v", data, err)
		}
		text.WriteString(c.Choices[0].Text)
	}
	return text.String()
}
