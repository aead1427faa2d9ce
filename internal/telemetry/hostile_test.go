package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchci/benchci/internal/promtext"
)

// serve answers each scrape with text(n), n counting scrapes from 1.
func serve(t *testing.T, text func(n int64) string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, text(calls.Add(1)))
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// sampleN scrapes srv until it has served n scrapes, and stops.
func sampleN(t *testing.T, srv *httptest.Server, calls *atomic.Int64, n int64, gauges ...string) (map[string]float64, error) {
	t.Helper()
	s := Start(context.Background(), Endpoint{Name: "dcgm", URL: srv.URL + "/metrics", Interval: 5 * time.Millisecond, Gauges: gauges})
	for calls.Load() < n {
		time.Sleep(2 * time.Millisecond)
	}
	return s.Stop()
}

// encodes fails the test unless the figures are what a result can hold:
// finite, not negative, and JSON.
func encodes(t *testing.T, figs map[string]float64) {
	t.Helper()
	if _, err := json.Marshal(figs); err != nil {
		t.Errorf("figures do not encode: %v", err)
	}
	for k, v := range figs {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Errorf("%s = %v", k, v)
		}
	}
}

// dropped returns the reasons of a *Dropped error, failing the test on
// any other.
func dropped(t *testing.T, err error) string {
	t.Helper()
	var d *Dropped
	if !errors.As(err, &d) {
		t.Fatalf("err %v, want the implausible readings named", err)
	}
	return strings.Join(d.Reasons, "; ")
}

// TestImpossiblePower (issue 26, F16): an exporter serving 1e308 W on
// each of two GPUs. The sum was +Inf, the results did not encode and the
// run was lost. Now the power is left out, with why, and the figures that
// remain encode.
func TestImpossiblePower(t *testing.T) {
	t.Parallel()
	srv, calls := serve(t, func(n int64) string {
		return "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 1e308\nDCGM_FI_DEV_POWER_USAGE{gpu=\"1\"} 1e308\n" +
			"DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 50\nDCGM_FI_DEV_GPU_UTIL{gpu=\"1\"} 70\n"
	})
	figs, err := sampleN(t, srv, calls, 3)
	encodes(t, figs)
	why := dropped(t, err)
	for _, k := range []string{PowerMean, PowerPeak, Energy} {
		if v, ok := figs["dcgm."+k]; ok {
			t.Errorf("%s = %v written", k, v)
		}
	}
	if figs["dcgm."+UtilMean] != 60 || figs["dcgm."+GPUs] != 2 {
		t.Errorf("the plausible figures were lost too: %v", figs)
	}
	if !strings.Contains(why, "DCGM_FI_DEV_POWER_USAGE") || !strings.Contains(why, "above 2000 W") {
		t.Errorf("reasons %q do not say power above 2000 W", why)
	}
}

// TestNegativeReadings (M5): -700 W of power, and an energy counter below
// zero, were written into the results (-3,473 J from power x time).
func TestNegativeReadings(t *testing.T) {
	t.Parallel()
	srv, calls := serve(t, func(n int64) string {
		return "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} -700\n" +
			fmt.Sprintf("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"} %d\n", -1_000_000+n) +
			"DCGM_FI_DEV_FB_USED{gpu=\"0\"} -5\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 250\nnode_temp -3\n"
	})
	figs, err := sampleN(t, srv, calls, 3, "node_temp")
	encodes(t, figs)
	why := dropped(t, err)
	if len(figs) != 0 {
		t.Errorf("figures written: %v", figs)
	}
	for _, want := range []string{"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_GPU_UTIL", "node_temp_mean"} {
		if !strings.Contains(why, want) {
			t.Errorf("reasons %q do not name %s", why, want)
		}
	}
}

