package chart

import (
	"bytes"
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/benchci/benchci/framework/result"
)

// series is one line of a slices panel.
type series struct {
	name string
	y    func(result.Slice, float64) float64
	// sparse series have no value (0) in slices without requests sent.
	sparse bool
}

// panels of a point's slices chart, top to bottom: the load (sent and
// completed per second, in flight), TTFT, and output throughput.
var panels = []struct {
	y      string
	series []series
}{
	{"requests", []series{
		{"sent/s", func(s result.Slice, w float64) float64 { return float64(s.Sent) / w }, false},
		{"completed/s", func(s result.Slice, w float64) float64 { return float64(s.Completed) / w }, false},
		{"in flight", func(s result.Slice, _ float64) float64 { return float64(s.InFlight) }, false},
	}},
	{"TTFT (ms)", []series{
		{"p50", func(s result.Slice, _ float64) float64 { return s.TTFTP50Ms }, true},
		{"p99", func(s result.Slice, _ float64) float64 { return s.TTFTP99Ms }, true},
	}},
	{"output tokens/s", []series{
		{"output tok/s", func(s result.Slice, _ float64) float64 { return s.OutputTokPS }, false},
	}},
}

// Slices writes one SVG of a point's figures over time (SlicesSVG).
func Slices(path, title string, sl *result.Slices) error {
	data, err := SlicesSVG(title, sl)
	if err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	if err := result.WriteFileAtomic(path, data); err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	return nil
}

// SlicesSVG draws a point's figures over time (SlicesPlotted), three
// panels stacked on one time axis.
func SlicesSVG(title string, sl *result.Slices) ([]byte, error) {
	pls, err := SlicesPlotted(title, sl)
	if err != nil {
		return nil, err
	}
	plots := make([][]*plot.Plot, len(pls))
	for i := range pls {
		p, err := pls[i].draw()
		if err != nil {
			return nil, err
		}
		plots[i] = []*plot.Plot{p}
	}
	return stacked(plots, 8*vg.Inch, 8*vg.Inch)
}

// SlicesPlotted is what the panels of a point's over-time chart plot:
// each slice at its middle, the measured window's start marked, and one
// x range on every panel (the whole point, from 0 to its last slice's
// end), so that a moment sits at the same place on each: a panel fitted
// to its own points (TTFT has none in slices without answers) would not
// line up with the others.
func SlicesPlotted(title string, sl *result.Slices) ([]Plotted, error) {
	if sl == nil || len(sl.Slices) == 0 || sl.WidthS <= 0 {
		return nil, fmt.Errorf("no slices")
	}
	xr := [2]float64{0, float64(len(sl.Slices)) * sl.WidthS}
	if sl.WindowStartS > xr[1] {
		xr[1] = sl.WindowStartS
	}
	out := make([]Plotted, len(panels))
	for i, pn := range panels {
		pl := Plotted{Y: pn.y, XRange: &xr, yZero: true}
		if i == 0 {
			pl.Title = title
		}
		if i == len(panels)-1 {
			pl.X = "seconds from the point's start"
		}
		for k, se := range pn.series {
			s := Series{Name: se.name, Kind: Line, color: k}
			for j, sc := range sl.Slices {
				y := se.y(sc, sl.WidthS)
				if se.sparse && y == 0 {
					continue
				}
				s.Points = append(s.Points, [2]float64{(float64(j) + 0.5) * sl.WidthS, y})
			}
			pl.add(s)
		}
		if sl.WindowStartS > 0 {
			name := ""
			if i == 0 {
				name = "window start" // named once, on the first panel
			}
			pl.Series = append(pl.Series, Series{Name: name, Kind: Marker, Points: [][2]float64{{sl.WindowStartS, 0}}})
		}
		out[i] = pl
	}
	return out, nil
}

// panel is the i-th of n panels stacked on one x axis: the title on the
// first, the x label on the last.
func panel(i, n int, title, x, y string) *plot.Plot {
	p := plot.New()
	if i == 0 {
		p.Title.Text = title
	}
	if i == n-1 {
		p.X.Label.Text = x
	}
	p.Y.Label.Text = y
	return p
}

// stacked draws one-column rows of plots, their axes aligned, as SVG.
func stacked(plots [][]*plot.Plot, w, h vg.Length) ([]byte, error) {
	canvas := vgsvg.New(w, h)
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadX: vg.Millimeter, PadY: 3 * vg.Millimeter,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
	for i, row := range plot.Align(plots, tiles, draw.New(canvas)) {
		plots[i][0].Draw(row[0])
	}
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
