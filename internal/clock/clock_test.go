package clock

import (
	"context"
	"sort"
	"testing"
	"time"
)

func TestSleepUntilNeverEarly(t *testing.T) {
	t.Parallel()
	for i := range 50 {
		at := time.Now().Add(time.Duration(i*97%3000) * time.Microsecond)
		if !SleepUntil(context.Background(), at, DefaultSpin) {
			t.Fatal("reported canceled")
		}
		if d := time.Since(at); d < 0 {
			t.Fatalf("woke %v early", -d)
		}
	}
}

// BenchmarkLateness reports how late SleepUntil and a Go timer wake up
// (run: go test -bench Lateness ./internal/clock).
func BenchmarkLateness(b *testing.B) {
	for _, bc := range []struct {
		name  string
		sleep func(at time.Time)
	}{
		{"SleepUntil", func(at time.Time) { SleepUntil(context.Background(), at, DefaultSpin) }},
		{"GoTimer", func(at time.Time) { time.Sleep(time.Until(at)) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			late := make([]time.Duration, 0, b.N)
			for i := 0; b.Loop(); i++ {
				at := time.Now().Add(time.Duration(500+i*37%1500) * time.Microsecond)
				bc.sleep(at)
				late = append(late, time.Since(at))
			}
			sort.Slice(late, func(i, j int) bool { return late[i] < late[j] })
			b.ReportMetric(float64(late[len(late)/2].Microseconds()), "p50-late-µs")
			b.ReportMetric(float64(late[len(late)*99/100].Microseconds()), "p99-late-µs")
		})
	}
}

func TestSleepUntilCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	start := time.Now()
	if SleepUntil(ctx, start.Add(10*time.Second), DefaultSpin) {
		t.Error("reported done after cancel")
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("cancel noticed after %v", took)
	}
}
