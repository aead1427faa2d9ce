package baseline

import (
	"reflect"
	"testing"

	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/result"
)

// The repository's own baseline was written by an earlier version (result
// schema v1, sim durations in nanoseconds, summary made by comparing the
// result with itself). It must still read, migrate, summarize to the same
// figures and compare as before.
func TestCommittedBaselineStillReads(t *testing.T) {
	t.Parallel()
	b, err := Read("../../baselines/quickstart.json")
	if err != nil {
		t.Fatal(err)
	}
	if b.Result.Schema != result.Schema {
		t.Errorf("embedded result schema %q, want it migrated to %q", b.Result.Schema, result.Schema)
	}
	sp := b.Result.Target.Sim
	if sp == nil || sp.StepBaseMs != 18 || sp.DecodePerSeqMs != 0.15 || sp.PrefillPerTokenMs != 0.11 {
		t.Errorf("migrated sim profile %+v, want step_base_ms 18, decode_per_seq_ms 0.15, prefill_per_token_ms 0.11", sp)
	}
	if got := summarize(b.Result); !reflect.DeepEqual(got, b.Summary) {
		t.Errorf("summary computed now differs from the committed one:\n got %+v\nwant %+v", got, b.Summary)
	}
	r, err := compare.Compare(b.Result, b.Result, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Comparable || r.Failed() || r.Count(compare.Pass) == 0 {
		t.Errorf("the baseline against itself: comparable %v, failed %v, %d passes", r.Comparable, r.Failed(), r.Count(compare.Pass))
	}
}
