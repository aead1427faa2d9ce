package selftest

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/internal/sim"
)

// TestMain doubles as the external simulator for the cost benchmarks:
// started with BENCHCI_SELFTEST_SIM=<max_num_seqs>, the test binary serves
// a fast simulator (5 ms steps, no per-sequence cost) until killed.
func TestMain(m *testing.M) {
	if v := os.Getenv("BENCHCI_SELFTEST_SIM"); v != "" {
		seqs, _ := strconv.Atoi(v)
		p := fastProfile()
		p.StepBase, p.MaxNumSeqs = 5*time.Millisecond, seqs
		u, err := sim.New(p).Listen(context.Background(), "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println("serving simulator at", u)
		select {}
	}
	os.Exit(m.Run())
}

func externalSim(tb testing.TB, seqs int) *External {
	tb.Helper()
	e, err := ExternalSim(context.Background(), []string{os.Args[0], "-test.run=^$"}, []string{"BENCHCI_SELFTEST_SIM=" + strconv.Itoa(seqs)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(e.Stop)
	return e
}

func TestClientCostRuns(t *testing.T) {
	e := externalSim(t, 64)
	c, err := ClientCost(context.Background(), e.URL, 8, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if c.Errors != 0 || c.Tokens < 8*512 || c.CPUPerToken <= 0 || c.MemPerStream <= 0 {
		t.Errorf("cost %+v", c)
	}
	// The simulator streamed 4096+ tokens: it used CPU, and /proc says so.
	if cpu, ok := e.CPU(); runtime.GOOS == "linux" && (!ok || cpu <= 0) {
		t.Errorf("simulator CPU %v, %v", cpu, ok)
	}
	r, err := OpenLoopRateExternal(context.Background(), e, 50, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// Whether a loaded test machine holds the rate is for the benchmark to
	// say; here the point must run and the CPU be read.
	if r.SendRate < 25 || r.Errors != 0 || r.ClientCPU <= 0 || !strings.Contains(r.String(), "cores: client") {
		t.Errorf("50 req/s against the external simulator: %s", r)
	}
}

// BenchmarkClientCost reports the client's CPU per streamed token and its
// memory per open stream, with the simulator in another process:
//
//	go test -run XXX -bench ClientCost -benchtime 1x ./internal/selftest
func BenchmarkClientCost(b *testing.B) {
	e := externalSim(b, 4096)
	for _, streams := range []int{1, 64, 512, 2048} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			for b.Loop() {
				c, err := ClientCost(context.Background(), e.URL, streams, 3*time.Second)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(c.CPUPerToken.Nanoseconds())/1000, "cpu-µs/token")
				b.ReportMetric(c.MemPerStream/1024, "KiB/stream")
				b.ReportMetric(float64(c.Tokens), "tokens")
				b.ReportMetric(float64(c.Errors), "errors")
			}
		})
	}
}

// TestClientOverheadRuns checks the harness itself on a short run: the
// pairing of client and server measurements works and gives a small,
// positive difference.
func TestClientOverheadRuns(t *testing.T) {
	o, err := ClientOverhead(context.Background(), 4, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if o.Errors != 0 || o.Added.Count < 10 || o.Added.Count != o.ServerTTFT.Count {
		t.Fatalf("overhead %+v", o)
	}
	if o.ITLError.Count == 0 {
		t.Error("no ITL errors were paired")
	}
	if o.Added.P50 <= 0 || o.Added.P50 >= o.ServerTTFT.P50 {
		t.Errorf("client adds %.3f ms to a server TTFT of %.3f ms: the pairing is off", o.Added.P50, o.ServerTTFT.P50)
	}
}

// An open-loop point runs against the in-process simulator: every request
// planned is answered. Whether the rate was held depends on what else the
// machine runs, so it is BenchmarkOpenLoopRate's figure, not asserted; the
// verdict Held gives is checked on constructed points below.
func TestOpenLoopRateRuns(t *testing.T) {
	r, err := OpenLoopRate(context.Background(), 50, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors != 0 || r.ScheduledRate < 45 || r.ScheduledRate > 55 || r.SendRate <= 0 || r.Completed <= 0 {
		t.Errorf("50 req/s: %s", r)
	}
}

func TestRatePointHeld(t *testing.T) {
	for _, tc := range []struct {
		p    RatePoint
		held bool
	}{
		{RatePoint{ScheduledRate: 50, SendRate: 50, Completed: 49.6}, true},
		{RatePoint{ScheduledRate: 50, SendRate: 49, Completed: 49}, false},
		{RatePoint{ScheduledRate: 50, SendRate: 50, Completed: 50, Errors: 1}, false},
		{RatePoint{ScheduledRate: 50, SendRate: 50, Completed: 50, Saturated: true, Reason: "P99 send lag 26.6 ms exceeds 10 ms"}, false},
	} {
		if got := tc.p.Held(); got != tc.held {
			t.Errorf("%s: held %v, want %v", tc.p, got, tc.held)
		}
	}
}

// BenchmarkClientOverhead reports the TTFT the client adds (measured minus
// the simulator's own) at 1, 64, 512 and 2048 concurrent streams:
//
//	go test -run XXX -bench ClientOverhead -benchtime 1x ./internal/selftest
func BenchmarkClientOverhead(b *testing.B) {
	for _, c := range []int{1, 64, 512, 2048} {
		b.Run(fmt.Sprintf("streams=%d", c), func(b *testing.B) {
			// 2048 streams on two cores take seconds per request: a longer
			// run gives enough of them after the warm-up.
			d := 5 * time.Second
			if c > 512 {
				d = 20 * time.Second
			}
			for b.Loop() {
				o, err := ClientOverhead(context.Background(), c, d)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(o.Added.P50*1000, "added-p50-µs")
				b.ReportMetric(o.Added.P99*1000, "added-p99-µs")
				b.ReportMetric(o.SendSide.P99*1000, "send-p99-µs")
				b.ReportMetric(o.ReceiveSide.P99*1000, "recv-p99-µs")
				b.ReportMetric(o.ServerTTFT.P50, "server-ttft-p50-ms")
				b.ReportMetric(o.ITLError.P50*1000, "itl-err-p50-µs")
				b.ReportMetric(o.ITLError.P99*1000, "itl-err-p99-µs")
				b.ReportMetric(float64(o.Requests), "requests")
			}
		})
	}
}

// BenchmarkOpenLoopRate reports how well rising open-loop rates are held
// with short outputs:
//
//	go test -run XXX -bench OpenLoopRate -benchtime 1x ./internal/selftest
func BenchmarkOpenLoopRate(b *testing.B) {
	benchRates(b, []float64{250, 1000, 2000, 4000, 6000, 8000, 12000}, OpenLoopRate)
}

// benchRates reports how each rate was held, one sub-benchmark per rate.
func benchRates(b *testing.B, rates []float64, point func(context.Context, float64, time.Duration) (RatePoint, error)) {
	for _, rate := range rates {
		b.Run(fmt.Sprintf("rate=%g", rate), func(b *testing.B) {
			for b.Loop() {
				r, err := point(context.Background(), rate, 5*time.Second)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(r.SendRate, "sent/s")
				b.ReportMetric(r.Completed, "completed/s")
				b.ReportMetric(r.LagP99, "lag-p99-ms")
				if r.ClientCPU > 0 {
					b.ReportMetric(r.ClientCPU, "cores")
				}
				held := 0.0
				if r.Held() {
					held = 1
				}
				b.ReportMetric(held, "held")
			}
		})
	}
}

func TestOpenLoopNoopRuns(t *testing.T) {
	p, err := OpenLoopNoop(context.Background(), 100, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if p.Errors != 0 || p.SendRate < 50 || p.Completed < 50 || p.ClientCPU <= 0 {
		t.Errorf("100 req/s against the no-op server: %s", p)
	}
}

// BenchmarkOpenLoopNoop reports the rates the client holds against a
// server that does almost nothing, which is the client's own ceiling:
//
//	go test -run XXX -bench OpenLoopNoop -benchtime 1x ./internal/selftest
func BenchmarkOpenLoopNoop(b *testing.B) {
	benchRates(b, []float64{1000, 4000, 8000, 12000}, OpenLoopNoop)
}
