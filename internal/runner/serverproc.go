package runner

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/loadgen"
	"github.com/benchci/benchci/internal/procwatch"
)

// A server's threads that wait for a CPU are not judged by their share
// of waiting: on a busy runner a launched server waits most of the time
// it wants a CPU (80% measured beside other work on 2 cores) and its
// figures still hold (unchanged runs pass). What moves a latency is a
// stretch in which it got no CPU at all, judged as the client's canary
// judges a stall: over loadgen.MinStallLimit and loadgen.MaxStallShare
// of the point.

// watchServer starts watching the server's own processes over a point,
// where they run on this machine: launched by benchci, or a local url
// target's listener. nil where they do not.
func (ex *executor) watchServer(ctx context.Context) *procwatch.Watcher {
	if proc := ex.sess.tg.Process; proc != nil {
		return procwatch.Start(ctx, proc.PIDs)
	}
	if pid := ex.sess.listener; pid > 0 {
		return procwatch.Start(ctx, func() []int { return append([]int{pid}, procwatch.Tree(pid, "")...) })
	}
	return nil
}

// findListener finds the process behind a url target that listens on
// this machine, so that its stops are judged as a launched server's
// are. note says, once for the run, why a server's processes cannot be
// watched ("" when they are, or when the server is this process: the
// client's canary watches it).
func findListener(rawURL string) (pid int, note string) {
	const unwatched = "the server's processes were not watched (%s): a pause of theirs would read as the server's own behaviour"
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0, fmt.Sprintf(unwatched, "its URL does not parse")
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return 0, fmt.Sprintf(unwatched, "it runs on another machine")
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		port = 80
		if u.Scheme == "https" {
			port = 443
		}
	}
	pid, err = procwatch.Listener(port)
	switch {
	case err != nil:
		return 0, fmt.Sprintf(unwatched, err)
	case pid == os.Getpid():
		return 0, ""
	}
	return pid, ""
}

// judgeServer records what w saw in v and adds the evidence that the
// server's processes did not run as a server does. A stopped server is
// named as the cause: its first tokens then arrive together with the
// next chunk by its own doing, so that sign is not blamed on the client.
func judgeServer(w *procwatch.Watcher, v *result.Validity) {
	if w == nil {
		return
	}
	r := w.Stop()
	if r.Processes == 0 {
		return
	}
	sp := &result.ServerProcess{PID: r.PID, Processes: r.Processes, StoppedMs: ms(r.Stopped), Stops: r.Stops,
		StarvedMs: ms(r.Starved), Starves: r.Starves}
	if r.CPU >= 0 {
		// A thread that exits between two samples takes its time with it,
		// so a sum can come out below zero: none is recorded as zero.
		sp.CPUMs, sp.WaitMs = max(0, ms(r.CPU)), max(0, ms(r.Wait))
	}
	v.Server = sp
	var why []string
	limit := max(loadgen.MinStallLimit, time.Duration(loadgen.MaxStallShare*float64(r.Span)))
	if r.Stopped > limit {
		which := fmt.Sprintf("PID %d", r.PID)
		if r.StoppedPID != 0 && r.StoppedPID != r.PID {
			which = fmt.Sprintf("PID %d, in the server's process tree from PID %d", r.StoppedPID, r.PID)
		}
		why = append(why, fmt.Sprintf("the server's process was stopped for %s in %d stop(s) (%s): a paused server, not the client, shaped this trial",
			fmtDur(r.Stopped), r.Stops, which))
		kept := v.Invalid[:0]
		for _, s := range v.Invalid {
			if !strings.Contains(s, "first tokens were read late") {
				kept = append(kept, s)
			}
		}
		v.Invalid = kept
	}
	if r.Starved > limit {
		why = append(why, fmt.Sprintf("the server's processes got no CPU for %s in %d stretch(es) (longest %s; PID %d) while they waited for one: this machine's other work held the server",
			fmtDur(r.Starved), r.Starves, fmtDur(r.Hungriest), r.PID))
	}
	v.Invalid = append(why, v.Invalid...)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fmtDur prints a duration as a person reads it: "2.01 s", "340 ms".
func fmtDur(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%.0f ms", ms(d))
}
