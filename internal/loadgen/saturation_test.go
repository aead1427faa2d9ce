package loadgen

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// queueTicks simulates a server of slots parallel slots, each request
// holding one for service x U(0.5, 1.5) (answers of varied length; TTFT
// 20 ms after it starts), FIFO, under
// Poisson arrivals at rate for secs seconds after a warm-up of warm
// seconds, and returns the watch's ticks over the measured window.
func queueTicks(seed uint64, slots int, service time.Duration, rate float64, warm, secs int) []tick {
	rng := rand.New(rand.NewPCG(seed, 7))
	free := make([]float64, slots) // when each slot frees, seconds
	type req struct{ sent, first, end float64 }
	var reqs []req
	horizon := float64(warm + secs)
	for t := rng.ExpFloat64() / rate; t < horizon; t += rng.ExpFloat64() / rate {
		i := slices.Index(free, slices.Min(free))
		start := max(t, free[i])
		free[i] = start + service.Seconds()*(0.5+rng.Float64())
		reqs = append(reqs, req{t, start + 0.02, free[i]})
	}
	var ticks []tick
	for k := warm + 1; k <= warm+secs; k++ {
		at := float64(k)
		var tk tick
		var firsts []time.Duration
		for _, r := range reqs {
			if r.sent < at {
				tk.sent++
				if r.end < at {
					tk.finished++
				}
			}
			if r.first >= at-1 && r.first < at {
				firsts = append(firsts, time.Duration((r.first-r.sent)*float64(time.Second)))
			}
		}
		tk.inFlight = tk.sent - tk.finished
		if len(firsts) > 0 {
			slices.Sort(firsts)
			tk.ttft = firsts[len(firsts)/2]
		}
		ticks = append(ticks, tk)
	}
	return ticks
}

// firstStop runs the watch's rule over ticks as they come, two in a row
// needed, and returns the tick (seconds into the window) where it would
// stop the point; 0: never.
func firstStop(ticks []tick) int {
	hits := 0
	for k := 1; k <= len(ticks); k++ {
		if ok, _ := saturated(ticks[:k]); ok {
			hits++
			if hits == 2 {
				return k
			}
		} else {
			hits = 0
		}
	}
	return 0
}

// TestSaturationNeverBelowCapacity: 20 seeds each of servers below
// capacity (95% and 80% load, short and long answers, the long ones
// filling up through the whole window as a long answer after a short
// warm-up does) are never stopped in 60 s; above capacity every seed is
// stopped within the stated time of its queue starting to show (every
// slot taken and one freed): 20 s at 130% load, 8 s at 200% with short
// answers, 20 s with long ones.
func TestSaturationNeverBelowCapacity(t *testing.T) {
	cases := []struct {
		name    string
		service time.Duration
		load    float64
		stop    bool
		within  int // seconds after the queue starts to show
	}{
		{"short answers at 95%", 2 * time.Second, 0.95, false, 0},
		{"short answers at 80%", 2 * time.Second, 0.8, false, 0},
		{"long answers at 80%, still filling", 20 * time.Second, 0.8, false, 0},
		{"short answers at 130%", 2 * time.Second, 1.3, true, 20},
		{"short answers at 200%", 2 * time.Second, 2, true, 8},
		{"long answers at 200%", 20 * time.Second, 2, true, 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const slots = 32
			rate := c.load * slots / c.service.Seconds()
			latest := 0
			// Seconds into the window until every slot is taken (after a
			// 2 s warm-up): the queue forms then.
			// No first token shows the queue's wait before the first slot
			// frees (half a service time at least).
			fill := max(0, int(max(slots/rate, c.service.Seconds()/2))-2)
			for seed := range uint64(20) {
				at := firstStop(queueTicks(seed, slots, c.service, rate, 2, 60))
				switch {
				case c.stop && (at == 0 || at > fill+c.within):
					t.Errorf("seed %d: stopped at %d s, want within %d s of %d s", seed, at, c.within, fill)
				case !c.stop && at != 0:
					t.Errorf("seed %d: stopped at %d s below capacity", seed, at)
				}
				latest = max(latest, at)
			}
			t.Logf("latest stop over 20 seeds: %d s", latest)
		})
	}
}
