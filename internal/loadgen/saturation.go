package loadgen

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Over-saturation: an open-loop point whose server cannot keep up sends
// faster than answers come, so its queue, and with it every new request's
// wait for a first token, grows for as long as the point runs. Measuring
// it for the whole duration, then draining the queue, only measures the
// duration; stopping it early saves minutes per probe of a capacity
// search and loses nothing the verdict needs.
//
// The watch takes one tick per slice of the measured window: requests
// sent, requests finished, requests in flight, and the median TTFT of the
// first tokens that came in the tick (seen live, through
// client.OnFirstToken). It calls the point saturated only when three
// signs agree, over the thirds of the last ticks (at least MinSaturationTicks):
//
//   - the median TTFT rose from third to third, the last at least 1.5 x
//     the first and 100 ms above it: the queue's wait grows (a stable
//     server's TTFT does not trend, however long its answers);
//   - the requests in flight rose from third to third, by at least 10% of
//     those sent meanwhile;
//   - fewer than 90% as many requests finished as were sent.
//
// And it must say so at two ticks in a row. A server below capacity has a
// flat TTFT: in flight alone rises for a while after the warm-up when
// answers are long, which is why it is not enough.
const (
	MinSaturationTicks = 6
	maxSaturationTicks = 24
	// minTTFTSlope is the least growth of the median TTFT, in seconds per
	// second: a queue at 110% of capacity grows its wait by 0.1 s/s. Milder
	// overloads are left to run: their drain is short, and a burst of a
	// stable server can look like them for a while.
	minTTFTSlope = 0.1
	// minTTFTFit is the least R² of the TTFT's straight line: a queue
	// that grows without bound grows steadily; a passing burst does not.
	minTTFTFit = 0.8
	// minTTFTRise is the least rise over the ticks judged.
	minTTFTRise = 100 * time.Millisecond
	// maxFinishedShare: saturated, fewer requests finish than are sent (at
	// 110% of capacity, 91%).
	maxFinishedShare = 0.9
)

// tick is the watch's view at the end of one slice.
type tick struct {
	sent, finished, inFlight int64
	// ttft is the median TTFT of first tokens in the tick; 0: none came.
	ttft time.Duration
}

// saturationWatch collects ticks while a point runs.
type saturationWatch struct {
	mu      sync.Mutex
	pending []time.Duration
	ticks   []tick
	hits    int
}

// firstToken is client.OnFirstToken's callback.
func (w *saturationWatch) firstToken(ttft time.Duration) {
	w.mu.Lock()
	w.pending = append(w.pending, ttft)
	w.mu.Unlock()
}

// tick records the end of a slice and reports whether the point is
// saturated, and why.
func (w *saturationWatch) tick(p *Progress) (bool, string) {
	w.mu.Lock()
	ttfts := w.pending
	w.pending = nil
	w.mu.Unlock()
	t := tick{sent: p.Sent.Load(), finished: p.Done.Load(), inFlight: p.InFlight.Load()}
	if len(ttfts) > 0 {
		slices.Sort(ttfts)
		t.ttft = ttfts[len(ttfts)/2]
	}
	w.ticks = append(w.ticks, t)
	ok, why := saturated(w.ticks)
	if !ok {
		w.hits = 0
		return false, ""
	}
	w.hits++
	return w.hits >= 2, why
}

// saturated applies the signs to the last ticks; ticks holds the ticks
// of the measured window, one per second, oldest first.
func saturated(ticks []tick) (bool, string) {
	if len(ticks) < MinSaturationTicks {
		return false, ""
	}
	if len(ticks) > maxSaturationTicks {
		ticks = ticks[len(ticks)-maxSaturationTicks:]
	}
	var tx, ty, fx, fy []float64
	for i, t := range ticks {
		if t.ttft > 0 {
			tx, ty = append(tx, float64(i)), append(ty, t.ttft.Seconds())
		}
		fx, fy = append(fx, float64(i)), append(fy, float64(t.inFlight))
	}
	if len(tx) < MinSaturationTicks {
		return false, "" // too few ticks with a first token to see a trend
	}
	ttftSlope, ttftR2 := fitLine(tx, ty)
	flightSlope, _ := fitLine(fx, fy)
	first, last := ticks[0], ticks[len(ticks)-1]
	sent, finished := last.sent-first.sent, last.finished-first.finished
	rise := ttftSlope * (tx[len(tx)-1] - tx[0])
	switch {
	case ttftSlope < minTTFTSlope || ttftR2 < minTTFTFit || rise < minTTFTRise.Seconds():
		return false, ""
	case flightSlope <= 0:
		return false, ""
	case sent <= 0 || float64(finished) >= maxFinishedShare*float64(sent):
		return false, ""
	}
	return true, fmt.Sprintf("the queue grew without bound over the last %d s: TTFT rose %.0f ms a second (fit R² %.2f) to %v, in flight %d → %d, %d of %d requests sent meanwhile finished",
		len(ticks)-1, ttftSlope*1000, ttftR2, last.ttft.Round(time.Millisecond), first.inFlight, last.inFlight, finished, sent)
}

// fitLine is the least-squares line through (x, y): its slope and R².
func fitLine(x, y []float64) (slope, r2 float64) {
	n := float64(len(x))
	var sx, sy, sxx, sxy, syy float64
	for i := range x {
		sx, sy = sx+x[i], sy+y[i]
		sxx, sxy, syy = sxx+x[i]*x[i], sxy+x[i]*y[i], syy+y[i]*y[i]
	}
	vx, vy, cxy := sxx-sx*sx/n, syy-sy*sy/n, sxy-sx*sy/n
	if vx <= 0 || vy <= 0 {
		return 0, 0
	}
	return cxy / vx, cxy * cxy / (vx * vy)
}

// monitor ticks a saturationWatch once a second through the measured
// window and, when the point saturates, stops its sends.
type monitor struct {
	cancel context.CancelFunc
	done   chan struct{}
	// Set before done closes.
	at  time.Time
	why string
}

func startMonitor(ctx context.Context, cfg Config, w *saturationWatch, winStart, winEnd time.Time, stopSends context.CancelFunc) *monitor {
	mctx, cancel := context.WithCancel(ctx)
	m := &monitor{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for next := winStart.Add(time.Second); winEnd.IsZero() || !next.After(winEnd); next = next.Add(time.Second) {
			if !cfg.Clock.SleepUntil(mctx, next, 0) {
				return
			}
			if ok, why := w.tick(cfg.Progress); ok {
				m.at, m.why = cfg.Clock.Now(), why
				stopSends()
				return
			}
		}
	}()
	return m
}

// stop ends the monitor and returns when the point was stopped and why;
// zero and "" when it was not.
func (m *monitor) stop() (time.Time, string) {
	m.cancel()
	<-m.done
	return m.at, m.why
}
