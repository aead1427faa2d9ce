package main

import (
	"encoding/json"
	"errors"
	"fmt"


	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
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
	return compareResults(b.Result, cand)
}

// compareResults uses the candidate suite's tolerances, read back from the
// evaluated suite stored in its results.
func compareResults(base, cand *result.File) (*compare.Report, error) {
	s, err := suite.Decode(cand.Suite.Definition)
	if err != nil {
		return nil, fmt.Errorf("tolerances of %s: %w", cand.Suite.Name, err)
	}
	r, err := compare.Compare(base, cand, s.Tolerance)
	if err != nil {
		return nil, fmt.Errorf("compare %s: %w", cand.Suite.Name, err)
	}
	return r, nil
}

// readReference reads a baseline file, or a results file used as one.
func readReference(path string) (*result.File, error) {
	var head struct {
		Schema string `json:"schema"`
	}
	data, err := result.ReadBytes(path)
	if err != nil {
		return nil, err
	}
	if json.Unmarshal(data, &head) == nil && head.Schema != baseline.Schema {
		// A results file of any version (Read migrates old ones, and names
		// the versions it knows when it cannot).
		return result.Read(path)
	}
	b, err := baseline.Read(path)
	if err != nil {
		return nil, err
	}
	return b.Result, nil
}
