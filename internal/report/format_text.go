package report

import (
	"io"
	"strings"
	"unicode/utf8"
)

func init() { formats["text"] = textFormat{} }

// textFormat renders tables for a terminal: the title, the columns
// aligned (two spaces apart; right-aligned ones padded on the left, as
// text/tabwriter does), the notes, one table after another. A last column
// that is left-aligned is not padded, and left out where it is empty.
type textFormat struct{}

func (textFormat) Render(w io.Writer, tables []*Table) error {
	var b strings.Builder
	for _, t := range tables {
		if t.Title != "" {
			b.WriteString(OneLine(t.Title) + "\n")
		}
		if len(t.Columns) > 0 {
			textGrid(&b, t)
		}
		for _, n := range t.Notes {
			b.WriteString(Lines(n) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func textGrid(b *strings.Builder, t *Table) {
	const gap = 2
	lines := make([][]string, 0, len(t.Rows)+1)
	head := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		head[i] = OneLine(c.Title)
	}
	lines = append(lines, head)
	for _, r := range t.Rows {
		line := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			line[i] = OneLine(r[c.Key].Text)
		}
		lines = append(lines, line)
	}
	width := make([]int, len(t.Columns))
	for _, l := range lines {
		for i, s := range l {
			width[i] = max(width[i], utf8.RuneCountInString(s))
		}
	}
	last := len(t.Columns) - 1
	for _, l := range lines {
		for i, s := range l {
			c := t.Columns[i]
			pad := strings.Repeat(" ", width[i]+gap-utf8.RuneCountInString(s))
			switch {
			case c.Right:
				b.WriteString(pad + s)
			case i == last:
				if s != "" && i > 0 && t.Columns[i-1].Right {
					b.WriteString(strings.Repeat(" ", gap))
				}
				b.WriteString(s)
			default:
				if i > 0 && t.Columns[i-1].Right {
					b.WriteString(strings.Repeat(" ", gap))
				}
				b.WriteString(s + pad)
			}
		}
		b.WriteString("\n")
	}
}
