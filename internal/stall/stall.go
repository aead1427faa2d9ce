// Package stall watches for a machine that stops running this process: a
// canary timer that should wake every Period and notes how late it woke,
// and the hypervisor's stolen CPU where Linux reports it. A benchmark
// process that stood still for 100 ms measured those 100 ms into every
// request in flight (and, for the embedded simulator, into the server
// too): the figures then describe the machine, not the server.
package stall

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	// Period is how often the canary means to wake.
	Period = 10 * time.Millisecond
	// MinStall is the least lateness counted as a stall. A busy 2-core
	// machine with neighbours wakes a timer up to ~12 ms late (the
	// kernel's scheduling latency with three runnable threads a core);
	// a process that was descheduled, paged out or stopped is later.
	MinStall = 25 * time.Millisecond
)

// Reading is what the canary saw between Start and Stop.
type Reading struct {
	// Stalled sums the lateness of every wake-up later than MinStall;
	// Longest is the largest one; Count how many there were.
	Stalled, Longest time.Duration
	Count            int
	// Span is how long the canary watched.
	Span time.Duration
	// Steal is the share of CPU time stolen by the hypervisor over the
	// span, and Busy the share of the machine's CPU time spent running
	// anything (/proc/stat); -1 where the kernel does not report them.
	Steal, Busy float64
	// Cores is how many CPUs the machine has; Own the cores this process
	// used on average over the span (its CPU time over the span).
	Cores int
	Own   float64
}

// CPUShort says, when the machine's CPU was nearly all in use, that it
// ran out and who used it ("" otherwise): the resource a client that fell
// behind lacked.
func (r Reading) CPUShort() string {
	if r.Busy < 0.9 {
		return ""
	}
	return fmt.Sprintf("the CPU ran out: the machine's %d cores were %.0f%% busy, benchci used %.2f of them", r.Cores, 100*r.Busy, r.Own)
}

// Canary runs until Stop.
type Canary struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	r      Reading
	cpu0   cpuTimes
	own0   time.Duration
}

// Start starts a canary. It uses the runtime's own timers, so inside a
// testing/synctest bubble it sees fake time and never a stall.
func Start(ctx context.Context) *Canary {
	ctx, cancel := context.WithCancel(ctx)
	c := &Canary{cancel: cancel, done: make(chan struct{}), cpu0: readCPU(), own0: ownCPU()}
	start := time.Now()
	go func() {
		defer close(c.done)
		t := time.NewTimer(Period)
		defer t.Stop()
		due := start.Add(Period)
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			now := time.Now()
			c.mu.Lock()
			c.observe(now.Sub(due))
			c.r.Span = now.Sub(start)
			c.mu.Unlock()
			due = now.Add(Period)
			t.Reset(Period)
		}
	}()
	return c
}

func (c *Canary) observe(late time.Duration) {
	if late < MinStall {
		return
	}
	c.r.Stalled += late
	c.r.Count++
	c.r.Longest = max(c.r.Longest, late)
}

// Stop ends the canary and returns its reading.
func (c *Canary) Stop() Reading {
	c.cancel()
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.r
	cpu := readCPU()
	r.Steal, r.Busy = c.cpu0.share(cpu)
	r.Cores = runtime.NumCPU()
	if r.Span > 0 {
		r.Own = float64(ownCPU()-c.own0) / float64(r.Span)
	}
	return r
}

// ownCPU is the CPU time this process has used (user and system).
func ownCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuTimes is the machine's CPU time by kind, in clock ticks, from the
// first line of /proc/stat; ok is false where it could not be read.
type cpuTimes struct {
	total, idle, steal uint64
	ok                 bool
}

// share is the stolen and the busy share of the CPU time between a and
// b; -1 each where they cannot be told.
func (a cpuTimes) share(b cpuTimes) (steal, busy float64) {
	if !a.ok || !b.ok || b.total <= a.total || b.steal < a.steal || b.idle < a.idle || b.idle-a.idle > b.total-a.total {
		return -1, -1
	}
	if b.total-a.total < minTicks {
		return -1, -1 // too short a span to tell a share
	}
	d := float64(b.total - a.total)
	return float64(b.steal-a.steal) / d, 1 - float64(b.idle-a.idle)/d
}

// minTicks is the least CPU time, in clock ticks (1/100 s each on Linux,
// summed over CPUs), over which shares are told: with fewer, one tick of
// steal would read as several percent.
const minTicks = 200

// statPath is read for the steal figure (a variable for tests).
var statPath = "/proc/stat"

func readCPU() cpuTimes {
	f, err := os.Open(statPath)
	if err != nil {
		return cpuTimes{}
	}
	defer f.Close()
	return parseCPU(io.LimitReader(f, 4096))
}

// parseCPU reads the aggregate "cpu" line: user nice system idle iowait
// irq softirq steal [guest guest_nice]. Guest time is already counted in
// user and nice, so the total is the first eight fields.
func parseCPU(r io.Reader) cpuTimes {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && line == "" {
		return cpuTimes{}
	}
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return cpuTimes{}
	}
	var t cpuTimes
	for i, s := range fields[1:9] {
		v, err := strconv.ParseUint(s, 10, 56)
		if err != nil {
			return cpuTimes{}
		}
		t.total += v
		switch i {
		case 3, 4: // idle, iowait
			t.idle += v
		case 7:
			t.steal = v
		}
	}
	t.ok = t.total > 0
	return t
}
