package main

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/result"
)

// TestCapacityFindsKnownCapacity searches the capacity of a simulated server
// whose capacity is known in closed form. The tiny profile runs 4 sequences
// at once; a request of 10 words (18 prompt tokens with the chat template)
// and 20 output tokens holds a slot for 20 engine steps (1 prefill + 19
// decodes); a full step costs 2 ms + 4 x 0.5 ms decode + ~0.04 ms of prefill
// on average = 4.04 ms. So the server completes at most
//
//	4 / (20 x 4.04 ms) = 49.5 requests/s.
//
// Below that, constant arrivals never queue and TTFT stays under two steps
// (~8 ms); above it the queue grows for the whole window and the TTFT SLO
// fails. The search is replayed in virtual time: what it tests is the
// search and the command's wiring, not the wire (a probe is a rate point
// like those the run tests measure over HTTP), so no machine noise blurs
// the queue and the search must land within its precision, 5%, of 49.5.
func TestCapacityFindsKnownCapacity(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeSuite(t, dir, "capacity", `
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(20), arrival: b.arrival.constant() },
  sweep: b.sweep.capacity(min=10, max=100, precision=0.05, duration='2s', warmup='500ms'),
  slos: [b.slo.p90('ttft', '<', '30ms')],
  cost: b.cost.gpu(usd_per_hour=1),`)
	code, stdout, stderr := runCLI(t, context.Background(), "run", "--virtual", "--results", dir, "--progress=false", path)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	f, err := result.Read(filepath.Join(dir, "capacity.json"))
	if err != nil {
		t.Fatal(err)
	}
	c := f.Capacity
	if c == nil || c.Bound != "bracketed" {
		t.Fatalf("capacity %+v", c)
	}
	const truth = 4 / (20 * 4.04e-3)
	t.Logf("capacity %.1f req/s (fails at %.1f) in %d probes; true %.1f", c.Rate, c.Failing, c.Probes, truth)
	if math.Abs(c.Rate/truth-1) > 0.05 || c.Failing/c.Rate-1 > 0.05 {
		t.Errorf("capacity %.1f (failing %.1f), true capacity %.1f", c.Rate, c.Failing, truth)
	}
	if c.Cost == nil || c.OutputThroughput <= 0 || len(f.Points) != c.Probes {
		t.Errorf("capacity %+v with %d points", c, len(f.Points))
	}
	// The run passes: only the capacity point's SLOs gate, not the probes
	// above capacity that failed by design.
	if len(f.SLOs) != 1 || !f.SLOs[0].Pass {
		t.Errorf("SLO verdicts %+v", f.SLOs)
	}
	if !strings.Contains(stdout, "capacity: ") {
		t.Errorf("table lacks the capacity:\n%s", stdout)
	}
}
