package main

import (
	"errors"

	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/baseline"
	"github.com/benchci/benchci/internal/layout"
)

// compareWithBaseline compares a candidate with dir/<suite>.json; with no
// baseline there, only the candidate's SLOs gate.
func compareWithBaseline(dir string, cand *result.File) (*compare.Report, error) {
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
	return compare.Gate(b.Result, cand)
}
