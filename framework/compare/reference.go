package compare

import (
	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/result"
)

// ReadReference reads what a comparison takes as its reference: a
// committed baseline file (baselines/<suite>.json) or a results file of any
// version, read once, bounded and verified as every input is. It returns
// the result either holds, ready for Gate or Compare.
func ReadReference(path string) (*result.File, error) { return baseline.ReadReference(path) }
