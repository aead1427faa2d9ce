package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/suite"
)

// baseJSON is an evaluated suite as a results file records it.
const baseJSON = `{
  "name": "len",
  "target": {"kind": "sim", "profile": "llama3-8b-h100"},
  "workload": {"input_tokens": {"kind": "fixed", "value": 100}, "output_tokens": {"kind": "fixed", "value": 50}},
  "sweep": {"kind": "rate", "rates": [4, 8], "duration": "20s", "warmup": "2s"},
  "trials": 3,
  "slos": [{"metric": "ttft", "stat": "p99", "op": "<", "threshold": "500ms", "at_rate": 8},
           {"metric": "error_rate", "op": "<=", "threshold": 0.01}],
  "goodput": {"ttft": "500ms", "tpot": "50ms"},
  "tolerance": {"default": "5%", "ttft.p99": "10%|20ms"}
}`

// edit decodes baseJSON after f changed it, as the evaluated suite of a
// pull request that edited its suite file.
func edit(t *testing.T, f func(m map[string]any)) *suite.Suite {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(baseJSON), &m); err != nil {
		t.Fatal(err)
	}
	if f != nil {
		f(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Decode(b)
	if err != nil {
		t.Fatalf("decode: %v\n%s", err, b)
	}
	return s
}

func sweep(m map[string]any) map[string]any { return m["sweep"].(map[string]any) }
func tol(m map[string]any) map[string]any   { return m["tolerance"].(map[string]any) }
func slos(m map[string]any) []any           { return m["slos"].([]any) }

// The twelve ways a change could loosen its own gate inside a suite file
// (the two that delete or rename the suite are the ci command's), and
// stricter or neutral edits, which must not be flagged.
func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
		// looser: the fields flagged looser, each as a prefix; none when empty.
		looser []string
		// changed: at least these fields differ (stricter or neutral).
		changed []string
	}{
		{"tolerance loosened", func(m map[string]any) { tol(m)["default"] = "50%" }, []string{"tolerance.default"}, nil},
		{"a figure turned off", func(m map[string]any) { tol(m)["tpot"] = "off" }, []string{"tolerance.tpot"}, nil},
		{"a key's band widened in ms only", func(m map[string]any) { tol(m)["ttft.p99"] = "10%|50ms" }, []string{"tolerance.ttft.p99"}, nil},
		{"a key removed, falling back to a wider default", func(m map[string]any) {
			tol(m)["default"] = "12%"
			delete(tol(m), "ttft.p99")
		}, []string{"tolerance.default", "tolerance.ttft.p99"}, nil},
		{"error rate band widened", func(m map[string]any) { tol(m)["error_rate"] = "5%" }, []string{"tolerance.error_rate"}, nil},
		{"SLO threshold loosened", func(m map[string]any) { slos(m)[0].(map[string]any)["threshold"] = "800ms" }, []string{"slos: ttft p99"}, nil},
		{"SLO op loosened", func(m map[string]any) { slos(m)[0].(map[string]any)["op"] = "<=" }, []string{"slos: ttft p99"}, nil},
		{"SLO deleted", func(m map[string]any) { m["slos"] = slos(m)[1:] }, []string{"slos: ttft p99"}, nil},
		{"trials reduced", func(m map[string]any) { m["trials"] = 1 }, []string{"trials"}, nil},
		{"duration shortened", func(m map[string]any) { sweep(m)["duration"] = "5s" }, []string{"sweep.duration"}, nil},
		{"warm-up lengthened past the point", func(m map[string]any) { sweep(m)["warmup"] = "30s" }, []string{"sweep.warmup"}, nil},
		{"a judged rate dropped", func(m map[string]any) { sweep(m)["rates"] = []any{8} }, []string{"sweep.rates"}, nil},
		{"goodput loosened", func(m map[string]any) { m["goodput"].(map[string]any)["ttft"] = "2s" }, []string{"goodput.ttft"}, nil},
		{"goodput criterion dropped", func(m map[string]any) { delete(m["goodput"].(map[string]any), "tpot") }, []string{"goodput.tpot"}, nil},
		{"sanity off", func(m map[string]any) { m["sanity"] = map[string]any{"off": true} }, []string{"sanity.off"}, nil},
		{"sanity error bound raised", func(m map[string]any) { m["sanity"] = map[string]any{"max_error_rate": 0.9} }, []string{"sanity.max_error_rate"}, nil},
		{"requests capped", func(m map[string]any) { sweep(m)["requests"] = 10 }, []string{"sweep.requests"}, nil},

		{"no change", nil, nil, nil},
		{"description only", func(m map[string]any) { m["description"] = "now described" }, nil, nil},
		{"tolerance tightened", func(m map[string]any) { tol(m)["default"] = "3%" }, nil, []string{"tolerance.default"}},
		{"a stricter key added", func(m map[string]any) { tol(m)["e2e.p99"] = "2%" }, nil, []string{"tolerance.e2e.p99"}},
		{"SLO tightened", func(m map[string]any) { slos(m)[0].(map[string]any)["threshold"] = "300ms" }, nil, []string{"slos: ttft p99"}},
		{"SLO added", func(m map[string]any) {
			m["slos"] = append(slos(m), map[string]any{"metric": "e2e", "stat": "p99", "op": "<", "threshold": "2s"})
		}, nil, []string{"slos: e2e p99"}},
		{"more trials", func(m map[string]any) { m["trials"] = 5 }, nil, []string{"trials"}},
		{"longer points", func(m map[string]any) { sweep(m)["duration"] = "60s" }, nil, []string{"sweep.duration"}},
		{"a rate added", func(m map[string]any) { sweep(m)["rates"] = []any{4, 8, 12} }, nil, []string{"sweep.rates"}},
		{"sanity bound lowered", func(m map[string]any) { m["sanity"] = map[string]any{"max_error_rate": 0.1} }, nil, []string{"sanity.max_error_rate"}},
		{"same band written differently", func(m map[string]any) { tol(m)["default"] = "5.0%" }, nil, nil},
		{"the same SLO bound written differently", func(m map[string]any) { slos(m)[0].(map[string]any)["threshold"] = "0.5s" }, nil, nil},
		{"a looser duplicate beside the same SLO", func(m map[string]any) {
			m["slos"] = append(slos(m), map[string]any{"metric": "ttft", "stat": "p99", "op": "<", "threshold": "900ms", "at_rate": 8})
		}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, cand := edit(t, nil), edit(t, tc.edit)
			changes, err := Diff(base, cand)
			if err != nil {
				t.Fatal(err)
			}
			looser := Looser(changes)
			if len(looser) != len(tc.looser) {
				t.Fatalf("looser: %v, want %v (all: %v)", looser, tc.looser, changes)
			}
			for i, want := range tc.looser {
				if !strings.HasPrefix(looser[i].Field, want) {
					t.Errorf("looser[%d] = %v, want field %s", i, looser[i], want)
				}
			}
			for _, want := range tc.changed {
				found := false
				for _, c := range changes {
					found = found || strings.HasPrefix(c.Field, want)
				}
				if !found {
					t.Errorf("no change of %s in %v", want, changes)
				}
			}
			if tc.edit == nil && len(changes) > 0 {
				t.Errorf("the same suite differs: %v", changes)
			}
		})
	}
}

