package report

import (
	"fmt"
	"io"

	"github.com/benchci/benchci/framework/compare"
)

// Comparison is one comparison as compare prints it: text the terminal
// table (Diff), markdown the PR comment under marker, JSON the
// compare.Report itself; other formats render its table of figures.
func Comparison(r *compare.Report, marker string) Doc {
	return Doc{Tables: []*Table{diffTable(r)}, Layouts: map[string]func(io.Writer) error{
		"text":     func(w io.Writer) error { return Diff(w, r) },
		"markdown": func(w io.Writer) error { return Markdown(w, marker, []*compare.Report{r}) },
		"json":     func(w io.Writer) error { return writeJSON(w, r) },
	}}
}

// Gate is one comparison as run and ci print it after measuring: text
// the summary that leads the PR comment, and verbose every compared
// figure after it; markdown the comment; other formats (json) its table
// of figures, so that it joins a run's other tables in one document.
func Gate(r *compare.Report, verbose bool) Doc {
	return Doc{Tables: []*Table{diffTable(r)}, Layouts: map[string]func(io.Writer) error{
		"text": func(w io.Writer) error {
			if err := Summary(w, r); err != nil {
				return err
			}
			if verbose && !r.NoBaseline {
				return Diff(w, r)
			}
			return nil
		},
		"markdown": func(w io.Writer) error { return Markdown(w, "", []*compare.Report{r}) },
	}}
}

// diffTable is every compared figure, as Diff lists them, the verdict in
// the title and what kept it from comparing in the notes.
func diffTable(r *compare.Report) *Table {
	t := &Table{Title: "suite " + r.Suite + ": " + Headline([]*compare.Report{r}), Columns: diffColumns}
	if n := VirtualNote(r); n != "" {
		t.Notes = append(t.Notes, n)
	}
	if r.NoBaseline {
		t.Notes = append(t.Notes, "no baseline; only SLOs gate")
	} else if !r.Comparable {
		t.Notes = append(t.Notes, "not compared: "+r.Refusal)
	}
	if r.RequestsDiffer != "" {
		t.Notes = append(t.Notes, r.RequestsDiffer)
	}
	if n := NotGatedNote(r); n != "" {
		t.Notes = append(t.Notes, n)
	}
	if r.DefinitionsDiffer != "" {
		t.Notes = append(t.Notes, r.DefinitionsDiffer)
	}
	for _, row := range r.Rows {
		delta := Text("-")
		if row.Delta != nil {
			delta = Number(*row.Delta, Pct(*row.Delta))
		}
		base, cand := Number(row.Base, Num(row.Base)), Number(row.Cand, Num(row.Cand))
		if row.Verdict == compare.Inconclusive && row.Base == 0 && row.Cand == 0 {
			// A point with no figure judged ("*", a search that stopped):
			// its test says why; a 0 would read as a measurement.
			base, cand = Text("-"), Text("-")
		}
		t.Add(Text(row.Point), Text(row.Metric), base, cand, Text(row.Unit),
			delta, Text(row.Band), Text(string(row.Verdict)), Text(row.Test))
	}
	for _, s := range r.SLOs {
		verdict := "pass"
		switch {
		case s.Inconclusive:
			verdict = "inconclusive"
		case !s.Pass:
			verdict = "fail"
		}
		t.Notes = append(t.Notes, "SLO "+verdict+": "+s.Name)
	}
	return t
}

// diffText is the comparison for a terminal: what kept it from comparing,
// then every figure, then the verdict. Its columns are diffColumns less
// the unit (each figure's own), left-aligned.
func diffText(r *compare.Report) []*Table {
	if r.NoBaseline {
		t := &Table{Title: fmt.Sprintf("suite %s: no baseline; only SLOs gate%s", r.Suite, startGating(r, ""))}
		if n := VirtualNote(r); n != "" {
			t.Notes = append(t.Notes, "note: "+n)
		}
		return []*Table{t}
	}
	head := &Table{Title: fmt.Sprintf("suite %s: baseline %s vs candidate %s", r.Suite, r.Baseline.Target, r.Candidate.Target)}
	if n := VirtualNote(r); n != "" {
		head.Notes = append(head.Notes, "note: "+n)
	}
	if !r.Comparable {
		head.Notes = append(head.Notes, "NOT COMPARED: "+r.Refusal)
	}
	if r.RequestsDiffer != "" {
		head.Notes = append(head.Notes, "note: "+r.RequestsDiffer)
	}
	if n := NotGatedNote(r); n != "" {
		head.Notes = append(head.Notes, "note: "+n)
	}
	if r.DefinitionsDiffer != "" {
		head.Notes = append(head.Notes, "note: "+r.DefinitionsDiffer)
	}
	grid := diffTable(r)
	grid.Title, grid.Notes = "", []string{Headline([]*compare.Report{r})}
	grid.Columns = nil
	for _, c := range diffColumns {
		if c.Key != "unit" {
			grid.Columns = append(grid.Columns, Column{Key: c.Key, Title: c.Title})
		}
	}
	return []*Table{head, grid}
}

// diffColumns are the comparison table's columns; delta is a fraction.
var diffColumns = []Column{
	{Key: "point", Title: "point"}, {Key: "metric", Title: "metric"},
	{Key: "baseline", Title: "baseline", Right: true}, {Key: "candidate", Title: "candidate", Right: true}, {Key: "unit", Title: "unit"},
	{Key: "delta", Title: "delta", Right: true}, {Key: "band", Title: "band"}, {Key: "verdict", Title: "verdict"}, {Key: "test", Title: "test"},
}
