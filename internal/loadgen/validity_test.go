package loadgen

import (
	"context"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/clock"
	"github.com/benchci/benchci/internal/stall"
)

func TestJudgeValidity(t *testing.T) {
	lag := func(p99 float64) result.Measured {
		return result.Measured{Window: result.Window{Seconds: 6}, Latency: map[string]result.Summary{
			metric.Lag:  {Count: 100, P99: p99},
			metric.TTFT: {Count: 100},
		}}
	}
	coalesced := func(late, alone int, lagP99 float64) result.Measured {
		return result.Measured{Tokens: result.Tokens{CoalescedFirst: late}, Latency: map[string]result.Summary{
			metric.TTFT: {Count: int64(alone)}, metric.Lag: {Count: 100, P99: lagP99}}}
	}
	quiet := stall.Reading{Span: 6 * time.Second, Steal: -1, Busy: 0.5, Cores: 2}
	gap := time.Second / 6 // 6 req/s
	for _, tc := range []struct {
		name string
		m    result.Measured
		s    result.Schedule
		gap  time.Duration
		fd   bool
		cap  bool // sends waited for the suite's own max_concurrency
		r    stall.Reading
		want []string // substrings of the reasons, in order; none: valid
	}{
		{name: "quiet", m: lag(3), s: result.Schedule{ScheduledRate: 6, SendRate: 6}, gap: gap, r: quiet},
		// A busy runner's lag of tens of ms at 6 req/s hardly moves the load.
		{name: "lag under a quarter of the gap", m: lag(40), s: result.Schedule{ScheduledRate: 6, SendRate: 6}, gap: gap, r: quiet},
		{name: "the stalled trial of issue 31", m: lag(3440), s: result.Schedule{ScheduledRate: 6, SendRate: 3.4}, gap: gap,
			r:    stall.Reading{Span: 6 * time.Second, Stalled: 1200 * time.Millisecond, Longest: 900 * time.Millisecond, Count: 3, Busy: 0.99, Cores: 2, Own: 0.4},
			want: []string{"sent 3.4 of 6.0 req/s scheduled: the process stood still", "send lag P99 3.44 s (limit 41.7 ms): the process stood still", "the machine stalled 1.20 s in 3 pauses (longest 900.0 ms) over 6s"}},
		// Behind without a stall, on a machine whose cores were all busy.
		{name: "CPU ran out", m: lag(3440), s: result.Schedule{ScheduledRate: 6, SendRate: 3.4}, gap: gap,
			r:    stall.Reading{Span: 6 * time.Second, Busy: 0.99, Cores: 2, Own: 0.4},
			want: []string{"sent 3.4 of 6.0 req/s scheduled: the CPU ran out: the machine's 2 cores were 99% busy, benchci used 0.40 of them", "send lag P99 3.44 s (limit 41.7 ms): the CPU ran out"}},
		// A slow server behind the suite's own max_concurrency makes sends
		// wait: that is the server, judged by the gate, not the client.
		// Their waits are not in the lag (recorder.Sample.Ready).
		{name: "suite's cap", m: lag(3), s: result.Schedule{ScheduledRate: 10, SendRate: 4, CapWaits: 30}, gap: gap / 2, cap: true, r: quiet},
		// A client late on top of the cap's waits is still the client's.
		{name: "late behind the suite's cap", m: lag(4200), s: result.Schedule{ScheduledRate: 10, SendRate: 4, CapWaits: 30}, gap: gap / 2, cap: true, r: quiet,
			want: []string{"send lag P99 4.20 s (limit 25.0 ms)"}},
		// Too few sends to judge a ratio: one late send is not 5%.
		{name: "few sends", m: lag(3), s: result.Schedule{ScheduledRate: 2, SendRate: 1.8}, gap: gap, r: quiet},
		// At high rates the floor holds: 25 ms, not a quarter of 1 ms.
		{name: "floor at high rates", m: lag(20), s: result.Schedule{ScheduledRate: 1000, SendRate: 1000}, gap: time.Millisecond, r: quiet},
		{name: "lag over the floor", m: lag(30), s: result.Schedule{ScheduledRate: 1000, SendRate: 1000}, gap: time.Millisecond, r: quiet, want: []string{"send lag P99 30.0 ms (limit 25.0 ms)"}},
		{name: "stall of 100 ms every second", m: lag(3), r: stall.Reading{Span: 6 * time.Second, Stalled: 600 * time.Millisecond, Longest: 100 * time.Millisecond, Count: 6},
			want: []string{"the machine stalled 600.0 ms in 6 pauses"}},
		{name: "a short stall is tolerated", m: lag(3), r: stall.Reading{Span: 6 * time.Second, Stalled: 40 * time.Millisecond, Longest: 40 * time.Millisecond, Count: 1}},
		{name: "one hiccup in a short point", m: lag(3), r: stall.Reading{Span: 500 * time.Millisecond, Stalled: 30 * time.Millisecond, Longest: 30 * time.Millisecond, Count: 1}},
		{name: "steal", m: lag(3), r: stall.Reading{Span: time.Second, Steal: 0.2}, want: []string{"the hypervisor took 20% of this machine's CPU (steal)"}},
		{name: "descriptor cap", m: lag(3), s: result.Schedule{CapWaits: 12}, fd: true, r: quiet, want: []string{"12 sends waited for the cap on requests in flight"}},
		{name: "client limits", m: result.Measured{Requests: result.Requests{ClientLimited: 3, ClientLimitError: "dial: address not available (ports)"}}, r: quiet,
			want: []string{"3 requests failed on this machine's own limits (dial: address not available (ports))"}},
		{name: "first tokens read late by a client behind", m: coalesced(10, 90, 15), r: quiet, want: []string{"10 of 100 first tokens were read late"}},
		// Without a sign that the client fell behind, first chunks that
		// come with the next are the server's (or a proxy's) framing.
		{name: "first tokens framed together", m: coalesced(10, 90, 2), r: quiet},
		{name: "a few first tokens read late", m: coalesced(2, 98, 15), r: quiet},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := judgeValidity(tc.m, tc.s, tc.m.Latency[metric.Lag].P99, tc.gap, tc.fd, tc.cap, tc.r)
			if len(v.Invalid) != len(tc.want) {
				t.Fatalf("reasons %q, want %d like %q", v.Invalid, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(v.Invalid[i], w) {
					t.Errorf("reason %d %q, want it to contain %q", i, v.Invalid[i], w)
				}
			}
			if v.StallMs != ms(tc.r.Stalled) || v.MaxStallMs != ms(tc.r.Longest) {
				t.Errorf("stall %v/%v ms recorded for %v", v.StallMs, v.MaxStallMs, tc.r)
			}
		})
	}
}

