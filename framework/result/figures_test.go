package result

import (
	"testing"

	"github.com/benchci/benchci/framework/metric"
)

// Every per-point metric of the catalogue is read from a point, and every
// reader reads a metric the catalogue has: a metric added to one and not
// the other fails here, not as a silent "not read from points".
func TestPointFiguresMatchCatalogue(t *testing.T) {
	for _, d := range metric.All() {
		_, ok := pointFigures[d.Name]
		if want := d.Scope == metric.PerPoint; ok != want {
			t.Errorf("%s (scope %v): reader present %v, want %v", d.Name, d.Scope, ok, want)
		}
	}
	for name := range pointFigures {
		if _, ok := metric.Lookup(name); !ok {
			t.Errorf("reader for %q, which the catalogue does not define", name)
		}
	}
}

// A point with figures in every field reads each through Value, and a point
// that measured nothing says so instead of reading zeros.
func TestValueReadsEveryFigure(t *testing.T) {
	good := 3.0
	p := &Point{}
	p.Requests.Sent, p.Requests.Attempts, p.Requests.ErrorRate = 10, 15, 0.1
	p.Throughput.Requests, p.Throughput.OutputTokens, p.Throughput.TotalTokens, p.Throughput.Goodput = 4, 400, 500, &good
	p.Structured = &Structured{Checked: 8, Rate: 0.75}
	p.Cost = &Cost{PerMOutput: 1.5}
	p.EnergyPerOutputToken = 0.2
	want := map[string]float64{
		metric.ErrorRate: 0.1, metric.RequestThroughput: 4, metric.OutputThroughput: 400, metric.TotalThroughput: 500,
		metric.Goodput: 3, metric.StructuredCorrect: 0.75, metric.RetryAmplification: 1.5, metric.CostPerMOutput: 1.5,
		metric.EnergyPerOutputToken: 0.2,
	}
	for name, w := range want {
		v, missing := p.Value(metric.K(name, ""))
		if missing != "" || v != w {
			t.Errorf("%s = %v (%q), want %v", name, v, missing, w)
		}
		if _, missing := (&Point{}).Value(metric.K(name, "")); missing == "" {
			t.Errorf("%s of an empty point: no reason given", name)
		}
	}
	if _, missing := p.Value(metric.K(metric.Capacity, "")); missing == "" {
		t.Error("capacity read from a point")
	}
}
