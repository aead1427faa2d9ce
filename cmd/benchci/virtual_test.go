package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/result"
)

// run --virtual end to end: a sim suite replays in virtual time, its table
// and results say so; baseline update will not make it a baseline, nor let
// it replace a measured one; run --virtual is not compared with a measured
// baseline (its SLOs are judged), and compare refuses the pair; a url
// target is refused before anything runs, naming its file.
func TestRunVirtual(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	suite := writeSuite(t, dir, "plan", `
  target: b.target.sim('llama3-70b-h100x4'),
  api: 'chat',
  workload: { input_tokens: b.dist.fixed(200), output_tokens: b.dist.fixed(64), seed: 3 },
  sweep: b.sweep.rates([2, 6], duration='30s', warmup='5s'),
  slos: [b.slo.p90('ttft', '<', '1s')],`)
	results, baselines := filepath.Join(dir, "results"), filepath.Join(dir, "baselines")
	ctx := context.Background()
	virtual := filepath.Join(results, "plan.json")

	code, stdout, stderr := runCLI(t, ctx, "run", "--virtual", "--progress=false", "--results", results, "--baselines", baselines, suite)
	if code != 0 || !strings.Contains(stdout, "VIRTUAL TIME (simulated clock)") || !strings.Contains(stdout, "note: virtual time (simulated clock)") {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	f, err := result.Read(virtual)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Virtual || len(f.Points) != 2 || !f.Points[0].Schedule.Virtual {
		t.Fatalf("results virtual %v, %d points: want a virtual file of 2 virtual points", f.Virtual, len(f.Points))
	}

	code, _, stderr = runCLI(t, ctx, "baseline", "update", "--baselines", baselines, virtual)
	if code != 2 || !strings.Contains(stderr, "not a measurement") {
		t.Errorf("baseline update of a virtual result: exit %d, stderr %s", code, stderr)
	}

	// The same figures, marked measured, make a measured baseline.
	f.Virtual = false
	measured := filepath.Join(dir, "measured.json")
	if err := result.Write(measured, f); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr = runCLI(t, ctx, "baseline", "update", "--baselines", baselines, measured); code != 0 {
		t.Fatalf("baseline update of a measured result: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCLI(t, ctx, "baseline", "update", "--baselines", baselines, virtual)
	if code != 2 || !strings.Contains(stderr, "does not replace a measured baseline") {
		t.Errorf("a virtual result over a measured baseline: exit %d, stderr %s", code, stderr)
	}

	code, stdout, stderr = runCLI(t, ctx, "run", "--virtual", "--progress=false", "--results", results, "--baselines", baselines, suite)
	if code != 0 || !strings.Contains(stdout, "it was measured, and this run is virtual time") {
		t.Errorf("run --virtual beside a measured baseline: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, ctx, "compare", filepath.Join(baselines, "plan.json"), virtual)
	if code == 0 || !strings.Contains(stdout+stderr, "the candidate is a virtual-time replay") {
		t.Errorf("compare measured with virtual: exit %d, output:\n%s%s", code, stdout, stderr)
	}

	remote := writeSuite(t, dir, "remote", `
  target: b.target.url('http://127.0.0.1:1', model='m'),
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(4), prompts: b.prompts.synthetic(calibrate=false) },
  sweep: b.sweep.rates([1], duration='1s'),`)
	code, _, stderr = runCLI(t, ctx, "run", "--virtual", "--progress=false", "--results", results, remote)
	if code != 2 || !strings.Contains(stderr, remote+": --virtual replays the embedded simulator only") {
		t.Errorf("run --virtual of a url target: exit %d, stderr %s", code, stderr)
	}
}

// A run on the simulator beside a baseline that measured a real server is
// judged on its SLOs alone, and says why: comparing the two would judge
// the simulator's error as the change's.
func TestRunOnTheSimulatorBesideAMeasuredBaseline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	suite := writeSuite(t, dir, "try", `
  target: b.target.sim('llama3-8b-h100'),
  api: 'chat',
  workload: { input_tokens: b.dist.fixed(64), output_tokens: b.dist.fixed(16), seed: 3 },
  sweep: b.sweep.rates([8], duration='2s', warmup='500ms'),
  slos: [b.slo.rate('error_rate', '<=', 0.01)],`)
	results, baselines := filepath.Join(dir, "results"), filepath.Join(dir, "baselines")
	ctx := context.Background()
	// The subject is the verdict, not the measurement: a loaded machine
	// can stall a trial into an inconclusive run (exit 3), so the first
	// run, which only makes the file, is tried up to three times.
	for try := 1; ; try++ {
		code, stdout, stderr := runCLI(t, ctx, "run", "--progress=false", "--results", results, "--baselines", baselines, suite)
		if code == 0 {
			break
		}
		if try == 3 {
			skipIfStalled(t, code, stdout)
		}
		if code != exitInconclusive || try == 3 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
	}
	// Its own figures, as if a vLLM server had measured them.
	f, err := result.Read(filepath.Join(results, "try.json"))
	if err != nil {
		t.Fatal(err)
	}
	f.Target.Kind, f.Target.Sim, f.Engine = "url", nil, &result.Engine{Name: "vllm"}
	measured := filepath.Join(dir, "measured.json")
	if err := result.Write(measured, f); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, ctx, "baseline", "update", "--baselines", baselines, measured); code != 0 {
		t.Fatalf("baseline update: exit %d, %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, ctx, "run", "--progress=false", "--results", results, "--baselines", baselines, suite)
	if (code != 0 && code != exitInconclusive) || !strings.Contains(stdout, "it measured a server, and this run ran on benchci's simulator; only its SLOs are judged") {
		t.Errorf("a run on the simulator beside a measured baseline: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, ctx, "compare", filepath.Join(baselines, "try.json"), filepath.Join(results, "try.json"))
	if code != 2 || !strings.Contains(stdout+stderr, "the candidate ran on benchci's simulator and the baseline measured a server") {
		t.Errorf("compare measured with simulated: exit %d, output:\n%s%s", code, stdout, stderr)
	}
}
