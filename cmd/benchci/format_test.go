package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/internal/gitfixture"
	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/sim"
)

// Every command that prints figures takes --format json and prints one
// JSON document on stdout (its other lines go to stderr): the tables of
// what it printed, or for compare the comparison itself. TestSelftest
// checks selftest's, whose fixed phases take seconds.
func TestFormatJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("runs suites")
	}
	dir := t.TempDir()
	repo := gitfixture.New(t)
	for i := range 3 {
		repo.Commit(fmt.Sprintf("baseline update %d", i+1), map[string][]byte{"baselines/quickstart.json": gitfixture.Baseline(t, "../../framework/result/testdata/quickstart-v1.json", uint64(i), 1, "")})
	}
	// Shards share one server: a simulator listening here.
	p, _ := sim.Lookup("tiny")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u, err := sim.New(p).Listen(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sharded := writeSuite(t, dir, "sharded", fmt.Sprintf(`
  target: b.target.url('%s'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([5, 10], duration='2s', warmup='100ms'),`, u))
	// The shards run at once and aligned, as a merge requires: each
	// point's windows must overlap. While they wait for their start, the
	// commands that only read files are checked; those that load the
	// machine (run, bands, sim check, ci) wait for the shards.
	shards := filepath.Join(dir, "shards")
	startAt := time.Now().Add(5 * time.Second).UTC().Truncate(time.Second).Add(time.Second).Format(time.RFC3339)
	var wg sync.WaitGroup
	var stalled atomic.Bool
	for _, sh := range []string{"0/2", "1/2"} {
		wg.Go(func() {
			code, out, errOut := runCLI(t, ctx, "run", "--progress=false", "--shard", sh, "--start-at", startAt, "--point-gap", "1s", "--results", shards, sharded)
			switch code {
			case 0:
			case exitInconclusive: // a machine that stalled through every rerun: said, not a format
				stalled.Store(true)
				t.Logf("shard %s was inconclusive on this machine:\n%s", sh, errOut)
			default:
				t.Errorf("shard %s: exit %d\n%s\n%s", sh, code, out, errOut)
			}
		})
	}
	defer wg.Wait()
	const base = "../../framework/result/testdata/quickstart-v1.json"
	// sim check's format, on its first four published rows: the sim
	// package's tests check every row (a minute under -race).
	defer func(refs []sim.Reference) { checkedReferences = refs }(checkedReferences)
	checkedReferences = checkedReferences[:4]
	for _, tc := range []struct {
		name string
		args []string
		// tables: the document is {"tables": [...]}, with at least this many.
		tables int
	}{
		{"report", []string{"report", base, "testdata/candidate.json"}, 2},
		// The page goes to its file, the figures to stdout as asked.
		{"report --html", []string{"report", "--html", filepath.Join(dir, "page.html"), base}, 1},
		{"history", []string{"history", "--baselines", filepath.Join(repo.Dir, "baselines"), "--charts", "", "quickstart"}, 3},
		{"compare", []string{"compare", base, "testdata/candidate.json"}, 0},
		{"run", []string{"run", "--progress=false", "--results", filepath.Join(dir, "run"), "testdata/tiny.jsonnet"}, 2},
		{"bands", []string{"bands", "--runs", "2", "--progress=false", "testdata/tiny.jsonnet"}, 1},
		{"sim check", []string{"sim", "check"}, 2},
		{"ci", []string{"ci", "--comment=false", "--summary", "", "--outputs", "", "--base-ref", "", "--progress=false",
			"--results", filepath.Join(dir, "ci"), "--report", filepath.Join(dir, "ci", "report.md"), "testdata/tiny.jsonnet"}, 2},
		{"merge", []string{"merge", shards}, 1},
	} {
		if tc.name == "run" {
			if wg.Wait(); t.Failed() {
				t.FailNow()
			}
		}
		if tc.name == "merge" && stalled.Load() {
			continue // merge's format is checked on shards that measured
		}
		t.Run(tc.name, func(t *testing.T) {
			args := append(slices.Clone(tc.args), "--format", "json")
			code, stdout, stderr := runCLI(t, context.Background(), args...)
			if code == exitUsage {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			var doc map[string]json.RawMessage
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatalf("stdout is not one JSON document: %v\n%s", err, stdout)
			}
			if tc.tables == 0 {
				return
			}
			var tables []struct {
				Title   string
				Columns []struct{ Key string }
				Rows    []map[string]any
			}
			if err := json.Unmarshal(doc["tables"], &tables); err != nil || len(tables) < tc.tables {
				t.Fatalf("%d tables, want at least %d (%v):\n%s", len(tables), tc.tables, err, stdout)
			}
		})
	}
}

// An unknown format fails before anything runs, naming the valid ones.
func TestFormatUnknown(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"run", "--format", "yaml", "testdata/tiny.jsonnet"},
		{"compare", "--format", "yaml", "a.json", "b.json"},
		{"report", "--format", "yaml", "a.json"},
		{"history", "--format", "yaml", "quickstart"},
		{"merge", "--format", "yaml", "a.json"},
		{"bands", "--format", "yaml", "testdata/tiny.jsonnet"},
		{"selftest", "--format", "yaml"},
		{"sim", "check", "--format", "yaml"},
		{"ci", "--format", "yaml", "testdata/tiny.jsonnet"},
	} {
		code, stdout, stderr := runCLI(t, context.Background(), args...)
		valid := report.Formats()
		if args[0] == "report" {
			valid = append(valid, "html")
		}
		want := `unknown format "yaml": want ` + strings.Join(valid[:len(valid)-1], ", ") + " or " + valid[len(valid)-1]
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
}

// --format is spelled and explained alike wherever it is, text by default.
func TestFormatFlagIsOneFlag(t *testing.T) {
	t.Parallel()
	var with []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if f := c.Flags().Lookup("format"); f != nil {
			with = append(with, c.Name())
			if f.DefValue != "text" || !strings.HasPrefix(f.Usage, "output format: text, markdown") {
				t.Errorf("%s --format: default %q, usage %q", c.CommandPath(), f.DefValue, f.Usage)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(rootCmd(nil, nil))
	for _, want := range []string{"run", "compare", "report", "history", "merge", "bands", "selftest", "check", "ci"} {
		if !strings.Contains(" "+strings.Join(with, " ")+" ", " "+want+" ") {
			t.Errorf("%s has no --format (commands with one: %v)", want, with)
		}
	}
}

// report --format markdown renders the tables as markdown, and html the
// self-contained page, on stdout.
func TestReportFormats(t *testing.T) {
	t.Parallel()
	for format, want := range map[string]string{"markdown": "| point | trial |", "html": "<!doctype html>", "text": "TTFT p50"} {
		code, stdout, stderr := runCLI(t, context.Background(), "report", "--format", format, "--baselines", t.TempDir(), "../../framework/result/testdata/quickstart-v1.json")
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("--format %s: exit %d, lacks %q:\n%.400s\n%s", format, code, want, stdout, stderr)
		}
	}
}
