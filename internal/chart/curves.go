package chart

import (
	"cmp"
	"fmt"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
)

// Curves draws one run's throughput-latency curves: output throughput
// against the load offered (rate or concurrency), and TTFT and TPOT P50
// and P99 against output throughput; and, where telemetry measured power,
// energy per output token against output throughput. Trials are drawn as
// points of their own, joined in the order of load.
func Curves(f *result.File) ([]SVG, error) {
	pts := make([]*result.Point, 0, len(f.Points))
	for i := range f.Points {
		pts = append(pts, &f.Points[i])
	}
	load := func(p *result.Point) float64 {
		if p.Rate > 0 {
			return p.Rate
		}
		return float64(p.Concurrency)
	}
	slices.SortStableFunc(pts, func(a, b *result.Point) int { return cmp.Compare(load(a), load(b)) })
	xLoad := "offered rate (req/s)"
	if len(pts) > 0 && pts[0].Rate == 0 {
		xLoad = "concurrency"
	}
	type line struct {
		name string
		xy   func(*result.Point) (float64, float64, bool)
	}
	lat := func(name, stat string) func(*result.Point) (float64, float64, bool) {
		return func(p *result.Point) (float64, float64, bool) {
			v, missing := p.Value(metric.K(name, stat))
			return p.Throughput.OutputTokens, v, missing == "" && v > 0
		}
	}
	charts := []struct {
		file, title, x, y string
		lines             []line
		fromZero          bool
	}{
		{"throughput.svg", "Output throughput vs load", xLoad, "output tokens/s", []line{{"output tok/s", func(p *result.Point) (float64, float64, bool) {
			return load(p), p.Throughput.OutputTokens, load(p) > 0
		}}}, true},
		{"ttft.svg", "TTFT vs output throughput", "output tokens/s", "TTFT (ms)", []line{{"p50", lat(metric.TTFT, "p50")}, {"p99", lat(metric.TTFT, "p99")}}, true},
		{"tpot.svg", "TPOT vs output throughput", "output tokens/s", "TPOT (ms)", []line{{"p50", lat(metric.TPOT, "p50")}, {"p99", lat(metric.TPOT, "p99")}}, true},
		// Drawn where telemetry measured power: what each token costs in
		// energy as the load rises (batching makes it fall until the knee).
		{"energy.svg", "Energy per output token vs output throughput", "output tokens/s", "joules per output token", []line{{"J/token", func(p *result.Point) (float64, float64, bool) {
			return p.Throughput.OutputTokens, p.EnergyPerOutputToken, p.EnergyPerOutputToken > 0
		}}}, true},
	}
	var out []SVG
	for _, c := range charts {
		p := plot.New()
		p.Title.Text = c.title + " — " + f.Suite.Name
		p.X.Label.Text, p.Y.Label.Text = c.x, c.y
		p.Legend.Top, p.Legend.Left = true, true
		if c.fromZero {
			p.X.Min, p.Y.Min = 0, 0
		}
		p.Add(plotter.NewGrid())
		drawn := 0
		for i, l := range c.lines {
			var xys plotter.XYs
			for _, pt := range pts {
				if x, y, ok := l.xy(pt); ok {
					xys = append(xys, plotter.XY{X: x, Y: y})
				}
			}
			if len(xys) == 0 {
				continue
			}
			if err := addLine(p, i, l.name, xys); err != nil {
				return out, fmt.Errorf("chart %s: %w", c.file, err)
			}
			drawn++
		}
		if drawn == 0 {
			continue
		}
		data, err := render(p, 7*vg.Inch, 4.5*vg.Inch)
		if err != nil {
			return out, fmt.Errorf("chart %s: %w", c.file, err)
		}
		out = append(out, SVG{File: c.file, Title: p.Title.Text, Data: data})
	}
	return out, nil
}

// CDFLine is one distribution of a CDF chart: a histogram of values that
// Scale divides into the axis unit (1000: microseconds to milliseconds).
type CDFLine struct {
	Name  string
	Hist  *hdrhistogram.Histogram
	Scale float64
}

// CDF draws the cumulative distributions of lines on a logarithmic value
// axis, where a tail and a median can be read on one chart.
func CDF(title, x string, lines []CDFLine) ([]byte, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = x, "share of requests at or below"
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = false, false
	p.Add(plotter.NewGrid())
	drawn := 0
	for i, l := range lines {
		if l.Hist == nil || l.Hist.TotalCount() == 0 {
			continue
		}
		var xys plotter.XYs
		total := float64(l.Hist.TotalCount())
		var seen int64
		for _, b := range l.Hist.Distribution() {
			if b.Count == 0 {
				continue
			}
			seen += b.Count
			if v := float64(b.To) / l.Scale; v > 0 {
				xys = append(xys, plotter.XY{X: v, Y: float64(seen) / total})
			}
		}
		if len(xys) == 0 {
			continue
		}
		ln, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		ln.Color, ln.Dashes = plotutil.Color(i), plotutil.Dashes(i)
		p.Add(ln)
		p.Legend.Add(l.Name, ln)
		drawn++
	}
	if drawn == 0 {
		return nil, fmt.Errorf("no values to draw")
	}
	return render(p, 7*vg.Inch, 4.5*vg.Inch)
}
