package sim

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func disaggProfiles(t *testing.T, link float64, lat time.Duration) (colocated, disagg Profile) {
	t.Helper()
	colocated = derive(t, "llama-3-8b", "h100-sxm", Spec{}, Knobs{})
	disagg, err := WithDisaggregation(colocated, Disaggregation{LinkGBs: link, LinkLatency: lat})
	if err != nil {
		t.Fatal(err)
	}
	return colocated, disagg
}

// A lone request's first token comes from the prefill instance as it
// would colocated; its second pays the KV transfer: the bytes of its
// prompt's KV cache over the link, and the link's latency.
func TestDisaggTransferDelaysSecondToken(t *testing.T) {
	t.Parallel()
	col, dis := disaggProfiles(t, 10, 2*time.Millisecond)
	const in = 4000
	lengths := func(*rand.Rand) (int, int) { return in, 2 }
	a := Simulate(col, Run{Concurrency: 1, Requests: 1, Lengths: lengths})
	b := Simulate(dis, Run{Concurrency: 1, Requests: 1, Lengths: lengths})
	if a.Samples[0].TTFT != b.Samples[0].TTFT {
		t.Errorf("TTFT %v disaggregated, %v colocated: the prefill is the same", b.Samples[0].TTFT, a.Samples[0].TTFT)
	}
	// 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes per token.
	transfer := time.Duration(float64(in*2*32*8*128*2)/10e9*1e9) + 2*time.Millisecond
	if got := dis.Disagg.TransferTime(in); (got - transfer).Abs() > time.Microsecond {
		t.Errorf("transfer %v, want %v", got, transfer)
	}
	gap := func(r RunResult) time.Duration { return r.Samples[0].E2E - r.Samples[0].TTFT }
	if d := gap(b) - gap(a) - transfer; d.Abs() > 10*time.Microsecond {
		t.Errorf("second token %v later disaggregated, want the transfer's %v", gap(b)-gap(a), transfer)
	}
}

// Under mixed load, decodes colocated with prefill chunks wait for them;
// on a decode instance they do not: ITL drops, TTFT pays the transfer.
func TestDisaggLowersITLUnderMixedLoad(t *testing.T) {
	t.Parallel()
	col, dis := disaggProfiles(t, 25, time.Millisecond)
	lengths := func(r *rand.Rand) (int, int) { return 1000 + r.IntN(3000), 200 }
	// Two colocated instances against one prefill and one decode: each
	// colocated one sees half the rate.
	a := Simulate(col, Run{Rate: 2, Requests: 300, Lengths: lengths, Seed: 4})
	b := Simulate(dis, Run{Rate: 4, Requests: 300, Lengths: lengths, Seed: 4})
	ttftA, itlA := meanTTFTTPOT(a)
	ttftB, itlB := meanTTFTTPOT(b)
	if itlB >= itlA {
		t.Errorf("mean ITL %.2f ms disaggregated, %.2f colocated: want it lower", itlB, itlA)
	}
	if ttftB <= ttftA {
		t.Errorf("mean TTFT %.1f ms disaggregated, %.1f colocated: want the transfer in it", ttftB, ttftA)
	}
	if len(b.Samples) != 300 || b.Unserved != 0 {
		t.Errorf("%d samples, %d unserved", len(b.Samples), b.Unserved)
	}
}

// Requests spread over the instances of each pool.
func TestDisaggSpreadsOverInstances(t *testing.T) {
	t.Parallel()
	col := derive(t, "llama-3-8b", "h100-sxm", Spec{}, Knobs{})
	dis, err := WithDisaggregation(col, Disaggregation{Prefill: Pool{Instances: 2}, Decode: Pool{Instances: 3}, LinkGBs: 50})
	if err != nil {
		t.Fatal(err)
	}
	c := newCluster(dis, true)
	for range 6 {
		c.add(newSeq(100, 10, nil))
	}
	if a, b := len(c.prefill[0].waiting), len(c.prefill[1].waiting); a != 3 || b != 3 {
		t.Errorf("prefill instances hold %d and %d of 6", a, b)
	}
	t0 := time.Unix(0, 0)
	for now := t0; c.busy(); {
		var ok bool
		if now, _, _, _, ok = c.advance(now, time.Time{}); !ok {
			t.Fatal("stuck")
		}
		for _, e := range c.decode {
			if e.admitted.Load() > 3 {
				t.Fatalf("a decode instance admitted %d of 6", e.admitted.Load())
			}
		}
	}
	for i, e := range c.decode {
		if e.admitted.Load() == 0 {
			t.Errorf("decode instance %d admitted nothing", i)
		}
	}
}

