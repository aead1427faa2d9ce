package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/layout"
	"github.com/benchci/benchci/internal/variants"
)

// writeVariantsRun writes what a run of two variants leaves in dir
// (results/qs/a.json, results/qs/b.json, results/qs.variants.json),
// from the committed quickstart baseline, without running anything.
func writeVariantsRun(t *testing.T, dir string) string {
	t.Helper()
	b, err := baseline.Read("../../framework/result/testdata/quickstart-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	results := layout.Results(filepath.Join(dir, "results"))
	var entries []variants.Entry
	for _, name := range []string{"a", "b"} {
		f := *b.Result
		f.Suite.Name, f.Suite.Variant = "qs/"+name, name
		p := results.Result(f.Suite.Name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := result.Write(p, &f); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, variants.Entry{Name: name, File: &f, Path: p})
	}
	r, err := variants.Compare(entries)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	cmpPath, _ := results.Variants("qs")
	if err := os.WriteFile(cmpPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return cmpPath
}

// report --html takes the variants comparison run writes (it exited 2),
// reads the results files it names, and leads with the comparison; a
// missing results file is named, and a results directory moved whole
// (a downloaded CI artifact) still reads.
func TestReportHTMLTakesVariants(t *testing.T) {
	dir := t.TempDir()
	cmpPath := writeVariantsRun(t, dir)
	html := filepath.Join(dir, "page.html")
	code, stdout, stderr := runCLI(t, context.Background(), "report", "--html", html, cmpPath)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	v, run := strings.Index(string(page), "<h2>Variants of qs</h2>"), strings.Index(string(page), "<section id=")
	if v < 0 || run < 0 || v > run {
		t.Errorf("the comparison (at %d) does not lead the runs (at %d)", v, run)
	}
	if n := strings.Count(string(page), "<h2>Variants of"); n != 1 {
		t.Errorf("%d comparisons on the page, want 1 (the file's, not recomputed beside it)", n)
	}
	for _, want := range []string{"qs/a", "qs/b"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks the run %s", want)
		}
	}

	// Moved elsewhere whole: the recorded paths are gone, the files sit
	// under the comparison's directory.
	moved := filepath.Join(dir, "artifact")
	if err := os.Rename(filepath.Join(dir, "results"), moved); err != nil {
		t.Fatal(err)
	}
	cmpMoved := filepath.Join(moved, filepath.Base(cmpPath))
	if code, stdout, stderr := runCLI(t, context.Background(), "report", "--html", html, cmpMoved); code != 0 {
		t.Fatalf("moved results: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// One results file missing: a usage error naming it.
	if err := os.Remove(filepath.Join(moved, "qs", "b.json")); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, context.Background(), "report", "--html", html, cmpMoved)
	if code != exitUsage || !strings.Contains(stderr, "variant b's results file is missing") || !strings.Contains(stderr, filepath.Join("qs", "b.json")) {
		t.Errorf("missing results file: exit %d, stderr:\n%s", code, stderr)
	}
}
