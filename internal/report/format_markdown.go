package report

import (
	"io"
	"strings"
)

func init() { formats["markdown"] = markdownFormat{} }

// markdownFormat renders tables as GitHub markdown: the title as a
// heading, the table (numbers right-aligned), the notes as a list; every
// text escaped, since names and errors come from servers and files.
type markdownFormat struct{}

func (markdownFormat) Render(w io.Writer, tables []*Table) error {
	var b strings.Builder
	for _, t := range tables {
		if t.Title != "" {
			b.WriteString("### " + Escape(t.Title) + "\n\n")
		}
		if len(t.Columns) > 0 {
			b.WriteString("|")
			for _, c := range t.Columns {
				title := c.Title
				if title == "" {
					title = c.Key // a column the text layout leaves unheaded is still named here
				}
				b.WriteString(" " + Escape(title) + " |")
			}
			b.WriteString("\n|")
			for _, c := range t.Columns {
				if c.Right {
					b.WriteString("---:|")
				} else {
					b.WriteString("---|")
				}
			}
			b.WriteString("\n")
			for _, r := range t.Rows {
				b.WriteString("|")
				for _, c := range t.Columns {
					b.WriteString(" " + Escape(r[c.Key].Text) + " |")
				}
				b.WriteString("\n")
			}
			b.WriteString("\n")
		}
		for _, n := range t.Notes {
			// A note indented under the one before it (the text layout's
			// groups, "SLOs:" then its verdicts) stays nested.
			indent := ""
			if strings.HasPrefix(n, " ") {
				indent = "  "
			}
			b.WriteString(indent + "- " + Escape(strings.TrimSpace(n)) + "\n")
		}
		if len(t.Notes) > 0 {
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