// TestTooManyGPUs (M9): an exporter serving a million series was taken
// at its word: 402,103 GPUs and $88k per 1M tokens. Past MaxSeries a
// scrape fails whole; past MaxGPUs series of a GPU metric, the metric is
// left out.
func TestTooManyGPUs(t *testing.T) {
	t.Parallel()
	many := func(series int) string {
		var b strings.Builder
		for i := range series {
			fmt.Fprintf(&b, "DCGM_FI_DEV_POWER_USAGE{gpu=\"%d\"} 300\n", i)
		}
		return b.String()
	}
	gpus := many(MaxGPUs+1) + "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 50\n"
	srv, calls := serve(t, func(int64) string { return gpus })
	figs, err := sampleN(t, srv, calls, 2)
	encodes(t, figs)
	why := dropped(t, err)
	if figs["dcgm."+GPUs] != 1 || figs["dcgm."+PowerMean] != 0 {
		t.Errorf("figures %v, want 1 GPU (from utilization) and no power", figs)
	}
	if !strings.Contains(why, fmt.Sprintf("%d series, more than the %d GPUs", MaxGPUs+1, MaxGPUs)) {
		t.Errorf("reasons %q", why)
	}

	million := many(MaxSeries + 1)
	srv, calls = serve(t, func(int64) string { return million })
	figs, err = sampleN(t, srv, calls, 2)
	if figs != nil || err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d series", MaxSeries)) {
		t.Errorf("%d series: %v, %v", MaxSeries+1, figs, err)
	}
}

// TestEnergyCounterBounded: an energy counter that rises more than any
// GPU could draw between two scrapes contradicts the power (and the
// J/token figure priced from it): it is left out, and the energy comes
// from power x time.
func TestEnergyCounterBounded(t *testing.T) {
	t.Parallel()
	// A rise of 1e9 J a scrape: far beyond any GPU between two scrapes,
	// yet thousands of scrapes (a loaded machine polls more often) stay
	// under the counter's absolute bound, so the rise is what is caught.
	srv, calls := serve(t, func(n int64) string {
		return "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 300\n" +
			fmt.Sprintf("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"} %d\n", n*1e12)
	})
	figs, err := sampleN(t, srv, calls, 3)
	encodes(t, figs)
	why := dropped(t, err)
	if figs["dcgm."+EnergyCounted] != 0 || figs["dcgm."+Energy] <= 0 || figs["dcgm."+Energy] > 300*time.Minute.Seconds() {
		t.Errorf("energy %v J (counted %v), want power x time", figs["dcgm."+Energy], figs["dcgm."+EnergyCounted])
	}
	if !strings.Contains(why, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION") || !strings.Contains(why, "counter rose") {
		t.Errorf("reasons %q", why)
	}
}

// at builds scrapes from exposition texts, a second apart.
func at(t *testing.T, gauges []string, texts ...string) []sample {
	t.Helper()
	var out []sample
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, text := range texts {
		m, err := promtext.Parse(strings.NewReader(text), wantAll(gauges))
		if err != nil {
			t.Fatal(err)
		}
		vet(m, func(string, string, string) {})
		out = append(out, sample{at: t0.Add(time.Duration(i) * time.Second), m: m})
	}
	return out
}

func wantAll(gauges []string) map[string]bool {
	want := map[string]bool{}
	for _, g := range gauges {
		want[g] = false
	}
	for name := range gpuMetrics {
		want[name] = false
	}
	for _, src := range energySources {
		want[src.metric] = true
	}
	return want
}

// The energy bound is per GPU and per the time between the scrapes: at
// MaxGPUWatts for that time and counterLag more a GPU's delta stands,
// above it not; a GPU whose counter went back (a restart), or that one
// scrape does not serve, sends the energy to power x time, without a
// note.
func TestEnergyDeltaPerGPU(t *testing.T) {
	t.Parallel()
	const most = MaxGPUWatts * (10 + counterLag) * 1000 // mJ, 10 s apart
	counter := func(a, b float64) string {
		return fmt.Sprintf("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 500\nDCGM_FI_DEV_POWER_USAGE{gpu=\"1\"} 500\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"} %.0f\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"1\"} %.0f\n", a, b)
	}
	for _, c := range []struct {
		name    string
		last    string
		energy  float64
		counted float64
		noted   bool
	}{
		{"both at the bound", counter(1e9+most, 2e9+most), 2 * most / 1000, 1, false},
		{"one past it", counter(1e9+most+1000, 2e9), 10 * 1000, 0, true},
		{"one went back", counter(1e9-1, 2e9+5000), 10 * 1000, 0, false},
		{"one not served", "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 500\nDCGM_FI_DEV_POWER_USAGE{gpu=\"1\"} 500\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"} 1000000001\n", 10 * 1000, 0, false},
	} {
		scrapes := at(t, nil, counter(1e9, 2e9), counter(1e9, 2e9), counter(1e9, 2e9), counter(1e9, 2e9), counter(1e9, 2e9), counter(1e9, 2e9), counter(1e9, 2e9), counter(1e9, 2e9), counter(1e9, 2e9), counter(1e9, 2e9), c.last)
		figs, notes := reduce(scrapes, nil)
		if math.Abs(figs[Energy]-c.energy) > 1e-6 || figs[EnergyCounted] != c.counted || (len(notes) > 0) != c.noted {
			t.Errorf("%s: %v J, counted %v, notes %q; want %v J, counted %v, noted %v", c.name, figs[Energy], figs[EnergyCounted], notes, c.energy, c.counted, c.noted)
		}
	}
}

