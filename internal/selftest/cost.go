package selftest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/loadgen"
)

// External is a simulator serving from another process. With the server
// in its own process, the client's CPU time and memory can be measured
// alone, and the server's CPU time read beside them.
type External struct {
	URL string
	cmd *exec.Cmd
}

// ExternalSim starts a simulator in another process (argv, a `benchci sim
// --addr 127.0.0.1:0 ...` command line) and waits until it serves.
func ExternalSim(ctx context.Context, argv, env []string) (*External, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start simulator: %w", err)
	}
	e := &External{cmd: cmd}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		re := regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
		for sc.Scan() {
			if u := re.FindString(sc.Text()); u != "" {
				urls <- u
				io.Copy(io.Discard, out)
				return
			}
		}
		close(urls)
	}()
	select {
	case u, ok := <-urls:
		if !ok {
			e.Stop()
			return nil, fmt.Errorf("simulator %v exited without serving", argv)
		}
		e.URL = u
		return e, nil
	case <-time.After(30 * time.Second):
		e.Stop()
		return nil, fmt.Errorf("simulator %v did not start in 30s", argv)
	}
}

// Stop kills the simulator and waits for it.
func (e *External) Stop() {
	e.cmd.Process.Kill()
	e.cmd.Wait()
}

// CPU is the simulator's CPU time (user + system) so far, from
// /proc/PID/stat; false where there is no /proc.
func (e *External) CPU() (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", e.cmd.Process.Pid))
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces: fields are
	// counted after its closing parenthesis. utime and stime are fields
	// 14 and 15, in ticks of USER_HZ, which Linux fixes at 100 for /proc.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, true
}

// Cost is what the client spends on its streams.
type Cost struct {
	Streams int
	Tokens  int64
	// CPUPerToken is the client process's CPU time (user + system) per
	// streamed output token.
	CPUPerToken time.Duration
	// MemPerStream is the peak of live heap and stacks, above the idle
	// process, divided by the streams held open (sampled every 0.5 s after
	// a collection, which costs the client a little CPU).
	MemPerStream float64 // bytes
	Errors       int64
}

type counting struct {
	cl     *client.Client
	tokens atomic.Int64
	errs   atomic.Int64
}

func (c *counting) Do(ctx context.Context, body []byte, id string, res *client.Result) {
	c.cl.Do(ctx, body, id, res)
	if res.OK() {
		c.tokens.Add(int64(res.OutputTokens))
	} else if res.Err != client.ErrCanceled {
		c.errs.Add(1)
	}
}

// live is the memory the process holds: live heap after a collection,
// plus goroutine stacks. Collecting first keeps garbage out of the figure.
func live() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ClientCost holds streams open against the server at url (closed loop,
// 64-word prompts, 512-token outputs) for d and measures the client's CPU
// per token and memory per stream. The server should run in another
// process (ExternalSim) or the figures include it.
func ClientCost(ctx context.Context, url string, streams int, d time.Duration) (Cost, error) {
	cl, err := client.New(client.Options{BaseURL: url, API: "chat", Model: "m", IgnoreEOS: true, Timeout: 5 * time.Minute})
	if err != nil {
		return Cost{}, err
	}
	defer cl.CloseIdle()
	body, err := cl.Body("", prompt(64), 512)
	if err != nil {
		return Cost{}, err
	}
	idle := live()
	c := &counting{cl: cl}
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if m := live(); m > peak.Load() {
					peak.Store(m)
				}
			case <-done:
				return
			}
		}
	}()
	cpu0 := cpuTime()
	_, err = loadgen.Run(ctx, c, loadgen.Config{Mode: loadgen.ClosedLoop, Concurrency: streams, Duration: d}, func() (loadgen.Item, error) {
		return loadgen.Item{Body: body, WantInput: 64, WantOutput: 512}, nil
	})
	cpu := cpuTime() - cpu0
	close(done)
	wg.Wait()
	if err != nil {
		return Cost{}, err
	}
	out := Cost{Streams: streams, Tokens: c.tokens.Load(), Errors: c.errs.Load()}
	if out.Tokens > 0 {
		out.CPUPerToken = cpu / time.Duration(out.Tokens)
	}
	if p := peak.Load(); p > idle {
		out.MemPerStream = float64(p-idle) / float64(streams)
	}
	return out, nil
}
