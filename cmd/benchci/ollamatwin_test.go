package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
)

// BenchmarkOllamaTwin runs the workflow a team runs on its own engine,
// on the Ollama .ci/run builds (llama.cpp on this machine's CPU, serving
// the tiny model): measure five points (1 and 4 conversations with
// prompts of 128 tokens, 1, 2 and 4 with 512; its chat template alone is
// 74), fit the simulator's four constants to them (sim fit), and predict
// three points the fit never saw: a load between (2 conversations,
// 128-token prompts), a longer prompt (2 conversations, 1024 tokens),
// and one conversation right after four (512 tokens, a sweep coming
// down, where the four left their contexts in the server's cache).
// Each prediction is a virtual-time run of the same suite on the fitted
// profile. It reports the prediction's error, in percent, on TTFT P50,
// TPOT P50 and output throughput at each held-out point:
//
//	go test -run XXX -bench OllamaTwin -benchtime 1x ./cmd/benchci
//
// With BENCHCI_TWIN_KEEP naming a directory, the measured results and
// the fitted profile are copied to a new directory in it, to fit them
// again without measuring again.
func BenchmarkOllamaTwin(b *testing.B) {
	o := newOllama(b)
	target := fmt.Sprintf(`b.target.launch([%q, 'serve'], url='http://%s', model='benchci-tiny', env=%s,
                          health='/api/version', start_timeout='60s', stop_grace='10s', warmup_requests=2)`, o.bin, o.addr, o.envJsonnet)
	// suite writes a suite of the Ollama (or the fitted twin) at the
	// levels and prompt length, and returns its path.
	suite := func(name, target string, input int, levels string) string {
		return writeSuite(b, o.dir, name, fmt.Sprintf(`
  target: %s,
  api: 'chat',
  workload: { input_tokens: b.dist.fixed(%d), output_tokens: b.dist.fixed(48), seed: 3 },
  sweep: b.sweep.concurrency([%s], warmup='2s', duration='12s'),`, target, input, levels))
	}
	// cli runs benchci and logs its output's first lines (a table's
	// head; the notes after it are the results files').
	cli := func(lines int, args ...string) {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), &out, &errOut, args); code != exitOK {
			b.Fatalf("benchci %v: exit %d\n%s\n%s", args, code, out.String(), errOut.String())
		}
		// Printed, not logged: a benchmark's log is cut short.
		head := strings.SplitN(out.String(), "\n", lines+1)
		fmt.Fprintf(os.Stderr, "benchci %s:\n%s\n", strings.Join(args, " "), strings.Join(head[:min(lines, len(head))], "\n"))
	}
	results := filepath.Join(o.dir, "results")
	for b.Loop() {
		var fitFrom []string
		for _, fit := range []struct {
			in     int
			levels string
		}{{128, "1, 4"}, {512, "1, 2, 4"}} {
			name := "fit" + strconv.Itoa(fit.in)
			cli(5, "run", "--progress=false", "--results", results, suite(name, target, fit.in, fit.levels))
			fitFrom = append(fitFrom, filepath.Join(results, name+".json"))
		}
		fitted := filepath.Join(results, "fitted.json")
		cli(60, append(append([]string{"sim", "fit"}, fitFrom...), "--profile", "tiny", "--max-num-seqs", "4", "--max-batched-tokens", "2048", "--max-prefill-chunk", "512", "--unified-kv",
			"--params", "step_base,decode_per_seq,prefill_per_token,attend_ns_per_pair", "--out", fitted)...)
		for _, h := range twinHeldOut {
			cli(4, "run", "--progress=false", "--results", results, suite(h.name, target, h.in, h.levels))
			cli(4, "run", "--virtual", "--progress=false", "--results", filepath.Join(o.dir, "twin"),
				suite(h.name, "b.target.sim('file:results/fitted.json')", h.in, h.levels))
			reportTwinError(b, h, filepath.Join(results, h.name+".json"), filepath.Join(o.dir, "twin", h.name+".json"))
		}
		// The held-out point measured again: how far the server moves
		// from itself between two runs on this machine, the floor under
		// any twin's error.
		cli(3, "run", "--progress=false", "--results", results, suite("again128", target, 128, "2"))
		reportRerun(b, filepath.Join(results, "heldout128.json"), filepath.Join(results, "again128.json"))
	}
	if keep := os.Getenv("BENCHCI_TWIN_KEEP"); keep != "" {
		keepTwinResults(b, keep, results)
	}
}