// slowStart is a client that takes its time before each send: a worker
// that falls behind, as on a machine whose CPU ran out.
type slowStart struct {
	fakeServer
	delay time.Duration
}

func (s *slowStart) Do(ctx context.Context, body []byte, id string, res *client.Result) {
	time.Sleep(s.delay)
	s.fakeServer.Do(ctx, body, id, res)
}

// Closed-loop points are judged too: a worker means to send as its last
// answer ends, and the time it took to send is its lag. In fake time the
// figures are exact.
func TestClosedLoopLagJudged(t *testing.T) {
	for _, tc := range []struct {
		delay time.Duration
		valid bool
	}{
		{0, true},
		// 5 ms late against a 20 ms answer: under the 25 ms floor.
		{5 * time.Millisecond, true},
		{60 * time.Millisecond, false},
	} {
		synctest.Test(t, func(t *testing.T) {
			srv := &slowStart{fakeServer: fakeServer{latency: 20 * time.Millisecond}, delay: tc.delay}
			out, err := Run(context.Background(), srv, Config{Mode: ClosedLoop, Concurrency: 2, Duration: time.Second, Clock: clock.Timers}, items())
			if err != nil {
				t.Fatal(err)
			}
			v := out.Validity
			if valid := len(v.Invalid) == 0; valid != tc.valid || out.Schedule.ClientSaturated == tc.valid {
				t.Errorf("delay %v: invalid %q, client saturated %v", tc.delay, v.Invalid, out.Schedule.ClientSaturated)
			}
			lag := out.Latency[metric.Lag]
			// To the histogram's precision (3 significant figures).
			if want := float64(tc.delay) / float64(time.Millisecond); math.Abs(lag.P50-want) > 0.002*want+0.002 {
				t.Errorf("delay %v: lag %+v", tc.delay, lag)
			}
		})
	}
}

