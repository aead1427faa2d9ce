package runner

import (
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
)

func TestPointNotes(t *testing.T) {
	t.Parallel()
	poisson := &suite.Suite{Workload: suite.Workload{Arrival: suite.Arrival{Kind: suite.ArrivalPoisson}}}
	constant := &suite.Suite{Workload: suite.Workload{Arrival: suite.Arrival{Kind: suite.ArrivalConstant}}}
	bounded := &suite.Suite{Workload: poisson.Workload, Sweep: suite.Sweep{Requests: 100}}
	point := func(rate, offered, secs, e2eMs float64, gaps, coalesced int, spread ...int) *result.Point {
		p := &result.Point{Rate: rate}
		p.Window.Seconds = secs
		p.Schedule = result.Schedule{TargetRate: rate, ScheduledRate: offered, SendRate: offered}
		p.Requests.Completed = 10
		p.Latency = map[string]result.Summary{metric.E2E: {P50: e2eMs}}
		p.Tokens.ChunkGaps, p.Tokens.CoalescedGaps = gaps, coalesced
		for _, n := range spread {
			p.Tokens.SpreadGaps += n
		}
		return p
	}
	tests := []struct {
		name   string
		s      *suite.Suite
		p      *result.Point
		shards int
		want   []string // substrings, one per note, in order
	}{
		{"clean", poisson, point(10, 10.3, 10, 500, 1000, 10), 1, nil},
		// 79 arrivals where 100 were due: 2.1 sd of Poisson(100).
		{"seed offered less", poisson, point(10, 7.9, 10, 500, 0, 0), 1, []string{"offered 7.9 req/s, 2.1 standard deviations below the nominal 10"}},
		{"within noise", poisson, point(10, 8.5, 10, 500, 0, 0), 1, nil},
		{"constant is exact", constant, point(10, 7.9, 10, 500, 0, 0), 1, nil},
		{"request-bound window", bounded, point(10, 7.9, 10, 500, 0, 0), 1, nil},
		{"median longer than the window", poisson, point(20, 20, 10, 12000, 0, 0), 1, []string{"the median request took 12 s, longer than the 10 s window"}},
		{"coalesced gaps", poisson, point(10, 10, 10, 500, 1000, 11), 1, []string{"1.1% of chunk gaps came inside an answer's first socket read"}},
		{"at the coalescing limit", poisson, point(10, 10, 10, 500, 1000, 10), 1, nil},
		{"spread gaps", poisson, point(10, 10, 10, 500, 1000, 5, 600), 1, []string{"60.0% of chunk gaps came several to a socket read"}},
		{"spread and kept out", poisson, point(10, 10, 10, 500, 1000, 20, 600), 1, []string{"60.0% of chunk gaps came several", "2.0% of chunk gaps came inside"}},
		// A shard of 2 sends every other arrival: 5 req/s is its whole
		// share, where the whole rate would call it 5 sd below.
		{"a shard's share", poisson, point(10, 5, 10, 500, 0, 0), 2, nil},
		// 39 of its 50 arrivals: its count's sd is sqrt(100)/2 = 5, so 2.2 sd.
		{"a shard below its share", poisson, point(10, 3.9, 10, 500, 0, 0), 2, []string{"offered 3.9 req/s, 2.2 standard deviations below the nominal 5 (this shard's 1/2 of 10)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pointNotes(tt.s, tt.p, tt.shards)
			if len(got) != len(tt.want) {
				t.Fatalf("notes %q, want %d", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("note %q, want it to say %q", got[i], w)
				}
			}
		})
	}
}

// A difference of the two TTFT means below zero is not an overhead: it is
// named, not printed negative; zero and above is the overhead.
func TestServerOverhead(t *testing.T) {
	t.Parallel()
	point := func(clientMs, serverS float64, saturation string) *result.Point {
		p := &result.Point{Server: map[string]float64{"server_ttft_mean_s": serverS}}
		p.Latency = map[string]result.Summary{metric.TTFT: {Count: 100, Mean: clientMs}}
		p.Schedule.Saturation = saturation
		return p
	}
	if o, note := serverOverhead(point(12.5, 0.010, "")); o == nil || o.TTFTMeanMs < 2.49 || o.TTFTMeanMs > 2.51 || note != "" {
		t.Errorf("client 12.5 ms, server 10 ms: overhead %+v, note %q; want 2.5 ms", o, note)
	}
	o, note := serverOverhead(point(10.4, 0.020, ""))
	if o != nil || !strings.Contains(note, "9.60 ms below the server's own (20.00 ms)") || !strings.Contains(note, "cannot be read") {
		t.Errorf("client 10.4 ms, server 20 ms: overhead %+v, note %q; want none, and why", o, note)
	}
	// A client mean a hair below the server's (0.97 ms of 58.5) is the two
	// means' noise: no overhead, and no alarm.
	if o, note := serverOverhead(point(58.52, 0.05949, "")); o != nil || note != "" {
		t.Errorf("client 58.52 ms, server 59.49 ms: overhead %+v, note %q; want neither", o, note)
	}
	if o, note := serverOverhead(point(10, 0.005, "the queue grew")); o != nil || note != "" {
		t.Errorf("saturated point: overhead %+v, note %q; want neither", o, note)
	}
}
