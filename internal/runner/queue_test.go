package runner

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/report"
)

// A llama.cpp-like server with one slot whose requests queue where its
// waiting gauge (llamacpp:requests_deferred) cannot see them, as they do
// in llama-server's HTTP threads: the gauge stays 0 while the client's
// TTFT shows the queue. The point's figures derive the queue from what
// can see it, and the report says the gauge is not the whole queue.
func TestQueueTheWaitingGaugeCannotSee(t *testing.T) {
	t.Parallel()
	var (
		slot     sync.Mutex
		inside   atomic.Int64 // point requests in the handler, held or running
		seen     atomic.Int64 // scrapes served while all four were inside
		released = make(chan struct{})
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/props":
			io.WriteString(w, `{"build_info":"b4000-abc"}`)
			return
		case "/metrics":
			// The scrape that saw all four inside is over when the next
			// one comes (the sampler scrapes one at a time): releasing on
			// the third leaves the second read whole, in flight 4 before
			// and after it.
			if inside.Load() == 4 && seen.Add(1) == 3 {
				close(released)
			}
			running := min(inside.Load(), 1)
			fmt.Fprintf(w, "# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing %d\n"+
				"# TYPE llamacpp:requests_deferred gauge\nllamacpp:requests_deferred 0\n", running)
			return
		case "/v1/chat/completions":
		default:
			http.NotFound(w, r)
			return
		}
		req := readFakeChat(r)
		if req.MaxTokens == 6 { // the point's, not the preflight's or calibration's
			inside.Add(1)
			defer inside.Add(-1)
			slot.Lock()
			defer slot.Unlock()
			select {
			case <-released:
			case <-r.Context().Done():
				return
			}
		}
		streamTokens(w, req.MaxTokens)
		fmt.Fprintf(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":40,"completion_tokens":%d},"timings":{"prompt_n":40,"prompt_ms":5,"predicted_n":%d,"predicted_ms":10}}`+"\n\n",
			req.MaxTokens, req.MaxTokens)
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	// The first attempt is kept whatever the machine did: a rerun would
	// find the slot released and nothing held (the server above is a
	// one-shot), so a loaded machine could not fail this test by stalling.
	l, err := suitefile.LoadSource("queue.jsonnet", fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'queue',
  target: b.target.url('%s', model='tiny'),
  workload: { input_tokens: b.dist.fixed(40), output_tokens: b.dist.fixed(6) },
  sweep: b.sweep.concurrency([4], requests=8, warmup='0s', duration='0s'),
}`, srv.URL), suitefile.Options{Known: Known()})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Run(context.Background(), inputOf(l), Options{Reruns: -1})
	if err != nil {
		t.Fatal(err)
	}
	p := f.Points[0]
	if p.Requests.Completed != 8 {
		t.Fatalf("requests %+v", p.Requests)
	}
	q := p.Queue
	if w, ok := p.Server["waiting_peak"]; !ok || w != 0 {
		t.Errorf("server figures %v: want the gauge's waiting_peak of 0", p.Server)
	}
	if q == nil || q.HeldPeak != 3 || q.Scrapes < 3 || !strings.Contains(q.GaugeBlind, "HTTP thread") {
		t.Fatalf("queue %+v: want 3 held (4 in flight, 1 running) and the gauge's blind spot named", q)
	}
	if ttft := p.Latency["ttft"]; q.WaitMsMean <= 0 || q.WaitMsMean != ttft.Mean-5 {
		t.Errorf("queue wait %v ms: want the client's TTFT mean %v minus the server's 5 ms prompts", q.WaitMsMean, ttft.Mean)
	}
	notes := strings.Join(report.Notes(p), "\n")
	for _, want := range []string{"waiting_peak 0 (not the whole queue: see queue)", "queue: up to 3 of this client's requests held by the server without running", "requests waiting for an HTTP thread"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes say nothing of %q:\n%s", want, notes)
		}
	}
}
