// Package cost turns hardware cost and measured throughput into dollars per
// million tokens, on one basis for every engine and configuration:
//
//	$/1M tokens = (GPU amortization + energy) x (1 + ops overhead) / tokens per hour x 1e6
package cost

import (
	"fmt"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/framework/telemetry"
)

// Power is power measured over a point (all GPUs together), to price
// energy with instead of the suite's fixed watts per GPU.
type Power struct {
	Watts float64
	// Source says where it was measured, e.g. "dcgm, 4 GPUs".
	Source string
}

// measuredPower is the mean power over a point of the first of the suite's
// telemetry endpoints that measured it, or nil.
func measuredPower(s *suite.Suite, figures map[string]float64) *Power {
	for _, t := range s.Telemetry {
		if w, ok := figures[t.Name+"."+telemetry.PowerMean]; ok && w > 0 {
			src := t.Name
			if n := figures[t.Name+"."+telemetry.GPUs]; n > 0 {
				src = fmt.Sprintf("%s, %d GPUs", t.Name, int(n))
			}
			return &Power{Watts: w, Source: src}
		}
	}
	return nil
}

// energyPerToken is joules per output token at a point: measured power
// over output throughput; 0 without either. A ratio of two means over the
// point, it needs no alignment of the exporter's scrapes with the
// measured window.
func energyPerToken(measured *Power, outputTPS float64) float64 {
	if measured == nil || outputTPS <= 0 {
		return 0
	}
	return measured.Watts / outputTPS
}

// Price sets a point's energy per output token and, when the suite
// declares cost inputs, its cost, from the point's throughputs and the
// power its telemetry measured. Runs and shard merges price points alike.
func Price(s *suite.Suite, p *result.Point) {
	power := measuredPower(s, p.Telemetry)
	p.EnergyPerOutputToken = energyPerToken(power, p.Throughput.OutputTokens)
	if s.Cost != nil {
		c := At(*s.Cost, power, p.Throughput.OutputTokens, p.Throughput.TotalTokens)
		p.Cost = &c
	}
}

// PerHour is the cost of running the deployment for an hour, in dollars;
// measured power, when given, replaces watts x gpus in the energy term.
func PerHour(c suite.Cost, measured *Power) float64 {
	gpus := float64(max(c.GPUs, 1))
	energy := c.Watts / 1000 * c.USDPerKWh * gpus // watts are per GPU, like usd_per_hour
	if measured != nil {
		energy = measured.Watts / 1000 * c.USDPerKWh
	}
	return (c.USDPerHour*gpus + energy) * (1 + c.OpsOverheadPct/100)
}

// energySource says which power the energy term used.
func energySource(c suite.Cost, measured *Power) string {
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
// nothing was produced (an infinite cost is not a useful number to diff).
func PerMillion(c suite.Cost, measured *Power, tokensPerSecond float64) float64 {
	if tokensPerSecond <= 0 {
		return 0
	}
	return PerHour(c, measured) / (tokensPerSecond * 3600) * 1e6
}

// At computes the cost at a point from its throughputs (tokens/s) and,
// where telemetry measured it, its power.
func At(c suite.Cost, measured *Power, outputTPS, totalTPS float64) result.Cost {
	return result.Cost{USDPerHour: PerHour(c, measured), PerMOutput: PerMillion(c, measured, outputTPS), PerMTotal: PerMillion(c, measured, totalTPS),
		Energy: energySource(c, measured)}
}
