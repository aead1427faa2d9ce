package main

import (
	"cmp"
	"fmt"
)

// Bounds of flags that take a count or a time. A flag's value comes
// from whoever wrote the workflow or the command line; past these, a run
// would not end, or would open more than a machine holds, so the value
// is refused before anything starts.
const (
	// maxBandsRuns bounds bands --runs: each run measures the whole suite.
	maxBandsRuns = 50
	// maxSelftestStreams and maxSelftestRate bound selftest's loads: the
	// suite's own bounds on concurrency and rate.
	maxSelftestStreams = 10_000
	maxSelftestRate    = 100_000
	// maxSelftestValues bounds the lists --streams and --rates take.
	maxSelftestValues = 16
	// maxSimNumSeqs and maxSimBatchedTokens bound the simulator's batch
	// knobs, far above any engine's (vLLM's default is 256 and 8192).
	maxSimNumSeqs       = 65_536
	maxSimBatchedTokens = 4_000_000
)

// inRange refuses v outside [lo, hi], naming the flag: an exitUsage error.
func inRange[T cmp.Ordered](flag string, v, lo, hi T) error {
	if v < lo || v > hi {
		return &exitError{exitUsage, fmt.Errorf("%s %v: want %v to %v", flag, v, lo, hi)}
	}
	return nil
}
