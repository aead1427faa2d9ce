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
	"github.com/benchci/benchci/framework/variants"
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

// Variants writes one SVG per figure into dir, a line per complete
// variant, and returns the paths written. A figure no variant has points
// for is skipped.
func Variants(dir string, r *variants.Report) ([]string, error) {
	var out []string
	for _, fig := range figures {
		p := plot.New()
		p.Title.Text = fig.title
		if r.Suite != "" {
			p.Title.Text += " — " + r.Suite
		}
		p.X.Label.Text, p.Y.Label.Text = fig.x, fig.y
		p.Legend.Top, p.Legend.Left = !fig.legendLow, !fig.legendLow
		if fig.fromZero {
			p.X.Min, p.Y.Min = 0, 0
		}
		p.Add(plotter.NewGrid())
		lines := 0
		for i, v := range r.Variants {
			if !v.Complete {
				continue
			}
			// Joined in the order of load, as the sweep climbed it.
			curve := slices.Clone(v.Curve)
			slices.SortStableFunc(curve, func(a, b variants.Figures) int { return cmp.Compare(a.Offered, b.Offered) })
			var pts plotter.XYs
			for _, c := range curve {
				if x, y, ok := fig.xy(c); ok {
					pts = append(pts, plotter.XY{X: x, Y: y})
				}
			}
			if len(pts) == 0 {
				continue
			}
			l, s, err := plotter.NewLinePoints(pts)
			if err != nil {
				return out, fmt.Errorf("chart %s: %s: %w", fig.file, v.Name, err)
			}
			l.Color, s.Color = plotutil.Color(i), plotutil.Color(i)
			l.Dashes = plotutil.Dashes(i)
			s.Shape = plotutil.Shape(i)
			p.Add(l, s)
			p.Legend.Add(v.Name, l, s)
			lines++
		}
		if lines == 0 {
			continue
		}
		path := filepath.Join(dir, fig.file)
		wt, err := p.WriterTo(7*vg.Inch, 4.5*vg.Inch, "svg")
		if err != nil {
			return out, fmt.Errorf("chart %s: %w", path, err)
		}
		var buf bytes.Buffer
		if _, err := wt.WriteTo(&buf); err != nil {
			return out, fmt.Errorf("chart %s: %w", path, err)
		}
		if err := result.WriteFileAtomic(path, buf.Bytes()); err != nil {
			return out, fmt.Errorf("chart: %w", err)
		}
		out = append(out, path)
	}
	return out, nil
}
