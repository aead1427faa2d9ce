package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/benchci/benchci/framework/compare"
)

// Summary writes a comparison for the terminal as the PR comment leads
// with it: the verdict, what regressed (worst first, with the test that
// decided it), failed SLOs, what improved, and a count of the rest, which
// Diff lists in full.
func Summary(w io.Writer, r *compare.Report) error {
	if r.NoBaseline {
		fmt.Fprintf(w, "suite %s: no baseline; only SLOs gate%s\n", OneLine(r.Suite), startGating(r, "to start: "))
	} else {
		fmt.Fprintf(w, "suite %s: baseline %s vs candidate %s\n", OneLine(r.Suite), OneLine(r.Baseline.Target), OneLine(r.Candidate.Target))
	}
	fmt.Fprintf(w, "%s\n", Headline([]*compare.Report{r}))
	if n := VirtualNote(r); n != "" {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if r.Gone != "" {
		fmt.Fprintf(w, "  GONE: %s\n", OneLine(r.Gone))
	}
	if !r.Comparable && !r.NoBaseline {
		fmt.Fprintf(w, "  NOT COMPARED: %s\n", OneLine(r.Refusal))
	}
	if r.RequestsDiffer != "" {
		fmt.Fprintf(w, "  note: %s\n", OneLine(r.RequestsDiffer))
	}
	if n := NotGatedNote(r); n != "" {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if r.DefinitionsDiffer != "" {
		fmt.Fprintf(w, "  note: %s\n", OneLine(r.DefinitionsDiffer))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	change := func(verdict string, row compare.Row) {
		if row.Metric == "*" {
			fmt.Fprintf(tw, "  %s\tall @ %s\tmissing from the candidate\t\t\n", verdict, OneLine(row.Point))
			return
		}
		delta := "-"
		if row.Delta != nil {
			delta = Pct(*row.Delta)
		}
		fmt.Fprintf(tw, "  %s\t%s @ %s\t%s → %s %s\t%s\t%s\n", verdict, row.Metric, OneLine(row.Point), Num(row.Base), Num(row.Cand), row.Unit, delta, OneLine(row.Test))
	}
	for _, row := range r.Ranked() {
		v := "REGRESSED"
		if row.Verdict == compare.Missing {
			v = "MISSING"
		}
		change(v, row)
	}
	for _, row := range r.Rows {
		if row.Verdict == compare.Inconclusive {
			what := OneLine(row.Point)
			if row.Metric != "*" {
				what = row.Metric + " @ " + what
			}
			fmt.Fprintf(tw, "  INCONCLUSIVE\t%s\t%s\t\t\n", what, OneLine(row.Test))
		}
	}
	for _, s := range r.SLOs {
		if !s.Pass && !s.Inconclusive {
			what := fmt.Sprintf("%s %s", Num(s.Measured), s.Unit)
			if s.Note != "" {
				what = s.Note
			}
			fmt.Fprintf(tw, "  SLO FAILED\t%s\t%s\t\t\n", OneLine(s.Name), OneLine(what))
		}
	}
	for _, row := range r.Rows {
		if row.Verdict == compare.Improvement {
			change("improved", row)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !r.NoBaseline {
		if n := r.Count(compare.Noise) + r.Count(compare.Pass); n > 0 {
			fmt.Fprintf(w, "  (%d more figures within noise or inside their bands: --verbose lists every figure)\n", n)
		}
	}
	return nil
}

// NotGatedNote names the figures the suite left out of the gate
// (tolerance 'off'), so a reader does not take their absence for a pass.
func NotGatedNote(r *compare.Report) string {
	if len(r.NotGated) == 0 || !r.Comparable {
		return ""
	}
	return "not gated (the suite's tolerance is 'off'): " + OneLine(strings.Join(r.NotGated, ", "))
}

// VirtualNote says, of a comparison whose side was replayed in virtual
// time (run --virtual), that its figures are the simulated clock's, where
// a reader would take them as measured; "" when both sides were measured.
func VirtualNote(r *compare.Report) string {
	switch {
	case r.Candidate.Virtual && (r.Baseline.Virtual || r.NoBaseline || r.Baseline.Suite == ""):
		return "virtual time (simulated clock): these figures were replayed on the embedded simulator, not measured"
	case r.Candidate.Virtual || r.Baseline.Virtual:
		return "virtual time (simulated clock) on one side only: a replay on the simulator is never compared with a measurement"
	}
	return ""
}

// startGating is how a report with no baseline says to start one: a
// virtual run is not made a baseline (benchci baseline update refuses it).
func startGating(r *compare.Report, lead string) string {
	if r.Candidate.Virtual {
		return " (a virtual-time run is not made a baseline: record a measured one)"
	}
	return fmt.Sprintf(" (%sbenchci baseline update results/%s.json)", lead, OneLine(r.Suite))
}
