// Package cost turns hardware cost and measured throughput into dollars per
// million tokens, on one basis for every engine and configuration:
//
//	$/1M tokens = (GPU amortization + energy) x (1 + ops overhead) / tokens per hour x 1e6
package cost

import (
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
)

// PerHour is the cost of running the deployment for an hour, in dollars.
func PerHour(c suite.Cost) float64 {
	gpus := float64(max(c.GPUs, 1))
	energy := c.Watts / 1000 * c.USDPerKWh * gpus // watts are per GPU, like usd_per_hour
	return (c.USDPerHour*gpus + energy) * (1 + c.OpsOverheadPct/100)
}

// PerMillion returns dollars per million tokens at tokensPerSecond; 0 when
// nothing was produced (an infinite cost is not a useful number to diff).
func PerMillion(c suite.Cost, tokensPerSecond float64) float64 {
	if tokensPerSecond <= 0 {
		return 0
	}
	return PerHour(c) / (tokensPerSecond * 3600) * 1e6
}

// At computes the cost at a point from its throughputs (tokens/s).
func At(c suite.Cost, outputTPS, totalTPS float64) result.Cost {
	return result.Cost{USDPerHour: PerHour(c), PerMOutput: PerMillion(c, outputTPS), PerMTotal: PerMillion(c, totalTPS)}
}
