package runner

import (
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/report"
)

// A capacity whose passing probe drew fewer arrivals than its rate, beyond
// their noise, records the rate offered, and the headline leads with it;
// a probe that offered its rate within noise records nothing.
func TestCapacityIsTheRateOffered(t *testing.T) {
	t.Parallel()
	s := suite.Default()
	s.Workload.Arrival.Kind = suite.ArrivalPoisson
	probe := func(scheduled float64) *result.Point {
		return &result.Point{Label: "rate=14.5", Mode: result.ModeRate, Rate: 14.5,
			Measured: result.Measured{Window: result.Window{Seconds: 10}},
			Schedule: result.Schedule{TargetRate: 14.5, ScheduledRate: scheduled}}
	}
	c := &result.Capacity{Rate: 14.5, Failing: 16, Bound: "bracketed", Probes: 5}
	offeredCapacity(s, c, probe(12)) // 120 of 145 due; noise ±12
	if c.Offered != 12 || c.Rate != 14.5 {
		t.Fatalf("capacity %+v: want rate 14.5 kept (its point is judged by it) and offered 12", c)
	}
	if h := report.CapacityString(c); !strings.HasPrefix(h, "12 req/s offered") {
		t.Errorf("headline %q does not lead with the rate offered", h)
	}
	c = &result.Capacity{Rate: 14.5, Failing: 16, Bound: "bracketed", Probes: 5}
	offeredCapacity(s, c, probe(14.0)) // 140 of 145: within noise
	if c.Offered != 0 || strings.Contains(report.CapacityString(c), "offered") {
		t.Errorf("a probe within its noise: %+v", c)
	}
}
