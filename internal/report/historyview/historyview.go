// Package historyview writes a baseline's history for a terminal: the
// commits that moved its figures, then a table of its versions. It is apart
// from report so that report does not link go-git.
package historyview

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/internal/history"
	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/untrusted"
)

// Figures are the figures a history table shows for its point,
// those a version has; capacity comes from the suite-wide "search" entry.
var Figures = metric.Keys("ttft.p50", "ttft.p99", "tpot.p99", "e2e.p99", "output_throughput", "cost", "error_rate")

// Write writes a baseline's history, the answer first: the commits
// that moved figures (worse moves first), then per workload a table of
// the versions at point (history.Group.DefaultPoint when empty).
func Write(w io.Writer, path string, groups []history.Group, skipped []history.Skipped, point string, minShift float64) error {
	total := 0
	for _, g := range groups {
		total += len(g.Versions)
	}
	fmt.Fprintf(w, "history of %s: %s", path, report.Plural(total, "version"))
	if len(groups) > 1 {
		fmt.Fprintf(w, " over %d workloads (figures compare only within one)", len(groups))
	}
	fmt.Fprintln(w)
	for _, s := range skipped {
		fmt.Fprintf(w, "skipped %.7s: %s\n", s.Commit, report.OneLine(s.Reason))
	}
	for gi := range groups {
		g := &groups[gi]
		first, last := g.Versions[0], g.Versions[len(g.Versions)-1]
		fmt.Fprintf(w, "\nworkload %.12s: %s, %s %s to %s %s\n", g.WorkloadHash, report.Plural(len(g.Versions), "version"),
			first.Short(), first.Time.UTC().Format("2006-01-02"), last.Short(), last.Time.UTC().Format("2006-01-02"))
		changes := g.Changes()
		if len(changes) == 0 {
			fmt.Fprintf(w, "no change points (%s)\n", method(minShift))
		} else {
			fmt.Fprintf(w, "change points (%s):\n", method(minShift))
			writeChanges(w, g, changes)
		}
		p := point
		if p == "" {
			p = g.DefaultPoint()
		}
		if err := historyTable(w, g, p); err != nil {
			return err
		}
	}
	return nil
}

// writeChanges lists changes by commit, commits in history order, each
// commit's worse moves first.
func writeChanges(w io.Writer, g *history.Group, changes []history.SeriesChange) {
	byVersion := map[int][]history.SeriesChange{}
	for _, c := range changes {
		byVersion[c.Version] = append(byVersion[c.Version], c)
	}
	for _, v := range slices.Sorted(maps.Keys(byVersion)) {
		cs := byVersion[v]
		slices.SortStableFunc(cs, func(a, b history.SeriesChange) int {
			if a.Worse != b.Worse {
				if a.Worse {
					return -1
				}
				return 1
			}
			return 0
		})
		worse := 0
		for _, c := range cs {
			if c.Worse {
				worse++
			}
		}
		mark := "✅"
		if worse > 0 {
			mark = "❌"
		}
		ver := g.Versions[v]
		fmt.Fprintf(w, "  %s %s %s %q: %s moved (%d worse)\n", mark, ver.Short(), ver.Time.UTC().Format("2006-01-02"), report.OneLine(ver.Subject), report.Plural(len(cs), "figure"), worse)
		const shown = 6
		for i, c := range cs {
			if i == shown {
				fmt.Fprintf(w, "      and %d more\n", len(cs)-shown)
				break
			}
			fmt.Fprintf(w, "      %s at %s: %s (%s → %s, %s)\n", c.Figure, report.OneLine(c.Point), relString(c.Change),
				report.Figure(c.Before, c.Unit), report.Figure(c.After, c.Unit), evidence(c.Change))
		}
	}
}

// method says how change points were found and judged.
func method(minShift float64) string {
	return fmt.Sprintf("E-divisive means; p <= 0.05 by permutation, or in a short series p < %g by the versions' histograms and p < %g across the versions; moves of %.0f%% or more",
		history.JudgeAlpha, history.VersionAlpha, 100*minShift)
}

// evidence is what judged a change: its test on the histograms, or the
// permutation test's p.
func evidence(c history.Change) string {
	if c.Test != "" {
		return c.Test
	}
	return fmt.Sprintf("p=%.3f", c.P)
}

func relString(c history.Change) string {
	r := c.Relative()
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return "from zero"
	}
	return report.Pct(r)
}

// Shown are the series a history table (and chart) shows for a
// point: capacity when searched, then Figures that the point has.
func Shown(g *history.Group, point string) []*history.Series {
	var out []*history.Series
	if s := g.Find("search", metric.Capacity); s != nil {
		out = append(out, s)
	}
	for _, f := range Figures {
		if s := g.Find(point, f.String()); s != nil {
			out = append(out, s)
		}
	}
	return out
}

// MaxCharted is the most panels a history chart draws.
const MaxCharted = 12

// Charted are the series a history chart draws, in order: the figures
// that moved at a change point (at any point; those Shown at point
// first, then the largest moves), then the other figures Shown at point,
// up to MaxCharted in all; left is how many that moved were left out.
func Charted(g *history.Group, point string) (series []*history.Series, left int) {
	shown := Shown(g, point)
	var moved []*history.Series
	for _, s := range shown {
		if len(s.Changes) > 0 {
			moved = append(moved, s)
		}
	}
	for _, c := range g.Changes() {
		if !slices.Contains(moved, c.Series) {
			moved = append(moved, c.Series)
		}
	}
	if len(moved) > MaxCharted {
		left = len(moved) - MaxCharted
		moved = moved[:MaxCharted]
	}
	series = moved
	for _, s := range shown {
		if len(series) < MaxCharted && !slices.Contains(series, s) {
			series = append(series, s)
		}
	}
	return series, left
}