// A disaggregated server streams every token of each answer.
func TestDisaggServer(t *testing.T) {
	t.Parallel()
	_, dis := disaggProfiles(t, 50, time.Millisecond)
	dis.Name, dis.Model = "d", "m"
	ctx := t.Context()
	u, err := New(dis).Listen(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	code, body := post(t, u+"/v1/completions", `{"model":"m","prompt":"a b c d","max_tokens":5}`)
	if code != 200 || !strings.Contains(body, `"completion_tokens":5`) {
		t.Fatalf("HTTP %d: %s", code, body)
	}
}

func TestDisaggErrors(t *testing.T) {
	t.Parallel()
	base := derive(t, "llama-3-70b", "h100-sxm", Spec{TP: 4}, Knobs{})
	constant, _ := Lookup("tiny")
	l40s, _ := LookupGPU("l40s")
	for _, c := range []struct {
		p    Profile
		d    Disaggregation
		want string
	}{
		{constant, Disaggregation{LinkGBs: 10}, "derived from cards"},
		{base, Disaggregation{}, "link_gbs 0"},
		{base, Disaggregation{LinkGBs: 10, LinkLatency: -time.Second}, "link_latency"},
		{base, Disaggregation{LinkGBs: 10, Prefill: Pool{Instances: 65}}, "prefill.instances 65"},
		{base, Disaggregation{LinkGBs: 10, Decode: Pool{TP: 3}}, "decode pool: tp 3"},
		{base, Disaggregation{LinkGBs: 10, Decode: Pool{GPU: l40s, TP: 1}}, "decode pool"},
	} {
		_, err := WithDisaggregation(c.p, c.d)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one saying %q", c.d, err, c.want)
		}
	}
}

// The published figures of speculative decoding and disaggregation stay
// within their tolerances.
func TestRatioReferences(t *testing.T) {
	t.Parallel()
	rs, err := RatioReferences()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		t.Logf("%s, %s: published %.3f, simulated %.3f (%+.0f%%)", r.Test, r.Figure, r.Published, r.Simulated, 100*r.Error())
		if !r.Within() {
			t.Errorf("%s, %s: simulated %.3f, published %.3f: %+.0f%%, beyond %.0f%%", r.Test, r.Figure, r.Simulated, r.Published, 100*r.Error(), 100*r.Tolerance)
		}
	}
}

// A disaggregated replay with a request overhead hands requests over at
// their arrival, after the overhead (it once waited for their send, and
// its clock ran backwards, forever): at a rate where requests rarely
// meet, each TTFT grows by its request path's spread delay, the
// overhead on average.
func TestDisaggregatedReplayWithRequestOverhead(t *testing.T) {
	t.Parallel()
	run := func(ro time.Duration) []Sample {
		m, _ := LookupModel("llama-3-8b")
		g, _ := LookupGPU("h100-sxm")
		s := Spec{Model: m, GPU: g}
		s.RequestOverhead = ro
		p, err := Derive(s, Knobs{})
		if err != nil {
			t.Fatal(err)
		}
		if p, err = WithDisaggregation(p, Disaggregation{LinkGBs: 50}); err != nil {
			t.Fatal(err)
		}
		return Simulate(p, Run{Rate: 1, Requests: 20, Lengths: func(*rand.Rand) (int, int) { return 512, 64 }, Seed: 1}).Samples
	}
	without, with := run(0), run(20*time.Millisecond)
	if len(with) != 20 || len(without) != 20 {
		t.Fatalf("%d and %d samples, want 20", len(without), len(with))
	}
	var sum time.Duration
	for i := range with {
		d := with[i].TTFT - without[i].TTFT
		// At least the spread's least; a little more where the shifted
		// arrivals now meet another request's prefill.
		if d < 10*time.Millisecond || d >= 40*time.Millisecond {
			t.Errorf("request %d: TTFT grew by %v, want 10-40 ms (the overhead's spread)", i, d)
		}
		sum += d
	}
	if mean := sum / 20; mean < 15*time.Millisecond || mean > 25*time.Millisecond {
		t.Errorf("TTFT grew by %v on average, want about the 20 ms overhead", mean)
	}
}

// Speculation's draft defaults to its target's tensor-parallel degree; a
// decode pool of another degree takes the default again, its own.
func TestDecodePoolDefaultsTheDraftsDegree(t *testing.T) {
	t.Parallel()
	m, _ := LookupModel("llama-3-70b")
	g, _ := LookupGPU("h100-sxm")
	p, err := Derive(Spec{Model: m, GPU: g, TP: 4}, Knobs{})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := WithSpeculative(p, Speculative{Method: "eagle", K: 3, Acceptance: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	h200, _ := LookupGPU("h200")
	for _, tp := range []int{2, 8} {
		dp, err := WithDisaggregation(sp, Disaggregation{LinkGBs: 50, Decode: Pool{GPU: h200, TP: tp}})
		if err != nil {
			t.Fatalf("decode pool at tp %d: %v", tp, err)
		}
		if got := dp.Disagg.decode.Speculative.DraftTP; got != tp {
			t.Errorf("decode pool at tp %d: the draft runs at tp %d", tp, got)
		}
	}
	// One set by hand stays, and is checked against the pool.
	set, err := WithSpeculative(p, Speculative{Method: "eagle", K: 3, Acceptance: 0.7, DraftTP: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WithDisaggregation(set, Disaggregation{LinkGBs: 50, Decode: Pool{GPU: h200, TP: 2}}); err == nil || !strings.Contains(err.Error(), "draft_tp 4") {
		t.Errorf("draft_tp 4 on a decode pool of 2: err %v", err)
	}
}
