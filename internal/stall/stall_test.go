package stall

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestObserveCountsOnlyLongWakeUps(t *testing.T) {
	var c Canary
	for _, late := range []time.Duration{0, 5 * time.Millisecond, MinStall - 1, MinStall, 100 * time.Millisecond} {
		c.observe(late)
	}
	if r := c.r; r.Count != 2 || r.Stalled != MinStall+100*time.Millisecond || r.Longest != 100*time.Millisecond {
		t.Errorf("reading %+v", r)
	}
}

// In fake time no wake-up is late: the canary reports no stall over a
// span as long as it watched.
func TestCanaryQuietInFakeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := Start(context.Background())
		time.Sleep(2 * time.Second)
		r := c.Stop()
		if r.Count != 0 || r.Stalled != 0 || r.Span < 1900*time.Millisecond {
			t.Errorf("reading %+v", r)
		}
	})
}

func TestParseCPU(t *testing.T) {
	for _, tc := range []struct {
		in                string
		total, idle, stal uint64
		ok                bool
	}{
		{"cpu  100 0 50 800 10 0 5 35 20 0\ncpu0 1 2 3\n", 1000, 810, 35, true},
		{"cpu 1 2 3\n", 0, 0, 0, false},
		{"intr 1 2 3 4 5 6 7 8 9\n", 0, 0, 0, false},
		{"cpu a b c d e f g h\n", 0, 0, 0, false},
		{"cpu -1 0 0 0 0 0 0 0\n", 0, 0, 0, false},
		{"", 0, 0, 0, false},
	} {
		got := parseCPU(strings.NewReader(tc.in))
		if got.ok != tc.ok || got.total != tc.total || got.idle != tc.idle || got.steal != tc.stal {
			t.Errorf("%q: %+v", tc.in, got)
		}
	}
	a := cpuTimes{total: 1000, idle: 500, steal: 10, ok: true}
	if s, b := a.share(cpuTimes{total: 2000, idle: 600, steal: 110, ok: true}); s != 0.1 || b != 0.9 {
		t.Errorf("steal %v busy %v, want 0.1 and 0.9", s, b)
	}
	if s, b := a.share(cpuTimes{}); s != -1 || b != -1 {
		t.Errorf("unreadable: %v %v, want -1", s, b)
	}
}

func FuzzParseCPU(f *testing.F) {
	f.Add("cpu  100 0 50 800 10 0 5 35 20 0\n")
	f.Add("cpu 18446744073709551615 1 1 1 1 1 1 1\n")
	f.Fuzz(func(t *testing.T, s string) {
		c := parseCPU(strings.NewReader(s))
		if c.ok && (c.steal > c.total || c.idle > c.total) {
			t.Errorf("steal %d or idle %d above total %d", c.steal, c.idle, c.total)
		}
	})
}
