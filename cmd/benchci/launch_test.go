package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchci/benchci/internal/testnet"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/engine"
)

// TestMain lets the test binary stand in for the benchci command, so that
// suites can launch "benchci sim" as their server.
func TestMain(m *testing.M) {
	if os.Getenv("BENCHCI_TEST_CLI") != "" {
		loadMemoryLimit = DefaultLoadMemoryLimit // a process of its own, as main's
		os.Exit(run(context.Background(), os.Stdout, os.Stderr, os.Args[1:]))
	}
	// The commands the tests start as processes (the guides' steps,
	// shards, launched simulators) exit without the race detector's
	// second of sleep at exit, which was most of a guide step's time.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	// Tests run inside a workflow must not write its step summary or
	// outputs: the files the commands default to are the job's own.
	for _, v := range []string{"GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"} {
		os.Unsetenv(v)
	}
	os.Exit(m.Run())
}

// TestLaunchTarget runs a suite whose target is a server benchci launches
// (here benchci's own simulator, started as a separate process), stops the
// run part-way as Ctrl-C does, and checks that the results are written and
// the server is gone.
func TestLaunchTarget(t *testing.T) {
	addr := testnet.Addr(t)
	dir := t.TempDir()
	path := writeSuite(t, dir, "launched", fmt.Sprintf(`
  target: b.target.launch([%q, 'sim', '--addr', %q, '--profile', 'tiny'], url='http://%s',
                          env={ BENCHCI_TEST_CLI: '1' }, health='/health', start_timeout='30s', stop_grace='5s',
                          warmup_requests=3),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(20) },
  sweep: b.sweep.rates([10, 20], duration='30s', warmup='0s'),`, os.Args[0], addr, addr))
	// Stopped once the server has generated 300 tokens (some 50 in the
	// warm-up, preflight and calibration, then the first point's at 200 a
	// second), not at a time: on a loaded machine starting the server and
	// the warm-up can take seconds.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		untilGenerated(addr, 300)
		cancel()
	}()
	code, stdout, stderr := runCLI(t, ctx, "run", "--results", dir, "--progress=false", path)
	if code != 2 {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	f, err := result.Read(filepath.Join(dir, "launched.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !f.Incomplete || len(f.Points) != 1 || f.Points[0].Requests.Completed == 0 || f.Target.Kind != "launch" {
		t.Errorf("results: incomplete %v, %d points, target %+v", f.Incomplete, len(f.Points), f.Target)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("the launched server still listens after the run")
	}
	if log, err := os.ReadFile(filepath.Join(dir, "launched.server.log")); err != nil || !strings.Contains(string(log), "serving simulator profile tiny") {
		t.Errorf("server log %q, %v", log, err)
	}
}

// TestLaunchPerPoint starts a fresh server for every point.
func TestLaunchPerPoint(t *testing.T) {
	addr := testnet.Addr(t)
	dir := t.TempDir()
	path := writeSuite(t, dir, "relaunched", fmt.Sprintf(`
  target: b.target.launch([%q, 'sim', '--addr', %q, '--profile', 'tiny'], url='http://%s',
                          env={ BENCHCI_TEST_CLI: '1' }, health='/health', per='point'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([5, 10], duration='500ms', warmup='0s'),`, os.Args[0], addr, addr))
	code, stdout, stderr := runCLI(t, context.Background(), "run", "--results", dir, "--progress=false", path)
	skipIfStalled(t, code, stdout)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "relaunched.server.log"))
	f, err := result.Read(filepath.Join(dir, "relaunched.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Once per point, and once per rerun of a point a busy machine made
	// invalid: a rerun starts as the attempt it replaces did.
	want := len(f.Points)
	for _, p := range f.Points {
		if p.Validity != nil {
			want += len(p.Validity.Reruns)
		}
	}
	if n := strings.Count(string(log), "serving simulator profile tiny"); n != want || len(f.Points) != 2 {
		t.Errorf("the server started %d times for %d points, want %d:\n%s", n, len(f.Points), want, log)
	}
}

// A launched server that dies mid-run makes the run an error (exit 2, the
// result incomplete, the server's last lines kept), not a complete-looking
// result that passes.
func TestLaunchedServerDiesMidRun(t *testing.T) {
	addr := testnet.Addr(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "sim.pid")
	script := `"$0" sim --addr ` + addr + ` --profile tiny & echo $! > ` + pidFile + `; wait`
	path := writeSuite(t, dir, "died", fmt.Sprintf(`
  target: b.target.launch(['sh', '-c', %q, %q], url='http://%s',
                          env={ BENCHCI_TEST_CLI: '1' }, health='/health', start_timeout='30s', stop_grace='5s'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([10], duration='6s', warmup='0s'),`, script, os.Args[0], addr))
	// Kill the simulator, as a crash would, once the point is under way:
	// its own metrics count the tokens generated, and the preflight and
	// calibration make 5 before the point's requests (5 each) begin. The
	// shell that launched it then exits.
	go killOnceGenerating(addr, pidFile, 20)
	code, stdout, stderr := runCLI(t, context.Background(), "run", "--results", dir, "--progress=false", path)
	if code != 2 {
		t.Errorf("exit %d, want 2\n%s\n%s", code, stdout, stderr)
	}
	f, err := result.Read(filepath.Join(dir, "died.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !f.Incomplete || !strings.Contains(f.Error, "exited during the run") || f.ServerLog == "" {
		t.Errorf("result: incomplete %v, error %q", f.Incomplete, f.Error)
	}
	// The point ended when the server did: what it measured is kept, and
	// it did not go on sending its 60 planned requests to a closed port.
	if len(f.Points) != 1 || !f.Points[0].Incomplete || f.Points[0].Requests.Sent >= 60 {
		t.Errorf("points %+v", f.Points)
	}
}

// killOnceGenerating kills the simulator whose pid is in pidFile, as a
// crash would, once its own metrics count tokens generated tokens: the
// run is then under way, whatever the machine's speed.
func killOnceGenerating(addr, pidFile string, tokens float64) {
	onceGenerating(addr, pidFile, tokens, func(pid int) { syscall.Kill(pid, syscall.SIGKILL) })
}

// onceGenerating calls do with the simulator's pid (from pidFile) once
// its own metrics count tokens generated tokens.
func onceGenerating(addr, pidFile string, tokens float64, do func(pid int)) {
	if !untilGenerated(addr, tokens) {
		return
	}
	for range 100 { // the shell writes the pid as it starts the server
		pid, _ := os.ReadFile(pidFile)
		if n, err := strconv.Atoi(strings.TrimSpace(string(pid))); err == nil {
			do(n)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// untilGenerated waits until the simulator at addr counts tokens
// generated tokens in its own metrics; false after a minute.
func untilGenerated(addr string, tokens float64) bool {
	for range 1200 { // a hang guard, not a timing
		snap, err := engine.Scrape(context.Background(), "http://"+addr)
		if err == nil && snap["vllm:generation_tokens_total"] >= tokens {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// A launched server stopped mid-trial (as a shared runner deschedules a
// process) is watched like the client: the trial is discarded naming the
// server's stop, never judged as the server's behaviour nor blamed on
// the client, and measured again.
func TestLaunchedServerStoppedMidTrial(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the server's processes are watched through /proc")
	}
	addr := testnet.Addr(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "sim.pid")
	script := `"$0" sim --addr ` + addr + ` --profile tiny & echo $! > ` + pidFile + `; wait`
	path := writeSuite(t, dir, "stopped", fmt.Sprintf(`
  target: b.target.launch(['sh', '-c', %q, %q], url='http://%s',
                          env={ BENCHCI_TEST_CLI: '1' }, health='/health', start_timeout='30s', stop_grace='5s'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([10], duration='4s', warmup='0s'),`, script, os.Args[0], addr))
	go onceGenerating(addr, pidFile, 20, func(pid int) {
		syscall.Kill(pid, syscall.SIGSTOP)
		time.Sleep(time.Second)
		syscall.Kill(pid, syscall.SIGCONT)
	})
	code, stdout, stderr := runCLI(t, context.Background(), "run", "--results", dir, "--progress=false", "--reruns", "2", path)
	if code != 0 && code != exitInconclusive {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	f, err := result.Read(filepath.Join(dir, "stopped.json"))
	if err != nil {
		t.Fatal(err)
	}
	v := f.Points[0].Validity
	if v == nil || len(v.Reruns) == 0 || !strings.Contains(v.Reruns[0], "the server's process was stopped for") {
		t.Fatalf("validity %+v: want the first attempt discarded for the server's stop\n%s", v, stdout)
	}
	if strings.Contains(v.Reruns[0], "first tokens were read late") {
		t.Errorf("the server's stop is blamed on the client: %q", v.Reruns[0])
	}
	if !strings.Contains(stdout, "the server's process was stopped for") {
		t.Errorf("the report does not name the stop:\n%s", stdout)
	}
	if v.Server == nil || v.Server.Processes < 2 {
		t.Errorf("server watch %+v: want the shell and the simulator below it", v.Server)
	}
}
