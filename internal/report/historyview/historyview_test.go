package historyview

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// The chart draws what moved: a figure named at a change point at
// another point than the table's is charted, before the table's figures
// that did not move, and what the cap leaves out is counted.
func TestChartedDrawsWhatMoved(t *testing.T) {
	g := group()
	g.Series = append(g.Series, history.Series{Point: "rate=2", Figure: "itl.p50", Unit: "ms", Values: []float64{18, 24, 24},
		Changes: []history.Change{{Version: 1, Before: 18, After: 24, Worse: true, Test: "quantile test"}}})
	got, left := Charted(&g, "rate=20")
	var names []string
	for _, s := range got {
		names = append(names, s.Figure+"@"+s.Point)
	}
	if want := "ttft.p99@rate=20 itl.p50@rate=2 cost@rate=20"; strings.Join(names, " ") != want || left != 0 {
		t.Errorf("charted %v (left %d), want %s", names, left, want)
	}
	for i := range MaxCharted + 2 {
		g.Series = append(g.Series, history.Series{Point: "rate=6", Figure: fmt.Sprintf("f%d", i), Values: []float64{1, 2, 2},
			Changes: []history.Change{{Version: 1, Before: 1, After: 2}}})
	}
	got, left = Charted(&g, "rate=20")
	if len(got) != MaxCharted || left != 4 {
		t.Errorf("%d charted, %d left; want %d and 4", len(got), left, MaxCharted)
	}
}
