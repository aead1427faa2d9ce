package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchci/benchci/internal/gitfixture"
)

// site writes the landing page and a page per committed baseline, copies
// the proofs found under --proofs, and refuses what it cannot use.
func TestSiteCommand(t *testing.T) {
	t.Parallel()
	r := gitfixture.New(t)
	for i := range 4 {
		r.Commit(fmt.Sprintf("baseline update %d (#%d)", i+1, i+1), map[string][]byte{
			"baselines/quickstart.json": gitfixture.Baseline(t, "../../framework/result/testdata/quickstart-v1.json", uint64(i), 1, ""),
		})
	}
	proofs := filepath.Join(t.TempDir(), "proofs")
	statement := `{"_type":"https://in-toto.io/Statement/v1","subject":[],"predicateType":"https://benchci.dev/attestation/slo/v1",
"predicate":{"benchci":"v1.0.0","madeAt":"2026-11-20T10:00:00Z","runs":[{"suite":{"name":"quickstart"},"slos":[{"pass":true}]}]}}`
	if err := os.MkdirAll(filepath.Join(proofs, "v1.0.0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proofs, "v1.0.0", "attestation.intoto.json"), []byte(statement), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "site")
	code, stdout, stderr := runCLI(t, context.Background(), "site", "--out", out, "--baselines", filepath.Join(r.Dir, "baselines"),
		"--proofs", proofs, "--repo-url", "https://github.com/acme/serving", "testdata/candidate.json")
	if code != exitOK || !strings.Contains(stdout, "wrote 3 files to "+out) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, f := range []string{"index.html", "suites/quickstart.html", "proofs/v1.0.0/attestation.intoto.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	page, err := os.ReadFile(filepath.Join(out, "suites", "quickstart.html"))
	if err != nil || !strings.Contains(string(page), `href="https://github.com/acme/serving/pull/4"`) ||
		!strings.Contains(string(page), "The newest run against the baseline") {
		t.Errorf("quickstart page: %v", err)
	}

	notProof := t.TempDir()
	if err := os.WriteFile(filepath.Join(notProof, "x.intoto.json"), []byte(`{"_type":"https://in-toto.io/Statement/v1","predicateType":"https://slsa.dev/provenance/v1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{
		{"site", "--baselines", filepath.Join(r.Dir, "baselines")},
		{"site", "--out", t.TempDir(), "--baselines", filepath.Join(r.Dir, "baselines"), "--repo-url", "javascript:alert(1)"},
		{"site", "--out", t.TempDir(), "--baselines", filepath.Join(r.Dir, "baselines"), "--min-change", "5"},
		{"site", "--out", t.TempDir(), "--baselines", t.TempDir()},
		{"site", "--out", t.TempDir(), "--baselines", filepath.Join(r.Dir, "baselines"), "--proofs", notProof},
	} {
		if code, _, stderr := runCLI(t, context.Background(), bad...); code != exitUsage || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q", bad, code, stderr)
		}
	}
}
