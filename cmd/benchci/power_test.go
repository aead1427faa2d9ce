package main

import (
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/suite"
)

// A suite's sweep reaches compare.Power: a short rate sweep warns, with
// the suite's retry and API; a closed loop, whose request counts are not
// known ahead, does not.
func TestPowerWarnings(t *testing.T) {
	t.Parallel()
	short := suite.Sweep{Kind: suite.SweepRate, Rates: []float64{6}, Duration: suite.Duration(8 * time.Second)}
	if got := strings.Join(powerWarnings(&suite.Suite{Trials: 1, Sweep: short}), "\n"); !strings.Contains(got, "about 48 requests planned") || strings.Contains(got, "e2e_user") {
		t.Errorf("rate sweep: %q", got)
	}
	retry := &suite.Suite{Trials: 1, Sweep: short, Request: suite.Request{Retry: &suite.Retry{}}}
	if got := strings.Join(powerWarnings(retry), "\n"); !strings.Contains(got, "e2e_user.p99") {
		t.Errorf("retrying suite: %q", got)
	}
	emb := &suite.Suite{Trials: 1, Sweep: short, API: suite.APIEmbeddings}
	if got := strings.Join(powerWarnings(emb), "\n"); !strings.HasPrefix(got, "e2e.p99") || strings.Contains(got, "ttft") {
		t.Errorf("embeddings suite: %q", got)
	}
	// A capacity search's P99 SLO on 10 s probes in [4, 24] req/s rests on
	// about 140 requests mid-range: warned; its P90 (51 needed) and a mean
	// are not.
	search := &suite.Suite{Trials: 1, Sweep: suite.Sweep{Kind: suite.SweepCapacity, Min: 4, Max: 24, Duration: suite.Duration(10 * time.Second)},
		SLOs: []suite.SLO{{Metric: "ttft", Stat: "p99"}, {Metric: "ttft", Stat: "p90"}, {Metric: "e2e", Stat: "mean"}, {Metric: "error_rate"}}}
	if got := powerWarnings(search); len(got) != 1 || !strings.Contains(got[0], "SLO ttft.p99 in the capacity search") || !strings.Contains(got[0], "about 140 requests") || !strings.Contains(got[0], "duration >= 38s") {
		t.Errorf("capacity search: %q", got)
	}
	closed := &suite.Suite{Trials: 1, Sweep: suite.Sweep{Kind: suite.SweepConcurrency, Concurrencies: []int{1}, Duration: suite.Duration(time.Second)}}
	if got := powerWarnings(closed); len(got) != 0 {
		t.Errorf("closed loop warned %q", got)
	}
}
