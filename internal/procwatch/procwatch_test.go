package procwatch

import (
	"context"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeProc serves states and schedstat sums from a script, per sample.
type fakeProc struct {
	stoppedAt map[int]bool // sample index: stopped
	i         int
	run, wait time.Duration
	noSched   bool
}

func (f *fakeProc) stopped(pid int) (bool, bool) { return f.stoppedAt[f.i], pid == 42 }
func (f *fakeProc) sched(pid int) (time.Duration, time.Duration, bool) {
	return f.run, f.wait, !f.noSched
}

// A stop is counted from the last sample that saw the process running to
// the first that sees it running again: the stop began and ended
// somewhere between, and the figure leans long, never short.
func TestSamplerCountsStops(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	f := &fakeProc{stoppedAt: map[int]bool{3: true, 4: true, 5: true, 9: true}}
	s := newSampler(f)
	for i := range 12 {
		f.i = i
		f.run += 10 * time.Millisecond
		f.wait += 30 * time.Millisecond
		s.sample([]int{42, 7}, t0.Add(time.Duration(i)*100*time.Millisecond))
	}
	r := s.finish(t0, t0.Add(1100*time.Millisecond))
	if r.Processes != 1 || r.PID != 42 {
		t.Errorf("processes %d, PID %d: want 1 (pid 7 cannot be read) and 42", r.Processes, r.PID)
	}
	// 2->6 (400 ms) and 8->10 (200 ms).
	if r.Stops != 2 || r.Stopped != 600*time.Millisecond || r.Longest != 400*time.Millisecond {
		t.Errorf("stops %d, stopped %v, longest %v: want 2, 600ms, 400ms", r.Stops, r.Stopped, r.Longest)
	}
	if r.CPU != 110*time.Millisecond || r.Wait != 330*time.Millisecond || r.WaitShare() != 0.75 {
		t.Errorf("cpu %v, wait %v, share %v", r.CPU, r.Wait, r.WaitShare())
	}
	// A stop still on at the end counts to the end.
	f = &fakeProc{stoppedAt: map[int]bool{1: true, 2: true}, noSched: true}
	s = newSampler(f)
	for i := range 3 {
		f.i = i
		s.sample([]int{42}, t0.Add(time.Duration(i)*time.Second))
	}
	r = s.finish(t0, t0.Add(2500*time.Millisecond))
	if r.Stops != 1 || r.Stopped != 2500*time.Millisecond || r.WaitShare() != -1 || !strings.Contains(r.String(), "stopped 2.5s in 1 stop(s)") {
		t.Errorf("%+v: %s", r, r)
	}
}

// treeProc is a server of two processes, 42 and its worker 43, of which
// only the worker is ever stopped (at the samples in stoppedAt).
type treeProc struct {
	stoppedAt map[int]bool
	i         int
}

func (f *treeProc) stopped(pid int) (bool, bool) { return pid == 43 && f.stoppedAt[f.i], true }
func (f *treeProc) sched(int) (time.Duration, time.Duration, bool) {
	return 0, 0, false
}

// The process a report names as stopped is the one that was: a launched
// engine's worker, not the server's first process.
func TestSamplerNamesTheStoppedProcess(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		stoppedAt map[int]bool
		want      int
	}{{map[int]bool{2: true, 3: true}, 43}, {nil, 0}} {
		f := &treeProc{stoppedAt: c.stoppedAt}
		s := newSampler(f)
		for i := range 5 {
			f.i = i
			s.sample([]int{42, 43}, t0.Add(time.Duration(i)*100*time.Millisecond))
		}
		if r := s.finish(t0, t0.Add(500*time.Millisecond)); r.PID != 42 || r.StoppedPID != c.want || (c.want != 0) != (r.Stops == 1) {
			t.Errorf("stopped at %v: PID %d, stopped PID %d, %d stop(s); want 42, %d", c.stoppedAt, r.PID, r.StoppedPID, r.Stops, c.want)
		}
	}
}

// A real process stopped by SIGSTOP is seen stopped; its threads'
// schedstat is read.
func TestWatchSeesAStoppedProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep:", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	w := Start(context.Background(), func() []int { return []int{pid} })
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Held until the kernel says it is stopped, and then for a second:
	// the watcher reads it every 20 ms.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if st, _ := (kernel{}).stopped(pid); st || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(time.Second)
	syscall.Kill(pid, syscall.SIGCONT)
	time.Sleep(100 * time.Millisecond)
	r := w.Stop()
	if r.Processes != 1 || r.PID != pid || r.Stops < 1 || r.Stopped < 500*time.Millisecond {
		t.Errorf("reading %+v (%s): want the stop of about 1 s", r, r)
	}
	if r.CPU < 0 || r.Wait < 0 {
		t.Errorf("schedstat not read: %+v", r)
	}
}

// schedProc serves one process whose run and wait sums advance by a
// script, per sample.
type schedProc struct {
	i         int
	run, wait []time.Duration // per sample, the sums
}

func (p *schedProc) stopped(int) (bool, bool) { return false, true }
func (p *schedProc) sched(int) (time.Duration, time.Duration, bool) {
	return p.run[p.i], p.wait[p.i], true
}

// Stretches in which the server waited and did not run are counted when
// they span two samples or more; one starved interval (20 ms) is a busy
// machine's routine.
func TestSamplerCountsStarvation(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	// Samples 20 ms apart. 1: ran. 2: starved (one interval, not counted).
	// 3: ran. 4-8: starved (5 intervals = 100 ms). 9: ran, waiting little.
	run := []time.Duration{0, 5 * ms, 5 * ms, 9 * ms, 9 * ms, 9 * ms, 9 * ms, 9 * ms, 9 * ms, 20 * ms}
	wait := []time.Duration{0, 2 * ms, 20 * ms, 22 * ms, 42 * ms, 62 * ms, 82 * ms, 102 * ms, 122 * ms, 125 * ms}
	p := &schedProc{run: run, wait: wait}
	s := newSampler(p)
	for i := range run {
		p.i = i
		s.sample([]int{1}, t0.Add(time.Duration(i)*20*ms))
	}
	r := s.finish(t0, t0.Add(180*ms))
	if r.Starves != 1 || r.Starved != 100*ms || r.Hungriest != 100*ms {
		t.Errorf("starved %v in %d (longest %v): want 100ms in 1", r.Starved, r.Starves, r.Hungriest)
	}
	if r.CPU != 20*ms || r.Wait != 125*ms {
		t.Errorf("cpu %v wait %v", r.CPU, r.Wait)
	}
}

// The process listening on a port is found: here, this test's own.
func TestListener(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	pid, err := Listener(port)
	if err != nil || pid != os.Getpid() {
		t.Errorf("Listener(%d) = %d, %v; want %d", port, pid, err, os.Getpid())
	}
	l.Close()
	if _, err := Listener(port); err == nil || !strings.Contains(err.Error(), "no socket listens") {
		t.Errorf("a closed port: %v", err)
	}
}
