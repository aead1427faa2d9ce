package main

import (
	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/runner"
)

// runInput is a loaded suite file as the runner takes it: the suite and
// what the results file records of its source.
func runInput(l *suitefile.File) runner.Input {
	return runner.Input{Suite: l.Suite, Path: l.Path, Definition: l.JSON, Hash: l.Hash, WorkloadHash: l.WorkloadHash}
}

// runInputs are a suite's variants as the runner takes them, in order.
func runInputs(vs []suitefile.Variant) []runner.Input {
	out := make([]runner.Input, len(vs))
	for i, v := range vs {
		out[i] = runInput(v.File)
	}
	return out
}
