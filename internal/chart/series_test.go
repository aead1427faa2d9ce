package chart

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/variants"
)

var update = flag.Bool("update", false, "rewrite testdata/plotted.golden")

// searchRun is a capacity search as the issue saw it: probes in search
// order (8, 16, 12, 10 req/s), the one at 16 stopped as saturated after
// finishing 580 tok/s, where 12 req/s sustained 1,100; capacity 12.
func searchRun() *result.File {
	f := &result.File{Suite: result.Suite{Name: "search"}, Capacity: &result.Capacity{Rate: 12, Failing: 16, Bound: "bracketed", Probes: 4}}
	for _, pr := range []struct {
		rate, tok, p50, p99 float64
		saturated           bool
	}{{8, 760, 60, 110, false}, {16, 580, 900, 4000, true}, {12, 1100, 80, 190, false}, {10, 940, 70, 150, false}} {
		p := result.Point{Label: "rate=" + fmtG(pr.rate), Mode: result.ModeRate, Rate: pr.rate, Trial: 1}
		p.Throughput.OutputTokens = pr.tok
		p.Latency = map[string]result.Summary{metric.TTFT: {Count: 100, P50: pr.p50, P99: pr.p99}}
		if pr.saturated {
			p.Schedule.Saturation = "the queue grew without bound"
		}
		f.Points = append(f.Points, p)
	}
	return f
}

func fmtG(x float64) string { b, _ := json.Marshal(x); return string(b) }

// shootout: two variants whose curves are listed out of order, one with
// a saturated probe, each with its capacity.
func shootout() *variants.Report {
	curve := func(scale float64, saturatedAt float64) []variants.Figures {
		var out []variants.Figures
		for _, r := range []float64{12, 4, 16, 8} {
			f := variants.Figures{Point: "rate=" + fmtG(r), Offered: r, OpenLoop: true, OutputTokPS: 100 * r * scale, TTFTP99Ms: 50 * r / scale, TPOTP99Ms: 10 + r/scale, Pass: r <= 8*scale}
			if r == saturatedAt {
				f.OutputTokPS, f.Saturated, f.Pass = 300, true, false
			}
			out = append(out, f)
		}
		return out
	}
	a, b := curve(1, 16), curve(1.5, 0)
	return &variants.Report{Suite: "shootout", Variants: []variants.Variant{
		{Name: "bf16", Complete: true, Curve: a, Capacity: &variants.Capacity{Rate: 8, Failing: 12, At: &a[3]}},
		{Name: "fp8", Complete: true, Curve: b, Capacity: &variants.Capacity{Rate: 12, Failing: 16, At: &b[0]}},
	}}
}

// overTime: six one-second slices, the first and last without answers
// (no TTFT there), the window starting at 1 s.
func overTime() *result.Slices {
	sl := &result.Slices{WidthS: 1, WindowStartS: 1}
	for k := range 6 {
		s := result.Slice{Sent: 5, Completed: 4, InFlight: k, OutputTokPS: 300 + 10*float64(k), TTFTP50Ms: 60, TTFTP99Ms: 110}
		if k == 0 || k == 5 {
			s.Completed, s.TTFTP50Ms, s.TTFTP99Ms = 0, 0, 0
		}
		sl.Slices = append(sl.Slices, s)
	}
	return sl
}

// TestPlottedGolden pins the numbers each line and mark gets (not SVG
// bytes), and checks what must hold whatever the golden says: no
// saturated probe on a line, lines in the order of offered load, the
// capacity marked, and every over-time panel on one x range.
func TestPlottedGolden(t *testing.T) {
	slicePanels, err := SlicesPlotted("rate=8 over time", overTime())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]Plotted{"curves": CurvesPlotted(searchRun()), "variants": VariantsPlotted(shootout()), "slices": slicePanels}

	for _, name := range []string{"curves", "variants"} {
		for _, pl := range got[name] {
			marks := map[string]int{}
			for _, s := range pl.Series {
				marks[s.Kind] += len(s.Points)
				if s.Kind != Line {
					continue
				}
				for i, xy := range s.Points {
					if xy[1] == 580 || xy[1] == 300 {
						t.Errorf("%s %s: the saturated probe %v is on the line %s", name, pl.File, xy, s.Name)
					}
					// Throughput rises with load along these fixtures, so
					// a line in load order has rising x on every chart.
					if i > 0 && xy[0] < s.Points[i-1][0] {
						t.Errorf("%s %s: line %s goes back from x=%g to %g: not in the order of load", name, pl.File, s.Name, s.Points[i-1][0], xy[0])
					}
				}
			}
			if marks[Saturated] == 0 || marks[CapacityMark] == 0 {
				t.Errorf("%s %s: %d saturated marks, %d capacity marks; want both", name, pl.File, marks[Saturated], marks[CapacityMark])
			}
		}
	}
	if c := got["curves"][0]; c.File != "throughput.svg" || len(c.Series) != 3 || c.Series[2].Points[0] != [2]float64{12, 1100} {
		t.Errorf("throughput chart: %+v; want the line, the saturated mark, and capacity marked at (12, 1100)", c)
	}
	for _, pl := range slicePanels {
		if pl.XRange == nil || *pl.XRange != [2]float64{0, 6} {
			t.Errorf("panel %s: x range %v, want [0 6] on every panel", pl.Y, pl.XRange)
		}
	}

	// One line per series, its points in drawing order.
	var buf bytes.Buffer
	for _, name := range []string{"curves", "variants", "slices"} {
		for _, pl := range got[name] {
			fmt.Fprintf(&buf, "%s %s %q: x %q, y %q", name, pl.File, pl.Title, pl.X, pl.Y)
			if pl.XRange != nil {
				fmt.Fprintf(&buf, ", x range %g–%g", pl.XRange[0], pl.XRange[1])
			}
			buf.WriteString("\n")
			for _, s := range pl.Series {
				fmt.Fprintf(&buf, "  %-9s %-18q", s.Kind, s.Name)
				for _, xy := range s.Points {
					fmt.Fprintf(&buf, " (%g, %g)", xy[0], xy[1])
				}
				buf.WriteString("\n")
			}
		}
	}
	checkGolden(t, "plotted.golden", "TestPlottedGolden", buf.Bytes())
	// The charts draw from these numbers: each renders.
	for _, pl := range append(got["curves"], got["variants"]...) {
		if _, err := pl.drawOne(400, 300); err != nil {
			t.Errorf("%s: %v", pl.File, err)
		}
	}
	if _, err := SlicesSVG("rate=8 over time", overTime()); err != nil {
		t.Error(err)
	}
}

// checkGolden compares data with testdata/name, which -update rewrites;
// test names the test that accepts a change.
func checkGolden(t *testing.T, name, test string, data []byte) {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(golden, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("plotted series differ from %s (go test -run %s -update to accept):\n%s", golden, test, data)
	}
}
