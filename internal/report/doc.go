package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Table is the one shape every report takes: a title, named columns, rows
// of cells keyed by column, and notes under it. Each output format renders
// it (text, markdown, json: one file each, registered in formats), so a
// new format is one file and every command that prints figures offers it.
type Table struct {
	Title   string
	Columns []Column
	Rows    []Row
	// Notes are lines under the table: what needs saying about its rows.
	Notes []string
}

// Column is one column: Key names it for programs (the JSON key, with the
// unit in the name where the value has one: ttft_p99_ms), Title for people.
type Column struct {
	Key, Title string
	// Right aligns the column to the right, as numbers read best.
	Right bool
}

// Row is one row's cells, by column Key; a column the row lacks is empty.
type Row map[string]Cell

// Cell is what a row holds in a column: the text people read ("80.0ms",
// "$0.62"), and for a figure the number behind it in the unit the
// column's Key names, which JSON carries instead of the text.
type Cell struct {
	Text  string
	Value *float64
}

// Text is a cell of text.
func Text(s string) Cell { return Cell{Text: s} }

// Number is a cell of a figure, v, shown as text; NaN is no figure.
func Number(v float64, text string) Cell {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Cell{Text: text}
	}
	return Cell{Text: text, Value: &v}
}

// Add appends a row of cells, given in the order of the table's columns.
func (t *Table) Add(cells ...Cell) {
	row := make(Row, len(cells))
	for i, c := range cells {
		row[t.Columns[i].Key] = c
	}
	t.Rows = append(t.Rows, row)
}

// Format renders tables. One file per format implements it and registers
// it in formats under the name --format takes.
type Format interface {
	Render(w io.Writer, tables []*Table) error
}

// formats are the formats by name; each format's file registers itself.
var formats = map[string]Format{}

// Formats are the names of the formats every report renders, in the order
// help texts list them: the three this package began with, then any other
// by name.
func Formats() []string {
	names := make([]string, 0, len(formats))
	for n := range formats {
		names = append(names, n)
	}
	first := []string{"text", "markdown", "json"}
	rank := func(n string) int {
		if i := slices.Index(first, n); i >= 0 {
			return i
		}
		return len(first)
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return names
}

// Doc is what one command prints: its tables, and for some formats the
// report's own layout where it predates the tables and golden files fix
// its bytes (the PR comment, the comparison's terminal table). A format
// without a layout renders the tables.
type Doc struct {
	Tables  []*Table
	Layouts map[string]func(io.Writer) error
}

// CheckFormat reports an error naming the valid formats unless name is
// one, or one of extra (formats a command adds, such as html).
func CheckFormat(name string, extra ...string) error {
	if _, ok := formats[name]; ok || slices.Contains(extra, name) {
		return nil
	}
	valid := append(Formats(), extra...)
	return fmt.Errorf("unknown format %q: want %s or %s", name, strings.Join(valid[:len(valid)-1], ", "), valid[len(valid)-1])
}

// Write renders d in format: its layout for the format when it has one,
// else its tables.
func Write(w io.Writer, format string, d Doc) error {
	if l := d.Layouts[format]; l != nil {
		return l(w)
	}
	f, ok := formats[format]
	if !ok {
		return CheckFormat(format)
	}
	return f.Render(w, d.Tables)
}

// writeJSON writes v as indented JSON: the layout of a report whose data
// has a documented shape of its own (compare.Report, variants.Report).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
