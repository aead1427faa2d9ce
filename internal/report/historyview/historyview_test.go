package historyview

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/internal/history"
	"github.com/benchci/benchci/internal/report"
)

// group is three versions of one workload; TTFT P99 moved up at the
// second, and the first lacks the cost.
func group() history.Group {
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	return history.Group{WorkloadHash: "7177764bdf84aaaa",
		Versions: []history.Version{{Commit: "e0d483d00", Time: day, Subject: "one"}, {Commit: "c1ad60e00", Time: day, Subject: "two"}, {Commit: "c016a2b00", Time: day, Subject: "three"}},
		Series: []history.Series{
			{Point: "rate=20", Figure: "ttft.p99", Unit: "ms", Values: []float64{100, 150, 151},
				Changes: []history.Change{{Version: 1, Commit: "c1ad60e00", Before: 100, After: 150.5, Worse: true, P: 0.025}}},
			{Point: "rate=20", Figure: "cost", Unit: "$/1M out", Values: []float64{math.NaN(), 3.7, 3.7}},
		}}
}

// The history's JSON has one table of change points and one of versions,
// the figures as numbers and a figure a version lacks as null.
func TestDocJSON(t *testing.T) {
	var b bytes.Buffer
	if err := report.Write(&b, "json", Doc("baselines/q.json", []history.Group{group()}, nil, "", 0.05)); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Tables []struct {
			Title string
			Rows  []map[string]any
		}
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if len(got.Tables) != 3 {
		t.Fatalf("%d tables, want the header, the changes and the versions:\n%s", len(got.Tables), b.String())
	}
	changes, versions := got.Tables[1].Rows, got.Tables[2].Rows
	if len(changes) != 1 || changes[0]["commit"] != "c1ad60e" || changes[0]["after"] != 150.5 || changes[0]["worse"] != "yes" {
		t.Errorf("changes %v", changes)
	}
	if len(versions) != 3 || versions[0]["ttft.p99"] != 100.0 || versions[0]["cost"] != nil || versions[2]["subject"] != "three" {
		t.Errorf("versions %v", versions)
	}
	if !strings.Contains(got.Tables[2].Title, "rate=20") {
		t.Errorf("versions title %q", got.Tables[2].Title)
	}
}

// Its text stays Write's.
func TestDocText(t *testing.T) {
	groups := []history.Group{group()}
	var doc, direct bytes.Buffer
	if err := report.Write(&doc, "text", Doc("q.json", groups, nil, "", 0.05)); err != nil {
		t.Fatal(err)
	}
	if err := Write(&direct, "q.json", groups, nil, "", 0.05); err != nil {
		t.Fatal(err)
	}
	if doc.String() != direct.String() || !strings.Contains(doc.String(), "150.0ms ▲") {
		t.Errorf("text:\n%s\nwant:\n%s", doc.String(), direct.String())
	}
}
