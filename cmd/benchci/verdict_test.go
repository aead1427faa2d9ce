package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/result"
)

// edited writes testdata/candidate.json, changed by edit, into dir.
func edited(t *testing.T, dir, name string, edit func(*result.File)) string {
	t.Helper()
	f, err := result.Read("testdata/candidate.json")
	if err != nil {
		t.Fatal(err)
	}
	edit(f)
	path := filepath.Join(dir, name+".json")
	if err := result.Write(path, f); err != nil {
		t.Fatal(err)
	}
	return path
}

// compare refuses what it cannot judge with exit 2, never 1 (the
// regression code) and never 0 with every point "new".
func TestCompareRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const base = "../../framework/result/testdata/quickstart-v1.json"
	empty := edited(t, dir, "empty", func(f *result.File) { f.Points = nil })
	stopped := edited(t, dir, "stopped", func(f *result.File) { f.Incomplete, f.Error = true, "stopped: interrupt" })
	other := edited(t, dir, "other", func(f *result.File) { f.Suite.WorkloadHash = "0123456789abcdef" })
	renamed := edited(t, dir, "renamed", func(f *result.File) { f.Suite.Name = "quickstart-on-llamacpp" })
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{empty, base}, exitUsage, "holds no measured point"},
		{[]string{base, empty}, exitUsage, "holds no measured point"},
		{[]string{base, stopped}, exitUsage, "incomplete run (stopped: interrupt)"},
		{[]string{base, other}, exitUsage, "not compared"},
		// The same requests under another suite name compare (and this
		// candidate regressed).
		{[]string{base, renamed}, exitFailed, "gate failed"},
	} {
		code, stdout, stderr := runCLI(t, context.Background(), append([]string{"compare"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.says) {
			t.Errorf("compare %s: exit %d, want %d saying %q\n%s\n%s", strings.Join(tc.args, " "), code, tc.code, tc.says, stdout, stderr)
		}
		if code != exitFailed && strings.Contains(stdout, "✅") {
			t.Errorf("compare %s says ✅:\n%s", strings.Join(tc.args, " "), stdout)
		}
	}
}

// A candidate none of whose trials at a point measured the server is
// neither a pass nor a regression: exit 3, and the comment leads with
// "⚠️ inconclusive", the evidence and what to do.
func TestCompareInconclusive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := edited(t, dir, "base", func(*result.File) {})
	cand := edited(t, dir, "cand", func(f *result.File) {
		f.Points[1].Validity = &result.Validity{Invalid: []string{"sent 3.4 of 6.0 req/s scheduled", "send lag P99 3.44 s (limit 41.7 ms)"},
			Reruns: []string{"the machine stalled 1.20 s in 3 pauses", "the machine stalled 0.80 s in 2 pauses"}}
		for i := range f.SLOs {
			if f.SLOs[i].Point == f.Points[1].Label {
				f.SLOs[i].Pass, f.SLOs[i].Inconclusive, f.SLOs[i].Note = false, true, "inconclusive: the trial did not measure the server"
			}
		}
	})
	code, stdout, stderr := runCLI(t, context.Background(), "compare", "--format", "markdown", base, cand)
	if code != exitInconclusive {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitInconclusive, stdout, stderr)
	}
	head, _, _ := strings.Cut(stdout, "### Suite")
	if !strings.Contains(head, "## benchci: ⚠️ inconclusive:") || !strings.Contains(head, "Rerun the job") || strings.Contains(stdout, "✅ 0 regressions") {
		t.Errorf("markdown head:\n%s", head)
	}
	if !strings.Contains(stdout, "sent 3.4 of 6.0 req/s scheduled; send lag P99 3.44 s (limit 41.7 ms) (trial 1, after 2 reruns)") {
		t.Errorf("no evidence:\n%s", stdout)
	}
}

// ci whose baseline cannot be read exits 2 and writes a report that says
// so: never "✅ 0 regressions".
func TestCIUnreadableBaselineIsNoPass(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	baselines := filepath.Join(dir, "baselines")
	if err := os.MkdirAll(baselines, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(baselines, "quickstart.json"), []byte(`{"schema": "benchci.baseline/v1", "trunc`), 0o644); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "report.md")
	code, stdout, stderr := runCLI(t, context.Background(), "ci", "--measured", "--suite-from-results", "--comment=false", "--summary", "", "--html", "",
		"--baselines", baselines, "--report", report, "testdata/candidate.json")
	md, err := os.ReadFile(report)
	if code != exitUsage || err != nil {
		t.Fatalf("exit %d (%v)\n%s\n%s", code, err, stdout, stderr)
	}
	if strings.Contains(string(md), "✅") || !strings.Contains(string(md), "could not be compared with its baseline") {
		t.Errorf("report:\n%s", md)
	}
}
