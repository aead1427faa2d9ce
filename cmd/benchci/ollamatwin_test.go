package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
)

// BenchmarkOllamaTwin runs the workflow a team runs on its own engine,
// on the Ollama .ci/run builds (llama.cpp on this machine's CPU, serving
// the tiny model): measure four points (1 and 4 conversations, with
// prompts of 64 and 256 tokens), fit the simulator to them (sim fit), and
// predict two points the fit never saw, a load between (2 conversations,
// 128-token prompts) and a longer prompt (2 conversations, 512 tokens).
// Each prediction is a virtual-time run of the same suite on the fitted
// profile. It reports the prediction's error, in percent, on TTFT P50,
// TPOT P50 and output throughput at each held-out point:
//
//	go test -run XXX -bench OllamaTwin -benchtime 1x ./cmd/benchci
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
	cli := func(args ...string) {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), &out, &errOut, args); code != exitOK {
			b.Fatalf("benchci %v: exit %d\n%s\n%s", args, code, out.String(), errOut.String())
		}
		b.Logf("benchci %v:\n%s", args, out.String())
	}
	results := filepath.Join(o.dir, "results")
	for b.Loop() {
		var fitFrom []string
		for _, in := range []int{64, 256} {
			name := "fit" + strconv.Itoa(in)
			cli("run", "--progress=false", "--results", results, suite(name, target, in, "1, 4"))
			fitFrom = append(fitFrom, filepath.Join(results, name+".json"))
		}
		fitted := filepath.Join(o.dir, "fitted.json")
		cli(append(append([]string{"sim", "fit"}, fitFrom...), "--profile", "tiny", "--max-num-seqs", "4", "--out", fitted)...)
		for _, in := range []int{128, 512} {
			name := "heldout" + strconv.Itoa(in)
			cli("run", "--progress=false", "--results", results, suite(name, target, in, "2"))
			cli("run", "--virtual", "--progress=false", "--results", filepath.Join(o.dir, "twin"),
				suite(name, "b.target.sim('file:fitted.json')", in, "2"))
			measured, err := result.Read(filepath.Join(results, name+".json"))
			if err != nil {
				b.Fatal(err)
			}
			twin, err := result.Read(filepath.Join(o.dir, "twin", name+".json"))
			if err != nil {
				b.Fatal(err)
			}
			m, p := measured.Points[0], twin.Points[0]
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"ttft", p.Latency[metric.TTFT].P50, m.Latency[metric.TTFT].P50},
				{"tpot", p.Latency[metric.TPOT].P50, m.Latency[metric.TPOT].P50},
				{"tput", p.Throughput.OutputTokens, m.Throughput.OutputTokens},
			} {
				b.Logf("prompt %d, 2 conversations: %s measured %.2f, twin %.2f", in, f.name, f.want, f.got)
				b.ReportMetric(100*(f.got/f.want-1), fmt.Sprintf("%s%d-err-%%", f.name, in))
			}
		}
	}
}
