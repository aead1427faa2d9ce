// Package telemetry scrapes hardware exporters (NVIDIA's DCGM exporter,
// AMD's device-metrics-exporter, node_exporter, any Prometheus text
// endpoint) through a load point and
// reduces what they served to the point's figures: GPU utilization, memory
// used and power, the energy spent, and any gauges a suite names. The
// engine's own /metrics are package engine's; these are the machine's.
//
// What an exporter serves is read as hostile. A scrape is bounded in
// bytes, lines and series (MaxScrapeBytes, MaxSeries) and fails whole
// past them. A GPU figure is plausible or left out: power above 0 and at
// most MaxGPUWatts a GPU, utilization a share, memory under 1 TiB, energy
// counters finite, not negative, and rising no faster than MaxGPUWatts,
// at most MaxGPUs GPUs an exporter. Stop names what it left out and why
// (*Dropped), and every figure it returns is finite and not negative, so
// a result always encodes.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"github.com/benchci/benchci/internal/redact"
	"math"
	"strings"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/internal/promtext"
)

// The DCGM exporter's default fields (dcgm-exporter's default-counters.csv).
const (
	DCGMUtil   = "DCGM_FI_DEV_GPU_UTIL"                 // gauge, percent
	DCGMMemory = "DCGM_FI_DEV_FB_USED"                  // gauge, MiB
	DCGMPower  = "DCGM_FI_DEV_POWER_USAGE"              // gauge, watts
	DCGMEnergy = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" // counter, millijoules since boot
)

// AMD's device-metrics-exporter (ROCm) serves the same figures as these
// gauges; its energy gauge accumulates like DCGM's counter.
const (
	AMDUtil       = "gpu_gfx_activity"    // percent
	AMDMemory     = "gpu_used_vram"       // "MB" by its documentation; taken as MiB, unconverted
	AMDPower      = "gpu_package_power"   // watts, the socket's
	AMDPowerUsage = "gpu_power_usage"     // watts, on exporters without package power
	AMDEnergy     = "gpu_energy_consumed" // microjoules, accumulated
)

// source is a metric an exporter serves a figure as, and the factor that
// takes it to the figure's unit.
type source struct {
	metric string
	scale  float64
}

// Each figure's sources, in order of preference: a point reads the first
// one any scrape served, so an endpoint is NVIDIA's or AMD's by what it
// serves, not by how the suite names it.
var (
	utilSources   = []source{{DCGMUtil, 1}, {AMDUtil, 1}}
	memorySources = []source{{DCGMMemory, 1}, {AMDMemory, 1}}
	powerSources  = []source{{DCGMPower, 1}, {AMDPower, 1}, {AMDPowerUsage, 1}}
	energySources = []source{{DCGMEnergy, 1e-3}, {AMDEnergy, 1e-6}} // to joules
)

// Figure names, as a point records them after the endpoint's name and a
// dot ("dcgm.power_mean_w"): the catalogue's, which pricing reads too.
const (
	GPUs          = metric.TelemetryGPUs
	UtilMean      = metric.TelemetryUtilMean
	UtilPeak      = metric.TelemetryUtilPeak
	MemoryPeak    = metric.TelemetryMemoryPeak
	PowerMean     = metric.TelemetryPowerMean
	PowerPeak     = metric.TelemetryPowerPeak
	Energy        = metric.TelemetryEnergy
	EnergyCounted = metric.TelemetryEnergyCounted // 1 when Energy came from the energy counter, 0 from power x time
)

// Endpoint is one exporter to scrape.
type Endpoint struct {
	Name string
	// URL is the full address of the metrics, path included.
	URL      string
	Interval time.Duration
	// Gauges are further metric names to keep, as NAME_mean and NAME_peak
	// of their sum over label sets.
	Gauges []string
}

type sample struct {
	at time.Time
	m  map[string]series
}

// Sampler scrapes one endpoint until stopped.
type Sampler struct {
	ep      Endpoint
	want    map[string]bool
	scrapes []sample
	errs    int
	lastErr error
	// dropped holds what was left out as implausible: a reason per
	// metric and kind of fault, with the scrapes it struck.
	dropped map[string]*drop
	order   []string
	stop    chan struct{}
	done    chan struct{}
}