// Stricter keeps the base's rule wherever the candidate loosened it, and
// the candidate's wherever it tightened it.
func TestStricter(t *testing.T) {
	base := edit(t, nil)
	cand := edit(t, func(m map[string]any) {
		tol(m)["default"] = "50%"  // looser: 5% applies
		tol(m)["tpot.p99"] = "off" // looser: the default's 5% applies
		tol(m)["ttft.p99"] = "2%"  // stricter: 2% applies
		m["slos"] = []any{map[string]any{"metric": "ttft", "stat": "p99", "op": "<", "threshold": "900ms", "at_rate": 8}}
		m["goodput"] = map[string]any{"ttft": "300ms"}
		m["sanity"] = map[string]any{"off": true}
	})
	s, err := Stricter(base, cand)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"default": "5%", "tpot.p99": "5%", "ttft.p99": "2%"} {
		if got := s.Tolerance[k]; got != want {
			t.Errorf("tolerance %s = %q, want %q (%v)", k, got, want, s.Tolerance)
		}
	}
	if len(s.SLOs) != 2 || threshold(s.SLOs[0]) != "500ms" || s.SLOs[1].Metric != "error_rate" {
		t.Errorf("SLOs %+v: want the base's 500ms and its dropped error_rate SLO", s.SLOs)
	}
	if dur(s.Goodput["ttft"]) != "300ms" || dur(s.Goodput["tpot"]) != "50ms" {
		t.Errorf("goodput %v: want ttft 300ms (the candidate's, stricter) and tpot 50ms (the base's)", s.Goodput)
	}
	if s.Sanity == nil || s.Sanity.Off {
		t.Errorf("sanity %+v: the base's is on", s.Sanity)
	}
	// Stricter than both where neither contains the other.
	mixed, err := Stricter(edit(t, func(m map[string]any) { tol(m)["default"] = "10%" }), edit(t, func(m map[string]any) { tol(m)["default"] = "5%|20ms" }))
	if err != nil {
		t.Fatal(err)
	}
	if got := mixed.Tolerance["default"]; got != "5%" {
		t.Errorf("10%% against 5%%|20ms: %q, want 5%%", got)
	}
}

// Rewriting one metric's band as a band per gated figure changes no
// figure's band: no alarm (the base's "ttft" key is read by no figure once
// every ttft figure has its own).
func TestDiffPerFigureRewrite(t *testing.T) {
	base := edit(t, func(m map[string]any) { m["tolerance"] = map[string]any{"default": "5%", "ttft": "2%"} })
	cand := edit(t, func(m map[string]any) {
		m["tolerance"] = map[string]any{"default": "5%", "ttft.p50": "2%", "ttft.p90": "2%", "ttft.p99": "2%"}
	})
	changes, err := Diff(base, cand)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 0 {
		t.Errorf("an equivalent rewrite reads as %v", changes)
	}
	// Leaving out one figure does loosen it: ttft.p90 falls to 5%.
	cand = edit(t, func(m map[string]any) {
		m["tolerance"] = map[string]any{"default": "5%", "ttft.p50": "2%", "ttft.p99": "2%"}
	})
	changes, _ = Diff(base, cand)
	if l := Looser(changes); len(l) != 1 || l[0].Field != "tolerance.ttft" {
		t.Errorf("ttft.p90 loosened to the default: %v", changes)
	}
}
