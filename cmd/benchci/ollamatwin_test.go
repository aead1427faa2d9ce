package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
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
// profile.
//
// Every suite is measured twinRepeats times, each on a server launched
// anew, the repeats interleaved: launches of this server differ from
// each other (two 36 s runs of a point differed by 41% in throughput),
// so one measurement cannot tell a twin's error from the server's. The
// fit sees every repeat; the twin is scored against the median of the
// held-out point's. It reports, in percent, the twin's error on TTFT
// P50, TPOT P50 and output throughput at each held-out point and, with
// more than one repeat, the server's own spread there (largest over
// smallest of the repeats, less one):
//
//	go test -run XXX -bench OllamaTwin -benchtime 1x -timeout 30m ./cmd/benchci
//
// BENCHCI_TWIN_REPEATS sets the repeats (3; 1 is the quick look). With
// BENCHCI_TWIN_KEEP naming a directory, the measured results and the
// fitted profile are copied to a new directory in it, to fit them again
// without measuring again.
func BenchmarkOllamaTwin(b *testing.B) {
	o := newOllama(b)
	t := &twinBench{b: b, dir: o.dir, results: filepath.Join(o.dir, "results"), repeats: twinRepeats(b),
		target: fmt.Sprintf(`b.target.launch([%q, 'serve'], url='http://%s', model='benchci-tiny', env=%s,
                          health='/api/version', start_timeout='60s', stop_grace='10s', warmup_requests=2)`, o.bin, o.addr, o.envJsonnet)}
	for b.Loop() {
		var fitFrom []string
		for _, paths := range t.measure([]twinSuite{{"fit128", "1, 4", 128}, {"fit512", "1, 2, 4", 512}}) {
			fitFrom = append(fitFrom, paths...)
		}
		t.cli(60, append(append([]string{"sim", "fit"}, fitFrom...), "--profile", "tiny", "--max-num-seqs", "4", "--max-batched-tokens", "2048", "--max-prefill-chunk", "512", "--unified-kv",
			"--params", "step_base,decode_per_seq,prefill_per_token,attend_ns_per_pair", "--out", filepath.Join(t.results, "fitted.json"))...)
		heldOut := make([]twinSuite, len(twinHeldOut))
		for i, h := range twinHeldOut {
			heldOut[i] = h.twinSuite
		}
		for i, measured := range t.measure(heldOut) {
			h := twinHeldOut[i]
			t.cli(4, "run", "--virtual", "--progress=false", "--results", filepath.Join(t.dir, "twin"),
				t.suite(h.name, "b.target.sim('file:results/fitted.json')", h.in, h.levels))
			reportTwinError(b, h, measured, filepath.Join(t.dir, "twin", h.name+".json"))
		}
	}
	if keep := os.Getenv("BENCHCI_TWIN_KEEP"); keep != "" {
		keepTwinResults(b, keep, t.results)
	}
}

// twinBench is BenchmarkOllamaTwin's state: where it writes, the Ollama
// launch its suites target, and how many times it measures each.
type twinBench struct {
	b                    *testing.B
	dir, results, target string
	repeats              int
}

// suite writes a suite of the Ollama (or the fitted twin) at the levels
// and prompt length, and returns its path.
func (t *twinBench) suite(name, target string, input int, levels string) string {
	return writeSuite(t.b, t.dir, name, fmt.Sprintf(`
  target: %s,
  api: 'chat',
  workload: { input_tokens: b.dist.fixed(%d), output_tokens: b.dist.fixed(48), seed: 3 },
  sweep: b.sweep.concurrency([%s], warmup='2s', duration='12s'),`, target, input, levels))
}

// cli runs benchci and prints its output's first lines (a table's head;
// the notes after it are the results files'). Printed, not logged: a
// benchmark's log is cut short.
func (t *twinBench) cli(lines int, args ...string) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), &out, &errOut, args); code != exitOK {
		t.b.Fatalf("benchci %v: exit %d\n%s\n%s", args, code, out.String(), errOut.String())
	}
	head := strings.SplitN(out.String(), "\n", lines+1)
	fmt.Fprintf(os.Stderr, "benchci %s:\n%s\n", strings.Join(args, " "), strings.Join(head[:min(lines, len(head))], "\n"))
}

