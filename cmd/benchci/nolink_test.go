package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// No writer follows a link: a results file, a baseline, a report or a
// per-request file that is a symbolic link to a file elsewhere, or a
// directory on the way to one that is a link to a directory elsewhere, is
// refused by its path, and nothing outside changes. (init and ci --ab's
// tree have their own tests: TestInitWritesThroughNoLink, and
// TestWriteFollowsNoLink in internal/gitrev.)
func TestWritersFollowNoLink(t *testing.T) {
	t.Parallel()
	suites := t.TempDir()
	const body = `  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([5], duration='200ms', warmup='0s'),`
	plain := writeSuite(t, suites, "p", body)
	withVariants := writeSuite(t, suites, "w", body+"\n  variants: { a: {}, c: {} },")
	// A complete results file, for baseline update and report; and the
	// same as a variant's (quickstart/a), which goes in a directory.
	candidate := filepath.Join("testdata", "candidate.json")
	variant := filepath.Join(t.TempDir(), "v.json")
	{
		var f map[string]any
		data, err := os.ReadFile(candidate)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatal(err)
		}
		f["suite"].(map[string]any)["name"] = "quickstart/a"
		if data, err = json.Marshal(f); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(variant, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name string
		// link is the path, relative to the directory written in, that
		// is made a link; dir says it is a directory (else a file).
		link string
		dir  bool
		args func(in string) []string
		// warn: the refusal is a warning (the HTML page is a second
		// copy of the report), not a failure.
		warn bool
	}{
		{"run: results file", "p.json", false, func(in string) []string {
			return []string{"run", "--progress=false", "--results", in, plain}
		}, false},
		{"run: a variant's results directory", "w", true, func(in string) []string {
			return []string{"run", "--progress=false", "--results", in, withVariants}
		}, false},
		{"run: per-request file", "p.requests.jsonl", false, func(in string) []string {
			return []string{"run", "--progress=false", "--requests", "--results", in, plain}
		}, false},
		{"baseline update: baseline file", "quickstart.json", false, func(in string) []string {
			return []string{"baseline", "update", "--baselines", in, candidate}
		}, false},
		{"baseline update: a variant's baselines directory", "quickstart", true, func(in string) []string {
			return []string{"baseline", "update", "--baselines", in, variant}
		}, false},
		{"report --html", "r.html", false, func(in string) []string {
			return []string{"report", "--baselines", filepath.Join(in, "none"), "--html", filepath.Join(in, "r.html"), candidate}
		}, false},
		{"ci --report", "r.md", false, func(in string) []string {
			return []string{"ci", "--comment=false", "--summary", "", "--html", "", "--progress=false", "--results", filepath.Join(in, "results"),
				"--baselines", filepath.Join(in, "none"), "--report", filepath.Join(in, "r.md"), plain}
		}, false},
		{"ci --html", "r.html", false, func(in string) []string {
			return []string{"ci", "--comment=false", "--summary", "", "--html", filepath.Join(in, "r.html"), "--progress=false", "--results", filepath.Join(in, "results"),
				"--baselines", filepath.Join(in, "none"), "--report", filepath.Join(in, "r.md"), plain}
		}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := t.TempDir()
			file, outDir, unchanged := outsideTarget(t)
			target := file
			if tt.dir {
				target = outDir
			}
			link := filepath.Join(in, tt.link)
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runCLI(t, context.Background(), tt.args(in)...)
			if (code == exitOK) != tt.warn || !strings.Contains(stderr, link) || !strings.Contains(stderr, "symbolic link") {
				t.Errorf("exit %d; want a refusal naming %s\n%s\n%s", code, link, stdout, stderr)
			}
			unchanged()
		})
	}
}
