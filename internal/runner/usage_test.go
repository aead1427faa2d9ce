package runner

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/internal/report"
)

// fakeUntexted streams answers as Ollama does with a byte-token
// vocabulary: of claimed tokens, one character comes as text, the rest
// were no valid UTF-8 on their own and were dropped; the usage counts
// them all. engine names the server through its probe: "ollama" answers
// /api/version, anything else vLLM's /version.
func fakeUntexted(t *testing.T, engine string, claimed int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/version" && engine == "ollama", r.URL.Path == "/version" && engine != "ollama":
			io.WriteString(w, `{"version":"0.6.5"}`)
			return
		case r.URL.Path != "/v1/chat/completions":
			http.NotFound(w, r)
			return
		}
		prompt := readFakeChat(r).promptTokens()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"é"},"finish_reason":null}]}`+"\n\n")
		w.(http.Flusher).Flush()
		// Generation takes time: 20 ms at least, which grants 2,000
		// tokens that need not show as text.
		time.Sleep(20 * time.Millisecond)
		fmt.Fprintf(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":%d,"completion_tokens":%d}}`+"\n\n", prompt, claimed)
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A usage is judged by what the engine is known to do: Ollama's 300
// tokens for one character are believed (it drops tokens that are no
// valid text, and 300 tokens fit the stream's time), the same on an
// engine that streams every token are not, and a million tokens in a
// fraction of a second are not on any.
func TestUsageJudgedByEngine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		engine   string
		claimed  int
		believed bool
	}{
		{"ollama", 300, true},
		{"vllm", 300, false},
		{"ollama", 1_000_000, false},
	} {
		t.Run(fmt.Sprintf("%s %d", tc.engine, tc.claimed), func(t *testing.T) {
			t.Parallel()
			srv := fakeUntexted(t, tc.engine, tc.claimed)
			f := runSource(t, "untexted.jsonnet", fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'untexted',
  target: b.target.url('%s', model='tiny'),
  workload: { input_tokens: b.dist.fixed(32), output_tokens: b.dist.fixed(300) },
  sweep: b.sweep.concurrency([2], requests=6, warmup='0s', duration='0s'),
}`, srv.URL))
			if f.Engine == nil || f.Engine.Name != tc.engine {
				t.Fatalf("engine %+v, want %s", f.Engine, tc.engine)
			}
			p := f.Points[0]
			rejected := 0
			if !tc.believed {
				rejected = 6
			}
			if p.Requests.Completed != 6 || p.Tokens.UsageRejected != rejected || p.Tokens.Source["usage"] != 6-rejected {
				t.Errorf("%d answers, %d usages rejected, sources %v; want 6, %d rejected", p.Requests.Completed, p.Tokens.UsageRejected, p.Tokens.Source, rejected)
			}
			if tc.believed && (p.Tokens.Output.Min != 300 || p.Tokens.OutputMismatch != 0) {
				t.Errorf("output tokens %+v, %d mismatched; want the usage's 300", p.Tokens.Output, p.Tokens.OutputMismatch)
			}
		})
	}
}

// Answers of no content, as real engines send them, end to end: a stop
// sequence the suite asked for matched at once (vLLM names it in
// stop_reason), max_tokens of byte tokens that decode to no valid text
// under ignore_eos (usage 4, no content chunk), and Ollama's end token
// with a usage of 5. Each is counted by its kind, none has a TTFT or
// TPOT, and the notes name their causes: no "end token first" for the
// stop sequence or the length cut, no ignore_eos question for answers
// the suite's stop sequences ended.
func TestEmptyAnswersNamedEndToEnd(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/version":
			io.WriteString(w, `{"version":"0.9.0"}`)
			return
		case "/v1/chat/completions":
		default:
			http.NotFound(w, r)
			return
		}
		req := readFakeChat(r)
		prompt := req.promptTokens()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`+"\n\n")
		finish, extra, tokens := "length", "", req.MaxTokens
		switch i := n.Add(1); {
		case i <= 4 || i%3 == 0: // the preflight, calibration, and a third of the answers: text
			streamTokens(w, req.MaxTokens)
		case i%3 == 1:
			finish, extra, tokens = "stop", `,"stop_reason":"END"`, 1
		default:
			tokens = 4 // cut at max_tokens, nothing decodable
		}
		fmt.Fprintf(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":%q%s}],"usage":{"prompt_tokens":%d,"completion_tokens":%d}}`+"\n\n", finish, extra, prompt, tokens)
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	f := runSource(t, "empty.jsonnet", fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'empty',
  target: b.target.url('%s', model='tiny'),
  request: { extra: { stop: ['END'] } },
  workload: { input_tokens: b.dist.fixed(32), output_tokens: b.dist.fixed(4) },
  sweep: b.sweep.concurrency([1], requests=30, warmup='0s', duration='0s'),
}`, srv.URL))
	p := f.Points[0]
	tk, l := p.Tokens, p.Latency
	if f.Sent == nil || !f.Sent.IgnoreEOS {
		t.Fatalf("sent %+v: vLLM takes ignore_eos", f.Sent)
	}
	if p.Requests.Completed != 30 || tk.EmptyAnswers != 20 || tk.EmptyKinds["stop_sequence"] != 10 || tk.EmptyKinds["length"] != 10 {
		t.Errorf("%d answers, %d empty by kind %v; want 30, 10 on the stop sequence, 10 cut with no text", p.Requests.Completed, tk.EmptyAnswers, tk.EmptyKinds)
	}
	// An answer whose tokens a loaded machine read in one go has no TPOT
	// sample (tokens.one_read): the 10 with text are counted either way.
	if l[metric.TTFT].Count+int64(tk.CoalescedFirst) != 10 || l[metric.TPOT].Count+int64(tk.OneRead) != 10 || l[metric.E2E].Count != 30 {
		t.Errorf("TTFT %d (+%d), TPOT %d (+%d in one read), E2E %d samples; want TTFT and TPOT of the 10 answers with text, E2E of all 30",
			l[metric.TTFT].Count, tk.CoalescedFirst, l[metric.TPOT].Count, tk.OneRead, l[metric.E2E].Count)
	}
	notes := strings.Join(report.NotesSent(p, f.Sent), "\n")
	for _, want := range []string{"20 answers carried no content: 10 ended on a stop sequence the suite asked for, 10 were cut at max_tokens by tokens that decode to no valid text",
		"10 requests returned a different output length than requested: 10 ended on a stop sequence the suite asked for, shorter by design"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "end token") || strings.Contains(notes, "honour") {
		t.Errorf("notes blame the end token or ignore_eos:\n%s", notes)
	}
}
