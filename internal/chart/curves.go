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

// Curves draws one run's throughput-latency curves (CurvesPlotted).
func Curves(f *result.File) ([]SVG, error) {
	var out []SVG
	for _, pl := range CurvesPlotted(f) {
		data, err := pl.drawOne(7*vg.Inch, 4.5*vg.Inch)
		if err != nil {
			return out, fmt.Errorf("chart %s: %w", pl.File, err)
		}
		out = append(out, SVG{File: pl.File, Title: pl.Title, Data: data})
	}
	return out, nil
}

// CurvesPlotted is what one run's curves plot: output throughput against
// the load offered (rate or concurrency), and TTFT and TPOT P50 and P99
// against output throughput; and, where telemetry measured power,
// energy per output token against output throughput. Trials are points
// of their own, joined in the order of offered load (a capacity search
// probes out of order); probes stopped as saturated are marks, never
// joined; the capacity, when a search or SLOs found one, is marked.
func CurvesPlotted(f *result.File) []Plotted {
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
	slices.SortStableFunc(pts, func(a, b *result.Point) int {
		return cmp.Or(cmp.Compare(load(a), load(b)), cmp.Compare(a.Trial, b.Trial))
	})
	xLoad := "offered rate (req/s)"
	if len(pts) > 0 && pts[0].Rate == 0 {
		xLoad = "concurrency"
	}
	capacity := 0.0
	if c := f.Capacity; c != nil && c.Bound != result.CapacityInconclusive {
		capacity = c.Rate
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
	}{
		{"throughput.svg", "Output throughput vs load", xLoad, "output tokens/s", []line{{"output tok/s", func(p *result.Point) (float64, float64, bool) {
			return load(p), p.Throughput.OutputTokens, load(p) > 0
		}}}},
		{"ttft.svg", "TTFT vs output throughput", "output tokens/s", "TTFT (ms)", []line{{"p50", lat(metric.TTFT, "p50")}, {"p99", lat(metric.TTFT, "p99")}}},
		{"tpot.svg", "TPOT vs output throughput", "output tokens/s", "TPOT (ms)", []line{{"p50", lat(metric.TPOT, "p50")}, {"p99", lat(metric.TPOT, "p99")}}},
		// Drawn where telemetry measured power: what each token costs in
		// energy as the load rises (batching makes it fall until the knee).
		{"energy.svg", "Energy per output token vs output throughput", "output tokens/s", "joules per output token", []line{{"J/token", func(p *result.Point) (float64, float64, bool) {
			return p.Throughput.OutputTokens, p.EnergyPerOutputToken, p.EnergyPerOutputToken > 0
		}}}},
	}
	var out []Plotted
	for _, c := range charts {
		pl := Plotted{File: c.file, Title: c.title + " — " + f.Suite.Name, X: c.x, Y: c.y, fromZero: true}
		sat := Series{Name: "stopped: saturated", Kind: Saturated}
		capm := Series{Name: "capacity", Kind: CapacityMark}
		for i, l := range c.lines {
			s := Series{Name: l.name, Kind: Line, color: i}
			for _, pt := range pts {
				x, y, ok := l.xy(pt)
				switch {
				case !ok:
				case pt.Schedule.Saturation != "":
					sat.Points = append(sat.Points, [2]float64{x, y})
				default:
					s.Points = append(s.Points, [2]float64{x, y})
					if capacity > 0 && pt.Mode == result.ModeRate && pt.Rate == capacity {
						capm.Points = append(capm.Points, [2]float64{x, y})
					}
				}
			}
			pl.add(s)
		}
		pl.add(sat)
		pl.add(capm)
		if !pl.empty() {
			out = append(out, pl)
		}
	}
	return out
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
