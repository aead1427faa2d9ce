package compare_test

import (
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/result"
)

// The gate never mixes a virtual-time replay (run --virtual) with a
// measurement, whichever side it is on: the comparison is refused, and a
// refusal fails the gate. Virtual against virtual compares as measured
// against measured does. The committed baseline, a measured run, reads as
// measured and still compares.
func TestCompareNeverMixesVirtualAndMeasured(t *testing.T) {
	t.Parallel()
	b, err := baseline.Read("../../baselines/quickstart.json")
	if err != nil {
		t.Fatal(err)
	}
	if b.Result.Virtual {
		t.Fatal("the committed baseline, written before virtual runs, reads as virtual")
	}
	// Each side is the committed result, marked as the case says: the
	// same figures, so only the mark can refuse them.
	side := func(virtual bool) *result.File {
		f := *b.Result
		f.Virtual = virtual
		return &f
	}
	cases := []struct {
		name       string
		base, cand bool
		comparable bool
		refusal    string
	}{
		{"measured vs measured", false, false, true, ""},
		{"virtual vs virtual", true, true, true, ""},
		{"measured baseline, virtual candidate", false, true, false, "the candidate is a virtual-time replay"},
		{"virtual baseline, measured candidate", true, false, false, "the baseline is a virtual-time replay"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := compare.Gate(side(c.base), side(c.cand))
			if err != nil {
				t.Fatal(err)
			}
			if r.Comparable != c.comparable {
				t.Fatalf("comparable %v, want %v (refusal %q)", r.Comparable, c.comparable, r.Refusal)
			}
			if !c.comparable {
				if !r.Failed() || len(r.Rows) != 0 || !contains(r.Refusal, c.refusal) || !contains(r.Refusal, "cannot be compared") {
					t.Errorf("failed %v, %d rows, refusal %q: want a failed gate, no rows, a refusal saying %q", r.Failed(), len(r.Rows), r.Refusal, c.refusal)
				}
				return
			}
			if len(r.Rows) == 0 || r.Count(compare.Regression) > 0 || r.Candidate.Virtual != c.cand || r.Baseline.Virtual != c.base {
				t.Errorf("%d rows, %d regressions, sides virtual %v/%v: want the same figures to pass, sides marked as they ran",
					len(r.Rows), r.Count(compare.Regression), r.Baseline.Virtual, r.Candidate.Virtual)
			}
		})
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// Nor a simulated run with a measured one: the committed baseline ran on
// the embedded simulator, and a candidate that measured a real server (a
// url or launched target whose engine is not benchci's simulator) is
// refused against it, either way round.
func TestCompareNeverJudgesASimulatedFigureAsAMeasurement(t *testing.T) {
	t.Parallel()
	b, err := baseline.Read("../../baselines/quickstart.json")
	if err != nil {
		t.Fatal(err)
	}
	if b.Result.Target.Kind != "sim" {
		t.Fatalf("the committed baseline's target is %q, want the simulator", b.Result.Target.Kind)
	}
	// A url or launch side serves a real engine ("vllm"), or benchci's
	// simulator as its own process ("url-sim").
	side := func(kind string) *result.File {
		f := *b.Result
		f.Engine = &result.Engine{Name: "vllm"}
		if kind == "url-sim" {
			kind, f.Engine = "url", &result.Engine{Name: compare.SimEngine}
		}
		f.Target.Kind = kind
		return &f
	}
	for _, c := range []struct {
		base, cand string
		refusal    string
	}{
		{"sim", "sim", ""},
		{"url", "launch", ""},
		{"sim", "url-sim", ""},
		{"sim", "url", "the baseline ran on benchci's simulator and the candidate measured a server"},
		{"launch", "sim", "the candidate ran on benchci's simulator and the baseline measured a server"},
		{"url", "url-sim", "the candidate ran on benchci's simulator and the baseline measured a server"},
	} {
		r, err := compare.Gate(side(c.base), side(c.cand))
		if err != nil {
			t.Fatal(err)
		}
		if c.refusal == "" {
			if !r.Comparable || r.Failed() {
				t.Errorf("%s vs %s: comparable %v, failed %v (%s), want the same figures to pass", c.base, c.cand, r.Comparable, r.Failed(), r.Refusal)
			}
			continue
		}
		if r.Comparable || !r.Failed() || !contains(r.Refusal, c.refusal) {
			t.Errorf("%s vs %s: comparable %v, failed %v, refusal %q: want a failed gate saying %q", c.base, c.cand, r.Comparable, r.Failed(), r.Refusal, c.refusal)
		}
	}
}
