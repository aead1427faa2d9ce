package selftest

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestClientOverheadRuns checks the harness itself on a short run: the
// pairing of client and server measurements works and gives a small,
// positive difference.
func TestClientOverheadRuns(t *testing.T) {
	o, err := ClientOverhead(context.Background(), 4, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if o.Errors != 0 || o.Added.Count < 10 || o.Added.Count != o.ServerTTFT.Count {
		t.Fatalf("overhead %+v", o)
	}
	if o.Added.P50 <= 0 || o.Added.P50 >= o.ServerTTFT.P50 {
		t.Errorf("client adds %.3f ms to a server TTFT of %.3f ms: the pairing is off", o.Added.P50, o.ServerTTFT.P50)
	}
}

func TestOpenLoopRateRuns(t *testing.T) {
	r, err := OpenLoopRate(context.Background(), 50, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Held() {
		t.Errorf("50 req/s not held: %s", r)
	}
}

// BenchmarkClientOverhead reports the TTFT the client adds (measured minus
// the simulator's own) at 1, 64 and 512 concurrent streams:
//
//	go test -run XXX -bench ClientOverhead -benchtime 1x ./framework/selftest
func BenchmarkClientOverhead(b *testing.B) {
	for _, c := range []int{1, 64, 512} {
		b.Run(fmt.Sprintf("streams=%d", c), func(b *testing.B) {
			for b.Loop() {
				o, err := ClientOverhead(context.Background(), c, 5*time.Second)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(o.Added.P50*1000, "added-p50-µs")
				b.ReportMetric(o.Added.P99*1000, "added-p99-µs")
				b.ReportMetric(o.ServerTTFT.P50, "server-ttft-p50-ms")
				b.ReportMetric(float64(o.Requests), "requests")
			}
		})
	}
}

// BenchmarkOpenLoopRate reports how well rising open-loop rates are held
// with short outputs:
//
//	go test -run XXX -bench OpenLoopRate -benchtime 1x ./framework/selftest
func BenchmarkOpenLoopRate(b *testing.B) {
	for _, rate := range []float64{250, 1000, 2000, 4000, 6000, 8000, 12000} {
		b.Run(fmt.Sprintf("rate=%g", rate), func(b *testing.B) {
			for b.Loop() {
				r, err := OpenLoopRate(context.Background(), rate, 5*time.Second)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(r.SendRate, "sent/s")
				b.ReportMetric(r.Completed, "completed/s")
				b.ReportMetric(r.LagP99, "lag-p99-ms")
				held := 0.0
				if r.Held() {
					held = 1
				}
				b.ReportMetric(held, "held")
			}
		})
	}
}