// keepTwinResults copies the results directory to a new directory of its
// own in keep, so that runs do not collide.
func keepTwinResults(b *testing.B, keep, results string) {
	if err := os.MkdirAll(keep, 0o755); err != nil {
		b.Fatal(err)
	}
	dir, err := os.MkdirTemp(keep, "twin-")
	if err == nil {
		err = os.CopyFS(dir, os.DirFS(results))
	}
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "kept the results and the fitted profile in %s\n", dir)
}

// twinPoint is a point BenchmarkOllamaTwin's fit never saw: a suite of
// prompts of in tokens at the concurrency levels, scored at its point'th
// level.
type twinPoint struct {
	name, levels string
	in, point    int
	what         string // for the log
}

var twinHeldOut = []twinPoint{
	{"heldout128", "2", 128, 0, "prompt 128, 2 conversations"},
	{"heldout1024", "2", 1024, 0, "prompt 1024, 2 conversations"},
	{"after4", "4, 1", 512, 1, "prompt 512, 1 conversation after 4"},
}

// heldOutFigures are the figures the twin is scored on, by name: TTFT
// P50, TPOT P50 and output throughput (the last a throughput).
var heldOutFigures = [3]string{"ttft", "tpot", "tput"}

// readHeldOut reads a results file and its point'th point's heldOutFigures.
func readHeldOut(b *testing.B, path string, point int) (*result.File, [3]float64) {
	f, err := result.Read(path)
	if err != nil {
		b.Fatal(err)
	}
	if point >= len(f.Points) {
		b.Fatalf("%s: %d points, want a point %d", path, len(f.Points), point+1)
	}
	p := f.Points[point]
	return f, [3]float64{p.Latency[metric.TTFT].P50, p.Latency[metric.TPOT].P50, p.Throughput.OutputTokens}
}

// reportRerun reports, in percent, how far a second measurement of the
// held-out point moved from the first.
func reportRerun(b *testing.B, firstPath, againPath string) {
	_, first := readHeldOut(b, firstPath, 0)
	_, again := readHeldOut(b, againPath, 0)
	for i, name := range heldOutFigures {
		fmt.Fprintf(os.Stderr, "prompt 128, 2 conversations, measured again: %s %.2f, first %.2f\n", name, again[i], first[i])
		b.ReportMetric(100*(again[i]/first[i]-1), "rerun-"+name+"128-%")
	}
}

// reportTwinError reports the twin's error, in percent, on TTFT P50, TPOT
// P50 and output throughput at the held-out point h measured in one
// results file and predicted in the other.
func reportTwinError(b *testing.B, h twinPoint, measuredPath, twinPath string) {
	_, measured := readHeldOut(b, measuredPath, h.point)
	twin, predicted := readHeldOut(b, twinPath, h.point)
	iv := twin.Target.Sim.Interval
	inside := 0
	for i, name := range heldOutFigures {
		got, want := predicted[i], measured[i]
		fmt.Fprintf(os.Stderr, "%s: %s measured %.2f, twin %.2f", h.what, name, want, got)
		if iv != nil {
			// The twin's interval, from the fit's held-out points: does
			// the measured figure fall inside it?
			r := iv.Latency
			if name == "tput" {
				r = iv.Throughput
			}
			low, high := got*r[0], got*r[1]
			fmt.Fprintf(os.Stderr, " (its %.0f%% interval %.2f–%.2f)", 100*iv.Level, low, high)
			if want >= low && want <= high {
				inside++
			}
		}
		fmt.Fprintln(os.Stderr)
		b.ReportMetric(100*(got/want-1), fmt.Sprintf("%s-%s-err-%%", name, h.name))
	}
	if iv != nil {
		b.ReportMetric(float64(inside), "inside-interval-of-3-"+h.name)
	}
}
