package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/loadgen"
	"github.com/benchci/benchci/internal/runner"
)

// lockedBuffer is written by the progress goroutine and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor waits until the output says want; the deadline is a hang
// guard, not a timing.
func waitFor(t *testing.T, out *lockedBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("progress never said %q; it wrote:\n%q", want, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Past the planned time, requests still streaming keep the live counts
// moving: the bar neither finishes nor freezes until the point ends.
func TestProgressKeepsMovingWhileDraining(t *testing.T) {
	t.Parallel()
	out := &lockedBuffer{}
	p := &progress{w: out, suite: "s", tty: true}
	prog := &loadgen.Progress{}
	prog.Sent.Store(8)
	prog.Done.Store(5)
	prog.InFlight.Store(3)
	pt := runner.PointInfo{Label: "rate=4", Index: 0, Total: 1, Planned: time.Millisecond}
	p.PointStarted(pt, prog)
	waitFor(t, out, "5 done, 0 failed, 3 in flight [draining")
	prog.Done.Store(7)
	prog.InFlight.Store(1)
	waitFor(t, out, "7 done, 0 failed, 1 in flight [draining")
	p.PointFinished(pt, &result.Point{Measured: result.Measured{Latency: map[string]result.Summary{}}})
}
