package sim

import (
	"math"
	"strings"
	"testing"
	"time"
)

// Rows that differ in their TP alone make one scaling per figure; rows of
// another load, or of fewer than three sizes, make none.
func TestTPScalingGroupsRowsByLoad(t *testing.T) {
	t.Parallel()
	row := func(gpu string, tp int, pubTPOT, simTPOT float64) Checked {
		c := Checked{Reference: Reference{Source: "s", Engine: "e", Model: "m", GPU: gpu, TP: tp, Concurrency: 1, Input: 2048, Output: 128, TPOTMs: pubTPOT}}
		c.Sim.Mean.TPOT = time.Duration(simTPOT * float64(time.Millisecond))
		return c
	}
	cs := []Checked{
		row("h100", 4, 13, 11), row("h100", 1, 28, 28), row("h100", 8, 10, 7), row("h100", 2, 18.5, 18),
		row("l40s", 2, 64, 60), row("l40s", 4, 33, 47), row("l40s", 4, 34, 47), // two sizes (one repeated): no scaling
	}
	ss := TPScaling(cs)
	if len(ss) != 1 {
		t.Fatalf("%d scalings, want the h100 rows' TPOT alone: %+v", len(ss), ss)
	}
	s := ss[0]
	if s.Figure != "tpot" || len(s.TP) != 4 || s.TP[0] != 1 || s.TP[3] != 8 {
		t.Fatalf("scaling %+v: want TPOT at TP 1, 2, 4, 8 in order", s)
	}
	// Published 28 -> 10 ms (x0.357), simulated 28 -> 7 (x0.25): the
	// simulator's speed-up is 30% too good.
	if e := s.ScalingError(); math.Abs(e-(0.25/(10.0/28)-1)) > 1e-9 {
		t.Errorf("scaling error %.3f, want %.3f", e, 0.25/(10.0/28)-1)
	}
	md := ScalingMarkdown(ss)
	if !strings.Contains(md, "| tpot | 1, 2, 4, 8 | 28.0 ms, 0.66, 0.46, 0.36 | 28.0 ms, 0.64, 0.39, 0.25 | -30% |") {
		t.Errorf("markdown:\n%s", md)
	}
	if ScalingMarkdown(nil) != "" {
		t.Error("no scalings rendered a table")
	}
}

// The published rows hold scalings to TP 8 on the NVSwitch cards and over
// PCIe, and the simulator's decode speed-up meets theirs within 10%.
func TestDecodeScalesAsPublished(t *testing.T) {
	t.Parallel()
	cs, err := Check(References)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range TPScaling(cs) {
		if s.Figure != "tpot" {
			continue
		}
		n++
		if e := s.ScalingError(); math.Abs(e) > 0.10 {
			t.Errorf("%s: TPOT's speed-up to TP %d is %+.0f%% off the published", s.Load, s.TP[len(s.TP)-1], 100*e)
		}
	}
	if n < 3 {
		t.Errorf("%d NVSwitch decode scalings among the references, want at least 3", n)
	}
}
