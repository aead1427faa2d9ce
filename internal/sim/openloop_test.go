package sim

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// An open-loop row replays Poisson arrivals at its rate, every request
// measured: a busier rate queues more prompts behind each other, so its
// mean TTFT is longer, and the table names the load by its rate.
func TestOpenLoopReferences(t *testing.T) {
	t.Parallel()
	row := func(rate float64) Reference {
		return Reference{Test: "open", Engine: "vLLM", Model: "llama-3-8b", GPU: "h100-sxm", TP: 1, Input: 1024, Output: 128, Requests: 400, Rate: rate,
			TTFTMs: 50, TPOTMs: 10, OutputPerSec: 100 * rate, Source: "s"}
	}
	cs, err := Check([]Reference{row(1), row(30)})
	if err != nil {
		t.Fatal(err)
	}
	slow, busy := cs[0], cs[1]
	if slow.Sim.Requests != 400 || busy.Sim.Requests != 400 {
		t.Fatalf("measured %d and %d requests, want all 400 sent", slow.Sim.Requests, busy.Sim.Requests)
	}
	if !(busy.Sim.Mean.TTFT > slow.Sim.Mean.TTFT) || !(busy.Sim.Mean.TTFT >= busy.Sim.TTFT) {
		t.Errorf("mean TTFT %v at 30 req/s, %v at 1 (median %v at 30): want the busier rate's longer, its mean above its median",
			busy.Sim.Mean.TTFT, slow.Sim.Mean.TTFT, busy.Sim.TTFT)
	}
	// Below the knee the output throughput is what was sent: 128 tokens a
	// request at the rate, within the draw's noise.
	if got := slow.Sim.OutputPerSec; got < 0.7*128 || got > 1.3*128 {
		t.Errorf("output %.0f tok/s at 1 req/s of 128-token answers", got)
	}
	for _, name := range []string{"ttft", "tpot", "throughput"} {
		if _, ok := busy.Errors[name]; !ok {
			t.Errorf("no %s error on an open-loop row: %v", name, busy.Errors)
		}
	}
	if md := Markdown(cs); !strings.Contains(md, "Poisson 30 req/s, 1024/128") {
		t.Errorf("the table does not name the open loop's rate:\n%s", md)
	}
}

// A request path's delay is spread over half to one and a half of the
// profile's RequestOverhead, request by request, in the closed loop as in
// the open one: one fixed delay locked a closed loop's clients into
// phase.
func TestRequestPathIsSpread(t *testing.T) {
	t.Parallel()
	p, _ := Lookup("llama3-8b-h100")
	p.RequestOverhead = 20 * time.Millisecond
	for _, d := range []time.Duration{p.requestDelay(0), p.requestDelay(0.5), p.requestDelay(0.999)} {
		if d < 10*time.Millisecond || d >= 30*time.Millisecond {
			t.Errorf("request delay %v outside 10-30 ms", d)
		}
	}
	// One client, short prompts: each TTFT is the request path and one
	// short prefill, so its spread is the path's.
	for _, conc := range []int{1, 0} {
		run := Run{Concurrency: conc, Rate: 0.5, Requests: 200, Seed: 7, Lengths: func(*rand.Rand) (int, int) { return 16, 4 }}
		if conc > 0 {
			run.Rate = 0
		}
		res := Simulate(p, run)
		lo, hi := time.Hour, time.Duration(0)
		for _, s := range res.Samples {
			lo, hi = min(lo, s.TTFT), max(hi, s.TTFT)
		}
		if hi-lo < 10*time.Millisecond || lo < 10*time.Millisecond {
			t.Errorf("concurrency %d: TTFT from %v to %v: want the request path's 10-30 ms spread in it", conc, lo, hi)
		}
	}
}
