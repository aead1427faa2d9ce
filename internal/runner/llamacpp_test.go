package runner

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeLlamaCpp behaves as llama.cpp's server does where benchci must
// notice: a placeholder version in /props, llamacpp:* names in /metrics,
// usage and timings on the finish chunk, and, for every fourth request,
// the model choosing its end token first (one empty chunk with a finish
// reason). metrics replaces the /metrics page when set.
func fakeLlamaCpp(t *testing.T, metrics string) *httptest.Server {
	var served, tokens, scrapes, chats atomic.Int64
	sampled := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/props":
			io.WriteString(w, `{"build_info":"b0-unknown"}`)
			return
		case "/metrics":
			if scrapes.Add(1) == 2 {
				close(sampled) // the point's sampler has its first snapshot
			}
			if metrics != "" {
				io.WriteString(w, metrics)
				return
			}
			n, tk := served.Load(), tokens.Load()
			fmt.Fprintf(w, "# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total %d\n"+
				"# TYPE llamacpp:prompt_seconds_total counter\nllamacpp:prompt_seconds_total %g\n"+
				"# TYPE llamacpp:tokens_predicted_total counter\nllamacpp:tokens_predicted_total %d\n"+
				"# TYPE llamacpp:tokens_predicted_seconds_total counter\nllamacpp:tokens_predicted_seconds_total %g\n"+
				"# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 1\n"+
				"# TYPE llamacpp:requests_deferred gauge\nllamacpp:requests_deferred 0\n",
				100*n, 0.005*float64(n), tk, 0.002*float64(tk))
			return
		case "/v1/chat/completions":
		default:
			http.NotFound(w, r)
			return
		}
		req := readFakeChat(r)
		// The preflight, the three calibration probes and the shortest
		// prompt's come before the point; the point's requests wait for
		// its sampler's first snapshot (scrape 1 is engine detection), so
		// the counters move between snapshots however fast this machine
		// runs the point.
		if chats.Add(1) > 5 {
			select {
			case <-sampled:
			case <-r.Context().Done():
				return
			}
		}
		prompt := req.promptTokens()
		n := served.Add(1)
		out := req.MaxTokens
		if n%4 == 0 {
			out = 0 // EOS first
		}
		streamTokens(w, out)
		tokens.Add(int64(max(out, 1)))
		fmt.Fprintf(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,"completion_tokens":%d},"timings":{"prompt_n":%d,"prompt_ms":5,"predicted_n":%d,"predicted_ms":%d}}`+"\n\n",
			prompt, max(out, 1), prompt, max(out, 1), 2*max(out, 1))
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestLlamaCppMeasuredAsItIs(t *testing.T) {
	t.Parallel()
	srv := fakeLlamaCpp(t, "")
	src := fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'llamacpp',
  target: b.target.url('%s', model='tiny'),
  workload: { input_tokens: b.dist.fixed(32), output_tokens: b.dist.fixed(4) },
  sweep: b.sweep.concurrency([2], requests=40, warmup='0s', duration='0s'),
}`, srv.URL)
	f := runSource(t, "llamacpp.jsonnet", src)
	notes := strings.Join(f.Notes, "\n")
	if f.Engine == nil || f.Engine.Name != "llama.cpp" || f.Engine.Version != "" || !strings.Contains(notes, `reported version "b0-unknown", a placeholder`) {
		t.Errorf("engine %+v, notes:\n%s", f.Engine, notes)
	}
	p := f.Points[0]
	if p.Requests.Failed != 0 || p.Requests.Sent != 40 || p.Tokens.EmptyAnswers < 9 {
		t.Errorf("requests %+v, empty answers %d: EOS-first answers must count as answers", p.Requests, p.Tokens.EmptyAnswers)
	}
	if st := p.ServerTimings; st == nil || st.PromptMsMean != 5 || st.TPOTMsMean != 2 {
		t.Errorf("server timings %+v, want the server's 5 ms prompts and 2 ms per token", p.ServerTimings)
	}
	if p.Server["running_peak"] != 1 || p.Server["generation_tokens"] <= 0 || p.Server["server_prompt_tok_per_s"] != 20000 {
		t.Errorf("server figures %v: llama.cpp's metrics were not read", p.Server)
	}
	if p.ServerFrom != "window" {
		t.Errorf("server figures from %q, want the measured window's start", p.ServerFrom)
	}
	if c := f.Calibration; c == nil || c.Overhead != 3 || c.TokensPerWord != 1 || len(c.Residuals) != 3 {
		t.Errorf("calibration %+v", f.Calibration)
	}

	// The same server with metric names benchci does not know: said so.
	odd := fakeLlamaCpp(t, "# TYPE myengine:queue gauge\nmyengine:queue 3\n")
	f = runSource(t, "llamacpp.jsonnet", strings.Replace(src, srv.URL, odd.URL, 1))
	if notes := strings.Join(f.Notes, "\n"); !strings.Contains(notes, "none of their names is one benchci knows (myengine:queue, ...)") {
		t.Errorf("notes:\n%s", notes)
	}
}
