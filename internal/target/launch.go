package target

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/httpsafe"
	"github.com/benchci/benchci/internal/procwatch"
	"github.com/benchci/benchci/internal/redact"
)

// Process is a launched server.
type Process struct {
	cmd     *exec.Cmd
	log     *tailWriter
	logFile *os.File
	grace   time.Duration
	exited  chan struct{}
	waitErr error
	stop    sync.Once
	marker  string // KEY=VALUE in the environment of the server's processes
	logOut  *redact.Writer
}

// launches numbers the servers this process launched, for their markers.
var launches atomic.Int64

// tailWriter keeps the last lines of the server's output for error
// messages and reports, while the whole output goes to the log file.
type tailWriter struct {
	mu   sync.Mutex
	w    io.Writer
	tail []byte
}

const tailBytes = 8 << 10

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tail = append(t.tail, p...)
	if len(t.tail) > 2*tailBytes {
		t.tail = append(t.tail[:0], t.tail[len(t.tail)-tailBytes:]...)
	}
	if t.w != nil {
		return t.w.Write(p)
	}
	return len(p), nil
}

// Tail returns the last n lines the server printed.
func (t *tailWriter) Tail(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimRight(string(t.tail), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return redact.String(strings.Join(lines, "\n"))
}

// Launch starts the server, waits until baseURL+health answers 2xx, and
// sends the warm-up requests. The server's output goes to logPath (if not
// empty). On any failure the process is stopped and the error carries the
// last lines it printed.
func Launch(ctx context.Context, l suite.Launch, baseURL, logPath string) (*Process, error) {
	p := &Process{log: &tailWriter{}, grace: l.StopGrace.D(), exited: make(chan struct{})}
	if logPath != "" {
		// Appended to: a relaunch per point adds to the same log.
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, fmt.Errorf("launch: server log: %w", err)
		}
		p.logFile = f
		p.logOut = redact.NewLineWriter(f)
		p.log.w = p.logOut
	}
	cmd := exec.Command(l.Command[0], l.Command[1:]...)
	cmd.Dir = l.Dir
	cmd.Env = os.Environ()
	// Every process of the server inherits this marker, so Stop finds them
	// all, even those that left its process group or were orphaned.
	p.marker = fmt.Sprintf("BENCHCI_LAUNCH=%d-%d", os.Getpid(), launches.Add(1))
	cmd.Env = append(cmd.Env, p.marker)
	// A server may print its environment: secrets given to it are masked
	// in its log and everywhere else.
	redact.AddEnv(l.Env)
	for k, v := range l.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	// A child that keeps the output pipe open (a daemonized worker) must
	// not hold Wait, and with it the whole run, once the server exited.
	cmd.WaitDelay = 2 * time.Second
	// Its own process group, so stopping it stops whatever it started
	// (engines fork workers); see adopt for what escapes the group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	adopt(cmd.SysProcAttr)
	// A server already answering at the address (an orphan of an earlier
	// killed run) would pass the health check and be benchmarked instead.
	if err := portFree(baseURL); err != nil {
		p.closeLog()
		return nil, fmt.Errorf("launch %s: %w", l.Command[0], err)
	}
	if err := cmd.Start(); err != nil {
		p.closeLog()
		return nil, fmt.Errorf("launch %s: %w", l.Command[0], err)
	}
	p.cmd = cmd

	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	err := p.ready(ctx, baseURL+l.Health, l.StartTimeout.D())
	if err == nil && p.Exited() {
		// Health answered, but not from our process, which is gone.
		err = fmt.Errorf("the health check passed but the launched process had exited (%v): something else answers at %s", p.waitErr, baseURL)
	}
	if err != nil {
		p.Stop()
		return nil, fmt.Errorf("launch %s: %w\nlast lines of its output:\n%s", strings.Join(l.Command, " "), err, p.log.Tail(20))
	}
	return p, nil
}

// portFree checks that nothing answers at baseURL's address yet.
func portFree(baseURL string) error {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return nil // validated with the suite; the launch reports the rest
	}
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	c, err := net.DialTimeout("tcp", host, time.Second)
	if err != nil {
		return nil
	}
	c.Close()
	return fmt.Errorf("%s is already in use by another process (a server left over from an earlier run?); stop it, or launch on another port", host)
}

// ready polls the health URL until it answers 2xx, the process exits, the
// timeout passes or ctx ends.
func (p *Process) ready(ctx context.Context, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := httpsafe.Client(5 * time.Second)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-p.exited:
			return fmt.Errorf("the server exited before it was ready (%v)", p.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("stopped while waiting for the server: %w", context.Cause(ctx))
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v: %s answered %s", timeout, url, last)
		}
	}
}

// Stop ends the server: SIGTERM to its process group, SIGKILL after the
// grace period. It is safe to call more than once.
func (p *Process) Stop() {
	p.stop.Do(func() {
		defer p.closeLog()
		if p.cmd == nil || p.cmd.Process == nil {
			return
		}
		pid := p.cmd.Process.Pid
		// The tree is listed before the server goes: its children are
		// reparented when it exits.
		procs := procwatch.Tree(pid, p.marker)
		syscall.Kill(-pid, syscall.SIGTERM)
		for _, d := range procs {
			syscall.Kill(d, syscall.SIGTERM)
		}
		select {
		case <-p.exited:
		case <-time.After(p.grace):
			syscall.Kill(-pid, syscall.SIGKILL)
			<-p.exited
		}
		// Whatever is left of the tree, its own sessions and daemons
		// included, is killed.
		for _, d := range append(procs, procwatch.Tree(pid, p.marker)...) {
			syscall.Kill(d, syscall.SIGKILL)
		}
	})
}

// Exited reports whether the server has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// Done is closed when the server exits.
func (p *Process) Done() <-chan struct{} { return p.exited }

// Tail returns the last n lines of the server's output.
func (p *Process) Tail(n int) string { return p.log.Tail(n) }

// PIDs lists the server's processes: the one launched and those below
// it (Linux; elsewhere the one launched).
func (p *Process) PIDs() []int {
	pid := p.cmd.Process.Pid
	return append([]int{pid}, procwatch.Tree(pid, p.marker)...)
}

func (p *Process) closeLog() {
	if p.logOut != nil {
		p.logOut.Flush()
	}
	if p.logFile != nil {
		p.logFile.Close()
	}
}
