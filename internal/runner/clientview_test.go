package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/internal/sim"
)

// TestStopsSaturatedPoint: the tiny simulator completes at most 49.5
// requests/s of this workload (see TestCapacityFindsKnownCapacity); at
// twice that its queue grows a second of wait per second, and the point
// must stop well before its 20 s, marked saturated, with its SLO failed
// for it. At a quarter of capacity a point runs its whole window.
func TestStopsSaturatedPoint(t *testing.T) {
	f := runSource(t, "sat.jsonnet", `local b = import 'benchci.libsonnet';
b.suite {
  name: 'sat',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(20), arrival: b.arrival.constant() },
  sweep: b.sweep.rates([12, 100], duration='20s', warmup='1s', stop_saturated=true),
  slos: [b.slo.p90('ttft', '<', '1s')],
}`)
	low, high := f.Points[0], f.Points[1]
	if low.Schedule.Saturation != "" || low.Window.Seconds < 19.9 {
		t.Errorf("below capacity: saturation %q, window %.1f s", low.Schedule.Saturation, low.Window.Seconds)
	}
	if high.Schedule.Saturation == "" || high.Window.Seconds > 15 || high.Incomplete {
		t.Fatalf("at twice capacity: saturation %q, window %.1f s, incomplete %v", high.Schedule.Saturation, high.Window.Seconds, high.Incomplete)
	}
	t.Logf("stopped after %.1f s of window: %s", high.Window.Seconds, high.Schedule.Saturation)
	failed, stalled := false, false
	for _, v := range f.SLOs {
		if v.Point == high.Label {
			failed = !v.Pass && strings.Contains(v.Note, "saturated")
			// A machine that stalled through every rerun (two CPU hogs on
			// two cores) makes the trial inconclusive, with the evidence:
			// said, not a failure of this test (see CI's under-load runs).
			stalled = v.Inconclusive && strings.Contains(v.Note, "did not measure the server")
		}
	}
	if stalled {
		t.Logf("the saturated trial was inconclusive on this machine: %+v", f.SLOs)
	} else if !failed || high.Requests.Canceled == 0 {
		t.Errorf("SLOs %+v; canceled %d", f.SLOs, high.Requests.Canceled)
	}
}

// TestAbandonAfterTime: half the users give up 50 ms after sending, long
// before their 200-token answers (about half a second on the tiny
// simulator) end: those are counted as abandoned, never as errors, and
// the others complete.
func TestAbandonAfterTime(t *testing.T) {
	f := runSource(t, "bored.jsonnet", `local b = import 'benchci.libsonnet';
b.suite {
  name: 'bored',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(200), arrival: b.arrival.constant(),
              cancel: b.cancel(0.5, after_ms=b.dist.fixed(50)) },
  sweep: b.sweep.rates([8], duration='2s', warmup='0s'),
}`)
	r := f.Points[0].Requests
	if r.Abandoned < 4 || r.Completed < 4 || r.Failed != 0 || r.ErrorRate != 0 {
		t.Errorf("requests %+v: want about half abandoned, the rest answered, none failed", r)
	}
}

