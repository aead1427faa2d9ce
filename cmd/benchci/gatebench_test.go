package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/gitfixture"
	"github.com/benchci/benchci/internal/testnet"
)

// BenchmarkGateCatchRate measures the gate suite (suites/gate.jsonnet) as
// a detector: one baseline run, then N runs of the same simulator, which
// must not regress, and N runs with the engine step 10% slower, which
// must. Each candidate is judged as ci judges it (compare's exit code:
// 1 regressed or an SLO failed, 3 inconclusive, 0 pass). It reports
// false_regressions, same_inconclusive, caught and slow_inconclusive, each
// out of N (BENCHCI_GATE_RUNS, default 20). A run takes about 30 s, so the
// whole measurement takes 2N+1 of them:
//
//	go test -run XXX -bench GateCatchRate -benchtime 1x ./cmd/benchci
//
// BENCHCI_GATE_LOAD sets the machine's condition while the candidates run
// (the baseline is always recorded first, on the machine as it is):
//
//	quiet   nothing added (default)
//	hogs    two processes spinning a CPU each beside benchci
//	stalls  the two hogs, and benchci stopped (SIGSTOP) 100 ms every second
//	serverstop  the two hogs, and the launched server
//	        (BENCHCI_GATE_TARGET=launch) stopped for 2 s once a candidate
//	        run, at a random moment 3-18 s in (mostly inside a trial); it
//	        reports server_stops_named, the runs whose results name the stop
//
// BENCHCI_GATE_SLOWED=0 runs only the unchanged candidates: the false
// regressions' side, in half the time.
//
// BENCHCI_GATE_MODE=ab measures ci --ab instead: the suite committed in a
// repository, each candidate run against that revision on the same
// machine, interleaved (about twice as long a run).
//
// BENCHCI_GATE_TARGET=launch serves the simulator from a process of its
// own that the suite launches (benchci sim --step-base), as a team's
// suite launches its engine: the server then shares the machine with
// benchci and the load, and its own stalls are its process's.
func BenchmarkGateCatchRate(b *testing.B) {
	if os.Getenv("BENCHCI_GATE_MODE") == "ab" {
		benchGateAB(b)
		return
	}
	n := runsFromEnv("BENCHCI_GATE_RUNS", 20)
	load := os.Getenv("BENCHCI_GATE_LOAD")
	dir := b.TempDir()
	suite := filepath.Join("..", "..", "suites", "gate.jsonnet")
	src, addr := gateBenchSuite(b)
	if load == "serverstop" && src == nil {
		b.Fatal("BENCHCI_GATE_LOAD=serverstop stops a launched server: set BENCHCI_GATE_TARGET=launch")
	}
	if src != nil {
		suite = filepath.Join(dir, "gate.jsonnet")
		if err := os.WriteFile(suite, src, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	stopsNamed := 0
	runOnce := func(name string, extra ...string) (string, int) {
		var out, errOut bytes.Buffer
		args := append([]string{"run", "--progress=false", "--baselines", filepath.Join(dir, "none"), "--results", filepath.Join(dir, name)}, extra...)
		var stopped func() string
		if load == "serverstop" && name != "base" {
			stopped = stopServerOnce(b, addr)
		}
		code := run(context.Background(), &out, &errOut, append(args, suite))
		if stopped != nil && stopNoted(b, name, stopped(), filepath.Join(dir, name, "gate.json")) {
			stopsNamed++
		}
		if code != exitOK && code != exitInconclusive {
			b.Fatalf("%s: exit %d\n%s\n%s", name, code, out.String(), errOut.String())
		}
		return filepath.Join(dir, name, "gate.json"), code
	}
	for b.Loop() {
		stopsNamed = 0
		base, code := runOnce("base")
		if code != exitOK {
			b.Fatal("the baseline run was inconclusive: record it on a quieter machine")
		}
		stop := loadMachine(b, load)
		var counts [2][4]int // same, slow x exit code
		for i := range n {
			// Interleaved, so that a change in the machine's load falls on both.
			same, _ := runOnce("same" + strconv.Itoa(i))
			counts[0][judgeCandidate(b, base, same)]++
			if os.Getenv("BENCHCI_GATE_SLOWED") != "0" {
				slow, _ := runOnce("slow"+strconv.Itoa(i), "--tla-str", "step_base=19.8ms")
				counts[1][judgeCandidate(b, base, slow)]++
			}
		}
		stop()
		reportCounts(b, counts, n)
		if load == "serverstop" {
			b.ReportMetric(float64(stopsNamed), "server_stops_named")
		}
	}
}

// judgeCandidate compares a candidate's results with the baseline's, as
// ci judges them, and returns compare's exit code (0 pass, 1 regressed or
// an SLO failed, 3 inconclusive), logging the comparison of any but a pass.
func judgeCandidate(b *testing.B, base, cand string) int {
	var out, errOut bytes.Buffer
	code := run(context.Background(), &out, &errOut, []string{"compare", base, cand})
	if code != exitOK && code != exitFailed && code != exitInconclusive {
		b.Fatalf("compare: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	if code != exitOK {
		b.Logf("%s: exit %d\n%s", filepath.Base(filepath.Dir(cand)), code, out.String())
	}
	return code
}

// runsFromEnv is the count of runs a benchmark's environment variable
// asks for, or def.
func runsFromEnv(key string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(key)); err == nil && v > 0 {
		return v
	}
	return def
}

// stopNoted logs when run name's server was stopped and whether its
// results (at path) name the stop, which it reports.
func stopNoted(b *testing.B, name, when, path string) bool {
	named, windows := serverStopNamed(b, path)
	b.Logf("%s: the server was stopped %s; named in the results: %v; the trials' windows: %s", name, when, named, windows)
	return named
}

// stopServerOnce stops the launched simulator listening on addr for 2 s,
// once, at a random moment 3 to 18 s from now, on a goroutine; the
// returned function waits for it and says when it was and for how long.
func stopServerOnce(b *testing.B, addr string) func() string {
	at := 3*time.Second + time.Duration(rand.Int64N(int64(15*time.Second)))
	done := make(chan string, 1)
	start := time.Now()
	go func() {
		time.Sleep(at)
		pid := launchedSim(addr)
		if pid == 0 {
			done <- fmt.Sprintf("never: no server on %s %.1f s in", addr, at.Seconds())
			return
		}
		syscall.Kill(pid, syscall.SIGSTOP)
		time.Sleep(2 * time.Second)
		syscall.Kill(pid, syscall.SIGCONT)
		done <- fmt.Sprintf("%.1f s into the run, at %s (PID %d)", time.Since(start).Seconds()-2, time.Now().Add(-2*time.Second).Format("15:04:05.0"), pid)
	}()
	return func() string { return <-done }
}

// launchedSim is the PID of the process serving "sim --addr addr", or 0.
func launchedSim(addr string) int {
	return processWith("\x00sim\x00--addr\x00" + addr + "\x00")
}

// processWith is the PID of a process whose command line (its arguments
// NUL-separated) holds every one of parts, or 0.
func processWith(parts ...string) int {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		cmd, err := os.ReadFile(p)
		if err != nil || !containsAll(string(cmd), parts) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		return pid
	}
	return 0
}

func containsAll(s string, parts []string) bool {
	for _, part := range parts {
		if !strings.Contains(s, part) {
			return false
		}
	}
	return true
}

// serverStopNamed reports whether a results file names a stop of the
// server's process in a trial kept or discarded, and the kept trials'
// measured windows (wall clock), to place a stop that was not named.
func serverStopNamed(b *testing.B, path string) (named bool, windows string) {
	f, err := result.Read(path)
	if err != nil {
		b.Logf("%s: %v", path, err)
		return false, ""
	}
	for _, p := range f.Points {
		windows += fmt.Sprintf(" %s+%.0fs", p.Window.Start.Format("15:04:05.0"), p.Window.Seconds)
		v := p.Validity
		if v == nil {
			continue
		}
		for _, why := range append(slices.Clone(v.Invalid), v.Reruns...) {
			if strings.Contains(why, "the server's process was stopped") {
				named = true
			}
		}
	}
	return named, windows
}

// loadMachine puts the named load on the machine and returns what ends it.
func loadMachine(b *testing.B, load string) func() {
	var procs []*exec.Cmd
	start := func(script string) {
		c := exec.Command("sh", "-c", script)
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		procs = append(procs, c)
	}
	switch load {
	case "", "quiet":
	case "hogs", "stalls", "serverstop":
		start("while :; do :; done")
		start("while :; do :; done")
		if load == "stalls" {
			start(fmt.Sprintf("while kill -STOP %d; do sleep 0.1; kill -CONT %d; sleep 0.9; done", os.Getpid(), os.Getpid()))
		}
	default:
		b.Fatalf("BENCHCI_GATE_LOAD=%q: want quiet, hogs or stalls", load)
	}
	return func() {
		// The stopper is killed by this process, so never while it holds
		// this process stopped.
		for _, c := range procs {
			c.Process.Kill()
			c.Wait()
		}
	}
}

// benchGateAB is BenchmarkGateCatchRate in A/B mode.
func benchGateAB(b *testing.B) {
	n := runsFromEnv("BENCHCI_GATE_RUNS", 20)
	src, err := os.ReadFile(filepath.Join("..", "..", "suites", "gate.jsonnet"))
	if err != nil {
		b.Fatal(err)
	}
	if launched, _ := gateBenchSuite(b); launched != nil {
		src = launched
	}
	repo := gitfixture.New(b)
	base := repo.Commit("gate", map[string][]byte{"gate.jsonnet": src})
	suite := filepath.Join(repo.Dir, "gate.jsonnet")
	slow := bytes.Replace(src, []byte("step_base='18ms'"), []byte("step_base='19.8ms'"), 1)
	if bytes.Equal(slow, src) {
		b.Fatal("gate.jsonnet no longer defaults step_base to 18ms")
	}
	dir := b.TempDir()
	judge := func(name string, suiteSrc []byte) int {
		if err := os.WriteFile(suite, suiteSrc, 0o644); err != nil {
			b.Fatal(err)
		}
		var out, errOut bytes.Buffer
		code := run(context.Background(), &out, &errOut, []string{"ci", "--ab", base, "--comment=false", "--summary", "", "--html", "", "--progress=false",
			"--results", filepath.Join(dir, name), "--baselines", filepath.Join(dir, "none"), "--report", filepath.Join(dir, name, "r.md"), suite})
		if code != exitOK && code != exitFailed && code != exitInconclusive {
			b.Fatalf("%s: exit %d\n%s\n%s", name, code, out.String(), errOut.String())
		}
		if code != exitOK {
			b.Logf("%s: exit %d\n%s", name, code, out.String())
		}
		return code
	}
	for b.Loop() {
		stop := loadMachine(b, os.Getenv("BENCHCI_GATE_LOAD"))
		var counts [2][4]int
		for i := range n {
			counts[0][judge("same"+strconv.Itoa(i), src)]++
			counts[1][judge("slow"+strconv.Itoa(i), slow)]++
		}
		stop()
		reportCounts(b, counts, n)
	}
}

// reportCounts reports the exit codes of n unchanged (counts[0]) and n
// slower (counts[1]) candidates.
func reportCounts(b *testing.B, counts [2][4]int, n int) {
	b.ReportMetric(float64(counts[0][exitFailed]), "false_regressions")
	b.ReportMetric(float64(counts[0][exitInconclusive]), "same_inconclusive")
	if slowed := counts[1][exitOK] + counts[1][exitFailed] + counts[1][exitInconclusive]; slowed > 0 {
		b.ReportMetric(float64(counts[1][exitFailed]), "caught")
		b.ReportMetric(float64(counts[1][exitInconclusive]), "slow_inconclusive")
	}
	b.ReportMetric(float64(n), "runs_each")
}

// gateBenchSuite is suites/gate.jsonnet with its simulator launched as a
// process of its own, listening on addr, where BENCHCI_GATE_TARGET=launch
// asks (nil: as it is). The step_base argument reaches the launch line,
// so a slower step is a changed serving flag, as a team's PR changes one.
func gateBenchSuite(b *testing.B) (src []byte, addr string) {
	switch os.Getenv("BENCHCI_GATE_TARGET") {
	case "", "sim":
		return nil, ""
	case "launch":
	default:
		b.Fatalf("BENCHCI_GATE_TARGET=%q: want sim or launch", os.Getenv("BENCHCI_GATE_TARGET"))
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "suites", "gate.jsonnet"))
	if err != nil {
		b.Fatal(err)
	}
	addr = testnet.Addr(b)
	launch := fmt.Sprintf("target: b.target.launch([%q, 'sim', '--addr', %q, '--profile', 'llama3-70b-h100x4', '--step-base', step_base], url='http://%s', env={ BENCHCI_TEST_CLI: '1' }, health='/health'),",
		os.Args[0], addr, addr)
	out := bytes.Replace(src, []byte("target: b.target.sim('llama3-70b-h100x4', step_base=step_base),"), []byte(launch), 1)
	if bytes.Equal(out, src) {
		b.Fatal("gate.jsonnet's target is no longer b.target.sim('llama3-70b-h100x4', step_base=step_base)")
	}
	return out, addr
}
