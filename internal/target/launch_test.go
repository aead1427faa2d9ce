package target

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchci/benchci/internal/testnet"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/sim"
)

// TestMain doubles as a server to launch: with BENCHCI_TARGET_TEST_SIM=addr
// the test binary serves the simulator there (ignoring SIGTERM when
// BENCHCI_TARGET_IGNORE_TERM is set) until killed.
func TestMain(m *testing.M) {
	if addr := os.Getenv("BENCHCI_TARGET_TEST_SIM"); addr != "" {
		if os.Getenv("BENCHCI_TARGET_IGNORE_TERM") != "" {
			signal.Ignore(syscall.SIGTERM)
		}
		p, _ := sim.Lookup("tiny")
		if _, err := sim.New(p).Listen(context.Background(), addr); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("simulator up\n")
		select {}
	}
	os.Exit(m.Run())
}

func selfServer(addr string, env map[string]string) suite.Launch {
	e := map[string]string{"BENCHCI_TARGET_TEST_SIM": addr}
	for k, v := range env {
		e[k] = v
	}
	return suite.Launch{Command: []string{os.Args[0], "-test.run=^$"}, Env: e, Health: "/health",
		StartTimeout: suite.Duration(20 * time.Second), StopGrace: suite.Duration(5 * time.Second)}
}

func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		c.Close()
	}
	return err == nil
}

func TestLaunchServesAndStops(t *testing.T) {
	t.Parallel()
	addr := testnet.Addr(t)
	logPath := t.TempDir() + "/server.log"
	tg, err := Open(context.Background(), suite.Target{Kind: "launch", URL: "http://" + addr, Launch: ptr(selfServer(addr, nil))}, Options{ServerLog: logPath})
	if err != nil {
		t.Fatal(err)
	}
	if tg.Info.Model != "benchci/tiny" || tg.Process == nil || !listening(addr) {
		t.Fatalf("target %+v", tg.Info)
	}
	tg.Close()
	tg.Close() // twice is fine
	if !tg.Process.Exited() || listening(addr) {
		t.Error("the server still runs after Close")
	}
	if log, _ := os.ReadFile(logPath); !strings.Contains(string(log), "simulator up") {
		t.Errorf("server log %q", log)
	}
}

func ptr[T any](v T) *T { return &v }

func TestLaunchFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		command []string
		timeout time.Duration
		want    []string
	}{
		{"exits early", []string{"sh", "-c", "echo boom >&2; exit 3"}, 20 * time.Second, []string{"exited before it was ready", "exit status 3", "boom"}},
		{"never ready", []string{"sh", "-c", "echo loading; sleep 30"}, time.Second, []string{"not ready after 1s", "loading"}},
		{"no such binary", []string{"/nonexistent/vllm"}, time.Second, []string{"no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr := testnet.Addr(t)
			l := suite.Launch{Command: tt.command, Health: "/health", StartTimeout: suite.Duration(tt.timeout), StopGrace: suite.Duration(time.Second)}
			start := time.Now()
			_, err := Launch(context.Background(), l, "http://"+addr, "")
			if err == nil {
				t.Fatal("launch succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if took := time.Since(start); took > tt.timeout+5*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
}

// TestStopEscalatesToKill: a server that ignores SIGTERM is killed after
// the grace period.
func TestStopEscalatesToKill(t *testing.T) {
	t.Parallel()
	addr := testnet.Addr(t)
	l := selfServer(addr, map[string]string{"BENCHCI_TARGET_IGNORE_TERM": "1"})
	l.StopGrace = suite.Duration(500 * time.Millisecond)
	p, err := Launch(context.Background(), l, "http://"+addr, "")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p.Stop()
	took := time.Since(start)
	if !p.Exited() || listening(addr) || took < 500*time.Millisecond {
		t.Errorf("stopped after %v; exited %v", took, p.Exited())
	}
}

// TestLaunchCanceled: Ctrl-C while the server loads stops it.
func TestLaunchCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	l := suite.Launch{Command: []string{"sh", "-c", "sleep 30"}, Health: "/health", StartTimeout: suite.Duration(time.Minute), StopGrace: suite.Duration(time.Second)}
	start := time.Now()
	_, err := Launch(ctx, l, "http://"+testnet.Addr(t), "")
	if err == nil || !strings.Contains(err.Error(), "stopped while waiting") || time.Since(start) > 5*time.Second {
		t.Errorf("error %v after %v", err, time.Since(start))
	}
}

// alive reports whether pid still runs (a zombie counts as gone).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	for range 100 { // the script writes it as it starts; a hang guard, not a timing
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil {
				return pid
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// A server whose children start sessions of their own, or daemonize, and
// keep its output pipe open, is stopped whole, and stopping it returns.
func TestStopEndsTheWholeTree(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the process tree is read from /proc")
	}
	addr := testnet.Addr(t)
	dir := t.TempDir()
	l := selfServer(addr, nil)
	script := `setsid sleep 300 & echo $! > ` + dir + `/session.pid
(sleep 300 & echo $! > ` + dir + `/daemon.pid)
exec "$0" -test.run='^$'`
	l.Command = []string{"sh", "-c", script, os.Args[0]}
	p, err := Launch(context.Background(), l, "http://"+addr, "")
	if err != nil {
		t.Fatal(err)
	}
	session, daemon := readPid(t, dir+"/session.pid"), readPid(t, dir+"/daemon.pid")
	if !alive(session) || !alive(daemon) {
		t.Fatal("the children did not start")
	}
	done := make(chan struct{})
	go func() { p.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second): // a hang guard: Stop waits at most grace + 2 s
		t.Fatal("Stop did not return")
	}
	// SIGKILL is delivered, not awaited: a loaded machine may run the
	// killed child a moment longer. A hang guard, not a timing: one Stop
	// missed stays alive for its 300 s.
	for end := time.Now().Add(10 * time.Second); (alive(session) || alive(daemon)) && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(session) || alive(daemon) {
		t.Errorf("left running: session child %v, daemonized child %v", alive(session), alive(daemon))
	}
}

// A server that exits at once while its child keeps the output open is
// reported as exited, not waited for until start_timeout.
func TestLaunchNoticesExitDespiteOpenPipe(t *testing.T) {
	t.Parallel()
	addr := testnet.Addr(t)
	l := suite.Launch{Command: []string{"sh", "-c", "sleep 300 & echo bye; exit 4"}, Health: "/health",
		StartTimeout: suite.Duration(time.Minute), StopGrace: suite.Duration(time.Second)}
	start := time.Now()
	_, err := Launch(context.Background(), l, "http://"+addr, "")
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") {
		t.Fatalf("launch: %v", err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("took %v to notice the exit, with a start timeout of 1m", took)
	}
}

// An address already answering (an orphan of an earlier run) is refused
// before launching, not benchmarked in the new server's place.
func TestLaunchRefusesBusyAddress(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, err = Launch(context.Background(), selfServer(ln.Addr().String(), nil), "http://"+ln.Addr().String(), "")
	if err == nil || !strings.Contains(err.Error(), "already in use") {
		t.Errorf("launch on a busy address: %v", err)
	}
}