func historyTable(w io.Writer, g *history.Group, point string) error {
	cols := Shown(g, point)
	if !slices.Contains(g.Points(), point) || point == "search" {
		fmt.Fprintf(w, "no figures at point %q; points: %s\n", point, strings.Join(g.Points(), ", "))
		return nil
	}
	fmt.Fprintf(w, "figures at %s (▲ ▼ where a change point begins):\n", report.OneLine(point))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "commit\tdate\t"
	for _, c := range cols {
		head += c.Figure + "\t"
	}
	fmt.Fprintln(tw, head+"  subject")
	for i, v := range g.Versions {
		line := v.Short() + "\t" + v.Time.UTC().Format("2006-01-02") + "\t"
		for _, c := range cols {
			cell := "-"
			if x := c.Values[i]; !math.IsNaN(x) {
				cell = report.Figure(x, c.Unit)
			}
			for _, ch := range c.Changes {
				switch {
				case ch.Version == i && ch.After > ch.Before:
					cell += " ▲"
				case ch.Version == i:
					cell += " ▼"
				}
			}
			line += cell + "\t"
		}
		fmt.Fprintln(tw, line+"  "+untrusted.Clip(report.OneLine(v.Subject), 48))
	}
	return tw.Flush()
}

// Doc is a baseline's history as a report: its text is Write's; other
// formats render its tables: per workload, the figures that moved at
// each change point, then the versions' figures at the point.
func Doc(path string, groups []history.Group, skipped []history.Skipped, point string, minShift float64) report.Doc {
	var tables []*report.Table
	head := &report.Table{Title: "history of " + path}
	for _, s := range skipped {
		head.Notes = append(head.Notes, fmt.Sprintf("skipped %.7s: %s", s.Commit, s.Reason))
	}
	tables = append(tables, head)
	for gi := range groups {
		g := &groups[gi]
		p := point
		if p == "" {
			p = g.DefaultPoint()
		}
		tables = append(tables, changesTable(g, minShift), versionsTable(g, p))
	}
	return report.Doc{Tables: tables, Layouts: map[string]func(io.Writer) error{
		"text": func(w io.Writer) error { return Write(w, path, groups, skipped, point, minShift) },
	}}
}

var changeColumns = []report.Column{
	{Key: "commit", Title: "commit"}, {Key: "date", Title: "date"}, {Key: "subject", Title: "subject"},
	{Key: "figure", Title: "figure"}, {Key: "point", Title: "point"}, {Key: "unit", Title: "unit"},
	{Key: "before", Title: "before", Right: true}, {Key: "after", Title: "after", Right: true},
	{Key: "change", Title: "change", Right: true}, {Key: "p", Title: "p", Right: true}, {Key: "worse", Title: "worse"},
	{Key: "test", Title: "test"},
}

// changesTable is one row per figure that moved at a change point.
func changesTable(g *history.Group, minShift float64) *report.Table {
	t := &report.Table{Title: fmt.Sprintf("workload %.12s: change points (%s)", g.WorkloadHash, method(minShift)),
		Columns: changeColumns}
	for _, c := range g.Changes() {
		v := g.Versions[c.Version]
		change := report.Text(relString(c.Change))
		if r := c.Relative(); !math.IsInf(r, 0) && !math.IsNaN(r) {
			change = report.Number(r, report.Pct(r))
		}
		worse := "no"
		if c.Worse {
			worse = "yes"
		}
		t.Add(report.Text(v.Short()), report.Text(v.Time.UTC().Format("2006-01-02")), report.Text(v.Subject),
			report.Text(c.Figure), report.Text(c.Point), report.Text(c.Unit),
			report.Number(c.Before, report.Figure(c.Before, c.Unit)), report.Number(c.After, report.Figure(c.After, c.Unit)),
			change, report.Number(c.P, fmt.Sprintf("%.3f", c.P)), report.Text(worse), report.Text(evidence(c.Change)))
	}
	return t
}

// versionsTable is one row per version: the figures Shown at point.
func versionsTable(g *history.Group, point string) *report.Table {
	t := &report.Table{Title: fmt.Sprintf("workload %.12s: figures at %s", g.WorkloadHash, point),
		Columns: []report.Column{{Key: "commit", Title: "commit"}, {Key: "date", Title: "date"}}}
	if !slices.Contains(g.Points(), point) || point == "search" {
		t.Notes = append(t.Notes, fmt.Sprintf("no figures at point %q; points: %s", point, strings.Join(g.Points(), ", ")))
		return t
	}
	cols := Shown(g, point)
	for _, c := range cols {
		t.Columns = append(t.Columns, report.Column{Key: c.Figure, Title: c.Figure + " (" + c.Unit + ")", Right: true})
	}
	t.Columns = append(t.Columns, report.Column{Key: "subject", Title: "subject"})
	for i, v := range g.Versions {
		cells := []report.Cell{report.Text(v.Short()), report.Text(v.Time.UTC().Format("2006-01-02"))}
		for _, c := range cols {
			cell := report.Text("-")
			if x := c.Values[i]; !math.IsNaN(x) {
				cell = report.Number(x, report.Figure(x, c.Unit))
			}
			cells = append(cells, cell)
		}
		t.Add(append(cells, report.Text(v.Subject))...)
	}
	return t
}