type drop struct {
	why   string
	times int
}

// Start scrapes ep now and every interval until Stop.
func Start(ctx context.Context, ep Endpoint) *Sampler {
	redact.AddURL(ep.URL)
	if ep.Interval <= 0 {
		ep.Interval = time.Second
	}
	want := map[string]bool{}
	for _, g := range ep.Gauges {
		want[g] = false
	}
	for name := range gpuMetrics {
		want[name] = false
	}
	for _, src := range energySources {
		want[src.metric] = true // read per GPU across scrapes
	}
	s := &Sampler{ep: ep, want: want, dropped: map[string]*drop{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(ep.Interval)
		defer t.Stop()
		for {
			s.scrapeOnce(ctx)
			select {
			case <-t.C:
			case <-s.stop:
				s.scrapeOnce(ctx)
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return s
}

// note records a figure or scrape left out, once per metric and reason.
func (s *Sampler) note(key, why string) {
	if d, ok := s.dropped[key]; ok {
		d.times++
		return
	}
	s.dropped[key] = &drop{why: why, times: 1}
	s.order = append(s.order, key)
}

func (s *Sampler) scrapeOnce(ctx context.Context) {
	m, err := fetch(ctx, s.ep.URL, s.want)
	if err != nil {
		s.errs++
		s.lastErr = err
		var limit *promtext.LimitError
		if errors.As(err, &limit) {
			s.note("scrape", "a scrape failed: "+err.Error())
		}
		return
	}
	vet(m, func(metric, kind, why string) {
		s.note(metric+" "+kind, metric+" left out: "+why)
	})
	s.scrapes = append(s.scrapes, sample{at: time.Now(), m: m})
	// The energy counters are compared per GPU between the first scrape
	// and the last: the one before this is neither any more.
	if k := len(s.scrapes) - 2; k > 0 {
		prev := s.scrapes[k].m
		for _, src := range energySources {
			if e, ok := prev[src.metric]; ok {
				e.ByLabels = nil
				prev[src.metric] = e
			}
		}
	}
}

// Dropped is the error Stop returns, with the figures that remained, when
// it left out what the exporter served as implausible: a power no GPU
// draws, more GPUs than a machine holds, an energy counter that rose
// faster than any GPU spends, a figure that is not a finite, non-negative
// number. A caller may keep the figures and note the error.
type Dropped struct {
	Endpoint string
	// Reasons say what was left out and why.
	Reasons []string
}

func (d *Dropped) Error() string {
	return fmt.Sprintf("telemetry %s: implausible readings left out: %s", d.Endpoint, strings.Join(d.Reasons, "; "))
}

// Stop ends sampling and returns the point's figures, named after the
// endpoint ("dcgm.power_mean_w"), and an error when no scrape succeeded;
// when some of what the exporter served was left out as implausible, the
// figures that remain and a *Dropped saying what and why. Every figure is
// finite and not negative.
func (s *Sampler) Stop() (map[string]float64, error) {
	close(s.stop)
	<-s.done
	if len(s.scrapes) == 0 {
		if s.lastErr == nil {
			return nil, fmt.Errorf("telemetry %s: nothing scraped", s.ep.Name)
		}
		return nil, fmt.Errorf("telemetry %s: %d scrapes failed, last: %w", s.ep.Name, s.errs, s.lastErr)
	}
	figs, notes := reduce(s.scrapes, s.ep.Gauges)
	out := map[string]float64{}
	for k, v := range figs {
		out[metric.TelemetryKey(s.ep.Name, k)] = v
	}
	var reasons []string
	for _, k := range s.order {
		d := s.dropped[k]
		reasons = append(reasons, fmt.Sprintf("%s (%d of %d scrapes)", d.why, d.times, len(s.scrapes)+s.errs))
	}
	reasons = append(reasons, notes...)
	if len(reasons) > 0 {
		return out, &Dropped{Endpoint: s.ep.Name, Reasons: reasons}
	}
	return out, nil
}

// reduce turns a point's scrapes into its figures: means over the scrapes
// of gauges summed over GPUs (power) or averaged over them (utilization),
// peaks, and the energy spent between the first and the last scrape, from
// the exporter's energy counter where it serves one, else from the mean
// power. The scrapes were vetted; notes say what reduce itself left out:
// an energy counter that rose more than its GPUs could draw, a figure
// that is not finite or is negative.
func reduce(scrapes []sample, gauges []string) (map[string]float64, []string) {
	out := map[string]float64{}
	var notes []string
	pick := func(sources []source) source {
		for _, src := range sources {
			for _, sc := range scrapes {
				if v, ok := sc.m[src.metric]; ok && v.N > 0 {
					return src
				}
			}
		}
		return source{}
	}
	mean := func(src source, f func(series) float64) (float64, bool) {
		avg, n := 0.0, 0
		for _, sc := range scrapes {
			if v, ok := sc.m[src.metric]; ok && v.N > 0 {
				n++
				avg += (f(v)*src.scale - avg) / float64(n) // a running mean: no sum to overflow
			}
		}
		return avg, n > 0
	}
	peak := func(src source, f func(series) float64) (float64, bool) {
		best, ok := math.Inf(-1), false
		for _, sc := range scrapes {
			if v, has := sc.m[src.metric]; has && v.N > 0 {
				best, ok = max(best, f(v)*src.scale), true
			}
		}
		return best, ok
	}
	sum := func(v series) float64 { return v.Sum }
	avg := func(v series) float64 { return v.Sum / float64(v.N) }
	most := func(v series) float64 { return v.Max }
	set := func(key string) func(float64, bool) {
		return func(v float64, ok bool) {
			switch {
			case !ok:
			case math.IsNaN(v) || math.IsInf(v, 0) || v < 0:
				notes = append(notes, fmt.Sprintf("%s left out: %v is not a finite, non-negative figure", key, v))
			default:
				out[key] = v
			}
		}
	}
	util, memory, power, energy := pick(utilSources), pick(memorySources), pick(powerSources), pick(energySources)
	gpus := 0
	for _, sc := range scrapes {
		for _, src := range []source{util, power, memory} {
			gpus = max(gpus, sc.m[src.metric].N)
		}
	}
	if gpus > 0 {
		out[GPUs] = float64(gpus)
	}
	set(UtilMean)(mean(util, avg))
	set(UtilPeak)(peak(util, most))
	set(MemoryPeak)(peak(memory, sum))
	watts, hasPower := mean(power, sum)
	set(PowerMean)(watts, hasPower)
	set(PowerPeak)(peak(power, sum))
	first, last := scrapes[0], scrapes[len(scrapes)-1]
	dt := last.at.Sub(first.at).Seconds()
	e0, ok0 := first.m[energy.metric]
	e1, ok1 := last.m[energy.metric]
	counted, fromCounter := 0.0, false
	if ok0 && ok1 && len(scrapes) > 1 {
		var why string
		counted, fromCounter, why = energyDelta(e0, e1, energy.scale, dt)
		if why != "" {
			notes = append(notes, fmt.Sprintf("%s left out: %s", energy.metric, why))
		}
	}
	if fromCounter && hasPower && dt > 0 && counted < watts*dt/4 {
		// A counter that barely moved while the GPUs drew power was not
		// refreshed over the point (exporters update it every ~30 s):
		// power x time is the better figure.
		notes = append(notes, fmt.Sprintf("%s left out: it rose %s J over %.1f s while the GPUs drew %s W (not refreshed over the point?); energy from power x time",
			energy.metric, num(counted), dt, num(watts)))
		fromCounter = false
	}
	switch {
	case fromCounter:
		set(Energy)(counted, true)
		out[EnergyCounted] = 1
	case hasPower && len(scrapes) > 1:
		set(Energy)(watts*dt, true)
		out[EnergyCounted] = 0
	}
	if _, ok := out[Energy]; !ok {
		delete(out, EnergyCounted)
	}
	for _, g := range gauges {
		set(g + "_mean")(mean(source{g, 1}, sum))
		set(g + "_peak")(peak(source{g, 1}, sum))
	}
	return out, notes
}
