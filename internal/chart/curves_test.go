package chart

import (
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/result"
)

// The energy chart is drawn only where telemetry measured power, with a
// point per load point.
func TestCurvesDrawEnergyWhereMeasured(t *testing.T) {
	t.Parallel()
	file := func(energy ...float64) *result.File {
		f := &result.File{Suite: result.Suite{Name: "s"}}
		for i, e := range energy {
			p := result.Point{Label: "rate", Mode: "rate", Rate: float64(i + 1), Trial: 1, EnergyPerOutputToken: e}
			p.Throughput.OutputTokens = 100 * float64(i+1)
			f.Points = append(f.Points, p)
		}
		return f
	}
	names := func(f *result.File) []string {
		t.Helper()
		svgs, err := Curves(f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range svgs {
			out = append(out, s.File)
			if s.File == "energy.svg" && !strings.Contains(string(s.Data), "joules per output token") {
				t.Error("energy chart without its axis label")
			}
		}
		return out
	}
	if got := strings.Join(names(file(0, 0)), " "); strings.Contains(got, "energy.svg") {
		t.Errorf("an energy chart without measured power: %s", got)
	}
	if got := strings.Join(names(file(0.5, 0.3, 0.25)), " "); !strings.Contains(got, "energy.svg") {
		t.Errorf("no energy chart with measured power: %s", got)
	}
}
