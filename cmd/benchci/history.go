package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/changepoint"
	"github.com/benchci/benchci/internal/chart"
	"github.com/benchci/benchci/internal/history"
	"github.com/benchci/benchci/internal/layout"
	"github.com/benchci/benchci/internal/report/historyview"
)

// historyOptions are history's flags.
type historyOptions struct {
	sf        suiteFlags
	baselines string
	results   string
	point     string
	chartPath string
	minChange string
	maxRead   int64
	format    *formatFlag
}

func historyCmd() *cobra.Command {
	var o historyOptions
	cmd := &cobra.Command{
		Use:   "history SUITE",
		Short: "Show how a suite's committed baseline moved from commit to commit, and which commits moved it",
		Long: `history reads every committed version of baselines/<suite>.json along HEAD's
first-parent line, groups them by workload hash (figures compare only within
one), finds the commits where a figure shifted level and stayed there
(E-divisive means with a permutation test, p <= 0.05, moves of --min-change
or more), and prints them first, then a table of the versions at one point.
An SVG of the same figures goes to --charts. In a shallow clone (actions/checkout
fetches one commit unless told fetch-depth: 0) it shows the versions the clone
holds and says how to fetch the rest. A version larger than a baseline file may
be is skipped unread. Versions are read newest first, each distinct one once,
up to --max-read MiB; older ones past it are left out, and the output says how
many.

SUITE is a suite name (quickstart, or engine-shootout/fp8-seqs32 for a
variant), a suite file, or a baseline file's path.`,
		Example: `  benchci history quickstart
  benchci history --point rate=20 --charts history.svg quickstart
  benchci history engine-shootout/fp8-seqs32`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHistory(cmd, o, args[0])
		},
	}
	o.sf.register(cmd)
	cmd.Flags().StringVar(&o.baselines, "baselines", layout.DefaultBaselines, "directory of baseline files")
	cmd.Flags().StringVar(&o.results, "results", layout.DefaultResults, "directory the chart goes to")
	cmd.Flags().StringVar(&o.point, "point", "", "load point to tabulate and draw (default: the one with most change points, else the highest load)")
	cmd.Flags().StringVar(&o.chartPath, "charts", "auto", `SVG chart to write ("auto": <results>/<suite>.history.svg; "" for none)`)
	deprecatedAlias(cmd, "chart", "charts")
	cmd.Flags().StringVar(&o.minChange, "min-change", "5%", "smallest move named a change point")
	cmd.Flags().Int64Var(&o.maxRead, "max-read", history.DefaultMaxRead>>20, fmt.Sprintf("most MiB of baseline versions to read, newest first (%d to %d); older versions are left out", minMaxReadMiB, maxMaxReadMiB))
	o.format = addFormat(cmd)
	return cmd
}

// runHistory reads the baseline's versions, finds its change points,
// prints them and draws the chart.
func runHistory(cmd *cobra.Command, o historyOptions, arg string) error {
	shift, err := percent(o.minChange)
	if err != nil {
		return &exitError{exitUsage, fmt.Errorf("--min-change: %w", err)}
	}
	if o.maxRead < minMaxReadMiB || o.maxRead > maxMaxReadMiB {
		return &exitError{exitUsage, fmt.Errorf("--max-read %d: want %d to %d MiB", o.maxRead, minMaxReadMiB, maxMaxReadMiB)}
	}
	name, rel, walk, err := readHistory(cmd, o, arg)
	if err != nil {
		return err
	}
	// cmd.Context() ends on SIGTERM or Ctrl-C (see main): the change-point
	// search stops with it.
	groups, err := history.AnalyzeContext(cmd.Context(), walk.Versions, changepoint.Options{MinShift: shift})
	if err != nil {
		return err
	}
	pr := newOutput(cmd, o.format)
	if err := pr.print(historyview.Doc(rel, groups, walk.Skipped, o.point, shift)); err != nil {
		return err
	}
	if err := pr.flush(); err != nil {
		return err
	}
	if note := walk.LeftOutNote(); note != "" {
		fmt.Fprintln(pr.say(), "note:", note+"; --max-read raises the budget")
	}
	if note := walk.ShallowNote(); note != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "benchci: note:", note)
	}
	if o.chartPath == "" || len(groups) == 0 {
		return nil
	}
	return writeHistoryChart(pr.say(), o, name, groups)
}

// readHistory walks the committed versions of arg's baseline: its suite's
// name, its path in the repository, and the versions read.
func readHistory(cmd *cobra.Command, o historyOptions, arg string) (name, rel string, walk *history.Walk, err error) {
	name, path, err := baselineOf(arg, o.baselines, o.sf)
	if err != nil {
		return "", "", nil, &exitError{exitUsage, err}
	}
	repo, err := history.Open(filepath.Dir(path))
	if err != nil {
		return "", "", nil, &exitError{exitUsage, err}
	}
	rel, err = repo.Rel(path)
	if err != nil {
		return "", "", nil, &exitError{exitUsage, err}
	}
	// cmd.Context() ends on SIGTERM or Ctrl-C (see main): the walk stops
	// with it.
	ctx := cmd.Context()
	walk, err = repo.Read(ctx, rel, history.Options{MaxRead: o.maxRead << 20})
	if err != nil {
		if ctx.Err() != nil {
			// Stopped: say what was read, and stop at once
			// (the change-point search would take longer).
			if walk != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "benchci: note:", stoppedNote(walk))
			}
			return "", "", nil, err
		}
		return "", "", nil, &exitError{exitUsage, err}
	}
	return name, rel, walk, nil
}

