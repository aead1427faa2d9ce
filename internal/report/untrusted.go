package report

import (
	"strings"

	"github.com/benchci/benchci/internal/untrusted"
)

// OneLine makes untrusted text (a server's error body, a model name) safe
// to print in a CI log: untrusted.Text neutralizes control, bidirectional
// and invisible characters (tabs become spaces too, so the text stays on
// the line it was put on), and "::" is broken with a zero-width joiner,
// so GitHub Actions cannot read it as a workflow command (::error::,
// ::add-mask::, ::set-output::).
func OneLine(s string) string {
	s = untrusted.Text(strings.ReplaceAll(s, "\t", " "))
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
