// Package chart draws results as SVG figures with gonum/plot, for people
// who would rather look than read: written next to the results files.
package chart

import (
	"bytes"
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/variants"
)

// Figure names one chart and how its axes read a point.
type figure struct {
	file, title, x, y string
	xy                func(variants.Figures) (float64, float64, bool)
	// fromZero starts both axes at 0; legendLow puts the legend at the
	// bottom right, where a rising curve leaves room.
	fromZero, legendLow bool
}

var figures = []figure{
	{"throughput.svg", "Output throughput vs offered load", "offered rate (req/s)", "output tokens/s",
		func(f variants.Figures) (float64, float64, bool) {
			return f.Offered, f.OutputTokPS, f.OpenLoop && f.Offered > 0
		}, true, true},
	{"ttft-p99.svg", "TTFT P99 vs output throughput", "output tokens/s", "TTFT P99 (ms)",
		func(f variants.Figures) (float64, float64, bool) { return f.OutputTokPS, f.TTFTP99Ms, f.TTFTP99Ms > 0 }, false, false},
	{"tpot-p99.svg", "TPOT P99 vs output throughput", "output tokens/s", "TPOT P99 (ms)",
		func(f variants.Figures) (float64, float64, bool) { return f.OutputTokPS, f.TPOTP99Ms, f.TPOTP99Ms > 0 }, false, false},
}

// SVG is one drawn chart: File is the name it takes when written to a
// directory, Title what it shows.
type SVG struct {
	File, Title string
	Data        []byte
}

// Variants writes one SVG per figure into dir, a line per complete
// variant, and returns the paths written. A figure no variant has points
// for is skipped.
func Variants(dir string, r *variants.Report) ([]string, error) {
	svgs, err := VariantsSVG(r)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range svgs {
		path := filepath.Join(dir, s.File)
		if err := result.WriteFileAtomic(path, s.Data); err != nil {
			return out, fmt.Errorf("chart: %w", err)
		}
		out = append(out, path)
	}
	return out, nil
}

// VariantsSVG draws Variants' charts (VariantsPlotted).
func VariantsSVG(r *variants.Report) ([]SVG, error) {
	var out []SVG
	for _, pl := range VariantsPlotted(r) {
		data, err := pl.drawOne(7*vg.Inch, 4.5*vg.Inch)
		if err != nil {
			return out, fmt.Errorf("chart %s: %w", pl.File, err)
		}
		out = append(out, SVG{File: pl.File, Title: pl.Title, Data: data})
	}
	return out, nil
}

// VariantsPlotted is what the variants' charts plot: per complete
// variant a line joined in the order of offered load, its saturated
// probes as marks off the line, and its capacity marked. A figure no
// variant has points for is left out.
func VariantsPlotted(r *variants.Report) []Plotted {
	var out []Plotted
	for _, fig := range figures {
		pl := Plotted{File: fig.file, Title: fig.title, X: fig.x, Y: fig.y, fromZero: fig.fromZero, legendLow: fig.legendLow}
		if r.Suite != "" {
			pl.Title += " — " + r.Suite
		}
		for i, v := range r.Variants {
			if !v.Complete {
				continue
			}
			curve := slices.Clone(v.Curve)
			slices.SortStableFunc(curve, func(a, b variants.Figures) int { return cmp.Compare(a.Offered, b.Offered) })
			s := Series{Name: v.Name, Kind: Line, color: i}
			sat := Series{Name: v.Name, Kind: Saturated, color: i}
			for _, c := range curve {
				x, y, ok := fig.xy(c)
				switch {
				case !ok:
				case c.Saturated:
					sat.Points = append(sat.Points, [2]float64{x, y})
				default:
					s.Points = append(s.Points, [2]float64{x, y})
				}
			}
			pl.add(s)
			pl.add(sat)
			if c := v.Capacity; c != nil && c.At != nil && !c.At.Saturated {
				if x, y, ok := fig.xy(*c.At); ok {
					pl.add(Series{Name: v.Name, Kind: CapacityMark, color: i, Points: [][2]float64{{x, y}}})
				}
			}
		}
		if !pl.empty() {
			out = append(out, pl)
		}
	}
	return out
}

// addLine draws pts as the i-th line of p, named in its legend.
func addLine(p *plot.Plot, i int, name string, pts plotter.XYs) error {
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	l.Color, s.Color = plotutil.Color(i), plotutil.Color(i)
	l.Dashes = plotutil.Dashes(i)
	s.Shape = plotutil.Shape(i)
	p.Add(l, s)
	p.Legend.Add(name, l, s)
	return nil
}

// render returns p as SVG.
func render(p *plot.Plot, w, h vg.Length) ([]byte, error) {
	wt, err := p.WriterTo(w, h, "svg")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
