package runner

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/result"
)

// A fake DCGM exporter beside the simulator: its figures land in every
// point, and its measured power prices the cost's energy instead of the
// suite's fixed watts.
func TestTelemetryLandsPerPointAndInCost(t *testing.T) {
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\nDCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 410\nDCGM_FI_DEV_POWER_USAGE{gpu=\"1\"} 390\n"+
			"# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 90\nDCGM_FI_DEV_GPU_UTIL{gpu=\"1\"} 70\n")
	}))
	defer exporter.Close()
	f := runSource(t, filepath.Join(t.TempDir(), "tel.jsonnet"), fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'tel',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(16), output_tokens: b.dist.fixed(4) },
  sweep: b.sweep.rates([5, 10], duration='1s', warmup='0s'),
  telemetry: [{ name: 'dcgm', url: '%s/metrics', interval: '200ms' }],
  cost: b.cost.gpu(usd_per_hour=2, gpus=2, watts=700, usd_per_kwh=0.5),
  slos: [b.slo.rate('energy_per_output_token', '<', 1e6)],
}`, exporter.URL))
	if len(f.SLOs) != 2 {
		t.Fatalf("%d SLO verdicts, want one per point", len(f.SLOs))
	}
	for _, v := range f.SLOs {
		if !v.Pass && !v.Inconclusive { // inconclusive: a stalled machine, said
			t.Errorf("energy SLO failed: %+v", v)
		}
	}
	for _, p := range f.Points {
		if p.Telemetry["dcgm.power_mean_w"] != 800 || p.Telemetry["dcgm.gpu_util_mean_pct"] != 80 || p.Telemetry["dcgm.gpus"] != 2 {
			t.Errorf("%s: telemetry %v", p.Label, p.Telemetry)
		}
		if e := p.Telemetry["dcgm.energy_j"]; e <= 0 {
			t.Errorf("%s: energy %v J", p.Label, e)
		}
		// 800 W over the point's output tokens per second.
		if tps := p.Throughput.OutputTokens; tps <= 0 || math.Abs(p.EnergyPerOutputToken-800/tps) > 1e-9 {
			t.Errorf("%s: %v J/token at %v tok/s, want 800 W over it", p.Label, p.EnergyPerOutputToken, tps)
		}
		// $2 x 2 GPUs + 0.8 kW x $0.5, not 2 x 0.7 kW x $0.5.
		if c := p.Cost; c == nil || math.Abs(c.USDPerHour-4.4) > 1e-9 || !strings.HasPrefix(c.Energy, "measured: 800 W (dcgm, 2 GPUs)") {
			t.Errorf("%s: cost %+v", p.Label, c)
		}
	}
}

// F16: an exporter that reports 1e308 W per GPU loses the run no more:
// power is dropped as implausible (the suite's fixed watts price the
// energy), the exporter's other figures stand, a note says why, and the
// results encode.
func TestImplausiblePowerIsDroppedNotWritten(t *testing.T) {
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\nDCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 1e308\nDCGM_FI_DEV_POWER_USAGE{gpu=\"1\"} 1e308\n"+
			"# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 90\nDCGM_FI_DEV_GPU_UTIL{gpu=\"1\"} 70\n")
	}))
	defer exporter.Close()
	dir := t.TempDir()
	f := runSource(t, filepath.Join(dir, "tel.jsonnet"), fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'tel',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(16), output_tokens: b.dist.fixed(4) },
  sweep: b.sweep.rates([5], duration='1s', warmup='0s'),
  telemetry: [{ name: 'dcgm', url: '%s/metrics', interval: '200ms' }],
  cost: b.cost.gpu(usd_per_hour=2, gpus=2, watts=700, usd_per_kwh=0.5),
}`, exporter.URL))
	p := f.Points[0]
	if _, ok := p.Telemetry["dcgm.power_mean_w"]; ok || p.Telemetry["dcgm.gpu_util_mean_pct"] != 80 {
		t.Errorf("telemetry %v: want utilization kept and power dropped", p.Telemetry)
	}
	if c := p.Cost; c == nil || math.IsInf(c.PerMOutput, 0) || !strings.HasPrefix(c.Energy, "fixed") {
		t.Errorf("cost %+v: want the fixed watts to price the energy", c)
	}
	if !strings.Contains(strings.Join(f.Notes, "\n"), "implausible") {
		t.Errorf("no note says why power was dropped: %q", f.Notes)
	}
	if err := result.Write(filepath.Join(dir, "tel.json"), f); err != nil {
		t.Errorf("the results did not encode: %v", err)
	}
}
