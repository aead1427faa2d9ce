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
	"github.com/benchci/benchci/internal/baseline"
	"github.com/benchci/benchci/internal/layout"
	"github.com/benchci/benchci/internal/redact"
	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/report/htmlpage"
)

func reportCmd() *cobra.Command {
	var htmlPath, baselines string
	var format *formatFlag
	cmd := &cobra.Command{
		Use:   "report RESULT...",
		Short: "Print the table of results (or baseline) files, or write them as one HTML page",
		Long: `report prints the table of each results (or baseline) file.

With --html it writes one self-contained HTML page instead: the verdict (each
run gated against baselines/<suite>.json when there is one, else its SLOs),
throughput-latency curves, TTFT and ITL distributions, the points, their time
slices, variants compared where several files are variants of one suite, and
the provenance. Charts are inline SVG; the page has no script and loads
nothing from the network. With --format html that page is printed on
stdout.`,
		Example: `  benchci report results/quickstart.json
  benchci report --html results/report.html results/*.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var files []*result.File
			for _, path := range args {
				f, err := baseline.ReadReference(path)
				if err != nil {
					return &exitError{exitUsage, err}
				}
				files = append(files, f)
			}
			if htmlPath == "" && format.name != "html" {
				out := newOutput(cmd, format)
				for _, f := range files {
					if err := out.print(report.Points(f)); err != nil {
						return err
					}
				}
				return out.flush()
			}
			runs := make([]htmlpage.Run, 0, len(files))
			for _, f := range files {
				g, err := compareWithBaseline(baselines, f)
				if err != nil {
					return &exitError{exitUsage, err}
				}
				runs = append(runs, htmlpage.Run{File: f, Gate: g})
			}
			if htmlPath == "" { // --format html: the page, on stdout
				page, err := htmlPage(runs, files)
				if err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(page)
				return err
			}
			if err := writeHTML(htmlPath, runs, files); err != nil {
				return err
			}
			if format.name == "text" {
				fmt.Fprintln(cmd.OutOrStdout(), report.Headline(gates(runs)))
				fmt.Fprintln(cmd.OutOrStdout(), "html:", htmlPath)
				return nil
			}
			// The page went to its file; stdout gets the figures in the
			// format asked for, and what is said of the page goes to
			// stderr, so a json or markdown reader never gets a stray line.
			fmt.Fprintln(cmd.ErrOrStderr(), report.Headline(gates(runs)))
			fmt.Fprintln(cmd.ErrOrStderr(), "html:", htmlPath)
			out := newOutput(cmd, format)
			for _, f := range files {
				if err := out.print(report.Points(f)); err != nil {
					return err
				}
			}
			return out.flush()
		},
	}
	cmd.Flags().StringVar(&htmlPath, "html", "", "write one self-contained HTML report to this file")
	cmd.Flags().StringVar(&baselines, "baselines", layout.DefaultBaselines, "directory of baseline files the HTML report gates against")
	format = addFormat(cmd, "html")
	return cmd
}

// writeHTML writes the HTML report of runs, with the comparisons of any
// variants among files, secrets redacted as in every other report.
func writeHTML(path string, runs []htmlpage.Run, files []*result.File) error {
	page, err := htmlPage(runs, files)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return result.WriteFileAtomic(path, page)
}

// htmlPage is the HTML report of runs, with the comparisons of any variants
// among files, secrets redacted.
func htmlPage(runs []htmlpage.Run, files []*result.File) ([]byte, error) {
	var buf bytes.Buffer
	in := htmlpage.Input{Runs: runs, Variants: variantReports(files), Tool: Version, Generated: time.Now()}
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