// TestProxyTarget puts the fault proxy in front of a server: every
// answer's TTFT carries its added latency (a lower bound, whatever the
// machine), a fifth of the requests are refused with 429 and counted as
// such, and the results name the server behind the proxy.
func TestProxyTarget(t *testing.T) {
	u := tinyServer(t)
	f := runSource(t, "proxied.jsonnet", fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'proxied',
  target: b.target.url('%s', proxy={ latency: '25ms', rate_429: 0.2, retry_after: '1s', seed: 4 }),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5), arrival: b.arrival.constant() },
  sweep: b.sweep.rates([40], duration='2s', warmup='0s'),
  sanity: { max_error_rate: 0.5 },
}`, u))
	pt := f.Points[0]
	if f.Target.Upstream != u || f.Target.URL == u {
		t.Errorf("target %+v: want the proxy's URL, and the server's as upstream", f.Target)
	}
	if ttft := pt.Latency[metric.TTFT]; ttft.Min < 25 {
		t.Errorf("TTFT min %.2f ms: the proxy's 25 ms are missing", ttft.Min)
	}
	n429, sent := pt.Requests.Errors["http_429"], pt.Requests.Sent
	if share := float64(n429) / float64(sent); share < 0.08 || share > 0.35 {
		t.Errorf("%d of %d refused with 429 (errors %v), want about a fifth", n429, sent, pt.Requests.Errors)
	}
}

// TestRetriesThroughProxy: the fault proxy refuses 30% of requests with
// 429 and Retry-After 1 s; a client retrying them (up to 3 attempts,
// honouring Retry-After) answers nearly all, its users wait at least the
// second on a retried request, the server saw about 1.3 attempts per
// request, and the figures say so.
func TestRetriesThroughProxy(t *testing.T) {
	u := tinyServer(t)
	f := runSource(t, "retried.jsonnet", fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'retried',
  target: b.target.url('%s', proxy={ rate_429: 0.3, retry_after: '1s', seed: 2 }),
  request: { retry: b.retry(on=['429'], max_attempts=3) },
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5), arrival: b.arrival.constant() },
  sweep: b.sweep.rates([20], duration='2s', warmup='0s'),
  slos: [b.slo.rate('retry_amplification', '<', 1.7), b.slo.p99('e2e_user', '<', '5s')],
}`, u))
	pt := f.Points[0]
	r := pt.Requests
	amp, _ := pt.Value(metric.K(metric.RetryAmplification, ""))
	// 1 + 0.3 + 0.09 = 1.39 expected; over 40 requests its sd is about
	// 0.1. The proxy's seed fixes the first attempt's faults, but a trial
	// measured again on a stalled machine draws new ones: ±2.5 sd.
	if amp < 1.15 || amp > 1.65 || r.ErrorRate > 0.1 {
		t.Errorf("requests %+v (amplification %.2f): want about 1.3 attempts per request, few failures", r, amp)
	}
	if user := pt.Latency[metric.E2EUser]; user.Max < 1000 || user.P50 > 500 {
		t.Errorf("user E2E %+v: a retried request waits its Retry-After, most are not retried", user)
	}
	for _, v := range f.SLOs {
		if !v.Pass && !v.Inconclusive { // inconclusive: a stalled machine, said
			t.Errorf("SLO %+v", v)
		}
	}
}

// TestStallTimeoutRetried: the proxy stalls 30% of streams for 3 s after
// their first event (a chat stream's role-only delta, so the first token
// has not come); the first-token timeout of 500 ms ends them, and a policy
// retrying timeouts answers them on the next attempt: few failures, and
// users of retried requests waited at least the timeout.
func TestStallTimeoutRetried(t *testing.T) {
	u := tinyServer(t)
	f := runSource(t, "stalled.jsonnet", fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'stalled',
  target: b.target.url('%s', proxy={ stall_rate: 0.3, stall: '3s', seed: 5 }),
  request: { timeouts: { first_token: '500ms', idle: '300ms' }, retry: b.retry(on=['timeout'], max_attempts=4, initial='10ms') },
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5), arrival: b.arrival.constant() },
  sweep: b.sweep.rates([20], duration='2s', warmup='0s'),
}`, u))
	pt := f.Points[0]
	r := pt.Requests
	amp, _ := pt.Value(metric.K(metric.RetryAmplification, ""))
	if r.ErrorRate > 0.05 || amp < 1.15 {
		t.Errorf("requests %+v, amplification %.2f: want the stalls retried and answered", r, amp)
	}
	if user := pt.Latency[metric.E2EUser]; user.Max < 500 {
		t.Errorf("user E2E %+v: a retried request waited at least the 500 ms timeout", user)
	}
}

// tinyServer serves the tiny simulator profile for the test's lifetime
// and returns its URL, for suites that reach it as a real server.
func tinyServer(t *testing.T) string {
	t.Helper()
	p, _ := sim.Lookup("tiny")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	u, err := sim.New(p).Listen(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return u
}
