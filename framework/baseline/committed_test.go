package baseline

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/result"
)

// The repository's own baseline was written by an earlier version (result
// schema v1, sim durations in nanoseconds, summary made by comparing the
// result with itself). It must still read, migrate, summarize to the same
// figures and compare as before.
func TestCommittedBaselineStillReads(t *testing.T) {
	t.Parallel()
	b, err := Read("../../framework/result/testdata/quickstart-v1.json")
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
}

// A baseline whose summary was edited, whose result's figures no longer
// match their histograms, or that has no points is refused on read.
func TestTamperedBaselinesAreRefused(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../framework/result/testdata/quickstart-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, old, new, err string }{
		{"summary edited", `"ttft.p99": 111.423`, `"ttft.p99": 99.0`, "summary rate=2 ttft.p99 reads 99"},
		{"figure edited", `"p99": 111.423,`, `"p99": 90.0,`, "does not match its histogram"},
		{"no points", `"points": [`, `"points": [`, "no points"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := string(data)
			if !strings.Contains(s, tc.old) {
				t.Fatalf("fixture lacks %q", tc.old)
			}
			s = strings.Replace(s, tc.old, tc.new, 1)
			if tc.name == "no points" {
				s = emptyPoints(t, data)
			}
			_, err := Parse([]byte(s))
			if err == nil || (tc.err != "" && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("Parse: %v, want an error containing %q", err, tc.err)
			}
		})
	}
}

// emptyPoints returns the baseline with its result's points and the
// summary emptied, consistently: only the emptiness is wrong.
func emptyPoints(t *testing.T, data []byte) string {
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	doc["summary"] = []any{}
	doc["result"].(map[string]any)["points"] = []any{}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// ReadReference takes the committed baseline and a results file alike, and
// refuses a broken baseline.
func TestReadReferenceTakesBaselinesAndResults(t *testing.T) {
	t.Parallel()
	fromBaseline, err := ReadReference("../../framework/result/testdata/quickstart-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/r.json"
	if err := result.Write(path, fromBaseline); err != nil {
		t.Fatal(err)
	}
	fromResults, err := ReadReference(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromResults.Points, fromBaseline.Points) {
		t.Error("the results file read back differs from the baseline's result")
	}
	if err := os.WriteFile(path, []byte(`{"schema":"benchci.baseline/v1","result":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadReference(path); err == nil || !strings.Contains(err.Error(), "read baseline") {
		t.Errorf("a broken baseline: %v", err)
	}
}
