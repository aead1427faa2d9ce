package main

import (
	"cmp"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/chart"
	"github.com/benchci/benchci/internal/layout"
	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/variants"
)

func compareCmd() *cobra.Command {
	var key, charts string
	var format *formatFlag
	var nway bool
	cmd := &cobra.Command{
		Use:   "compare BASELINE RESULT | compare RESULT RESULT RESULT...",
		Short: "Compare a result with a baseline, or several configurations side by side",
		Long: `With two files, compare judges RESULT against BASELINE (each a baseline file
or a results file) with the candidate suite's tolerance bands, and gates on
its SLOs. Two results compare when they were sent the same requests (one
workload hash), whatever their suites are named. Exit code 1 on a
regression, a missing point or an SLO failure; 2 when either side is empty
or incomplete, or the runs cannot be compared (different workloads); 3
when nothing failed but a point is inconclusive.

With three or more files (or --variants), compare ranks them as variants:
runs of different configurations, on different days or machines, that
were sent the same requests (one workload hash). It prints each one's
capacity under its SLOs and $/1M tokens there, who is best or tied, and
the Pareto frontiers; --charts DIR writes SVG charts of their curves.`,
		Example: `  # Judge a run against the committed baseline.
  benchci compare baselines/quickstart.json results/quickstart.json

  # Rank three configurations run on one workload, with charts.
  benchci compare --charts results/charts results/a.json results/b.json results/c.json`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if nway || len(args) > 2 {
				return compareVariants(cmd, args, format.name, charts)
			}
			return comparePair(cmd, args[0], args[1], format.name, key)
		},
	}
	format = addFormat(cmd)
	cmd.Flags().StringVar(&key, "key", "benchci", "sticky comment key (markdown)")
	cmd.Flags().BoolVar(&nway, "variants", false, "rank the files as variants even when there are two")
	cmd.Flags().StringVar(&charts, "charts", "", "with variants, write SVG charts into this directory")
	return cmd
}

// comparePair judges the result at candPath against the reference at
// basePath, prints the comparison and returns the gate's exit code.
func comparePair(cmd *cobra.Command, basePath, candPath, format, key string) error {
	base, cand, err := readComparePair(basePath, candPath)
	if err != nil {
		return err
	}
	// The candidate is judged by the base's rules wherever they are
	// stricter: those the reference was recorded with.
	pol, by, err := recordedPolicy(basePath, base, cand)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	if !base.Suite.HasDefinition() {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %s records no suite definition (older files have none): the candidate is judged by its own tolerances and SLOs\n", basePath)
	}
	if err := judgeBy(by, cand); err != nil {
		return &exitError{exitUsage, err}
	}
	r, err := compare.Compare(base, cand, by.Tolerance)
	if err != nil {
		return fmt.Errorf("compare %s: %w", cand.Suite.Name, err)
	}
	r.Policy = pol
	if err := printCompared(cmd, r, format, key); err != nil {
		return err
	}
	return gateExit([]*compare.Report{r})
}

// readComparePair reads both sides. A side that measured nothing, or
// stopped part-way, would show every point as new or missing: refused,
// not judged.
func readComparePair(basePath, candPath string) (base, cand *result.File, err error) {
	base, err = baseline.ReadReference(basePath)
	if err != nil {
		return nil, nil, err
	}
	cand, err = baseline.ReadReference(candPath)
	if err != nil {
		return nil, nil, err
	}
	for _, side := range []struct {
		path string
		f    *result.File
	}{{basePath, base}, {candPath, cand}} {
		switch {
		case len(side.f.Points) == 0:
			return nil, nil, &exitError{exitUsage, fmt.Errorf("%s holds no measured point: nothing to compare", side.path)}
		case side.f.Incomplete:
			return nil, nil, &exitError{exitUsage, fmt.Errorf("%s is an incomplete run (%s): compare complete runs", side.path, cmp.Or(side.f.Error, "stopped part-way"))}
		}
	}
	return base, cand, nil
}

// printCompared prints the comparison in format; in markdown a loosening
// of the rules leads, after the sticky comment's marker, and outside json
// each looser rule is also said on stderr.
func printCompared(cmd *cobra.Command, r *compare.Report, format, key string) error {
	out := cmd.OutOrStdout()
	marker := report.Marker(key)
	if format == "markdown" && report.HasPolicyChanges([]*compare.Report{r}) {
		// The sticky comment's marker first, then the loosening.
		fmt.Fprintln(out, marker)
		marker = ""
		if err := report.PolicyChanges(out, []*compare.Report{r}); err != nil {
			return err
		}
	}
	if r.Policy != nil && format != "json" {
		for _, c := range r.Policy.Looser {
			fmt.Fprintf(cmd.ErrOrStderr(), "policy %s: looser than the base's: %s\n", r.Suite, report.OneLine(c))
		}
	}
	return report.Write(out, format, report.Comparison(r, marker))
}

// compareVariants ranks results files as variants of one workload.
func compareVariants(cmd *cobra.Command, paths []string, format, charts string) error {
	var entries []variants.Entry
	names := map[string]int{}
	for _, p := range paths {
		f, err := baseline.ReadReference(p)
		if err != nil {
			return &exitError{exitUsage, err}
		}
		name := cmp.Or(f.Suite.Variant, f.Suite.Name)
		names[name]++
		entries = append(entries, variants.Entry{Name: name, File: f, Path: p})
	}
	for i := range entries {
		if names[entries[i].Name] > 1 {
			// Runs of one suite on different days: the file tells them apart.
			entries[i].Name = layout.SuiteOf(entries[i].Path)
		}
	}
	r, err := variants.Compare(entries)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	out := cmd.OutOrStdout()
	if err := report.Write(out, format, report.Variants(r)); err != nil {
		return err
	}
	if charts != "" {
		if err := os.MkdirAll(charts, 0o755); err != nil {
			return err
		}
		written, err := chart.Variants(charts, r)
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "charts: %s\n", strings.Join(written, ", "))
	}
	return nil
}