// A gauge whose sums overflow float64 over the scrapes, or is negative,
// is left out with a note; the mean of large ones does not overflow.
func TestGaugeFigures(t *testing.T) {
	t.Parallel()
	figs, notes := reduce(at(t, []string{"big", "neg"}, "big 1e308\nneg -1\n", "big 1.7e308\nneg -2\n"), []string{"big", "neg"})
	encodes(t, figs)
	if figs["big_peak"] != 1.7e308 || math.Abs(figs["big_mean"]-1.35e308) > 1e295 {
		t.Errorf("figures %v", figs)
	}
	if _, ok := figs["neg_mean"]; ok || len(notes) != 2 || !strings.Contains(notes[0], "neg_") {
		t.Errorf("figures %v, notes %q", figs, notes)
	}
	m, err := promtext.Parse(strings.NewReader("big{a=\"1\"} 1.7e308\nbig{a=\"2\"} 1.7e308\n"), wantAll([]string{"big"}))
	if err != nil {
		t.Fatal(err)
	}
	var noted []string
	vet(m, func(metric, kind, why string) { noted = append(noted, metric+": "+why) })
	if _, ok := m["big"]; ok || len(noted) != 1 {
		t.Errorf("a sum beyond float64 kept: %v, %q", m, noted)
	}
}

// FuzzReduce: whatever two scrapes serve, the figures are finite, not
// negative, and encode.
func FuzzReduce(f *testing.F) {
	f.Add("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 300\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"} 1e9\ng 1\n",
		"DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 350\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"} 1.0003e9\ng 2\n")
	f.Add("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 1e308\ngpu_energy_consumed -4\n", "gpu_package_power 1e-300\ng -1e308\n")
	f.Add("g 1.7e308\ng{a=\"1\"} 1.7e308\n", "gpu_gfx_activity 100\ngpu_used_vram 0\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		var scrapes []sample
		for i, text := range []string{a, b} {
			m, err := promtext.Parse(strings.NewReader(text), wantAll([]string{"g"}))
			if err != nil {
				return
			}
			vet(m, func(string, string, string) {})
			scrapes = append(scrapes, sample{at: time.Unix(int64(i), 0), m: m})
		}
		figs, _ := reduce(scrapes, []string{"g"})
		encodes(t, figs)
		if n := figs[GPUs]; n > MaxGPUs {
			t.Errorf("%v GPUs", n)
		}
		if w := figs[PowerPeak]; w > MaxGPUWatts*MaxGPUs {
			t.Errorf("%v W", w)
		}
	})
}

// N8: an energy counter that did not move while the GPUs drew 300 W (an
// exporter that refreshes it every ~30 s, over a shorter point) gives
// power x time, with a note, not 0 J.
func TestStuckEnergyCounter(t *testing.T) {
	t.Parallel()
	stuck := "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 300\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"} 5000\n"
	figs, notes := reduce(at(t, nil, stuck, stuck, stuck), nil)
	if math.Abs(figs[Energy]-600) > 1e-6 || figs[EnergyCounted] != 0 || len(notes) != 1 || !strings.Contains(notes[0], "not refreshed") {
		t.Errorf("%v J, counted %v, notes %q; want 600 J from power x time, noted", figs[Energy], figs[EnergyCounted], notes)
	}
}
