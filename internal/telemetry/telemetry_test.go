package telemetry

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// dcgm serves what NVIDIA's dcgm-exporter serves for two GPUs: power of
// 300 and 350 W, utilization 80 and 60 %, memory used, and an energy
// counter that grows by 650 J a scrape. calls counts the scrapes.
func dcgm(calls *atomic.Int64, withEnergy bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		fmt.Fprintf(w, "# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n")
		fmt.Fprintf(w, "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-a\",modelName=\"NVIDIA H100 80GB HBM3\"} 300\n")
		fmt.Fprintf(w, "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"GPU-b\",modelName=\"NVIDIA H100 80GB HBM3\"} 350\n")
		fmt.Fprintf(w, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 80\nDCGM_FI_DEV_GPU_UTIL{gpu=\"1\"} 60\n")
		fmt.Fprintf(w, "# TYPE DCGM_FI_DEV_FB_USED gauge\nDCGM_FI_DEV_FB_USED{gpu=\"0\"} %d\nDCGM_FI_DEV_FB_USED{gpu=\"1\"} 70000\n", 60000+n)
		if withEnergy {
			fmt.Fprintf(w, "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"} %d\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"1\"} %d\n", 1e9+n*300000, 2e9+n*350000)
		}
		fmt.Fprintf(w, "# TYPE node_load1 gauge\nnode_load1 %d\n", n)
	}
}

func TestSamplerReducesDCGM(t *testing.T) {
	t.Parallel()
	for _, withEnergy := range []bool{true, false} {
		var calls atomic.Int64
		srv := httptest.NewServer(dcgm(&calls, withEnergy))
		defer srv.Close()
		began := time.Now()
		s := Start(context.Background(), Endpoint{Name: "dcgm", URL: srv.URL + "/metrics", Interval: 10 * time.Millisecond, Gauges: []string{"node_load1"}})
		for calls.Load() < 5 {
			time.Sleep(5 * time.Millisecond)
		}
		figs, err := s.Stop()
		if err != nil {
			t.Fatal(err)
		}
		elapsed := time.Since(began).Seconds()
		n := calls.Load()
		want := map[string]float64{
			"dcgm.gpus": 2, "dcgm.gpu_util_mean_pct": 70, "dcgm.gpu_util_peak_pct": 80,
			"dcgm.gpu_memory_used_peak_mib": float64(130000 + n), "dcgm.power_mean_w": 650, "dcgm.power_peak_w": 650,
			"dcgm.node_load1_peak": float64(n), "dcgm.node_load1_mean": float64(n+1) / 2,
		}
		if withEnergy {
			// 650 J per scrape between the first and the last.
			want["dcgm.energy_j"], want["dcgm.energy_counted"] = float64(650*(n-1)), 1
		}
		for k, v := range want {
			if got, ok := figs[k]; !ok || math.Abs(got-v) > 1e-9 {
				t.Errorf("energy counter %v: %s = %v (%v), want %v", withEnergy, k, got, ok, v)
			}
		}
		if !withEnergy {
			// Mean power over the time between the first and last scrape,
			// which is within the time the sampler ran.
			if e := figs["dcgm.energy_j"]; figs["dcgm.energy_counted"] != 0 || e <= 0 || e > 650*elapsed {
				t.Errorf("energy from power: %v J, at most %v in %.3f s", e, 650*elapsed, elapsed)
			}
		}
	}
}

// amd serves what AMD's device-metrics-exporter serves for two MI300X:
// package power of 550 and 600 W, GFX activity 90 and 50 %, VRAM used in
// MB, and accumulated energy in microjoules growing 1,150 J a scrape. It
// also serves gpu_power_usage, which package power takes precedence over.
func amd(calls *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		fmt.Fprintf(w, "# HELP gpu_package_power Current socket power in Watts\n# TYPE gpu_package_power gauge\n")
		fmt.Fprintf(w, "gpu_package_power{gpu_id=\"0\",card_model=\"MI300X\"} 550\ngpu_package_power{gpu_id=\"1\",card_model=\"MI300X\"} 600\n")
		fmt.Fprintf(w, "# TYPE gpu_power_usage gauge\ngpu_power_usage{gpu_id=\"0\"} 1\ngpu_power_usage{gpu_id=\"1\"} 1\n")
		fmt.Fprintf(w, "# TYPE gpu_gfx_activity gauge\ngpu_gfx_activity{gpu_id=\"0\"} 90\ngpu_gfx_activity{gpu_id=\"1\"} 50\n")
		fmt.Fprintf(w, "# TYPE gpu_used_vram gauge\ngpu_used_vram{gpu_id=\"0\"} 150000\ngpu_used_vram{gpu_id=\"1\"} %d\n", 160000+n)
		fmt.Fprintf(w, "# TYPE gpu_energy_consumed gauge\ngpu_energy_consumed{gpu_id=\"0\"} %d\ngpu_energy_consumed{gpu_id=\"1\"} %d\n", 5e12+n*550e6, 6e12+n*600e6)
	}
}

// The same figures come from AMD's exporter, in the same units.
func TestSamplerReducesAMD(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	srv := httptest.NewServer(amd(&calls))
	defer srv.Close()
	s := Start(context.Background(), Endpoint{Name: "amd", URL: srv.URL + "/metrics", Interval: 10 * time.Millisecond})
	for calls.Load() < 5 {
		time.Sleep(5 * time.Millisecond)
	}
	figs, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	n := calls.Load()
	want := map[string]float64{
		"amd.gpus": 2, "amd.gpu_util_mean_pct": 70, "amd.gpu_util_peak_pct": 90,
		"amd.gpu_memory_used_peak_mib": float64(310000 + n), "amd.power_mean_w": 1150, "amd.power_peak_w": 1150,
		"amd.energy_j": float64(1150 * (n - 1)), "amd.energy_counted": 1,
	}
	for k, v := range want {
		if got, ok := figs[k]; !ok || math.Abs(got-v) > 1e-6 {
			t.Errorf("%s = %v (%v), want %v", k, got, ok, v)
		}
	}
}

func TestSamplerReportsAFailingEndpoint(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusServiceUnavailable) }))
	defer srv.Close()
	s := Start(context.Background(), Endpoint{Name: "dcgm", URL: srv.URL, Interval: 10 * time.Millisecond})
	time.Sleep(30 * time.Millisecond)
	if _, err := s.Stop(); err == nil || !strings.Contains(err.Error(), "HTTP 503") {
		t.Errorf("err %v", err)
	}
}