// The CLIENT-SATURATED flag is for a client that could not keep its
// schedule. Sends held by the suite's own max_concurrency are the server
// not keeping up at that cap; sends held by a cap this machine's
// descriptor limit set are the client's.
func TestJudgeClientSaturated(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		s      result.Schedule
		lagMs  float64
		fd     int
		want   bool
		reason string
	}{
		{"on schedule", result.Schedule{ScheduledRate: 10, SendRate: 10}, 0.4, 0, false, ""},
		{"the suite's cap held sends", result.Schedule{ScheduledRate: 10, SendRate: 4, CapWaits: 30}, 0.4, 0, false, ""},
		{"late behind the suite's cap", result.Schedule{ScheduledRate: 10, SendRate: 4, CapWaits: 30}, 40, 0, true, "P99 send lag 40.0 ms exceeds 10 ms; max_concurrency 8 also delayed 30 sends"},
		{"short of the schedule, uncapped", result.Schedule{ScheduledRate: 10, SendRate: 4}, 0.4, 0, true, "sent 4.0 req/s of 10.0 scheduled"},
		{"the descriptor limit's cap", result.Schedule{ScheduledRate: 10, SendRate: 4, CapWaits: 30}, 0.4, 1024, true, "this machine's descriptor limit (1024)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			judge(&s, tc.lagMs, 8, tc.fd)
			if s.ClientSaturated != tc.want || !strings.Contains(s.Reason, tc.reason) {
				t.Errorf("flagged %v (%q), want %v containing %q", s.ClientSaturated, s.Reason, tc.want, tc.reason)
			}
		})
	}
}

// A closed-loop point whose warm-up requests outlast its window measured
// nothing (the Ollama point: a 19 s warm-up request, a 14 s
// point): the point says so, with the warm-up's time and the setting to
// change, and is invalid (inconclusive), not a server that sent nothing.
func TestClosedLoopWarmupOutlastsWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &fakeServer{latency: 19 * time.Second}
		out, err := Run(context.Background(), srv, Config{Mode: ClosedLoop, Concurrency: 2, Warmup: time.Second, Duration: 14 * time.Second, Clock: clock.Timers}, items())
		if err != nil {
			t.Fatal(err)
		}
		why := strings.Join(out.Validity.Invalid, "; ")
		if out.Requests.Sent != 0 || !strings.Contains(why, "2 of 2 workers' warm-up requests were still running when the window closed (the longest took 19s; warm-up 1s, window 14s): the point measured no request; lengthen sweep.duration") {
			t.Errorf("sent %d, invalid %q", out.Requests.Sent, why)
		}
		// A warm-up shorter than the window is no reason.
		srv = &fakeServer{latency: 2 * time.Second}
		out, err = Run(context.Background(), srv, Config{Mode: ClosedLoop, Concurrency: 2, Warmup: time.Second, Duration: 14 * time.Second, Clock: clock.Timers}, items())
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.Join(out.Validity.Invalid, "; "), "warm-up") || out.Requests.Sent == 0 {
			t.Errorf("sent %d, invalid %q", out.Requests.Sent, out.Validity.Invalid)
		}
	})
}
