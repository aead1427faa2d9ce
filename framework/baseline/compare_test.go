package baseline_test

import (
	"testing"

	"github.com/benchci/benchci/framework/compare"
)

// The committed baseline (written by an earlier version) still compares as
// before: against itself every figure passes, as read by the library's
// public reader and judged under its own suite's tolerances. An external
// test: compare reads baselines through this package.
func TestCommittedBaselineComparesWithItself(t *testing.T) {
	t.Parallel()
	b, err := compare.ReadReference("../../framework/result/testdata/quickstart-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := compare.Compare(b, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Comparable || r.Failed() || r.Count(compare.Pass) == 0 {
		t.Errorf("the baseline against itself: comparable %v, failed %v, %d passes", r.Comparable, r.Failed(), r.Count(compare.Pass))
	}
	g, err := compare.Gate(b, b)
	if err != nil || g.Failed() || !g.Comparable {
		t.Errorf("gate against itself: %v", err)
	}
}
