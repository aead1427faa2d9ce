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
	point := func(rate, offered, secs, e2eMs float64, gaps, coalesced int) *result.Point {
		p := &result.Point{Rate: rate}
		p.Window.Seconds = secs
		p.Schedule = result.Schedule{TargetRate: rate, ScheduledRate: offered, SendRate: offered}
		p.Requests.Completed = 10
		p.Latency = map[string]result.Summary{metric.E2E: {P50: e2eMs}}
		p.Tokens.ChunkGaps, p.Tokens.CoalescedGaps = gaps, coalesced
		return p
	}
	tests := []struct {
		name string
		s    *suite.Suite
		p    *result.Point
		want []string // substrings, one per note, in order
	}{
		{"clean", poisson, point(10, 10.3, 10, 500, 1000, 10), nil},
		// 79 arrivals where 100 were due: 2.1 sd of Poisson(100).
		{"seed offered less", poisson, point(10, 7.9, 10, 500, 0, 0), []string{"offered 7.9 req/s, 2.1 standard deviations below the nominal 10"}},
		{"within noise", poisson, point(10, 8.5, 10, 500, 0, 0), nil},
		{"constant is exact", constant, point(10, 7.9, 10, 500, 0, 0), nil},
		{"request-bound window", bounded, point(10, 7.9, 10, 500, 0, 0), nil},
		{"median longer than the window", poisson, point(20, 20, 10, 12000, 0, 0), []string{"the median request took 12 s, longer than the 10 s window"}},
		{"coalesced gaps", poisson, point(10, 10, 10, 500, 1000, 11), []string{"1.1% of chunk gaps came in one socket read"}},
		{"at the coalescing limit", poisson, point(10, 10, 10, 500, 1000, 10), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pointNotes(tt.s, tt.p)
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