// writeHistoryChart draws the newest workload's versions to --charts:
// older workloads do not compare.
func writeHistoryChart(out io.Writer, o historyOptions, name string, groups []history.Group) error {
	chartPath := o.chartPath
	if chartPath == "auto" {
		chartPath = filepath.Join(o.results, name+".history.svg")
	}
	g := &groups[len(groups)-1]
	p := o.point
	if p == "" {
		p = g.DefaultPoint()
	}
	svg, err := historyChart(name, g, p)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(chartPath), 0o755); err != nil {
		return err
	}
	if err := result.WriteFileAtomic(chartPath, svg); err != nil {
		return err
	}
	fmt.Fprintln(out, "chart:", chartPath)
	return nil
}

// --max-read's bounds, in MiB: at least one baseline of the largest size a
// baseline file may be, at most 64 GiB.
const (
	minMaxReadMiB = result.MaxFileBytes >> 20
	maxMaxReadMiB = 64 << 10
)

// stoppedNote says what a walk stopped part way had read.
func stoppedNote(w *history.Walk) string {
	s := fmt.Sprintf("stopped after reading %s and %s", plural(w.Commits, "commit"), plural(len(w.Versions)+len(w.Skipped), "version"))
	if n := len(w.Versions); n > 0 {
		s += fmt.Sprintf(" (%s back to %s)", w.Versions[n-1].Short(), w.Versions[0].Short())
	}
	switch {
	case w.LeftOut > 0 && len(w.Versions)+len(w.Skipped) > 0:
		s += fmt.Sprintf("; %s not read", plural(w.LeftOut, "older version"))
	case w.LeftOut > 0:
		s += fmt.Sprintf("; %s not read", plural(w.LeftOut, "version"))
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// baselineOf resolves history's argument to the suite's name and its
// baseline file's path.
func baselineOf(arg, dir string, sf suiteFlags) (name, path string, err error) {
	switch {
	case layout.IsResult(arg):
		return layout.SuiteOf(arg), arg, nil
	case strings.HasSuffix(arg, ".jsonnet") || strings.HasSuffix(arg, ".libsonnet"):
		opts, err := sf.options()
		if err != nil {
			return "", "", err
		}
		l, err := loadSuite(context.Background(), arg, opts)
		if err != nil {
			return "", "", err
		}
		if len(l.Suite.Variants) > 0 {
			var names []string
			for _, v := range l.Suite.VariantNames() {
				names = append(names, l.Suite.Name+"/"+v)
			}
			return "", "", fmt.Errorf("suite %s has variants, each with its own baseline: name one (%s)", l.Suite.Name, strings.Join(names, ", "))
		}
		arg = l.Suite.Name
	}
	if arg == "" || strings.Contains(arg, "..") {
		return "", "", errors.New("want a suite name, a suite file or a baseline file")
	}
	return arg, layout.Baselines(dir).Baseline(arg), nil
}

// historyChart draws the figures that moved (wherever they moved), then
// those the table shows, one panel each, change points marked.
func historyChart(name string, g *history.Group, point string) ([]byte, error) {
	var commits []string
	for _, v := range g.Versions {
		commits = append(commits, v.Short())
	}
	var panels []chart.HistoryPanel
	charted, left := historyview.Charted(g, point)
	for _, s := range charted {
		if !slices.ContainsFunc(s.Values, func(v float64) bool { return v != 0 && !math.IsNaN(v) }) {
			continue // never measured above zero (the error rate, mostly): a flat line says nothing
		}
		y := fmt.Sprintf("%s (%s)", s.Figure, s.Unit)
		if s.Point != point {
			y = fmt.Sprintf("%s at %s (%s)", s.Figure, s.Point, s.Unit)
		}
		pn := chart.HistoryPanel{Y: y, Values: s.Values}
		for _, c := range s.Changes {
			pn.Changes = append(pn.Changes, c.Version)
		}
		panels = append(panels, pn)
	}
	title := fmt.Sprintf("%s baseline history at %s (dashed: change points)", name, point)
	if left > 0 {
		title += fmt.Sprintf("; %d more figures moved (see the table)", left)
	}
	return chart.History(title, commits, panels)
}

// percent parses "5%" as 0.05.
func percent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || !strings.HasSuffix(s, "%") || v < 0 {
		return 0, fmt.Errorf("%q: want a percentage such as 5%%", s)
	}
	return v / 100, nil
}
