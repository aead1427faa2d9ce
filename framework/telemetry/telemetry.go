// Package telemetry scrapes hardware exporters (NVIDIA's DCGM exporter,
// AMD's device-metrics-exporter, node_exporter, any Prometheus text
// endpoint) through a load point and
// reduces what they served to the point's figures: GPU utilization, memory
// used and power, the energy spent, and any gauges a suite names. The
// engine's own /metrics are package engine's; these are the machine's.
package telemetry

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/benchci/benchci/framework/engine"
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
// dot ("dcgm.power_mean_w").
const (
	GPUs          = "gpus"
	UtilMean      = "gpu_util_mean_pct"
	UtilPeak      = "gpu_util_peak_pct"
	MemoryPeak    = "gpu_memory_used_peak_mib"
	PowerMean     = "power_mean_w"
	PowerPeak     = "power_peak_w"
	Energy        = "energy_j"
	EnergyCounted = "energy_counted" // 1 when Energy came from the energy counter, 0 from power x time
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

// series is one metric in one scrape: its sum, count and largest value
// over label sets.
type series struct {
	sum, max float64
	n        int
}

type sample struct {
	at time.Time
	m  map[string]series
}

// Sampler scrapes one endpoint until stopped.
type Sampler struct {
	ep      Endpoint
	scrapes []sample
	errs    int
	lastErr error
	stop    chan struct{}
	done    chan struct{}
}

// Start scrapes ep now and every interval until Stop.
func Start(ctx context.Context, ep Endpoint) *Sampler {
	if ep.Interval <= 0 {
		ep.Interval = time.Second
	}
	s := &Sampler{ep: ep, stop: make(chan struct{}), done: make(chan struct{})}
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

func (s *Sampler) scrapeOnce(ctx context.Context) {
	m, err := fetch(ctx, s.ep.URL)
	if err != nil {
		s.errs++
		s.lastErr = err
		return
	}
	s.scrapes = append(s.scrapes, sample{at: time.Now(), m: m})
}

// Stop ends sampling and returns the point's figures, named after the
// endpoint ("dcgm.power_mean_w"), and an error when no scrape succeeded.
func (s *Sampler) Stop() (map[string]float64, error) {
	close(s.stop)
	<-s.done
	if len(s.scrapes) == 0 {
		if s.lastErr == nil {
			return nil, fmt.Errorf("telemetry %s: nothing scraped", s.ep.Name)
		}
		return nil, fmt.Errorf("telemetry %s: %d scrapes failed, last: %w", s.ep.Name, s.errs, s.lastErr)
	}
	out := map[string]float64{}
	for k, v := range reduce(s.scrapes, s.ep.Gauges) {
		out[s.ep.Name+"."+k] = v
	}
	return out, nil
}

// reduce turns a point's scrapes into its figures: means over the scrapes
// of gauges summed over GPUs (power) or averaged over them (utilization),
// peaks, and the energy spent between the first and the last scrape, from
// the exporter's energy counter where it serves one, else from the mean
// power.
func reduce(scrapes []sample, gauges []string) map[string]float64 {
	out := map[string]float64{}
	pick := func(sources []source) source {
		for _, src := range sources {
			for _, sc := range scrapes {
				if v, ok := sc.m[src.metric]; ok && v.n > 0 {
					return src
				}
			}
		}
		return source{}
	}
	mean := func(src source, f func(series) float64) (float64, bool) {
		total, n := 0.0, 0
		for _, sc := range scrapes {
			if v, ok := sc.m[src.metric]; ok && v.n > 0 {
				total += f(v) * src.scale
				n++
			}
		}
		if n == 0 {
			return 0, false
		}
		return total / float64(n), true
	}
	peak := func(src source, f func(series) float64) (float64, bool) {
		best, ok := math.Inf(-1), false
		for _, sc := range scrapes {
			if v, has := sc.m[src.metric]; has && v.n > 0 {
				best, ok = max(best, f(v)*src.scale), true
			}
		}
		return best, ok
	}
	sum := func(v series) float64 { return v.sum }
	avg := func(v series) float64 { return v.sum / float64(v.n) }
	most := func(v series) float64 { return v.max }
	set := func(key string) func(float64, bool) {
		return func(v float64, ok bool) {
			if ok {
				out[key] = v
			}
		}
	}
	util, memory, power, energy := pick(utilSources), pick(memorySources), pick(powerSources), pick(energySources)
	gpus := 0
	for _, sc := range scrapes {
		for _, src := range []source{util, power, memory} {
			gpus = max(gpus, sc.m[src.metric].n)
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
	e0, ok0 := first.m[energy.metric]
	e1, ok1 := last.m[energy.metric]
	switch {
	case ok0 && ok1 && e1.sum >= e0.sum && len(scrapes) > 1:
		out[Energy], out[EnergyCounted] = (e1.sum-e0.sum)*energy.scale, 1
	case hasPower && len(scrapes) > 1:
		out[Energy], out[EnergyCounted] = watts*last.at.Sub(first.at).Seconds(), 0
	}
	for _, g := range gauges {
		set(g + "_mean")(mean(source{g, 1}, sum))
		set(g + "_peak")(peak(source{g, 1}, sum))
	}
	return out
}

// fetch reads one endpoint's metrics: per metric name, the sum, count and
// largest of its samples over label sets. NaN and infinite samples are
// left out, as if not served.
func fetch(ctx context.Context, url string) (map[string]series, error) {
	var m map[string]series
	err := engine.Fetch(ctx, url, func(r io.Reader) (err error) {
		m, err = parse(r)
		return err
	})
	return m, err
}

// parse reads the Prometheus text format into per-name series.
func parse(r io.Reader) (map[string]series, error) {
	out := map[string]series{}
	err := engine.Samples(r, func(name string, v float64) {
		s, ok := out[name]
		if !ok {
			s.max = math.Inf(-1)
		}
		s.sum += v
		s.max = max(s.max, v)
		s.n++
		out[name] = s
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
