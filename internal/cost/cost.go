// Package cost turns hardware cost and measured throughput into dollars per
// million tokens, on one basis for every engine and configuration:
//
//	$/1M tokens = (GPU amortization + energy) x (1 + ops overhead) / tokens per hour x 1e6
package cost

import (
	"errors"
	"fmt"
	"math"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
)

// Deployment is what the hardware costs: a suite's cost inputs. Its fields
// are suite.Cost's, in its order, so a suite's converts as
// (*cost.Deployment)(s.Cost), and a field added to one and not the other
// fails to compile there. Pricing takes this rather than the suite so
// that it links neither the suite's validation nor the JSON Schema
// compiler behind it.
type Deployment struct {
	// USDPerHour is one GPU's price an hour.
	USDPerHour float64
	GPUs       int
	// Watts is one GPU's fixed power draw, priced when telemetry measured none.
	Watts          float64
	USDPerKWh      float64
	OpsOverheadPct float64
}

// Power is power measured over a point (all GPUs together), to price
// energy with instead of the suite's fixed watts per GPU.
type Power struct {
	Watts float64
	// Source says where it was measured, e.g. "dcgm, 4 GPUs".
	Source string
}

// measuredPower is the mean power over a point of the first of the suite's
// telemetry endpoints (exporters, by name) that measured a plausible one,
// or nil. The figures may come from a results file (a shard merge prices
// them again), so they are bounded here too: a power is a finite number
// of watts above 0 and at most metric.MaxGPUWatts for each GPU measured
// (all an exporter may serve, without a GPU count); a GPU count a whole
// number from 1 to metric.MaxGPUs.
func measuredPower(c *Deployment, exporters []string, figures map[string]float64) *Power {
	for _, name := range exporters {
		w, ok := figures[metric.TelemetryKey(name, metric.TelemetryPowerMean)]
		if !ok || !finite(w) || w <= 0 {
			continue
		}
		n := figures[metric.TelemetryKey(name, metric.TelemetryGPUs)]
		gpus := n >= 1 && n <= metric.MaxGPUs && n == math.Trunc(n)
		if w > metric.MaxGPUWatts*metric.MaxGPUs || gpus && w > metric.MaxGPUWatts*n {
			continue
		}
		src := name
		if gpus {
			src = fmt.Sprintf("%s, %d GPUs", name, int(n))
			// An exporter of a whole node (or of more GPUs than the
			// deployment) measures GPUs the suite does not pay for: its
			// mean per GPU prices the suite's own count.
			if c != nil && c.GPUs > 0 && c.GPUs != int(n) {
				src = fmt.Sprintf("%s, %d GPUs at %.0f W each, priced for the suite's %d", name, int(n), w/n, c.GPUs)
				w = w / n * float64(c.GPUs)
			}
		}
		return &Power{Watts: w, Source: src}
	}
	return nil
}

// finite reports whether v is a number other than an infinity.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// rate is a throughput fit to divide by: finite and above 0, else 0
// (nothing produced).
func rate(tokensPerSecond float64) float64 {
	if !finite(tokensPerSecond) || tokensPerSecond <= 0 {
		return 0
	}
	return tokensPerSecond
}

// energyPerToken is joules per output token at a point: measured power
// over output throughput; 0 without either, or when the ratio is beyond
// float64 (a throughput of a few tokens an age). A ratio of two means
// over the point, it needs no alignment of the exporter's scrapes with
// the measured window.
func energyPerToken(measured *Power, outputTPS float64) float64 {
	tps := rate(outputTPS)
	if measured == nil || tps == 0 {
		return 0
	}
	if j := measured.Watts / tps; finite(j) {
		return j
	}
	return 0
}

// Price sets a point's energy per output token and, when the suite
// declares cost inputs (c is not nil), its cost, from the point's
// throughputs and the power its telemetry measured: exporters are the
// suite's telemetry endpoints' names, in its order. Runs and shard merges
// price points alike. A cost its inputs take beyond float64 is left out:
// a point has no cost rather than an infinite one.
func Price(c *Deployment, exporters []string, p *result.Point) {
	power := measuredPower(c, exporters, p.Telemetry)
	p.EnergyPerOutputToken = energyPerToken(power, p.Throughput.OutputTokens)
	if c != nil {
		p.Cost = nil
		if c, err := At(*c, power, p.Throughput.OutputTokens, p.Throughput.TotalTokens); err == nil {
			p.Cost = &c
		}
	}
}

// errUnpriced is a cost that is not a finite, non-negative number of
// dollars.
var errUnpriced = errors.New("cost: the cost inputs give no finite, non-negative cost")

// PerHour is the cost of running the deployment for an hour, in dollars;
// measured power, when given, replaces watts x gpus in the energy term.
// Inputs that are not finite, non-negative numbers give NaN: At refuses
// them.
func PerHour(c Deployment, measured *Power) float64 {
	for _, v := range []float64{c.USDPerHour, c.Watts, c.USDPerKWh, c.OpsOverheadPct} {
		if !finite(v) || v < 0 {
			return math.NaN()
		}
	}
	if measured != nil && (!finite(measured.Watts) || measured.Watts < 0) {
		return math.NaN()
	}
	gpus := float64(max(c.GPUs, 1))
	energy := c.Watts / 1000 * c.USDPerKWh * gpus // watts are per GPU, like usd_per_hour
	if measured != nil {
		energy = measured.Watts / 1000 * c.USDPerKWh
	}
	return (c.USDPerHour*gpus + energy) * (1 + c.OpsOverheadPct/100)
}

// energySource says which power the energy term used.
func energySource(c Deployment, measured *Power) string {
	switch {
	case c.USDPerKWh == 0:
		return ""
	case measured != nil:
		return fmt.Sprintf("measured: %.0f W (%s)", measured.Watts, measured.Source)
	case c.Watts > 0:
		return fmt.Sprintf("fixed: %.0f W x %d GPUs", c.Watts, max(c.GPUs, 1))
	}
	return ""
}

// PerMillion returns dollars per million tokens at tokensPerSecond; 0 when
// nothing was produced, or the throughput is not a finite number (an
// infinite cost is not a useful number to diff).
func PerMillion(c Deployment, measured *Power, tokensPerSecond float64) float64 {
	tps := rate(tokensPerSecond)
	if tps == 0 {
		return 0
	}
	return PerHour(c, measured) / (tps * 3600) * 1e6
}

// At computes the cost at a point from its throughputs (tokens/s) and,
// where telemetry measured it, its power; an error when a figure would be
// negative, NaN or infinite (inputs out of range, or so large or a
// throughput so small that the cost overflows).
func At(c Deployment, measured *Power, outputTPS, totalTPS float64) (result.Cost, error) {
	r := result.Cost{USDPerHour: PerHour(c, measured), PerMOutput: PerMillion(c, measured, outputTPS), PerMTotal: PerMillion(c, measured, totalTPS),
		Energy: energySource(c, measured)}
	for _, v := range []float64{r.USDPerHour, r.PerMOutput, r.PerMTotal} {
		if !finite(v) || v < 0 {
			return result.Cost{}, errUnpriced
		}
	}
	return r, nil
}
