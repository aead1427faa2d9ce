package history

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/benchci/benchci/internal/changepoint"
)

// BenchmarkHistory times history on synthetic repositories of 250, 1000
// and 3000 commits, each changing the baseline (TTFT up 30% at the
// middle one): the walk with the reading and parsing of every version,
// the change-point search over its 50-odd series, and both, as the
// history command runs them. Each should grow about linearly with the
// commits (was: quadratically, 145 s for 1000).
func BenchmarkHistory(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{250, 1000, 3000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := synthRepo(b, n)
			repo, err := Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			w, err := repo.Versions(ctx, path)
			if err != nil || len(w.Versions) != n {
				b.Fatal(err)
			}
			groups, err := AnalyzeContext(ctx, w.Versions, changepoint.Options{})
			if err != nil {
				b.Fatal(err)
			}
			for _, s := range groups[0].Series {
				if strings.HasPrefix(s.Figure, "ttft.") && (len(s.Changes) != 1 || s.Changes[0].Version != n/2) {
					b.Fatalf("%s %s: changes %+v, want one at %d", s.Point, s.Figure, s.Changes, n/2)
				}
			}
			b.Run("versions", func(b *testing.B) {
				defer reportCPU(b)()
				for b.Loop() {
					repo, _ := Open(dir)
					if _, err := repo.Versions(ctx, path); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("analyze", func(b *testing.B) {
				defer reportCPU(b)()
				for b.Loop() {
					if _, err := AnalyzeContext(ctx, w.Versions, changepoint.Options{}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("total", func(b *testing.B) {
				defer reportCPU(b)()
				for b.Loop() {
					repo, _ := Open(dir)
					w, err := repo.Versions(ctx, path)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := AnalyzeContext(ctx, w.Versions, changepoint.Options{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// reportCPU reports the CPU time an op took (all goroutines), as
// cpu-ms/op, when the function it returns is called.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if d := cpuTime() - start; d > 0 {
			b.ReportMetric(float64(d)/float64(b.N)/1e6, "cpu-ms/op")
		}
	}
}