// measure runs each suite on the Ollama t.repeats times, the repeats
// interleaved (a slow minute of the machine lands on one repeat of each,
// not on every repeat of one), and returns each suite's results files.
func (t *twinBench) measure(suites []twinSuite) [][]string {
	paths := make([][]string, len(suites))
	for r := range t.repeats {
		for i, s := range suites {
			name := fmt.Sprintf("%s-%d", s.name, r+1)
			t.cli(5, "run", "--progress=false", "--results", t.results, t.suite(name, t.target, s.in, s.levels))
			paths[i] = append(paths[i], filepath.Join(t.results, name+".json"))
		}
	}
	return paths
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

// twinSuite is a suite BenchmarkOllamaTwin measures: prompts of in
// tokens at the concurrency levels.
type twinSuite struct {
	name, levels string
	in           int
}

// twinPoint is a point BenchmarkOllamaTwin's fit never saw: its suite,
// scored at its point'th level.
type twinPoint struct {
	twinSuite
	point int
	what  string // for the log
}

var twinHeldOut = []twinPoint{
	{twinSuite{"heldout128", "2", 128}, 0, "prompt 128, 2 conversations"},
	{twinSuite{"heldout1024", "2", 1024}, 0, "prompt 1024, 2 conversations"},
	{twinSuite{"after4", "4, 1", 512}, 1, "prompt 512, 1 conversation after 4"},
}

// twinRepeats is how many times BenchmarkOllamaTwin measures each suite:
// BENCHCI_TWIN_REPEATS, 3 by default.
func twinRepeats(b *testing.B) int {
	v := os.Getenv("BENCHCI_TWIN_REPEATS")
	if v == "" {
		return 3
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 20 {
		b.Fatalf("BENCHCI_TWIN_REPEATS=%q: want a whole number from 1 to 20", v)
	}
	return n
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
	figs := [3]float64{p.Latency[metric.TTFT].P50, p.Latency[metric.TPOT].P50, p.Throughput.OutputTokens}
	for i, x := range figs {
		// A missing or zero figure would score as an error of ±Inf or
		// -100%, not as a failed run.
		if !(x > 0) || math.IsInf(x, 0) {
			b.Fatalf("%s: point %d: %s is %v, want a positive figure", path, point+1, heldOutFigures[i], x)
		}
	}
	return f, figs
}

// reportTwinError reports the twin's error, in percent, on TTFT P50, TPOT
// P50 and output throughput at the held-out point h, against the median
// of its measurements (each a results file), and the measurements' own
// spread: the largest over the smallest, less one.
func reportTwinError(b *testing.B, h twinPoint, measuredPaths []string, twinPath string) {
	var runs [][3]float64
	for _, path := range measuredPaths {
		_, m := readHeldOut(b, path, h.point)
		runs = append(runs, m)
	}
	twin, predicted := readHeldOut(b, twinPath, h.point)
	iv := twin.Target.Sim.Interval
	inside := 0
	for i, name := range heldOutFigures {
		each := make([]float64, len(runs))
		for r, m := range runs {
			each[r] = m[i]
		}
		slices.Sort(each)
		// The median; of an even count, the mean of the middle two.
		want := (each[(len(each)-1)/2] + each[len(each)/2]) / 2
		got := predicted[i]
		fmt.Fprintf(os.Stderr, "%s: %s measured %.2f (median of %s), twin %.2f", h.what, name, want, formatAll(each), got)
		if iv != nil {
			// The twin's interval, from the fit's held-out points: does
			// the measured median fall inside it?
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
		if len(each) > 1 {
			b.ReportMetric(100*(each[len(each)-1]/each[0]-1), fmt.Sprintf("%s-%s-server-spread-%%", name, h.name))
		}
	}
	if iv != nil {
		b.ReportMetric(float64(inside), "inside-interval-of-3-"+h.name)
	}
}

// formatAll writes figures as "1.00, 2.00 and 3.00".
func formatAll(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'f', 2, 64)
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
