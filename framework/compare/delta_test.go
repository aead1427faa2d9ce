package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
)

// TestDeltaRebuildsCandidate: a row's change is against the baseline, so
// the printed baseline times (1 + change) is the printed candidate, and
// the sign follows the move, for any pair of figures (seeded, so the same
// cases every run).
func TestDeltaRebuildsCandidate(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 5))
	k := metric.K(metric.OutputThroughput, "")
	pt := func(tok float64) []*result.Point {
		p := &result.Point{Label: "rate=1", Mode: result.ModeRate, Rate: 1, Trial: 1}
		p.Throughput.OutputTokens, p.Throughput.Requests, p.Window.Seconds = tok, tok/100, 30
		p.Requests.Sent, p.Requests.Completed = int(tok/100*30)+1, int(tok/100*30)+1
		return []*result.Point{p}
	}
	for range 2000 {
		base, cand := 10+r.Float64()*2000, 10+r.Float64()*2000
		row, ok := Differ(k, pt(base), pt(cand))
		if !ok || row.Delta == nil {
			t.Fatalf("%g vs %g: no row or no change", base, cand)
		}
		d := *row.Delta
		if math.Abs(row.Base*(1+d)-row.Cand) > 1e-9*row.Cand || (cand > base) != (d > 0) {
			t.Fatalf("%g -> %g printed %s: the baseline times (1 + change) is %g", row.Base, row.Cand, fmt.Sprintf("%+.1f%%", d*100), row.Base*(1+d))
		}
	}
}
