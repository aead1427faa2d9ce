package simfit

import (
	"context"
	"testing"

	"github.com/benchci/benchci/internal/sim"
)

// BenchmarkLoss is one loss evaluation of the recovery sweep: what a fit
// spends its time on, hundreds of times over.
func BenchmarkLoss(b *testing.B) {
	base, _ := sim.Lookup("llama3-8b-h100")
	pts := readPoints(b, synthesize(b, base, sweep))
	b.ResetTimer()
	for b.Loop() {
		Loss(pts, predictAll(context.Background(), base, pts, 1))
	}
}
