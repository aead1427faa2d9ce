package chart

import (
	"bytes"
	"fmt"
	"math"
	"testing"
)

// The history chart plots each named figure's values over the versions
// and a change mark between the last version at the old level and the
// first at the new, across the panel; a version that lacks the figure is
// left out of its line. Pinned by a golden of the numbers
// (testdata/history.golden, -update), not SVG bytes.
func TestHistoryPlottedGolden(t *testing.T) {
	commits := []string{"a000001", "a000002", "a000003", "a000004", "a000005", "a000006"}
	panels := []HistoryPanel{
		{Y: "ttft.p50 (ms)", Values: []float64{100, 102, 98, 130, 131, 129}, Changes: []int{3}},
		{Y: "itl.p50 at rate=2 (ms)", Values: []float64{18.5, 18.6, 18.5, 24.1, 24.2, 24}, Changes: []int{3}},
		{Y: "cost ($/1M out)", Values: []float64{math.NaN(), 3.7, 3.7, 3.7, 3.7, 3.7}},
	}
	got := HistoryPlotted("quickstart baseline history at rate=20", commits, panels)
	if len(got) != 3 {
		t.Fatalf("%d panels, want 3", len(got))
	}
	for i, pl := range got {
		marks := 0
		for _, s := range pl.Series {
			if s.Kind == ChangeMark {
				marks++
				if s.Points[0][0] != 2.5 || s.Points[1][0] != 2.5 || s.Points[0][1] != pl.YRange[0] || s.Points[1][1] != pl.YRange[1] {
					t.Errorf("panel %s: change mark %v, want x=2.5 across %v", pl.Y, s.Points, pl.YRange)
				}
			}
		}
		if marks != len(panels[i].Changes) {
			t.Errorf("panel %s: %d change marks, want %d", pl.Y, marks, len(panels[i].Changes))
		}
		if pl.Series[0].Kind != Line || len(pl.Series[0].Points) != 6-i/2 {
			t.Errorf("panel %s: line %+v", pl.Y, pl.Series[0])
		}
	}
	var buf bytes.Buffer
	for _, pl := range got {
		fmt.Fprintf(&buf, "history %q: x %q, y %q, x range %g–%g, y range %g–%g\n", pl.Title, pl.X, pl.Y, pl.XRange[0], pl.XRange[1], pl.YRange[0], pl.YRange[1])
		for _, s := range pl.Series {
			fmt.Fprintf(&buf, "  %-6s %-24q", s.Kind, s.Name)
			for _, xy := range s.Points {
				fmt.Fprintf(&buf, " (%g, %g)", xy[0], xy[1])
			}
			buf.WriteString("\n")
		}
	}
	checkGolden(t, "history.golden", "TestHistoryPlottedGolden", buf.Bytes())
	if _, err := History("quickstart baseline history at rate=20", commits, panels); err != nil {
		t.Error(err)
	}
}
