package main

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/internal/report"
)

// formatFlag is --format, how a command prints its figures: one type, so
// that the flag is spelled, explained and checked alike on every command.
// An unknown format fails as the flags are parsed, naming the valid ones.
type formatFlag struct {
	name  string
	extra []string // formats this command adds to report's (html)
}

// addFormat registers --format on cmd, text by default; extra are the
// formats the command prints itself, beside those every report renders.
func addFormat(cmd *cobra.Command, extra ...string) *formatFlag {
	f := &formatFlag{name: "text", extra: extra}
	names := append(report.Formats(), extra...)
	cmd.Flags().Var(f, "format", "output format: "+strings.Join(names[:len(names)-1], ", ")+" or "+names[len(names)-1])
	return f
}

func (f *formatFlag) String() string { return f.name }
func (f *formatFlag) Type() string   { return "string" }
func (f *formatFlag) Set(s string) error {
	if err := report.CheckFormat(s, f.extra...); err != nil {
		return err
	}
	f.name = s
	return nil
}

// output prints a command's reports in its --format. Text and markdown
// print each report when it comes, among the command's other lines; JSON
// gathers every report's tables into one document, printed by flush, and
// sends the other lines (say) to stderr, so stdout parses as JSON.
type output struct {
	format         string
	stdout, stderr io.Writer
	tables         []*report.Table
}

func newOutput(cmd *cobra.Command, f *formatFlag) *output {
	o := &output{format: "text", stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr()}
	if f != nil {
		o.format = f.name
	}
	return o
}

// gathers reports whether reports are held for one document.
func (o *output) gathers() bool { return o.format == "json" }

// print prints d, or holds its tables for flush.
func (o *output) print(d report.Doc) error {
	if o.gathers() {
		o.tables = append(o.tables, d.Tables...)
		return nil
	}
	return report.Write(o.stdout, o.format, d)
}

// say is where a command's lines other than its reports go.
func (o *output) say() io.Writer {
	if o.gathers() {
		return o.stderr
	}
	return o.stdout
}

// flush prints the tables held, once, when the command is done.
func (o *output) flush() error {
	if !o.gathers() {
		return nil
	}
	tables := o.tables
	o.tables = nil
	return report.Write(o.stdout, o.format, report.Doc{Tables: tables})
}

// output is where run and ci print their reports: in the command's
// --format, text where none was set.
func (o runOptions) output(cmd *cobra.Command) *output {
	if o.out != nil {
		return o.out
	}
	return newOutput(cmd, nil)
}

// done flushes what is held and returns err, the command's own error,
// first: a run that failed part-way still prints what it measured.
func (o *output) done(err error) error {
	if ferr := o.flush(); err == nil {
		return ferr
	}
	return err
}
