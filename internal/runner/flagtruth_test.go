package runner

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/clock"
	"github.com/benchci/benchci/internal/fdlimit"
	"github.com/benchci/benchci/internal/loadgen"
	"github.com/benchci/benchci/internal/recorder"
	"github.com/benchci/benchci/internal/sim"
	"github.com/benchci/benchci/internal/workload"
)

var truthHogs = flag.Int("hogs", 0, "CPU-spinning processes to run beside BenchmarkClientFlagTruth (a busy runner)")

// BenchmarkClientFlagTruth measures the CLIENT-SATURATED flag against the
// simulator's own account of when each request reached it (the kernel's
// receive stamp of its bytes). A point's figures are affected by the
// client when the server saw its requests late: the 99th percentile of
// (arrival − when the request was due) above the flag's own 10 ms, "due"
// being its scheduled time or, under the suite's max_concurrency, when it
// got its place (the server's slowness, not the client's). The flag
// should fire on exactly those points. The flag as it was before the
// suite's cap waits were taken out of the lag is scored from the same
// sends beside it. One part of the truth is the client's: under a cap, a
// request's due time is when a place was freed, which the client stamps
// as it gives the place up (loadgen's freedAt); the arrival is the
// server's own.
//
//	go test ./internal/runner -run '^$' -bench ClientFlagTruth -benchtime 1x -hogs 2
func BenchmarkClientFlagTruth(b *testing.B) {
	for _, cmd := range hogs(b, *truthHogs) {
		defer cmd.Process.Kill()
	}
	p, _ := sim.Lookup("llama3-8b-h100")
	srv := sim.New(p)
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	srv.OnTrace = func(tr sim.Trace) {
		mu.Lock()
		arrived[tr.ID] = tr.Arrived
		mu.Unlock()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u, err := srv.Listen(ctx, "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	cl, err := client.New(client.Options{BaseURL: u, API: "completions", Model: p.Model, Timeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	body, err := cl.Body("", strings.Repeat("word ", 64), 16)
	if err != nil {
		b.Fatal(err)
	}
	type score struct{ points, truth, flagged, falseFlags, misses, oldFlagged, oldFalse, oldMisses int }
	var total score
	b.ResetTimer()
	for range b.N {
		for _, cfg := range []struct {
			rate float64
			cap  int
		}{{8, 0}, {64, 0}, {256, 0}, {1024, 0}, {8, 4}, {64, 4}, {256, 16}, {1024, 64}} {
			for rep := range 2 {
				var smu sync.Mutex
				var samples []recorder.Sample
				arr, err := workload.NewArrivals(suite.Arrival{Kind: suite.ArrivalPoisson}, cfg.rate, 1, rep, nil)
				if err != nil {
					b.Fatal(err)
				}
				lc := loadgen.Config{Mode: loadgen.OpenLoop, Rate: cfg.rate, Arrivals: arr, Warmup: 500 * time.Millisecond, Duration: 3 * time.Second,
					MaxConcurrency: cfg.cap, Clock: clock.Precise, Progress: &loadgen.Progress{},
					OnSample: func(s recorder.Sample) {
						if !s.Warmup && s.Result.Err == client.ErrNone {
							c := *s.Result
							s.Result = &c // the collector reuses results
							smu.Lock()
							samples = append(samples, s)
							smu.Unlock()
						}
					}}
				if cfg.cap == 0 {
					lc.MaxConcurrency, lc.DescriptorLimit = fdlimit.MaxConns()
				}
				seq := 0
				out, err := loadgen.Run(ctx, cl, lc, func() (loadgen.Item, error) {
					seq++
					return loadgen.Item{Body: body, WantOutput: 16, Seq: 1_000_000*int(cfg.rate) + 10_000*rep + seq}, nil
				})
				if err != nil {
					b.Fatal(err)
				}
				var late, oldLag []float64
				mu.Lock()
				for _, s := range samples {
					at, ok := arrived[s.Result.ID]
					if !ok {
						continue
					}
					due := s.Scheduled
					if s.Ready.After(due) {
						due = s.Ready
					}
					late = append(late, float64(at.Sub(due))/float64(time.Millisecond))
					oldLag = append(oldLag, float64(s.Result.Sent.Sub(s.Scheduled))/float64(time.Millisecond))
				}
				mu.Unlock()
				truth := p99(late) > float64(loadgen.MaxLagP99)/float64(time.Millisecond)
				flagged := out.Schedule.ClientSaturated
				sc := out.Schedule
				old := p99(oldLag) > float64(loadgen.MaxLagP99)/float64(time.Millisecond) || (sc.ScheduledRate > 0 && sc.SendRate < loadgen.MinSendRatio*sc.ScheduledRate)
				total.points++
				add := func(v bool) int {
					if v {
						return 1
					}
					return 0
				}
				total.truth += add(truth)
				total.flagged += add(flagged)
				total.falseFlags += add(flagged && !truth)
				total.misses += add(!flagged && truth)
				total.oldFlagged += add(old)
				total.oldFalse += add(old && !truth)
				total.oldMisses += add(!old && truth)
				b.Logf("rate %5g cap %3d: server-seen lateness P99 %8.2f ms (truth %-5v) | flag %-5v %s | before %-5v (lag P99 %.2f ms, sent %.1f of %.1f)",
					cfg.rate, cfg.cap, p99(late), truth, flagged, sc.Reason, old, p99(oldLag), sc.SendRate, sc.ScheduledRate)
			}
		}
	}
	b.StopTimer()
	b.Logf("%d points, %d affected by the client (server's truth): flag fired on %d (%d false, %d missed); before: %d (%d false, %d missed)",
		total.points, total.truth, total.flagged, total.falseFlags, total.misses, total.oldFlagged, total.oldFalse, total.oldMisses)
	b.ReportMetric(float64(total.falseFlags), "false-flags")
	b.ReportMetric(float64(total.misses), "missed")
	b.ReportMetric(float64(total.oldFalse), "false-flags-before")
	b.ReportMetric(float64(total.oldMisses), "missed-before")
}

// p99 is the 99th percentile of vs, by the nearest-rank rule.
func p99(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	vs = slices.Clone(vs)
	sort.Float64s(vs)
	return vs[int(math.Ceil(0.99*float64(len(vs))))-1]
}

// hogs starts n processes that spin a CPU each, as neighbours on a shared
// runner would.
func hogs(b *testing.B, n int) []*exec.Cmd {
	var cmds []*exec.Cmd
	for i := range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			b.Fatalf("hog %d: %v", i, err)
		}
		cmds = append(cmds, cmd)
	}
	if n > 0 {
		fmt.Printf("%d CPU hogs running\n", n)
	}
	return cmds
}
