package report

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/compare"
)

// smallTable has a left and right-aligned column, a figure, an empty cell,
// a missing cell, text that needs escaping, and a note.
func smallTable() *Table {
	t := &Table{Title: "two points", Columns: []Column{
		{Key: "point", Title: "point"}, {Key: "ttft_p99_ms", Title: "TTFT p99", Right: true}, {Key: "flags", Title: "flags"},
	}}
	t.Add(Text("rate=1"), Number(80, "80.0ms"), Text("SATURATED"))
	t.Add(Text("rate=16|x"), Text("-"))
	t.Notes = []string{"rate=16: 1 × http_503"}
	return t
}

// Every format renders the small table, exactly.
func TestFormatsRenderTable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ format, want string }{
		{"text", "two points\n" +
			"point        TTFT p99  flags\n" +
			"rate=1         80.0ms  SATURATED\n" +
			"rate=16|x           -\n" +
			"rate=16: 1 × http_503\n"},
		{"markdown", "### two points\n\n" +
			"| point | TTFT p99 | flags |\n|---|---:|---|\n" +
			"| rate=1 | 80.0ms | SATURATED |\n" +
			"| rate=16\\|x | - |  |\n\n" +
			"- rate=16:\u200b 1 × http\\_503\n\n"}, // escaped: no links, no emphasis
		{"json", `{
  "tables": [
    {
      "title": "two points",
      "columns": [
        {
          "key": "point",
          "title": "point"
        },
        {
          "key": "ttft_p99_ms",
          "title": "TTFT p99"
        },
        {
          "key": "flags",
          "title": "flags"
        }
      ],
      "rows": [
        {
          "point": "rate=1",
          "ttft_p99_ms": 80,
          "flags": "SATURATED"
        },
        {
          "point": "rate=16|x",
          "ttft_p99_ms": null,
          "flags": null
        }
      ],
      "notes": [
        "rate=16: 1 × http_503"
      ]
    }
  ]
}
`},
	} {
		var b bytes.Buffer
		if err := Write(&b, tc.format, Doc{Tables: []*Table{smallTable()}}); err != nil {
			t.Fatalf("%s: %v", tc.format, err)
		}
		if b.String() != tc.want {
			t.Errorf("%s:\n--- got\n%s--- want\n%s", tc.format, b.String(), tc.want)
		}
	}
}

// Every registered format renders every report, and json is one valid
// document whose rows have every column's key.
func TestEveryFormatRendersEveryReport(t *testing.T) {
	t.Parallel()
	docs := map[string]Doc{
		"points":     Points(sample()),
		"variants":   Variants(sampleVariants()),
		"comparison": Comparison(sampleReports()[0], Marker("k")),
		"gate":       Gate(sampleReports()[0], true),
		"empty":      {Tables: []*Table{{Title: "nothing"}}},
	}
	for name, d := range docs {
		for _, f := range Formats() {
			var b bytes.Buffer
			if err := Write(&b, f, d); err != nil {
				t.Errorf("%s as %s: %v", name, f, err)
				continue
			}
			if b.Len() == 0 {
				t.Errorf("%s as %s: nothing written", name, f)
			}
			if f == "json" && !json.Valid(b.Bytes()) {
				t.Errorf("%s as json is not JSON:\n%s", name, b.String())
			}
		}
		// The tables alone, as json, whatever layout the report has.
		var b bytes.Buffer
		if err := formats["json"].Render(&b, d.Tables); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Tables []struct {
				Columns []struct{ Key string }
				Rows    []map[string]any
				Notes   []string
			}
		}
		if err := json.Unmarshal(b.Bytes(), &got); err != nil || len(got.Tables) != len(d.Tables) {
			t.Fatalf("%s: %v\n%s", name, err, b.String())
		}
		for _, tb := range got.Tables {
			for _, r := range tb.Rows {
				if len(r) != len(tb.Columns) {
					t.Errorf("%s: row %v lacks some of the columns %v", name, r, tb.Columns)
				}
			}
		}
	}
}

// The points table's JSON carries figures as numbers under keys with units.
func TestPointsJSONFigures(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := Write(&b, "json", Points(sample())); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Tables []struct{ Rows []map[string]any }
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	row := got.Tables[0].Rows[0]
	if row["point"] != "rate=1" || row["ttft_p50_ms"] != 80.0 || row["error_rate"] != 0.01 || row["flags"] != nil {
		t.Errorf("first row %v", row)
	}
}

// An unknown format is an error that lists the valid ones; a command's
// own extra format is accepted where it says so. The list is the
// registry's, so a new format's file is all it takes to be offered.
func TestUnknownFormat(t *testing.T) {
	t.Parallel()
	names := Formats()
	if len(names) < 3 || strings.Join(names[:3], " ") != "text markdown json" {
		t.Errorf("formats %q: text, markdown and json lead", names)
	}
	valid := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	err := Write(io.Discard, "yaml", Doc{})
	if err == nil || err.Error() != `unknown format "yaml": want `+valid {
		t.Errorf("error %v", err)
	}
	if err := CheckFormat("html", "html"); err != nil {
		t.Error(err)
	}
	if err := CheckFormat("html"); err == nil {
		t.Error("html accepted where no command offered it")
	}
}

// The comparison's terminal table, rendered through the text format, is
// what Diff printed with its own tabwriter (testdata/diff.golden was
// written by that implementation): compared, without a baseline, and
// refused with a note.
func TestDiffThroughTextFormat(t *testing.T) {
	t.Parallel()
	rs := sampleReports()
	refused := *rs[0]
	refused.Comparable, refused.Refusal, refused.RequestsDiffer = false, "other workload", "the candidate sent 3% fewer requests"
	var b bytes.Buffer
	for _, r := range []*compare.Report{rs[0], rs[1], &refused} {
		if err := Write(&b, "text", Comparison(r, "")); err != nil {
			t.Fatal(err)
		}
	}
	golden(t, "testdata/diff.golden", b.String())
}

// In markdown a column the text layout leaves unheaded is named by its key,
// and a note indented under another stays nested under it.
func TestMarkdownNamesUntitledColumnsAndNestsNotes(t *testing.T) {
	t.Parallel()
	tb := &Table{Columns: []Column{{Key: "point", Title: "point"}, {Key: "flags"}}}
	tb.Add(Text("rate=1"), Text("SATURATED"))
	tb.Notes = []string{"SLOs:", "  PASS ttft p99 < 500ms"}
	var b strings.Builder
	if err := formats["markdown"].Render(&b, []*Table{tb}); err != nil {
		t.Fatal(err)
	}
	want := "| point | flags |\n|---|---|\n| rate=1 | SATURATED |\n\n- SLOs:\u200b\n  - PASS ttft p99 &lt; 500ms\n\n" // escaped as every text is
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}
