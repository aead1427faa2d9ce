package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/testnet"
	"github.com/benchci/benchci/internal/variants"
)

// TestVariantsRankSlowerBelow runs two simulated variants, one with every
// step 30% slower, through capacity searches, interleaved, in virtual
// time: what it tests is the wiring (ranking, charts, per-variant results
// and baselines), and a replay's capacities are exact, so the ratio is
// asserted too (two wall-clock searches on a shared machine took a minute
// and could only be shown). The tiny
// profile's capacity is known in closed form (see
// TestCapacityFindsKnownCapacity): 4 / (20 steps x 4.04 ms) = 49.5 req/s,
// and 30% slower steps make it 1/1.3 of that. The slower variant must
// rank below, beyond noise, with a capacity ratio within 10% of 1/1.3;
// the comparison, charts and per-variant results must be written, and
// baseline update must store every variant.
func TestVariantsRankSlowerBelow(t *testing.T) {
	dir := t.TempDir()
	path := writeSuite(t, dir, "pair", `
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(20), arrival: b.arrival.constant() },
  sweep: b.sweep.capacity(min=10, max=100, precision=0.05, duration='2s', warmup='500ms'),
  slos: [b.slo.p90('ttft', '<', '30ms')],
  cost: b.cost.gpu(usd_per_hour=1),
  variants: {
    fast: {},
    slow: { sim: { step_base: '2.6ms', decode_per_seq: '650us', prefill_per_token: '13us' } },
  },
  order: 'interleaved',`)
	results := filepath.Join(dir, "results")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "--virtual", "--results", results, "--progress=false", path)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	fast, err := result.Read(filepath.Join(results, "pair", "fast.json"))
	if err != nil {
		t.Fatal(err)
	}
	slow, err := result.Read(filepath.Join(results, "pair", "slow.json"))
	if err != nil {
		t.Fatal(err)
	}
	const truth = 1 / 1.3
	ratio := slow.Capacity.Rate / fast.Capacity.Rate
	t.Logf("capacity fast %.1f, slow %.1f req/s: ratio %.3f, true %.3f", fast.Capacity.Rate, slow.Capacity.Rate, ratio, truth)
	if math.Abs(ratio/truth-1) > 0.1 || !fast.Virtual {
		t.Errorf("capacity fast %.1f, slow %.1f req/s: ratio %.3f, beyond 10%% of %.3f (virtual %v)", fast.Capacity.Rate, slow.Capacity.Rate, ratio, truth, fast.Virtual)
	}
	if fast.Suite.Order != "interleaved" || slow.Suite.Variant != "slow" || fast.Suite.WorkloadHash != slow.Suite.WorkloadHash {
		t.Errorf("suites %+v / %+v", fast.Suite, slow.Suite)
	}
	data, err := os.ReadFile(filepath.Join(results, "pair.variants.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r variants.Report
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	v := r.Verdicts[0]
	if v.Question != "capacity" || v.Best != "fast" || !v.Standings[1].Real {
		t.Errorf("capacity verdict %+v", v)
	}
	if !strings.Contains(stdout, "capacity: fast has the highest capacity") {
		t.Errorf("the answer does not lead the comparison:\n%s", stdout)
	}
	md, _ := os.ReadFile(filepath.Join(results, "pair.variants.md"))
	for _, want := range []string{"xychart-beta", "Legend: 🟦 fast · 🟧 slow", "Pareto frontier"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	for _, name := range []string{"throughput.svg", "ttft-p99.svg", "tpot-p99.svg"} {
		svg, err := os.ReadFile(filepath.Join(results, "pair", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := xml.Unmarshal(svg, new(struct{})); err != nil || !strings.Contains(string(svg), "fast") || !strings.Contains(string(svg), "slow") {
			t.Errorf("%s: %v, or no legend naming both variants", name, err)
		}
	}

	// A replay is no measurement: it does not become a baseline
	// (TestVariantGate makes measured variants baselines).
	baselines := filepath.Join(dir, "baselines")
	code, stdout, stderr = runCLI(t, context.Background(), "baseline", "update", "--baselines", baselines, "--commit", "c0ffee", filepath.Join(results, "pair.variants.json"))
	if code != 2 || !strings.Contains(stderr, "not a measurement") {
		t.Errorf("baseline update of a replay: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// compare ranks results files given on the command line the same way.
	code, stdout, stderr = runCLI(t, context.Background(), "compare", "--variants", "--format", "json",
		filepath.Join(results, "pair", "slow.json"), filepath.Join(results, "pair", "fast.json"))
	var again variants.Report
	if code != 0 || json.Unmarshal([]byte(stdout), &again) != nil || again.Verdicts[0].Best != "fast" {
		t.Errorf("compare --variants: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// variantGateSuite has two variants; the slow one's step time is a
// top-level argument, so a "pull request" can slow it.
const variantGateSuite = `local b = import 'benchci.libsonnet';
function(step_base='2ms') b.suite {
  name: 'vgate',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(10), arrival: b.arrival.constant() },
  sweep: b.sweep.rates([20], duration='2s', warmup='300ms'),
  slos: [b.slo.rate('error_rate', '<=', 0)],
  // tiny's TTFT is about 2 ms, so 10% alone is 0.2 ms, which a loaded
  // machine's request path can move between two runs of steady; the
  // change below adds 4 ms.
  tolerance: { default: '10%|2ms' },
  variants: { steady: {}, changed: { sim: { step_base: step_base } } },
}
`

// TestVariantGate: each variant is gated against its own baseline, and
// the headline names the variant that regressed.
func TestVariantGate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "vgate.jsonnet")
	if err := os.WriteFile(path, []byte(variantGateSuite), 0o644); err != nil {
		t.Fatal(err)
	}
	base, baselines := filepath.Join(dir, "base"), filepath.Join(dir, "baselines")
	if code, stdout, stderr := runCLI(t, context.Background(), "run", "--progress=false", "--results", base, path); code != 0 {
		skipIfStalled(t, code, stdout)
		t.Fatalf("baseline run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Every variant becomes its own baseline, from the comparison.
	if code, stdout, stderr := runCLI(t, context.Background(), "baseline", "update", "--baselines", baselines,
		filepath.Join(base, "vgate.variants.json")); code != 0 {
		t.Fatalf("baseline update: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, name := range []string{"steady", "changed"} {
		b, err := baseline.Read(filepath.Join(baselines, "vgate", name+".json"))
		if err != nil || b.Suite != "vgate/"+name {
			t.Errorf("baseline of %s: %v", name, err)
		}
	}
	report := filepath.Join(dir, "report.md")
	code, stdout, stderr := runCLI(t, context.Background(), "ci", "--progress=false", "--comment=false", "--summary", "",
		"--results", filepath.Join(dir, "c"), "--baselines", baselines, "--report", report, "--tla-str", "step_base=6ms", path)
	skipIfStalled(t, code, stdout)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (a regression)\n%s\n%s", code, stdout, stderr)
	}
	md, _ := os.ReadFile(report)
	head, _, _ := strings.Cut(string(md), "\n\n")
	if !strings.Contains(stderr, "vgate/changed") || !strings.Contains(string(md), "vgate/changed") || strings.Contains(head, "vgate/steady") {
		t.Errorf("the regressed variant is not named in the headline:\nstderr: %s\nreport head: %s", stderr, head)
	}
	if !strings.Contains(string(md), "## benchci variants of vgate") {
		t.Errorf("the report lacks the comparison across variants:\n%s", md)
	}
}

// TestVariantFailureKeepsOthers: a variant whose server does not start,
// and one whose server dies mid-sweep, leave the healthy variant's
// figures intact and compared; the run is an error (exit 2) naming both,
// in either order (the two orders run at once: each has its own servers,
// and nothing here is a timing).
func TestVariantFailureKeepsOthers(t *testing.T) {
	for _, order := range []string{"sequential", "interleaved"} {
		t.Run(order, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			addr := testnet.Addr(t)
			pidFile := filepath.Join(dir, "sim.pid")
			script := `"$0" sim --addr ` + addr + ` --profile tiny & echo $! > ` + pidFile + `; wait`
			path := writeSuite(t, dir, "fails", fmt.Sprintf(`
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([10, 12], duration='3s', warmup='0s'),
  variants: {
    healthy: {},
    nostart: { target: b.target.launch(['false'], url='http://%s', start_timeout='10s') },
    dies: { target: b.target.launch(['sh', '-c', %q, %q], url='http://%s', env={ BENCHCI_TEST_CLI: '1' },
                                    health='/health', start_timeout='30s', stop_grace='5s') },
  },
  order: '%s',`, testnet.Addr(t), script, os.Args[0], addr, order))
			go killOnceGenerating(addr, pidFile, 20)
			results := filepath.Join(dir, "results")
			code, stdout, stderr := runCLI(t, context.Background(), "run", "--progress=false", "--results", results, path)
			if code != 2 || !strings.Contains(stderr, "variants dies, nostart failed") {
				t.Errorf("exit %d, want 2 naming the failed variants\n%s\n%s", code, stdout, stderr)
			}
			healthy, err := result.Read(filepath.Join(results, "fails", "healthy.json"))
			if err != nil || healthy.Incomplete || len(healthy.Points) != 2 || healthy.Points[1].Requests.Completed == 0 {
				t.Fatalf("healthy variant: %v %+v", err, healthy)
			}
			for _, name := range []string{"dies", "nostart"} {
				f, err := result.Read(filepath.Join(results, "fails", name+".json"))
				if err != nil || !f.Incomplete || f.Error == "" {
					t.Errorf("%s: %v, incomplete %v", name, err, f != nil && f.Incomplete)
				}
			}
			data, err := os.ReadFile(filepath.Join(results, "fails.variants.json"))
			var r variants.Report
			if err != nil || json.Unmarshal(data, &r) != nil || strings.Join(r.Incomplete, ",") != "dies,nostart" {
				t.Errorf("comparison: %v, incomplete %v", err, r.Incomplete)
			}
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				t.Error("a launched server still listens after the run")
			}
		})
	}
}
