package chart

import (
	"bytes"
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
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

// SlicesSVG draws a point's figures over time, three panels sharing the
// time axis, with the measured window's start marked.
func SlicesSVG(title string, sl *result.Slices) ([]byte, error) {
	if sl == nil || len(sl.Slices) == 0 || sl.WidthS <= 0 {
		return nil, fmt.Errorf("no slices")
	}
	plots := make([][]*plot.Plot, len(panels))
	for i, pn := range panels {
		p := panel(i, len(panels), title, "seconds from the point's start", pn.y)
		p.Y.Min = 0
		p.Legend.Top = true
		p.Add(plotter.NewGrid())
		ymax := 0.0
		for k, se := range pn.series {
			var pts plotter.XYs
			for j, s := range sl.Slices {
				// Each slice is drawn at its middle.
				y := se.y(s, sl.WidthS)
				if se.sparse && y == 0 {
					continue
				}
				pts = append(pts, plotter.XY{X: (float64(j) + 0.5) * sl.WidthS, Y: y})
				ymax = max(ymax, y)
			}
			if len(pts) == 0 {
				continue
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return nil, err
			}
			l.Color, l.Dashes = plotutil.Color(k), plotutil.Dashes(k)
			p.Add(l)
			p.Legend.Add(se.name, l)
		}
		if sl.WindowStartS > 0 {
			// The end of the warm-up.
			mark, err := plotter.NewLine(plotter.XYs{{X: sl.WindowStartS, Y: 0}, {X: sl.WindowStartS, Y: ymax}})
			if err == nil {
				mark.Color, mark.Dashes = color.Gray{Y: 128}, []vg.Length{vg.Points(2), vg.Points(2)}
				p.Add(mark)
				if i == 0 {
					p.Legend.Add("window start", mark)
				}
			}
		}
		plots[i] = []*plot.Plot{p}
	}
	return stacked(plots, 8*vg.Inch, 8*vg.Inch)
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
