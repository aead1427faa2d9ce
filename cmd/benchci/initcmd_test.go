package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/suitefile"
)

// init writes, for every engine, a suite that validates as written and on
// the simulator, and a workflow actionlint accepts; it refuses to
// overwrite and names unknown engines.
func TestInitWritesAValidSuiteAndWorkflow(t *testing.T) {
	t.Parallel()
	for engine := range starters {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			code, stdout, stderr := runCLI(t, context.Background(), "init", engine, "--dir", dir, "--name", "first")
			if code != 0 || !strings.Contains(stdout, "benchci baseline update results/first.json") {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			suitePath := filepath.Join(dir, "suites", "first.jsonnet")
			for _, tla := range []map[string]string{nil, {"target": "sim"}} {
				l, err := suitefile.Load(suitePath, suitefile.Options{TLAStr: tla})
				if err != nil {
					t.Fatalf("the generated suite (tla %v): %v", tla, err)
				}
				if tla == nil && engine != "url" && engine != "ollama" && l.Suite.Target.Launch == nil {
					t.Errorf("%s: the suite does not launch the engine", engine)
				}
			}
			workflow := filepath.Join(dir, ".github", "workflows", "benchci-first.yml")
			if out, err := exec.Command("go", "tool", "actionlint", workflow).CombinedOutput(); err != nil {
				t.Errorf("actionlint: %v\n%s", err, out)
			}
			if code, _, stderr := runCLI(t, context.Background(), "init", engine, "--dir", dir, "--name", "first"); code != exitUsage || !strings.Contains(stderr, "--force") {
				t.Errorf("a second init overwrote: exit %d %s", code, stderr)
			}
		})
	}
	if code, _, stderr := runCLI(t, context.Background(), "init", "vlm", "--dir", t.TempDir()); code != exitUsage || !strings.Contains(stderr, `"vllm"`) {
		t.Errorf("unknown engine: exit %d %s", code, stderr)
	}
}

// The generated suite runs on the simulator end to end (its points cut
// short for the test), and the results it writes can become the baseline.
func TestInitSuiteRunsOnTheSimulator(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if code, out, errOut := runCLI(t, context.Background(), "init", "vllm", "--dir", dir); code != 0 {
		t.Fatalf("init: %d %s %s", code, out, errOut)
	}
	path := filepath.Join(dir, "suites", "vllm.jsonnet")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	short := strings.NewReplacer("duration='30s', warmup='5s'", "duration='1s', warmup='0s'", "trials: 4", "trials: 1").Replace(string(b))
	if short == string(b) {
		t.Fatal("the test's shortening no longer matches the generated suite")
	}
	if err := os.WriteFile(path, []byte(short), 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "--progress=false", "--results", results, "--tla-str", "target=sim", path)
	switch code {
	case exitInconclusive:
		// A machine that stalled through every rerun measured itself: the
		// run says so, and its results cannot become a baseline.
		if c, _, errOut := runCLI(t, context.Background(), "baseline", "update", "--baselines", filepath.Join(dir, "baselines"), filepath.Join(results, "vllm.json")); c != exitUsage || !strings.Contains(errOut, "quieter machine") {
			t.Errorf("an inconclusive run became a baseline: exit %d %s", c, errOut)
		}
		t.Skipf("this machine was too busy to measure the server (exit 3):\n%s", stdout)
	case exitUsage:
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, out, errOut := runCLI(t, context.Background(), "baseline", "update", "--baselines", filepath.Join(dir, "baselines"), filepath.Join(results, "vllm.json")); code != 0 {
		t.Fatalf("baseline update: %d %s %s", code, out, errOut)
	}
}
