package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/NAME.golden, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -run %s -update to accept):\n--- got\n%s\n--- want\n%s", path, t.Name(), got, want)
	}
}

// The commands whose output depends only on their input files print
// exactly what their golden files hold: what a reader of a CI log sees.
func TestGoldenOutput(t *testing.T) {
	t.Parallel()
	const base, cand = "../../framework/result/testdata/quickstart-v1.json", "testdata/candidate.json"
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"validate", []string{"validate", "../../suites/quickstart.jsonnet", "../../suites/release-checklist.jsonnet"}},
		{"validate-bad", []string{"validate", "testdata/bad.jsonnet"}},
		{"compare-text", []string{"compare", base, cand}},
		{"compare-markdown", []string{"compare", "--format", "markdown", base, cand}},
		{"compare-json", []string{"compare", "--format", "json", base, cand}},
		{"compare-self", []string{"compare", base, base}},
		{"report", []string{"report", base}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runCLI(t, context.Background(), tc.args...)
			golden(t, tc.name, fmt.Sprintf("$ benchci %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(tc.args, " "), code, stdout, stderr))
		})
	}
}

// numbers matches every figure, port and duration in run's output, with
// its sign: a difference of measured means can come out either side of 0.
// A minus inside a word ("p50-p99", a date) is not a sign.
var numbers = regexp.MustCompile(`(\B-)?[0-9][0-9.]*(e[-+][0-9]+)?`)

// machineFlags are the table's flags a busy machine raises.
var machineFlags = regexp.MustCompile(` +(ITL-COALESCED|CLIENT-SATURATED)`)

// run's figures are measured, so its golden file holds the output with
// every number masked: the layout, the order and the words are checked.
func TestGoldenRunOutput(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, context.Background(), "run", "--results", dir, "--progress=false", "testdata/tiny.jsonnet")
	if code == exitInconclusive {
		// The machine stalled through every rerun of a point: the run says
		// so instead of a verdict, and its layout is another one.
		if !strings.Contains(stdout, "INVALID, did not measure the server") {
			t.Errorf("exit 3 without the evidence:\n%s", stdout)
		}
		t.Skipf("this machine was too busy to measure the server (exit 3):\n%s", stdout)
	}
	// What a busy machine adds is the machine's, not the layout's: a trial
	// measured again after a stall, chunks read together, a client behind
	// its schedule each say so in a line or flag a quiet machine does not
	// print, and the overhead line depends on the sign of a difference of
	// means. They are left out here (and tested where they are made).
	var kept []string
	for _, line := range strings.SplitAfter(stdout, "\n") {
		// The client's TTFT against the server's own is a difference of two
		// measured means: on a busy machine it comes out below zero and is
		// then a note that it cannot be read, another line in another place.
		if strings.Contains(line, "discarded and measured again:") || strings.Contains(line, "to a socket read") || strings.Contains(line, "first socket read") ||
			strings.Contains(line, "client could not keep the schedule") ||
			strings.Contains(line, "ms of network, gateway and client") || strings.Contains(line, "which no request can be") {
			continue
		}
		line = machineFlags.ReplaceAllString(line, "")
		kept = append(kept, line)
	}
	out := strings.ReplaceAll(strings.Join(kept, ""), dir, "RESULTS")
	out = numbers.ReplaceAllString(out, "#")
	out = regexp.MustCompile(` +`).ReplaceAllString(out, " ")
	golden(t, "run", fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", code, out, stderr))
}
