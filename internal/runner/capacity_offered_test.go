package runner

import (
	"slices"
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

// A probe's verdict is credited to its rate only when its arrivals did
// not stray beyond their noise in the verdict's favour; otherwise the
// probe is measured again at twice the duration, up to four times, and
// what each discarded probe showed is kept with the one that stands.
func TestCapacityProbesSettle(t *testing.T) {
	t.Parallel()
	s := suite.Default()
	s.Workload.Arrival.Kind = suite.ArrivalPoisson
	const rate = 14.5
	// Over 10 s at 14.5 req/s a Poisson count has an sd of about 12
	// arrivals (1.2 req/s): 12 req/s is 2.1 sd below, 17 2.1 above.
	for _, tc := range []struct {
		name    string
		offered []float64 // per probe, in order
		pass    []bool
		runs    int // probes measured
		last    bool
	}{
		{"a pass within noise stands", []float64{14}, []bool{true}, 1, true},
		{"a pass from too few arrivals is measured again", []float64{12, 14.3}, []bool{true, false}, 2, false},
		{"a failure from too many arrivals is measured again", []float64{17, 14.6}, []bool{false, true}, 2, true},
		{"a failure from too few stands: the stray only makes it safer", []float64{12}, []bool{false}, 1, false},
		{"a pass from too many stands", []float64{17}, []bool{true}, 1, true},
		{"lengthening stops at four times the duration", []float64{12, 12.7, 13.2}, []bool{true, true, true}, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var points []*result.Point
			var loads []load
			dropped := 0
			run := func(ld load) (*result.Point, error) {
				i := len(loads)
				loads = append(loads, ld)
				secs := 10 * float64(max(ld.lengthen, 1))
				pt := &result.Point{Label: "rate=14.5", Mode: result.ModeRate, Rate: rate,
					Measured: result.Measured{Window: result.Window{Seconds: secs}},
					Schedule: result.Schedule{TargetRate: rate, ScheduledRate: tc.offered[i]},
					Validity: &result.Validity{Reruns: ld.earlier}}
				points = append(points, pt)
				return pt, nil
			}
			pass := func(pt *result.Point) bool { return tc.pass[slices.Index(points, pt)] }
			pt, err := settle(s, rate, run, func() { dropped++ }, pass)
			if err != nil {
				t.Fatal(err)
			}
			if len(loads) != tc.runs || dropped != tc.runs-1 || pass(pt) != tc.last {
				t.Fatalf("%d probes, %d dropped, last passed %v", len(loads), dropped, pass(pt))
			}
			for i, ld := range loads {
				// Each lengthened probe draws arrivals of its own.
				if want := 1 << i; ld.lengthen != want || ld.arrivalStream != loads[0].arrivalStream+i*lengthenStreams || len(ld.earlier) != i {
					t.Errorf("probe %d: lengthen %d (want %d), stream %d, %d earlier", i, ld.lengthen, want, ld.arrivalStream, len(ld.earlier))
				}
			}
			if tc.runs > 1 {
				why := pt.Validity.Reruns[0]
				if !strings.Contains(why, "the 10 s probe") || !strings.Contains(why, "lengthened to 2 times") {
					t.Errorf("first discarded probe recorded as %q", why)
				}
				t.Logf("%q", pt.Validity.Reruns)
			}
		})
	}
}
