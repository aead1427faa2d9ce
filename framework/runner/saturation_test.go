package runner

import (
	"strings"
	"testing"
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
	failed := false
	for _, v := range f.SLOs {
		if v.Point == high.Label {
			failed = !v.Pass && strings.Contains(v.Note, "saturated")
		}
	}
	if !failed || high.Requests.Canceled == 0 {
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
