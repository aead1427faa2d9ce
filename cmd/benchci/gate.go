package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/layout"
)

// compareWithBaseline compares a candidate with dir/<suite>.json; with no
// baseline there, only the candidate's SLOs gate.
func compareWithBaseline(dir string, cand *result.File) (*compare.Report, error) {
	tol, err := cand.Suite.Tolerance()
	if err != nil {
		return nil, err
	}
	return compareWithBaselineBy(dir, cand, tol)
}

// compareWithBaselineBy is compareWithBaseline judging by tol, the
// tolerances the gate's rules give (see policyReviewer), not necessarily
// the candidate's own.
func compareWithBaselineBy(dir string, cand *result.File, tol map[string]string) (*compare.Report, error) {
	if len(cand.Points) == 0 {
		return compare.Refused(cand, "no point was measured: nothing to gate"), nil
	}
	b, err := baseline.Read(layout.Baselines(dir).Baseline(cand.Suite.Name))
	if errors.Is(err, baseline.ErrNotExist) {
		return compare.WithoutBaseline(cand), nil
	}
	if err != nil {
		return nil, err
	}
	r, err := compare.Compare(b.Result, cand, tol)
	if err != nil {
		return nil, fmt.Errorf("compare %s: %w", cand.Suite.Name, err)
	}
	return r, nil
}

// compareRunByKind is compareWithBaseline for a run whose figures are of
// another kind than its baseline's: virtual time against measured, or
// the simulator against a real server. Comparing the two is refused
// (compare.Compare), but refusing the run itself for it would make
// --virtual and a try on the simulator unusable in any repository with
// baselines, so the run is judged on its SLOs alone and says why it was
// not compared.
func compareRunByKind(dir string, cand *result.File, say io.Writer) (*compare.Report, error) {
	path := layout.Baselines(dir).Baseline(cand.Suite.Name)
	b, err := baseline.Read(path)
	if err == nil && len(cand.Points) > 0 {
		switch {
		case b.Result.Virtual != cand.Virtual:
			fmt.Fprintf(say, "not compared with %s: %s, and this run %s; only its SLOs are judged\n", path,
				map[bool]string{true: "it is virtual time (simulated clock)", false: "it was measured"}[b.Result.Virtual],
				map[bool]string{true: "is virtual time (simulated clock)", false: "was measured"}[cand.Virtual])
			return compare.WithoutBaseline(cand), nil
		case compare.Simulated(b.Result) != compare.Simulated(cand):
			fmt.Fprintf(say, "not compared with %s: %s, and this run %s; only its SLOs are judged\n", path,
				map[bool]string{true: "it ran on benchci's simulator", false: "it measured a server"}[compare.Simulated(b.Result)],
				map[bool]string{true: "ran on benchci's simulator", false: "measured a server"}[compare.Simulated(cand)])
			return compare.WithoutBaseline(cand), nil
		}
	}
	return compareWithBaseline(dir, cand)
}
