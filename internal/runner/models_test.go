package runner

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/benchci/benchci/internal/sim"
)

// A mix of a base model and an adapter: the simulator serves both names,
// the point keeps each model's figures (their requests add up to the
// point's), and an SLO holds one model to its own requests.
func TestModelMixPerModelFigures(t *testing.T) {
	p, _ := sim.Lookup("tiny")
	p.MaxNumSeqs = 64
	srv := sim.New(p)
	var mu sync.Mutex
	seen := map[string]int{}
	srv.OnTrace = func(tr sim.Trace) {
		mu.Lock()
		seen[tr.Model]++
		mu.Unlock()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u, err := srv.Listen(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := runSource(t, filepath.Join(t.TempDir(), "mix.jsonnet"), fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'mix',
  target: b.target.url('%s', model='benchci/tiny'),
  workload: {
    input_tokens: b.dist.fixed(16), output_tokens: b.dist.fixed(4),
    models: [{ name: 'benchci/tiny', weight: 3 }, { name: 'sql-lora', weight: 1 }],
  },
  sweep: b.sweep.rates([50], duration='10s', warmup='0s', requests=400),
  slos: [
    { metric: 'ttft', stat: 'p99', op: '<', threshold: '10s', model: 'sql-lora' },
    { metric: 'error_rate', op: '<=', threshold: 0, model: 'benchci/tiny' },
  ],
}`, u))
	pt := f.Points[0]
	base, lora := pt.Models["benchci/tiny"], pt.Models["sql-lora"]
	if base == nil || lora == nil {
		t.Fatalf("models %v", pt.Models)
	}
	if base.Requests.Sent+lora.Requests.Sent != pt.Requests.Sent || pt.Requests.Sent != 400 {
		t.Errorf("sent %d + %d, point %d", base.Requests.Sent, lora.Requests.Sent, pt.Requests.Sent)
	}
	if share := float64(lora.Requests.Sent) / 400; math.Abs(share-0.25) > 0.06 {
		t.Errorf("adapter share %.3f, want about 0.25", share)
	}
	if got, want := base.Throughput.OutputTokens+lora.Throughput.OutputTokens, pt.Throughput.OutputTokens; math.Abs(got-want) > 1e-6*want {
		t.Errorf("models' throughputs add to %.3f, the point's is %.3f", got, want)
	}
	// Every answer has a TTFT, but for first tokens a busy client read late.
	if lora.Latency["ttft"].Count+int64(lora.Tokens.CoalescedFirst) != int64(lora.Requests.Completed) || lora.Requests.Completed == 0 {
		t.Errorf("adapter TTFT over %d requests (%d read late), %d completed", lora.Latency["ttft"].Count, lora.Tokens.CoalescedFirst, lora.Requests.Completed)
	}
	// The server saw each request of the point once, and once more per
	// rerun of it (a trial a busy machine made invalid).
	sends := 1
	if v := pt.Validity; v != nil {
		sends += len(v.Reruns)
	}
	mu.Lock()
	if seen["sql-lora"] != sends*lora.Requests.Sent || seen["benchci/tiny"] < base.Requests.Sent { // the base also gets the run's probes
		t.Errorf("server saw %v", seen)
	}
	mu.Unlock()
	if len(f.SLOs) != 2 {
		t.Fatalf("SLOs %+v", f.SLOs)
	}
	for _, v := range f.SLOs {
		// A trial still invalid after its reruns (a loaded machine) judges
		// nothing: inconclusive, never a failure.
		if !(v.Pass || v.Inconclusive && !pt.Valid()) || !strings.Contains(v.Name, " for ") {
			t.Errorf("SLO %+v", v)
		}
	}
	if v := f.SLOs[0]; v.Measured != lora.Latency["ttft"].P99 {
		t.Errorf("the adapter's SLO measured %.3f, its P99 is %.3f", v.Measured, lora.Latency["ttft"].P99)
	}
}
