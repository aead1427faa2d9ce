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

// ChangeMark is a history panel's change point: a vertical dashed line
// between the last version at the old level and the first at the new,
// across the panel (its two points are the line's ends).
const ChangeMark = "change"

// HistoryPlot is what one panel of a history chart plots: the figure's
// values over the versions (x the version's index) and a ChangeMark at
// each change point, on a fixed y range.
type HistoryPlot struct {
	Plotted
	YRange [2]float64 `json:"y_range"`
}

// HistoryPlotted is what a history chart plots, a HistoryPlot a panel.
// History draws from it alone.
func HistoryPlotted(title string, commits []string, panels []HistoryPanel) []HistoryPlot {
	var out []HistoryPlot
	for i, pn := range panels {
		pl := HistoryPlot{Plotted: Plotted{Y: pn.Y, X: "commit (oldest left)", XRange: &[2]float64{-0.5, float64(len(commits)) - 0.5}}}
		if i == 0 {
			pl.Title = title
		}
		line := Series{Name: pn.Y, Kind: Line}
		lo, hi := math.Inf(1), math.Inf(-1)
		for j, v := range pn.Values {
			if !math.IsNaN(v) {
				line.Points = append(line.Points, [2]float64{float64(j), v})
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		if len(line.Points) > 0 {
			pl.Series = append(pl.Series, line)
			// A flat series still gets some height, and the axis starts at
			// zero when that does not squash the movement flat.
			pad := max((hi-lo)*0.1, math.Abs(hi)*0.02, 1e-9)
			pl.YRange = [2]float64{lo - pad, hi + pad}
			if lo >= 0 && lo < (hi-lo) {
				pl.YRange[0] = 0
			}
			for _, c := range pn.Changes {
				x := float64(c) - 0.5
				pl.Series = append(pl.Series, Series{Name: "change point", Kind: ChangeMark, Points: [][2]float64{{x, pl.YRange[0]}, {x, pl.YRange[1]}}})
			}
		}
		out = append(out, pl)
	}
	return out
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
	plotted := HistoryPlotted(title, commits, panels)
	plots := make([][]*plot.Plot, len(plotted))
	for i, pl := range plotted {
		p := panel(i, len(plotted), title, pl.X, pl.Y)
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
		p.X.Min, p.X.Max = pl.XRange[0], pl.XRange[1]
		p.Add(plotter.NewGrid())
		for _, s := range pl.Series {
			pts := make(plotter.XYs, len(s.Points))
			for j, xy := range s.Points {
				pts[j] = plotter.XY{X: xy[0], Y: xy[1]}
			}
			switch s.Kind {
			case Line:
				l, sc, err := plotter.NewLinePoints(pts)
				if err != nil {
					return nil, fmt.Errorf("history chart: %w", err)
				}
				l.Color, sc.Color = plotutil.Color(0), plotutil.Color(0)
				p.Add(l, sc)
			case ChangeMark:
				mark, err := plotter.NewLine(pts)
				if err != nil {
					return nil, fmt.Errorf("history chart: %w", err)
				}
				mark.Color, mark.Dashes = color.RGBA{R: 214, G: 39, B: 40, A: 255}, []vg.Length{vg.Points(3), vg.Points(2)}
				p.Add(mark)
			}
		}
		if len(pl.Series) > 0 {
			p.Y.Min, p.Y.Max = pl.YRange[0], pl.YRange[1]
		}
		plots[i] = []*plot.Plot{p}
	}
	svg, err := stacked(plots, 9*vg.Inch, vg.Length(len(plotted))*2.2*vg.Inch)
	if err != nil {
		return nil, fmt.Errorf("history chart: %w", err)
	}
	return svg, nil
}
