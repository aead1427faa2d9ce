package runner

import (
	"encoding/json"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
)

// Input is a suite to run and what its results file records of where the
// suite came from. A loaded suite file (suitefile.File) holds these; the
// caller copies them, so that runner, and every program that runs suites
// some other way, does not link the Jsonnet evaluator.
type Input struct {
	Suite *suite.Suite
	// Path is the file the suite was read from.
	Path string
	// Definition is the suite as evaluated, before decoding, compacted;
	// Hash is its SHA-256.
	Definition json.RawMessage
	Hash       string
	// WorkloadHash covers only what decides the requests sent and how
	// they are paced: runs with equal ones are comparable.
	WorkloadHash string
}

// record is what a results file says of the suite it ran, a run in the
// given order of variants.
func (in Input) record(order string) result.Suite {
	return result.Suite{Name: in.Suite.RunName(), Path: in.Path, Hash: in.Hash, WorkloadHash: in.WorkloadHash,
		Definition: in.Definition, Variant: in.Suite.Variant, Order: order}
}
