package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/layout"
	"github.com/benchci/benchci/internal/redact"
	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/report/htmlpage"
	"github.com/benchci/benchci/internal/variants"
)

func reportCmd() *cobra.Command {
	var o reportOptions
	cmd := &cobra.Command{
		Use:   "report RESULT...",
		Short: "Print the table of results (or baseline) files, or write them as one HTML page",
		Long: `report prints the table of each results (or baseline) file.

With --html it writes one self-contained HTML page instead: the verdict (each
run gated against baselines/<suite>.json when there is one, else its SLOs),
variants compared where several files are variants of one suite, then per
run throughput-latency curves, TTFT and ITL distributions, the points, their
time slices and the provenance. A variants comparison
(results/<suite>.variants.json) stands for the results files it names. Charts
are inline SVG; the page has no script and loads nothing from the network.
With --format html that page is printed on stdout.`,
		Example: `  benchci report results/quickstart.json
  benchci report --html results/report.html results/*.json
  benchci report --html results/shootout.html results/shootout.variants.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd, o, args)
		},
	}
	cmd.Flags().StringVar(&o.htmlPath, "html", "", "write one self-contained HTML report to this file")
	cmd.Flags().StringVar(&o.baselines, "baselines", layout.DefaultBaselines, "directory of baseline files the HTML report gates against")
	o.format = addFormat(cmd, "html")
	return cmd
}

// reportOptions are report's flags.
type reportOptions struct {
	htmlPath, baselines string
	format              *formatFlag
}

// runReport prints the files' figures, or writes their HTML page (to
// --html, or stdout with --format html) with the verdicts it says.
func runReport(cmd *cobra.Command, o reportOptions, args []string) error {
	in, err := readReportInput(args)
	if err != nil {
		return err
	}
	if o.htmlPath == "" && o.format.name != "html" {
		return in.printFigures(cmd, o.format)
	}
	runs := make([]htmlpage.Run, 0, len(in.files))
	for _, f := range in.files {
		g, err := compareWithBaseline(o.baselines, f)
		if err != nil {
			return &exitError{exitUsage, err}
		}
		runs = append(runs, htmlpage.Run{File: f, Gate: g})
	}
	// Files given one by one are compared when they are variants of one
	// suite; a comparison file brings its own.
	vs := append(in.compared, variantReports(in.loose)...)
	if o.htmlPath == "" { // --format html: the page, on stdout
		page, err := htmlPageOf(runs, vs)
		if err != nil {
			return err
		}
		_, err = cmd.OutOrStdout().Write(page)
		return err
	}
	if err := writeHTMLOf(o.htmlPath, runs, vs); err != nil {
		return err
	}
	if o.format.name == "text" {
		fmt.Fprintln(cmd.OutOrStdout(), report.Headline(gates(runs)))
		fmt.Fprintln(cmd.OutOrStdout(), "html:", o.htmlPath)
		return nil
	}
	// The page went to its file; stdout gets the figures in the format
	// asked for, and what is said of the page goes to stderr, so a json or
	// markdown reader never gets a stray line.
	fmt.Fprintln(cmd.ErrOrStderr(), report.Headline(gates(runs)))
	fmt.Fprintln(cmd.ErrOrStderr(), "html:", o.htmlPath)
	return in.printFigures(cmd, o.format)
}

// reportInput is what report read: every file, those given one by one
// (loose), and the variants comparisons read, which bring their files.
type reportInput struct {
	files, loose []*result.File
	compared     []*variants.Report
}

func readReportInput(args []string) (reportInput, error) {
	var in reportInput
	for _, path := range args {
		if layout.IsVariants(path) {
			r, fs, err := readVariants(path)
			if err != nil {
				return in, &exitError{exitUsage, err}
			}
			in.compared = append(in.compared, r)
			in.files = append(in.files, fs...)
			continue
		}
		f, err := compare.ReadReference(path)
		if err != nil {
			return in, &exitError{exitUsage, err}
		}
		in.files, in.loose = append(in.files, f), append(in.loose, f)
	}
	return in, nil
}

// printFigures prints the comparisons read, then every file's points, in
// the format asked for.
func (in reportInput) printFigures(cmd *cobra.Command, format *formatFlag) error {
	out := newOutput(cmd, format)
	for _, r := range in.compared {
		if err := out.print(report.Variants(r)); err != nil {
			return err
		}
	}
	for _, f := range in.files {
		if err := out.print(report.Points(f)); err != nil {
			return err
		}
	}
	return out.flush()
}

// writeHTML writes the HTML report of runs, with the comparisons of any
// variants among files, secrets redacted as in every other report.
func writeHTML(path string, runs []htmlpage.Run, files []*result.File) error {
	return writeHTMLOf(path, runs, variantReports(files))
}

// writeHTMLOf writes the HTML report of runs and the comparisons vs.
func writeHTMLOf(path string, runs []htmlpage.Run, vs []*variants.Report) error {
	page, err := htmlPageOf(runs, vs)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return result.WriteFileAtomic(path, page)
}

// htmlPageOf is the HTML report of runs and the comparisons vs, secrets
// redacted.
func htmlPageOf(runs []htmlpage.Run, vs []*variants.Report) ([]byte, error) {
	var buf bytes.Buffer
	in := htmlpage.Input{Runs: runs, Variants: vs, Tool: Version, Generated: time.Now()}
	if err := htmlpage.Write(&buf, in); err != nil {
		return nil, err
	}
	return redact.Bytes(buf.Bytes()), nil
}

func gates(runs []htmlpage.Run) []*compare.Report {
	out := make([]*compare.Report, len(runs))
	for i, r := range runs {
		out[i] = r.Gate
	}
	return out
}

// readVariants reads a variants comparison and the results file of each
// variant it names, through the bounded readers; a missing one is named,
// with where it was looked for.
func readVariants(path string) (*variants.Report, []*result.File, error) {
	r, err := variants.Read(path)
	if err != nil {
		return nil, nil, err
	}
	files := make([]*result.File, 0, len(r.Variants))
	for _, v := range r.Variants {
		p, err := variants.ResultsPath(path, v)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w (pass the variants' results files instead, or run the suite again)", path, err)
		}
		f, err := compare.ReadReference(p)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: variant %s: %w", path, v.Name, err)
		}
		files = append(files, f)
	}
	return r, files, nil
}
