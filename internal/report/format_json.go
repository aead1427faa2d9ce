package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

func init() { formats["json"] = jsonFormat{} }

// jsonFormat renders tables as one JSON document for programs:
// {"tables": [{"title", "columns": [{"key", "title"}], "rows", "notes"}]}.
// Every key is always there; a row is an object keyed by column key, in
// the columns' order, its figures numbers and its empty cells ("" or "-")
// null. Texts are as the data holds them: escaping is the reader's.
type jsonFormat struct{}

type jsonColumn struct {
	Key   string `json:"key"`
	Title string `json:"title"`
}

func (jsonFormat) Render(w io.Writer, tables []*Table) error {
	var b bytes.Buffer
	b.WriteString(`{"tables":[`)
	for i, t := range tables {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := jsonTable(&b, t); err != nil {
			return err
		}
	}
	b.WriteString("]}")
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return fmt.Errorf("json report: %w", err)
	}
	out.WriteByte('\n')
	_, err := w.Write(out.Bytes())
	return err
}

func jsonTable(b *bytes.Buffer, t *Table) error {
	cols := make([]jsonColumn, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = jsonColumn{c.Key, c.Title}
	}
	notes := t.Notes
	if notes == nil {
		notes = []string{}
	}
	head, err := json.Marshal(struct {
		Title   string       `json:"title"`
		Columns []jsonColumn `json:"columns"`
	}{t.Title, cols})
	if err != nil {
		return err
	}
	b.Write(head[:len(head)-1]) // the object stays open for its rows
	b.WriteString(`,"rows":[`)
	for i, r := range t.Rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		for j, c := range t.Columns {
			if j > 0 {
				b.WriteByte(',')
			}
			k, err := json.Marshal(c.Key)
			if err != nil {
				return err
			}
			v, err := jsonCell(r[c.Key])
			if err != nil {
				return err
			}
			b.Write(k)
			b.WriteByte(':')
			b.Write(v)
		}
		b.WriteByte('}')
	}
	n, err := json.Marshal(notes)
	if err != nil {
		return err
	}
	b.WriteString(`],"notes":`)
	b.Write(n)
	b.WriteByte('}')
	return nil
}

func jsonCell(c Cell) ([]byte, error) {
	switch {
	case c.Value != nil:
		return json.Marshal(*c.Value)
	case c.Text == "" || c.Text == "-":
		return []byte("null"), nil
	}
	return json.Marshal(c.Text)
}
