package cost

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/result"
)

// priced prices a point with the given telemetry figures and throughput
// under a suite with one exporter, dcgm, and 2 GPUs at $2/h, 700 W fixed,
// $0.5/kWh; it fails the test unless what Price wrote is a finite,
// non-negative figure that encodes.
func priced(t *testing.T, c Deployment, figures map[string]float64, outputTPS float64) result.Point {
	t.Helper()
	p := result.Point{Telemetry: figures}
	p.Throughput.OutputTokens, p.Throughput.TotalTokens = outputTPS, 2*outputTPS
	Price(&c, []string{"dcgm"}, &p)
	figs := []float64{p.EnergyPerOutputToken}
	if p.Cost != nil {
		figs = append(figs, p.Cost.USDPerHour, p.Cost.PerMOutput, p.Cost.PerMTotal)
		if _, err := json.Marshal(p.Cost); err != nil {
			t.Errorf("cost does not encode: %v", err)
		}
	}
	for _, v := range figs {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Errorf("figures %v, cost %+v, energy per token %v", figures, p.Cost, p.EnergyPerOutputToken)
			break
		}
	}
	return p
}

var twoGPUs = Deployment{USDPerHour: 2, GPUs: 2, Watts: 700, USDPerKWh: 0.5}

// Issue 26, F16 and M9: a power no exporter could measure (infinite,
// 1e308 W, 402,103 GPUs' worth, more than MaxGPUWatts per GPU it counts)
// prices nothing: the suite's fixed watts price the energy, and no energy
// per token is written. The figures may come from a results file (a
// shard merge prices them again), so the telemetry package's bound is not
// the only one.
func TestImplausiblePowerPricesNothing(t *testing.T) {
	t.Parallel()
	for _, figs := range []map[string]float64{
		{"dcgm.power_mean_w": math.Inf(1), "dcgm.gpus": 2},
		{"dcgm.power_mean_w": 1e308, "dcgm.gpus": 2},
		{"dcgm.power_mean_w": 402103 * 700, "dcgm.gpus": 402103},
		{"dcgm.power_mean_w": 5000, "dcgm.gpus": 2},
		{"dcgm.power_mean_w": math.NaN()},
		{"dcgm.power_mean_w": -700, "dcgm.gpus": 1},
	} {
		p := priced(t, twoGPUs, figs, 1000)
		if p.EnergyPerOutputToken != 0 || p.Cost == nil || !strings.HasPrefix(p.Cost.Energy, "fixed:") || math.Abs(p.Cost.USDPerHour-(2*2+0.7*2*0.5)) > 1e-9 {
			t.Errorf("%v: %v J/token, cost %+v; want the fixed watts", figs, p.EnergyPerOutputToken, p.Cost)
		}
	}
	// A GPU count that is not one leaves the source without it, and the
	// power stands if all GPUs an exporter may serve could draw it.
	p := priced(t, twoGPUs, map[string]float64{"dcgm.power_mean_w": 1500, "dcgm.gpus": 1e308}, 1000)
	if p.Cost == nil || p.Cost.Energy != "measured: 1500 W (dcgm)" {
		t.Errorf("cost %+v", p.Cost)
	}
}

// A throughput that is not a number, or so small that a cost or the
// energy per token overflows, and cost inputs that overflow: never an
// infinite, NaN or negative figure; a cost that cannot be a number is
// left out.
func TestCostNeverInfinite(t *testing.T) {
	t.Parallel()
	power := map[string]float64{"dcgm.power_mean_w": 800, "dcgm.gpus": 2}
	for _, tps := range []float64{math.NaN(), math.Inf(1), -5, 1e-320} {
		p := priced(t, twoGPUs, power, tps)
		if tps == 1e-320 {
			if p.Cost != nil || p.EnergyPerOutputToken != 0 {
				t.Errorf("%v tok/s: cost %+v, %v J/token; want none", tps, p.Cost, p.EnergyPerOutputToken)
			}
		} else if p.Cost == nil || p.Cost.PerMOutput != 0 || p.EnergyPerOutputToken != 0 {
			t.Errorf("%v tok/s: cost %+v, %v J/token; want nothing produced", tps, p.Cost, p.EnergyPerOutputToken)
		}
	}
	for _, c := range []Deployment{
		{USDPerHour: 1e308, GPUs: 2},
		{USDPerHour: math.Inf(1), GPUs: 1},
		{USDPerHour: math.NaN(), GPUs: 1},
		{USDPerHour: 2, GPUs: 1, OpsOverheadPct: -200},
		{USDPerHour: 2, GPUs: 1, Watts: 1e308, USDPerKWh: 1e308},
	} {
		if p := priced(t, c, nil, 1000); p.Cost != nil {
			t.Errorf("%+v: cost %+v, want none", c, p.Cost)
		}
		if _, err := At(c, nil, 1000, 2000); err == nil {
			t.Errorf("%+v priced", c)
		}
	}
}
