package report

import (
	"fmt"
	"io"

	"github.com/benchci/benchci/framework/compare"
)

// HasPolicyChanges reports whether any report's rules differ from its
// base's: PolicyChanges then has something to say.
func HasPolicyChanges(reports []*compare.Report) bool {
	for _, r := range reports {
		if p := r.Policy; p != nil && len(p.Looser)+len(p.Stricter) > 0 {
			return true
		}
	}
	return false
}

// PolicyChanges writes, for the top of a pull-request comment, the rules
// each suite's change loosened (leading, ⛔ unless approved) or tightened.
// The verdicts below it were given by the base's rules wherever they are
// the stricter: a reader must know that before reading a ✅.
func PolicyChanges(w io.Writer, reports []*compare.Report) error {
	for _, r := range reports {
		p := r.Policy
		if p == nil || len(p.Looser)+len(p.Stricter) == 0 {
			continue
		}
		var err error
		switch {
		case p.Blocks():
			_, err = fmt.Fprintf(w, "> ⛔ **policy loosened: %s.** This change makes its own gate more lenient than its base's (%s). "+
				"It was judged by the stricter rules, and the gate fails until the loosening is approved: re-record the baseline with the new rules "+
				"(`benchci baseline update`) in this pull request, so the owners of `baselines/` review it.\n",
				Escape(r.Suite), Escape(p.Reference))
		case len(p.Looser) > 0:
			_, err = fmt.Fprintf(w, "> ⚠️ **policy loosened, approved: %s.** This change makes its gate more lenient than its base's (%s); approved by %s.\n",
				Escape(r.Suite), Escape(p.Reference), Escape(p.Approved))
		default:
			_, err = fmt.Fprintf(w, "> ℹ️ **policy tightened: %s** (against %s): judged by the stricter rules.\n", Escape(r.Suite), Escape(p.Reference))
		}
		if err != nil {
			return err
		}
		fmt.Fprintln(w, ">")
		for _, c := range p.Looser {
			fmt.Fprintf(w, "> - ⛔ looser: %s\n", Escape(c))
		}
		for _, c := range p.Stricter {
			fmt.Fprintf(w, "> - stricter: %s\n", Escape(c))
		}
		fmt.Fprintln(w)
	}
	return nil
}

// ConfigChanges writes, for the top of a pull-request comment, what each
// suite's change under test changed in the serving config: the flags,
// environment, URL, model and simulator constants, and what the server
// said about itself. A reviewer reads this before any figure.
func ConfigChanges(w io.Writer, reports []*compare.Report) error {
	var any bool
	for _, r := range reports {
		any = any || r.Config != nil
	}
	if !any {
		return nil
	}
	if _, err := fmt.Fprintln(w, "**Changes under test** (base → this change):"); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, r := range reports {
		c := r.Config
		if c == nil {
			continue
		}
		if len(c.Changes) == 0 {
			fmt.Fprintf(w, "- **%s**: the same config: this is a rerun\n", Escape(r.Suite))
			continue
		}
		fmt.Fprintf(w, "- **%s**:\n", Escape(r.Suite))
		for _, ch := range c.Changes {
			fmt.Fprintf(w, "  - %s\n", Escape(ch))
		}
	}
	_, err := fmt.Fprintln(w)
	return err
}
