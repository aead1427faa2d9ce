package report

import (
	"strings"

	"github.com/benchci/benchci/framework/internal/untrusted"
)

// OneLine makes untrusted text (a server's error body, a model name) safe
// to print in a CI log: control characters become spaces, so it stays on
// the line it was put on, bidirectional controls become U+FFFD, and "::" is broken with a zero-width joiner, so
// GitHub Actions cannot read it as a workflow command (::error::,
// ::add-mask::, ::set-output::).
func OneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == '\u2028' || r == '\u2029' || r == '\u0085' {
			return ' '
		}
		// Bidirectional overrides and isolates reorder what a terminal or
		// a page shows: made visible, never obeyed.
		if untrusted.Bidi(r) {
			return '\uFFFD'
		}
		return r
	}, s)
	return strings.ReplaceAll(s, "::", ":\u200d:")
}

// Lines is OneLine for text whose line breaks are its own (a server's
// last log lines): each line is kept, and neutralized.
func Lines(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r", ""), "\n")
	for i, l := range lines {
		lines[i] = OneLine(l)
	}
	return strings.Join(lines, "\n")
}
