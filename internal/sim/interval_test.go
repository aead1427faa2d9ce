package sim

import (
	"flag"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

var updateInterval = flag.Bool("update-interval", false, "print the DerivedInterval that sim check's rows calibrate")

// DerivedInterval is what the published rows calibrate today: a change
// to the model, the cards or the rows moves it, and it must move with
// them (rounded to 0.01, as it is printed).
func TestDerivedIntervalIsCurrent(t *testing.T) {
	t.Parallel()
	cs, err := Check(References)
	if err != nil {
		t.Fatal(err)
	}
	iv, err := CalibrateBySource(cs, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	lit := fmt.Sprintf("Interval{Level: 0.8, Latency: [2]float64{%.2f, %.2f}, Throughput: [2]float64{%.2f, %.2f}, Covered: %d, Figures: %d, Tail: %g, Widen: %g}",
		iv.Latency[0], iv.Latency[1], iv.Throughput[0], iv.Throughput[1], iv.Covered, iv.Figures, iv.Tail, iv.Widen)
	if *updateInterval {
		t.Logf("var DerivedInterval = %s", lit)
	}
	near := func(a, b [2]float64) bool { return math.Abs(a[0]-b[0]) < 0.006 && math.Abs(a[1]-b[1]) < 0.006 }
	d := DerivedInterval
	if !near(d.Latency, iv.Latency) || !near(d.Throughput, iv.Throughput) || d.Covered != iv.Covered || d.Figures != iv.Figures || d.Tail != iv.Tail || d.Widen != iv.Widen {
		t.Errorf("DerivedInterval is stale: the rows calibrate\n\tvar DerivedInterval = %s", lit)
	}
}

// The calibration widens the interval until each source's figures, held
// out, fall inside the others' bounds in 80% of cases: on rows whose
// sources disagree it is wider than the pooled 10th-90th percentiles.
func TestCalibrateBySourceHoldsOutSources(t *testing.T) {
	t.Parallel()
	var cs []Checked
	// Twelve sources of three rows each; each source runs a constant bias
	// and its rows scatter 2% about it.
	biases := []float64{0.8, 0.9, 0.95, 1, 1, 1.05, 1.1, 1.2, 0.95, 1.05, 1, 0.9}
	for s, bias := range biases {
		for i := range 3 {
			r := bias * (0.98 + 0.01*float64(i))
			cs = append(cs, Checked{
				Reference: Reference{Source: fmt.Sprintf("source %d", s), TTFTMs: 100 * r, OutputPerSec: 1000 / r},
				Sim:       ClosedLoopResult{OutputPerSec: 1000},
			})
			cs[len(cs)-1].Sim.Mean.TTFT = 100 * time.Millisecond
		}
	}
	iv, err := CalibrateBySource(cs, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	if float64(iv.Covered) < 0.8*float64(iv.Figures) || iv.Figures != 72 {
		t.Errorf("held-out coverage %d of %d, want at least 80%% of 72", iv.Covered, iv.Figures)
	}
	if iv.Tail >= 0.1 {
		t.Errorf("tail %g: the pooled 10-90 band cannot cover held-out sources that disagree", iv.Tail)
	}
	if !(iv.Latency[0] <= 0.9 && iv.Latency[1] >= 1.1) {
		t.Errorf("latency bounds %v leave out sources inside the spread (0.9 to 1.1)", iv.Latency)
	}
	if !(iv.Throughput[0] <= 1/1.1 && iv.Throughput[1] >= 1/0.9) {
		t.Errorf("throughput bounds %v leave out sources inside the spread", iv.Throughput)
	}
	if _, err := CalibrateBySource(cs[:1], 0.8); err == nil {
		t.Error("one row calibrated an interval")
	}
	// Two sources apart: held out, neither is inside the other's range.
	if _, err := CalibrateBySource(append(slices.Clone(cs[:3]), cs[21:24]...), 0.8); err == nil {
		t.Error("sources that disagree beyond their range calibrated an interval")
	}
	// Three sources at 0.9, 1 and 1.1 (sources 1, 3, 6): the outer two,
	// held out, fall outside the others' whole range, so the bounds reach
	// past it, as far as it takes and no further.
	three := slices.Concat(cs[3:6], cs[9:12], cs[18:21])
	iv, err = CalibrateBySource(three, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	if iv.Tail != 0 || iv.Widen <= 1 || iv.Widen > maxWiden || float64(iv.Covered) < 0.8*float64(iv.Figures) {
		t.Errorf("three sources: tail %g, widen %g, %d of %d covered; want the whole range widened until 80%% are inside", iv.Tail, iv.Widen, iv.Covered, iv.Figures)
	}
	if c, n := heldOutCoverage(ratios(three), 0, iv.Widen-widenStep); float64(c) >= 0.8*float64(n) {
		t.Errorf("widen %g covers %d of %d too: the calibration went further than it had to", iv.Widen-widenStep, c, n)
	}
}

// A twin's own held-out ratios bound a further figure by their ranks:
// nine ratios give the 80% of their range, four only their range at 60%.
func TestFromHeldOutByRanks(t *testing.T) {
	t.Parallel()
	nine := []float64{0.9, 0.95, 1, 1.02, 1.05, 1.1, 1.2, 0.85, 1.3}
	iv, ok := FromHeldOut(nine, nine, 9, 0.8)
	if !ok || iv.Latency != [2]float64{0.85, 1.3} || iv.Level != 0.8 {
		t.Errorf("nine ratios: %+v %v, want the range 0.85–1.3 at 80%%", iv, ok)
	}
	nineteen := append(slices.Clone(nine), 0.7, 0.8, 0.97, 0.98, 1.01, 1.03, 1.04, 1.15, 1.25, 1.5)
	if iv, ok = FromHeldOut(nineteen, nineteen, 19, 0.8); !ok || iv.Latency != [2]float64{0.8, 1.3} || iv.Level != 0.8 {
		t.Errorf("nineteen ratios: %+v %v, want the second smallest and largest (0.8–1.3) at 80%%", iv, ok)
	}
	// Nineteen latency ratios of nine points (TTFT, TPOT, E2E of each)
	// move together: their range, at nine points' 80%.
	if iv, ok = FromHeldOut(nineteen, nine, 9, 0.8); !ok || iv.Latency != [2]float64{0.7, 1.5} || iv.Level != 0.8 {
		t.Errorf("nineteen ratios of nine points: %+v %v, want their range (0.7–1.5) at 80%%", iv, ok)
	}
	four := []float64{1.1, 0.9, 1.2, 1}
	if iv, ok = FromHeldOut(four, nine, 9, 0.8); !ok || iv.Latency != [2]float64{0.9, 1.2} || iv.Level != 0.6 {
		t.Errorf("four ratios: %+v %v, want their range at 60%%", iv, ok)
	}
	if _, ok = FromHeldOut([]float64{1, 1.1, math.Inf(1)}, nine, 9, 0.8); ok {
		t.Error("a figure the twin could not predict gave an interval")
	}
	if _, ok = FromHeldOut(nine, nine, 1, 0.8); ok {
		t.Error("one point gave an interval")
	}
}
