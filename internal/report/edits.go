package report

import (
	"fmt"
	"io"
	"math"

	"github.com/benchci/benchci/framework/baseline"
)

// BaselineEdit is what a pull request's change of one suite's baseline
// file moved, against the base branch's version.
type BaselineEdit struct {
	Suite string
	// Base is the base revision's commit the old version was read at.
	Base string
	// Added: the base had no baseline for the suite; Err: the base's
	// version could not be read, so the edit could not be shown.
	Added bool
	// Removed: the base had a baseline for the suite, and this change
	// deletes it.
	Removed bool
	Err     string
	Edit    baseline.Edit
}

// maxEditRows bounds the table of moved figures in a comment.
const maxEditRows = 15

// BaselineEdits writes, for the top of a pull-request comment, what the
// PR's edits of baselines moved: a baseline edited by hand (or
// re-recorded on a slower machine) changes what the gate lets through,
// and a reviewer must see that above the verdict, not in a JSON diff.
func BaselineEdits(w io.Writer, edits []BaselineEdit) error {
	for _, e := range edits {
		at := ""
		if e.Base != "" {
			at = " (against " + Escape(short(e.Base)) + ")"
		}
		var err error
		switch {
		case e.Err != "":
			_, err = fmt.Fprintf(w, "> ⚠️ **This pull request changes the baseline of %s**, and its base version could not be read to show what moved: %s\n\n", Escape(e.Suite), Escape(OneLine(e.Err)))
		case e.Removed:
			_, err = fmt.Fprintf(w, "> ⚠️ **This pull request deletes the baseline of %s**%s: the gate no longer compares its figures with anything.\n\n", Escape(e.Suite), at)
		case e.Added:
			_, err = fmt.Fprintf(w, "> ℹ️ **This pull request adds the baseline of %s**%s: from now on the gate judges against it.\n\n", Escape(e.Suite), at)
		case e.Edit.WorkloadChanged:
			_, err = fmt.Fprintf(w, "> ⚠️ **This pull request re-records the baseline of %s for a changed workload**%s: its figures do not compare with the old ones.\n\n", Escape(e.Suite), at)
		default:
			err = editTable(w, e, at)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func editTable(w io.Writer, e BaselineEdit, at string) error {
	moves, lenient := e.Edit.Moves, e.Edit.Lenient()
	if len(moves) == 0 {
		_, err := fmt.Fprintf(w, "> ℹ️ This pull request rewrites the baseline of %s%s; no gated figure moved.\n\n", Escape(e.Suite), at)
		return err
	}
	icon, tail := "ℹ️", "none makes the gate more lenient"
	if lenient > 0 {
		icon, tail = "⚠️", fmt.Sprintf("**%d make the gate more lenient**", lenient)
	}
	fmt.Fprintf(w, "> %s **This pull request edits the baseline of %s**%s: %d gated figures moved; %s.\n\n", icon, Escape(e.Suite), at, len(moves), tail)
	fmt.Fprintln(w, "| point | figure | base | this PR | change | |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---|")
	for i, m := range moves {
		if i == maxEditRows {
			fmt.Fprintf(w, "| … | %d more | | | | |\n", len(moves)-maxEditRows)
			break
		}
		from, to, change := editNum(m.From), editNum(m.To), "new"
		switch {
		case m.Gone:
			to, change = "not gated", "removed"
		case m.Added:
			from = "—"
		default:
			if c := m.Change(); !math.IsNaN(c) {
				change = fmt.Sprintf("%+.1f%%", 100*c)
			} else {
				change = "from 0"
			}
		}
		if m.Gone && m.Figure == "*" {
			from = "every figure"
		}
		flag := ""
		if m.Lenient {
			flag = "more lenient"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", Escape(m.Point), Escape(m.Figure), from, to, change, flag)
	}
	_, err := fmt.Fprintln(w)
	return err
}

func editNum(v float64) string { return Plain(v, 4) } // 11130, not 1.113e+04

func short(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	return h
}
