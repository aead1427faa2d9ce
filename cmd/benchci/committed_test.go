package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/policy"
)

// Every committed baseline reads, and was measured on the workload its
// suite sends now: a suite edited without its baseline recorded again
// would leave the repository's own gate refusing to compare ("not the
// same workload") on every pull request.
func TestCommittedBaselinesMatchTheirSuites(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("../../baselines/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no committed baselines: %v", err)
	}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".json")
		b, err := baseline.Read(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		l, err := suitefile.Load(filepath.Join("../../suites", name+".jsonnet"), suitefile.Options{})
		if err != nil {
			t.Errorf("%s: its suite: %v", p, err)
			continue
		}
		// The gate judges by the rules the baseline was recorded with: a
		// suite loosened since would fail every pull request as "policy
		// loosened" until its baseline is recorded again.
		if rec, err := recorded(b.Result); err != nil {
			t.Errorf("%s: %v", p, err)
		} else if changes, err := policy.Diff(rec, l.Suite); err != nil || len(policy.Looser(changes)) > 0 {
			t.Errorf("suites/%s.jsonnet is looser than the rules %s was recorded with (%v, %v): record it again", name, p, policy.Looser(changes), err)
		}
		if b.WorkloadHash != l.WorkloadHash || b.Suite != l.Suite.Name {
			t.Errorf("%s was measured on suite %s, workload %.12s; suites/%s.jsonnet is %s, workload %.12s: record it again (benchci run, then benchci baseline update)",
				p, b.Suite, b.WorkloadHash, name, l.Suite.Name, l.WorkloadHash)
		}
	}
}
