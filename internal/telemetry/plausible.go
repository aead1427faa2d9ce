package telemetry

import (
	"fmt"
	"math"
	"strings"

	"github.com/benchci/benchci/framework/metric"
)

// What one exporter can plausibly serve. A figure outside these bounds is
// not a measurement: it is dropped, with a note saying why, and never
// written, so a result always encodes and never prices a run on it.
const (
	// MaxGPUWatts and MaxGPUs are the catalogue's (pricing refuses
	// beyond them too): one GPU's power draw, the GPUs one exporter serves.
	MaxGPUWatts = metric.MaxGPUWatts
	MaxGPUs     = metric.MaxGPUs
	// maxGPUMemoryMiB bounds one GPU's memory used: the largest carry
	// 288 GB; 1 TiB leaves room.
	maxGPUMemoryMiB = 1 << 20
	// maxEnergyJ bounds an energy counter's reading, accumulated since
	// the GPU started: 100 years at MaxGPUWatts. Its deltas then keep
	// float64's precision to a thousandth of a joule.
	maxEnergyJ = MaxGPUWatts * 100 * 365.25 * 24 * 3600
	// counterLag is the time an energy counter's delta may cover beyond
	// the scrapes': an exporter updates what it serves at its own
	// interval (dcgm-exporter's default is 30 s), so a delta between two
	// scrapes can hold up to that much more.
	counterLag = 60 // seconds
)

// bound is the range a GPU metric's samples must lie in, in its figure's
// unit: lo < v (loOpen) or lo <= v, and v <= hi.
type bound struct {
	lo, hi float64
	loOpen bool
	unit   string
	// why says where hi comes from.
	why string
}

var (
	powerBound  = bound{lo: 0, hi: MaxGPUWatts, loOpen: true, unit: "W", why: "the most any GPU draws (the largest about 1,400 W)"}
	utilBound   = bound{lo: 0, hi: 100, unit: "%", why: "a utilization is a share"}
	memoryBound = bound{lo: 0, hi: maxGPUMemoryMiB, unit: "MiB", why: "1 TiB, above any GPU's memory (the largest 288 GB)"}
	energyBound = bound{lo: 0, hi: maxEnergyJ, unit: "J", why: "100 years at the most any GPU draws"}
)

// gpuMetric is a metric served per GPU: its bound, and the factor to its
// figure's unit.
type gpuMetric struct {
	bound
	scale float64
}

// gpuMetrics are the metrics every figure but the suite's own gauges
// comes from, by name.
var gpuMetrics = func() map[string]gpuMetric {
	m := map[string]gpuMetric{}
	for _, g := range []struct {
		sources []source
		b       bound
	}{{utilSources, utilBound}, {memorySources, memoryBound}, {powerSources, powerBound}, {energySources, energyBound}} {
		for _, src := range g.sources {
			m[src.metric] = gpuMetric{g.b, src.scale}
		}
	}
	return m
}()

// check returns why a GPU metric's scrape is implausible, and a word for
// the kind of fault ("" if it is not); the metric is then dropped from
// that scrape.
func (g gpuMetric) check(s series) (kind, why string) {
	lo, hi := s.Min*g.scale, s.Max*g.scale
	switch {
	case s.N+s.Bad > MaxGPUs:
		return "series", fmt.Sprintf("%d series, more than the %d GPUs an exporter watches", s.N+s.Bad, MaxGPUs)
	case s.Bad > 0:
		return "nan", fmt.Sprintf("%d of its GPUs at NaN or an infinity", s.Bad)
	case s.N == 0:
		return "", ""
	case lo < g.lo || g.loOpen && lo == g.lo:
		cmp := "below"
		if g.loOpen {
			cmp = "at or below"
		}
		return "low", fmt.Sprintf("a GPU at %s %s, %s %s %s", num(lo), g.unit, cmp, num(g.lo), g.unit)
	case hi > g.hi:
		return "high", fmt.Sprintf("a GPU at %s %s, above %s %s, %s", num(hi), g.unit, num(g.hi), g.unit, g.why)
	}
	return "", ""
}

// vet drops from one scrape what no machine could have served, telling
// note the metric, the kind of fault and why.
func vet(m map[string]series, note func(metric, kind, why string)) {
	for name, s := range m {
		if g, ok := gpuMetrics[name]; ok {
			if kind, why := g.check(s); kind != "" {
				note(name, kind, why)
				delete(m, name)
			}
			continue
		}
		// A suite's own gauge may be anything, but its sum over label
		// sets must be a number.
		if math.IsInf(s.Sum, 0) {
			note(name, "sum", "its sum over series is beyond float64")
			delete(m, name)
		}
	}
}

// energyDelta is the energy the counter says was spent between two
// scrapes dt seconds apart, in joules: the sum of each GPU's delta. ok is
// false when the two scrapes do not serve the same GPUs or a counter went
// back (an exporter or GPU restarted): the energy then comes from power
// and time. why is set when a GPU's delta is more than it could have
// drawn.
func energyDelta(e0, e1 series, scale, dt float64) (joules float64, ok bool, why string) {
	if len(e0.ByLabels) != len(e1.ByLabels) || len(e0.ByLabels) == 0 {
		return 0, false, ""
	}
	most := MaxGPUWatts * (dt + counterLag)
	for k, v0 := range e0.ByLabels {
		v1, has := e1.ByLabels[k]
		if !has {
			return 0, false, ""
		}
		d := (v1 - v0) * scale
		if d < 0 {
			return 0, false, ""
		}
		if d > most {
			return 0, false, fmt.Sprintf("a GPU's counter rose %s J in %.1f s, more than %s J, %d W for that time and %d s more", num(d), dt, num(most), MaxGPUWatts, counterLag)
		}
		joules += d
	}
	return joules, true, ""
}

// num writes a figure from an exporter for a note: %g, whatever its size.
func num(v float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%.4g", v), ".0")
}
