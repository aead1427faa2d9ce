// Package procwatch watches a server's processes on this machine while a
// point measures them: whether they were stopped (a SIGSTOP, a debugger:
// the kernel's T and t states; a cgroup freezer's tasks read as sleeping,
// and are not seen) and how long their threads waited for a CPU. The
// client's canary (package stall) sees only benchci's own process; a
// launched server that a shared runner descheduled for two seconds would
// otherwise be judged as the server's own behaviour.
package procwatch

import (
	"context"
	"fmt"
	"time"
)

// Period is how often the processes' states are read. A stop shorter
// than it may be missed; the stops that change a point's figures last
// longer.
const Period = 20 * time.Millisecond

// MinStarve is the shortest stretch without a CPU that Starved counts:
// as the client's canary counts a stall (stall.MinStall).
const MinStarve = 25 * time.Millisecond

// refreshEvery is how often the list of processes is read again (it
// scans /proc): a server's workers start and end rarely.
const refreshEvery = time.Second

// Reading is what a Watcher saw between Start and Stop.
type Reading struct {
	// Processes is how many of the server's processes were seen; 0: none
	// could be read, and the rest is zero.
	Processes int
	// Stopped sums the time some process of the server was in the stopped
	// state, Longest the longest such stretch, Stops how many there were.
	Stopped, Longest time.Duration
	Stops            int
	// CPU and Wait sum the server's threads' time running and runnable
	// but waiting for a CPU (schedstat), over the span; -1 where the
	// kernel does not report them.
	CPU, Wait time.Duration
	// Starved sums the stretches in which the server wanted a CPU and got
	// none: between samples, no thread of it ran while its threads waited
	// for more than half the time (a process the machine descheduled);
	// Hungriest is the longest, Starves how many there were. A stretch
	// shorter than MinStarve is not counted: a busy machine's scheduler
	// leaves a runnable thread waiting that long routinely.
	Starved, Hungriest time.Duration
	Starves            int
	// Span is how long the watcher watched.
	Span time.Duration
	// PID is the first process watched, for the report; StoppedPID the
	// first seen stopped (an engine's worker, in a launched server's
	// tree, where it is not PID), 0 where none was.
	PID, StoppedPID int
}

// WaitShare is the share of the server's runnable time spent waiting
// for a CPU: 0 a server that ran whenever it could, 0.5 one that got a
// CPU half the time it wanted one. -1 where it is not known.
func (r Reading) WaitShare() float64 {
	if r.CPU < 0 || r.Wait < 0 || r.CPU+r.Wait <= 0 {
		return -1
	}
	return float64(r.Wait) / float64(r.CPU+r.Wait)
}

// String says what the watcher saw, for a report.
func (r Reading) String() string {
	if r.Processes == 0 {
		return "no process seen"
	}
	s := fmt.Sprintf("%d process(es) from PID %d over %v", r.Processes, r.PID, r.Span.Round(10*time.Millisecond))
	if r.Stops > 0 {
		s += fmt.Sprintf(", stopped %v in %d stop(s)", r.Stopped.Round(time.Millisecond), r.Stops)
	}
	if r.Starves > 0 {
		s += fmt.Sprintf(", no CPU for %v in %d stretch(es)", r.Starved.Round(time.Millisecond), r.Starves)
	}
	if w := r.WaitShare(); w >= 0 {
		s += fmt.Sprintf(", ran %v and waited %v for a CPU", r.CPU.Round(time.Millisecond), r.Wait.Round(time.Millisecond))
	}
	return s
}

// A Watcher samples a server's processes until Stop.
type Watcher struct {
	stop chan struct{}
	done chan struct{}
	r    Reading
}

// proc reads what the kernel says of processes; tests replace it.
type proc interface {
	// stopped reports whether process pid is in the stopped state, and
	// whether it could be read at all.
	stopped(pid int) (stopped, ok bool)
	// sched sums the running and waiting times of pid's threads.
	sched(pid int) (run, wait time.Duration, ok bool)
}

// Start watches the processes pids lists (read again every second) until
// Stop or ctx ends.
func Start(ctx context.Context, pids func() []int) *Watcher {
	w := &Watcher{stop: make(chan struct{}), done: make(chan struct{})}
	go w.watch(ctx, pids, kernel{})
	return w
}

