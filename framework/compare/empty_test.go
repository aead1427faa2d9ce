package compare

import (
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/result"
)

// F8: a point that answered nothing (a trace whose timestamps put every
// request past the window) has no figure to judge. It must fail as
// missing, not pass by having nothing to fail.
func TestPointThatAnsweredNothingIsMissing(t *testing.T) {
	b, err := baseline.Read("../../framework/result/testdata/quickstart-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	cand := *b.Result
	cand.Points = append([]result.Point(nil), b.Result.Points...)
	p := &cand.Points[0]
	p.Measured = result.Measured{Latency: map[string]result.Summary{}, Histograms: map[string]string{}}
	p.Cost = nil
	r, err := Compare(b.Result, &cand, nil)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, row := range r.Rows {
		if row.Point == p.Label && row.Verdict == Missing && strings.Contains(row.Test, "this run none") {
			found = true
		}
	}
	if !found || r.Count(Missing) != 1 {
		t.Errorf("rows %+v: want %s missing", r.Rows, p.Label)
	}
}
