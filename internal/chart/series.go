package chart

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Kinds of plotted series.
const (
	// Line joins its points in order: the order of offered load.
	Line = "line"
	// Saturated marks probes stopped early because the server's queue
	// grew without bound. Never joined: what they finished before the
	// stop is not a throughput the server sustains, and a line through
	// them draws a collapse that did not happen.
	Saturated = "saturated"
	// CapacityMark marks the capacity: the highest rate that held every SLO.
	CapacityMark = "capacity"
	// Marker is a reference line (the measured window's start).
	Marker = "marker"
)

// Series is one plotted series: the numbers a line or its marks get.
type Series struct {
	Name   string       `json:"name"`
	Kind   string       `json:"kind"`
	Points [][2]float64 `json:"points"`
	// color is the index of its colour, dashes and glyph.
	color int
}

// Plotted is what one chart, or one panel of a stacked chart, plots; the
// SVG is drawn from it alone, so a test of these numbers is a test of
// what the picture shows.
type Plotted struct {
	File  string `json:"file,omitempty"`
	Title string `json:"title,omitempty"`
	X     string `json:"x,omitempty"`
	Y     string `json:"y"`
	// XRange fixes the x axis, so stacked panels share one; nil: fitted.
	XRange *[2]float64 `json:"x_range,omitempty"`
	Series []Series    `json:"series"`
	// fromZero starts both axes at 0 (yZero the y axis only); legendLow
	// puts the legend at the bottom right, where a rising curve leaves
	// room.
	fromZero, yZero, legendLow bool
}

// empty reports whether nothing would be drawn.
func (pl *Plotted) empty() bool {
	for _, s := range pl.Series {
		if len(s.Points) > 0 && s.Kind != Marker {
			return false
		}
	}
	return true
}

// add appends s when it has points.
func (pl *Plotted) add(s Series) {
	if len(s.Points) > 0 {
		pl.Series = append(pl.Series, s)
	}
}

var (
	saturatedColor = color.RGBA{R: 200, G: 30, B: 30, A: 255}
	markerColor    = color.Gray{Y: 128}
)

// draw makes the plot pl describes. Marks get one legend entry per kind,
// whatever their number, after the lines'.
func (pl *Plotted) draw() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pl.Title
	p.X.Label.Text, p.Y.Label.Text = pl.X, pl.Y
	p.Legend.Top, p.Legend.Left = !pl.legendLow, !pl.legendLow
	if pl.fromZero {
		p.X.Min = 0
	}
	if pl.fromZero || pl.yZero {
		p.Y.Min = 0
	}
	p.Add(plotter.NewGrid())
	legend := map[string]bool{}
	var marks []plot.Thumbnailer
	var markNames []string
	ymax := 0.0
	for _, s := range pl.Series {
		for _, xy := range s.Points {
			ymax = max(ymax, xy[1])
		}
	}
	for _, s := range pl.Series {
		pts := make(plotter.XYs, len(s.Points))
		for i, xy := range s.Points {
			pts[i] = plotter.XY{X: xy[0], Y: xy[1]}
		}
		switch s.Kind {
		case Line:
			if err := addLine(p, s.color, s.Name, pts); err != nil {
				return nil, fmt.Errorf("%s: %w", s.Name, err)
			}
		case Saturated, CapacityMark:
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.Name, err)
			}
			if s.Kind == Saturated {
				sc.Shape, sc.Color, sc.Radius = draw.CrossGlyph{}, saturatedColor, vg.Points(5)
			} else {
				sc.Shape, sc.Color, sc.Radius = draw.RingGlyph{}, color.Black, vg.Points(7)
			}
			p.Add(sc)
			if !legend[s.Kind] {
				legend[s.Kind] = true
				name := "capacity"
				if s.Kind == Saturated {
					name = "stopped: saturated"
				}
				marks, markNames = append(marks, sc), append(markNames, name)
			}
		case Marker:
			// A vertical line at the point's x, across the panel.
			x := s.Points[0][0]
			l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: ymax}})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.Name, err)
			}
			l.Color, l.Dashes = markerColor, []vg.Length{vg.Points(2), vg.Points(2)}
			p.Add(l)
			if !legend[s.Name] && s.Name != "" {
				legend[s.Name] = true
				marks, markNames = append(marks, l), append(markNames, s.Name)
			}
		}
	}
	for i, m := range marks {
		p.Legend.Add(markNames[i], m)
	}
	if pl.XRange != nil {
		p.X.Min, p.X.Max = pl.XRange[0], pl.XRange[1]
	}
	return p, nil
}

// drawOne renders a single chart.
func (pl *Plotted) drawOne(w, h vg.Length) ([]byte, error) {
	p, err := pl.draw()
	if err != nil {
		return nil, err
	}
	return render(p, w, h)
}
