package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
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

// Every value init writes into the suite is a Jsonnet string: a model
// name that tries to close the string and add fields, a newline, a
// comment, a text block or an escape is the model name, nothing more.
func TestInitEscapesEveryValue(t *testing.T) {
	t.Parallel()
	hostile := []string{
		`x', slos: [], tolerance: {default: '1000%'}, z: '`,
		`x", slos: [], tolerance: {default: "1000%"}, z: "`,
		"x\n    slos: [],\n// y",
		"x\n|||\nslos: []\n|||\n",
		`x\', slos: [], z: \'`,
		`x\u0027 \" \\ \n */ /* // #`,
		"x\u2028y\u0000z\ttab",
		"two words",
	}
	for _, engine := range []string{"vllm", "url"} {
		template := filepath.Join(t.TempDir(), "suites", "t.jsonnet")
		if code, _, stderr := runCLI(t, context.Background(), "init", engine, "--dir", filepath.Dir(filepath.Dir(template)), "--name", "t"); code != 0 {
			t.Fatalf("init: %d %s", code, stderr)
		}
		want, err := suitefile.Load(template, suitefile.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, model := range hostile {
			dir := t.TempDir()
			if code, _, stderr := runCLI(t, context.Background(), "init", engine, "--dir", dir, "--name", "t", "--model", model); code != 0 {
				t.Fatalf("%s %d: init: %d %s", engine, i, code, stderr)
			}
			l, err := suitefile.Load(filepath.Join(dir, "suites", "t.jsonnet"), suitefile.Options{})
			if err != nil {
				t.Fatalf("%s %q: the suite does not evaluate: %v", engine, model, err)
			}
			s := l.Suite
			if s.Target.Model != model {
				t.Errorf("%s: model %q, want %q", engine, s.Target.Model, model)
			}
			if s.Description != "Chat traffic on "+engine+" ("+model+"), two rates" {
				t.Errorf("%s %q: description %q", engine, model, s.Description)
			}
			if s.Name != "t" || !reflect.DeepEqual(s.SLOs, want.Suite.SLOs) || !reflect.DeepEqual(s.Tolerance, want.Suite.Tolerance) || s.Trials != want.Suite.Trials {
				t.Errorf("%s %q: the suite's fields changed: name %q, slos %+v, tolerance %v", engine, model, s.Name, s.SLOs, s.Tolerance)
			}
			if engine == "vllm" && (s.Target.Launch == nil || !slices.Contains(s.Target.Launch.Command, model) || len(s.Target.Launch.Command) != len(want.Suite.Target.Launch.Command)) {
				t.Errorf("%s %q: launch line %+v", engine, model, s.Target.Launch)
			}
		}
	}
}

// init writes inside --dir and through no link: a suite that is a link
// to a file elsewhere, or a suites/ directory that is a link to a
// directory elsewhere, is refused by its path, with --force or without,
// and nothing outside changes.
func TestInitWritesThroughNoLink(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		link func(t *testing.T, dir, file, outDir string) string // makes the link, returns its path
	}{
		{"suite file", func(t *testing.T, dir, file, _ string) string {
			p := filepath.Join(dir, "suites", "vllm.jsonnet")
			os.MkdirAll(filepath.Dir(p), 0o755)
			return p
		}},
		{"suites directory", func(t *testing.T, dir, _, outDir string) string {
			return filepath.Join(dir, "suites")
		}},
		{"workflows directory", func(t *testing.T, dir, _, outDir string) string {
			p := filepath.Join(dir, ".github", "workflows")
			os.MkdirAll(filepath.Dir(p), 0o755)
			return p
		}},
	} {
		for _, force := range []bool{false, true} {
			dir := t.TempDir()
			file, outDir, unchanged := outsideTarget(t)
			link := tt.link(t, dir, file, outDir)
			target := outDir
			if strings.HasSuffix(link, ".jsonnet") {
				target = file
			}
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			args := []string{"init", "vllm", "--dir", dir}
			if force {
				args = append(args, "--force")
			}
			code, _, stderr := runCLI(t, context.Background(), args...)
			if code != exitUsage || !strings.Contains(stderr, link) || !strings.Contains(stderr, "symbolic link") {
				t.Errorf("%s (force %v): exit %d %s; want a refusal naming %s", tt.name, force, code, stderr, link)
			}
			unchanged()
		}
	}
}

// outsideTarget is a file and an empty directory outside any directory a
// test writes in, and a check that neither changed.
func outsideTarget(t *testing.T) (file, dir string, unchanged func()) {
	t.Helper()
	base := t.TempDir()
	file, dir = filepath.Join(base, "victim"), filepath.Join(base, "victimdir")
	if err := os.WriteFile(file, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	return file, dir, func() {
		t.Helper()
		if b, err := os.ReadFile(file); err != nil || string(b) != "precious" {
			t.Errorf("the file outside now holds %q (%v)", b, err)
		}
		if after, err := os.Stat(file); err != nil || !after.ModTime().Equal(before.ModTime()) || after.Mode() != before.Mode() {
			t.Errorf("the file outside was touched (%v)", err)
		}
		if es, err := os.ReadDir(dir); err != nil || len(es) != 0 {
			t.Errorf("the directory outside holds %v (%v)", es, err)
		}
	}
}
