package history

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/benchci/benchci/internal/changepoint"
)

// BenchmarkHistoryLarge times history (the walk, reading and verifying
// every version, then the change-point search) on issue 40's case: 120
// versions of a 1,500-point baseline (12 MB). In "120x1500" each version
// re-records 15 points and the middle one every point (TTFT up 30%); in
// "12x1500-all" every version re-records every point, the worst case a
// version costs. It reports the peak of the live heap as peak-MB. Making
// the repository takes a minute or two: run it by hand,
//
//	go test ./internal/history -run XXX -bench HistoryLarge -benchtime 1x
func BenchmarkHistoryLarge(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct {
		name                 string
		points, commits, mov int
	}{
		{"120x1500", 1500, 120, 15},
		{"12x1500-all", 1500, 12, 1500},
		{"40x1500", 1500, 40, 15},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := bigRepo(b, c.points, c.commits, c.mov)
			runtime.GC()
			b.ResetTimer()
			peak := heapPeak()
			defer reportCPU(b)()
			var read, analyze time.Duration
			var readPeak uint64
			for b.Loop() {
				start := time.Now()
				rpeak := heapPeak()
				repo, err := Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				w, err := repo.Versions(ctx, path)
				if err != nil || len(w.Versions) != c.commits {
					b.Fatal(err)
				}
				read += time.Since(start)
				readPeak = max(readPeak, rpeak())
				start = time.Now()
				groups, err := AnalyzeContext(ctx, w.Versions, changepoint.Options{})
				if err != nil || len(groups) != 1 {
					b.Fatal(err)
				}
				analyze += time.Since(start)
			}
			b.ReportMetric(read.Seconds()/float64(b.N), "read-s/op")
			b.ReportMetric(analyze.Seconds()/float64(b.N), "analyze-s/op")
			b.ReportMetric(float64(readPeak)/(1<<20), "read-peak-MB")
			b.ReportMetric(float64(peak())/(1<<20), "peak-MB")
		})
	}
}

// heapPeak samples the live heap every 5 ms until the function it
// returns is called, which returns the largest sample.
func heapPeak() func() uint64 {
	var mu sync.Mutex
	var peak uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			mu.Lock()
			peak = max(peak, s[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		return peak
	}
}