// Stop ends the watch and returns what it saw.
func (w *Watcher) Stop() Reading {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
	return w.r
}

// sampler is the state of one watch, advanced one sample at a time.
type sampler struct {
	k        proc
	r        Reading
	seen     map[int]bool
	first    map[int][2]time.Duration // pid: run, wait at first sight
	last     map[int][2]time.Duration
	schedOK  bool
	stopFrom time.Time // when the current stop was first seen; zero: none
	// starveFrom and starveTo bound the current stretch without a CPU:
	// the sample before it and the last sample in it (it leans short).
	starveFrom, starveTo time.Time
	prev                 time.Time
}

func newSampler(k proc) *sampler {
	return &sampler{k: k, seen: map[int]bool{}, first: map[int][2]time.Duration{}, last: map[int][2]time.Duration{}, schedOK: true}
}

func (w *Watcher) watch(ctx context.Context, pids func() []int, k proc) {
	defer close(w.done)
	s := newSampler(k)
	now := time.Now
	t0 := now()
	list, listed := pids(), t0
	s.sample(list, t0)
	t := time.NewTicker(Period)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
		case <-ctx.Done():
		case at := <-t.C:
			if at.Sub(listed) >= refreshEvery {
				list, listed = pids(), at
			}
			s.sample(list, now())
			continue
		}
		end := now()
		s.sample(list, end)
		w.r = s.finish(t0, end)
		return
	}
}

// sample reads every process once at time at.
func (s *sampler) sample(pids []int, at time.Time) {
	anyStopped := false
	var ran, waited time.Duration
	compared := false
	for _, pid := range pids {
		st, ok := s.k.stopped(pid)
		if !ok {
			continue
		}
		if !s.seen[pid] {
			s.seen[pid] = true
			if s.r.PID == 0 {
				s.r.PID = pid
			}
		}
		anyStopped = anyStopped || st
		if st && s.r.StoppedPID == 0 {
			s.r.StoppedPID = pid
		}
		if run, wait, ok := s.k.sched(pid); ok {
			if _, had := s.first[pid]; !had {
				s.first[pid] = [2]time.Duration{run, wait}
			}
			if l, had := s.last[pid]; had {
				ran += run - l[0]
				waited += wait - l[1]
				compared = true
			}
			s.last[pid] = [2]time.Duration{run, wait}
		} else {
			s.schedOK = false
		}
	}
	switch {
	case anyStopped && s.stopFrom.IsZero():
		// The stop began somewhere since the last sample: counted from it.
		s.stopFrom = at
		if !s.prev.IsZero() {
			s.stopFrom = s.prev
		}
	case !anyStopped && !s.stopFrom.IsZero():
		s.endStop(at)
	}
	// A stopped process neither runs nor waits: its stretches are stops.
	starved := compared && !anyStopped && ran == 0 && !s.prev.IsZero() && waited > at.Sub(s.prev)/2
	switch {
	case starved:
		if s.starveFrom.IsZero() {
			s.starveFrom = s.prev
		}
		s.starveTo = at
	case !s.starveFrom.IsZero():
		s.endStarve()
	}
	s.prev = at
}

// endStarve closes a stretch without a CPU at its last sample.
func (s *sampler) endStarve() {
	d := s.starveTo.Sub(s.starveFrom)
	s.starveFrom = time.Time{}
	if d < MinStarve {
		return
	}
	s.r.Starved += d
	s.r.Hungriest = max(s.r.Hungriest, d)
	s.r.Starves++
}

func (s *sampler) endStop(at time.Time) {
	d := at.Sub(s.stopFrom)
	s.r.Stopped += d
	s.r.Longest = max(s.r.Longest, d)
	s.r.Stops++
	s.stopFrom = time.Time{}
}

func (s *sampler) finish(t0, end time.Time) Reading {
	if !s.stopFrom.IsZero() {
		s.endStop(end)
	}
	if !s.starveFrom.IsZero() {
		s.endStarve()
	}
	s.r.Span = end.Sub(t0)
	s.r.Processes = len(s.seen)
	if !s.schedOK || len(s.last) == 0 {
		s.r.CPU, s.r.Wait = -1, -1
		return s.r
	}
	for pid, l := range s.last {
		f := s.first[pid]
		s.r.CPU += l[0] - f[0]
		s.r.Wait += l[1] - f[1]
	}
	return s.r
}
