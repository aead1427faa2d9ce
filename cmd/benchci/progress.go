package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/loadgen"
	"github.com/benchci/benchci/internal/runner"
)

// progress shows a live bar on a terminal, and a line every few seconds
// elsewhere (CI logs), where carriage returns would only add noise.
type progress struct {
	w     io.Writer
	suite string
	tty   bool
	stop  chan struct{}
	done  chan struct{}
	// prog and start are the running point's, for its last line.
	prog  *loadgen.Progress
	start time.Time
}

func newProgress(w io.Writer, suite string) *progress {
	tty := false
	under := w
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		under = u.Unwrap() // the redacting writer over the terminal
	}
	if f, ok := under.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &progress{w: w, suite: suite, tty: tty}
}

func (p *progress) PointStarted(pt runner.PointInfo, prog *loadgen.Progress) {
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	name := fmt.Sprintf("%s %s (%s)", p.suite, pt.Label, position(pt))
	status := func() string {
		sent := fmt.Sprint(prog.Sent.Load())
		if n := prog.Scheduled.Load(); n > 0 {
			sent += fmt.Sprintf("/%d", n) // open loop: the plan is known
		}
		line := fmt.Sprintf("%s: %s sent, %d done, %d failed, %d in flight",
			name, sent, prog.Done.Load(), prog.Failed.Load(), prog.InFlight.Load())
		if pt.Virtual {
			line += ", replaying " + replayRate(prog, time.Since(p.start))
		}
		return line
	}
	start := time.Now()
	p.prog, p.start = prog, start
	go func() {
		defer close(p.done)
		if !p.tty {
			t := time.NewTicker(10 * time.Second)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					fmt.Fprintf(p.w, "  %s [%s]\n", status(), time.Since(start).Round(time.Second))
				case <-p.stop:
					return
				}
			}
		}
		// The bar tracks the planned time in tenths of a second. It stops a
		// tick short of full until the point ends: a full bar finishes,
		// clears itself and draws nothing more, and the drain after the
		// planned time (requests still streaming) would freeze the counts.
		bar := progressbar.NewOptions64(max(int64(pt.Planned/(100*time.Millisecond)), 1),
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetWidth(24),
			progressbar.OptionSetElapsedTime(false),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionClearOnFinish(),
		)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				elapsed := time.Since(start)
				phase := fmt.Sprintf("%s of %s", elapsed.Round(100*time.Millisecond), pt.Planned)
				if elapsed > pt.Planned {
					phase = fmt.Sprintf("draining, %s past %s", (elapsed - pt.Planned).Round(100*time.Millisecond), pt.Planned)
				}
				bar.Describe(fmt.Sprintf("%s [%s]", status(), phase))
				bar.Set64(min(int64(elapsed/(100*time.Millisecond)), bar.GetMax64()-1))
			case <-p.stop:
				bar.Finish()
				return
			}
		}
	}()
}

func (p *progress) PointFinished(pt runner.PointInfo, r *result.Point) {
	close(p.stop)
	<-p.done
	if pt.Discarded && r.Validity != nil {
		fmt.Fprintf(p.w, "  %s %s (%s): did not measure the server (%s): measuring it again\n",
			p.suite, pt.Label, position(pt), strings.Join(r.Validity.Invalid, "; "))
		return
	}
	ttft := r.Latency[metric.TTFT]
	replayed := ""
	if pt.Virtual {
		took := time.Since(p.start)
		replayed = fmt.Sprintf(", replayed in %s (%s)", took.Round(time.Millisecond), replayRate(p.prog, took))
	}
	fmt.Fprintf(p.w, "  %s %s (%s): %d requests, %d failed, %.2f req/s, %.0f tok/s, TTFT p50 %.1fms p99 %.1fms%s\n",
		p.suite, pt.Label, position(pt), r.Requests.Sent, r.Requests.Failed,
		r.Throughput.Requests, r.Throughput.OutputTokens, ttft.P50, ttft.P99, replayed)
}

// replayRate is how fast a virtual point's requests are replayed: those
// ended per second of this machine's time.
func replayRate(prog *loadgen.Progress, took time.Duration) string {
	if took <= 0 {
		return "- requests/s"
	}
	return fmt.Sprintf("%.0f requests/s", float64(prog.Done.Load())/took.Seconds())
}

// position is "3/8", or "probe 3" in a search whose length is not known.
func position(pt runner.PointInfo) string {
	pos := fmt.Sprintf("%d/%d", pt.Index+1, pt.Total)
	if pt.Total == 0 {
		pos = fmt.Sprintf("probe %d", pt.Index+1)
	}
	if pt.Rerun > 0 {
		pos += fmt.Sprintf(", rerun %d", pt.Rerun)
	}
	return pos
}
