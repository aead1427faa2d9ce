package chart

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// HistoryPanel is one figure along a baseline's committed versions.
type HistoryPanel struct {
	// Y labels the panel: the figure, its point and unit.
	Y string
	// Values has one entry per version; NaN where a version lacks it.
	Values []float64
	// Changes are the versions where the figure moved, marked.
	Changes []int
}

// History draws panels of figures over commits, one above the other,
// sharing an axis labelled by the commits' short hashes, and returns the
// SVG.
func History(title string, commits []string, panels []HistoryPanel) ([]byte, error) {
	if len(panels) == 0 || len(commits) == 0 {
		return nil, fmt.Errorf("history chart: nothing to draw")
	}
	// Label at most about 12 commits, evenly, so labels do not collide.
	every := (len(commits) + 11) / 12
	var ticks []plot.Tick
	for i, c := range commits {
		t := plot.Tick{Value: float64(i)}
		if i%every == 0 {
			t.Label = c
		}
		ticks = append(ticks, t)
	}
	plots := make([][]*plot.Plot, len(panels))
	for i, pn := range panels {
		p := panel(i, len(panels), title, "commit (oldest left)", pn.Y)
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
		p.X.Min, p.X.Max = -0.5, float64(len(commits))-0.5
		p.Add(plotter.NewGrid())
		var pts plotter.XYs
		lo, hi := math.Inf(1), math.Inf(-1)
		for j, v := range pn.Values {
			if !math.IsNaN(v) {
				pts = append(pts, plotter.XY{X: float64(j), Y: v})
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		if len(pts) > 0 {
			l, s, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, fmt.Errorf("history chart: %w", err)
			}
			l.Color, s.Color = plotutil.Color(0), plotutil.Color(0)
			p.Add(l, s)
			// A flat series still gets some height, and the axis starts at
			// zero when that does not squash the movement flat.
			pad := max((hi-lo)*0.1, math.Abs(hi)*0.02, 1e-9)
			p.Y.Min, p.Y.Max = lo-pad, hi+pad
			if lo >= 0 && lo < (hi-lo) {
				p.Y.Min = 0
			}
			for _, c := range pn.Changes {
				mark, err := plotter.NewLine(plotter.XYs{{X: float64(c) - 0.5, Y: p.Y.Min}, {X: float64(c) - 0.5, Y: p.Y.Max}})
				if err != nil {
					return nil, fmt.Errorf("history chart: %w", err)
				}
				mark.Color, mark.Dashes = color.RGBA{R: 214, G: 39, B: 40, A: 255}, []vg.Length{vg.Points(3), vg.Points(2)}
				p.Add(mark)
			}
		}
		plots[i] = []*plot.Plot{p}
	}
	svg, err := stacked(plots, 9*vg.Inch, vg.Length(len(panels))*2.2*vg.Inch)
	if err != nil {
		return nil, fmt.Errorf("history chart: %w", err)
	}
	return svg, nil
}
