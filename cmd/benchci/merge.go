package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/errjoin"
	"github.com/benchci/benchci/internal/layout"
	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/shard"
)

func mergeCmd() *cobra.Command {
	var (
		out     string
		maxSkew time.Duration
		format  *formatFlag
	)
	cmd := &cobra.Command{
		Use:   "merge SHARD.json... | merge DIR",
		Short: "Join the results of a run's shards (run --shard) into one result",
		Long: `merge joins the results files of the N shards of one run into the result
one machine would have measured: per point, histograms merged bucket for
bucket (no resampling), counts summed, throughputs summed over the common
window; then cost, the knee and the SLOs are evaluated on the merged points.
The merged result compares with any baseline of the same workload.

Given a directory, it merges every run whose shards it holds
(<suite>.shard-I-of-N.json), each into <dir>/<suite>.json.

It refuses files that are not shards of one run (another suite or workload,
another N, an index twice). A missing shard, or one that did not finish,
makes the result incomplete, naming it (exit 2); a shard that started a
point more than --max-skew after its aligned time is noted.`,
		Example: `  benchci merge results/quickstart.shard-*-of-4.json -o results/quickstart.json
  benchci merge results/`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pr := newOutput(cmd, format)
			if len(args) == 1 {
				if st, err := os.Stat(args[0]); err == nil && st.IsDir() {
					if out != "" {
						return &exitError{exitUsage, errors.New("-o names one result: with a directory, each run's goes to <dir>/<suite>.json")}
					}
					return pr.done(mergeDir(cmd, pr, args[0], maxSkew))
				}
			}
			files, err := readResults(cmd.Context(), args)
			if err != nil {
				return err
			}
			return pr.done(mergeFiles(cmd, pr, files, filepath.Dir(args[0]), out, maxSkew))
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "merged results file (default: <dir of the first shard>/<suite>.json)")
	cmd.Flags().DurationVar(&maxSkew, "max-skew", shard.DefaultMaxSkew, "note shards that started a point later than this after its aligned time")
	format = addFormat(cmd)
	return cmd
}

// mergeDir merges every run whose shards are in dir, one result each.
func mergeDir(cmd *cobra.Command, pr *output, dir string, maxSkew time.Duration) error {
	paths, err := layout.Results(dir).Shards()
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return &exitError{exitUsage, fmt.Errorf("merge: no shard results (<suite>.shard-I-of-N.json) in %s", dir)}
	}
	var order []string
	bySuite := map[string][]*result.File{}
	for _, p := range paths {
		if err := cmd.Context().Err(); err != nil {
			return err
		}
		f, err := result.Read(p)
		if err != nil {
			return &exitError{exitUsage, err}
		}
		if _, ok := bySuite[f.Suite.Name]; !ok {
			order = append(order, f.Suite.Name)
		}
		bySuite[f.Suite.Name] = append(bySuite[f.Suite.Name], f)
	}
	var errs []error
	for _, name := range order {
		if err := mergeFiles(cmd, pr, bySuite[name], dir, "", maxSkew); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	if len(errs) > 0 {
		return &exitError{exitUsage, errjoin.Join(errs...)}
	}
	return nil
}

// mergeFiles merges one run's shards and writes the result to out, or to
// <dir>/<suite>.json.
func mergeFiles(cmd *cobra.Command, pr *output, files []*result.File, dir, out string, maxSkew time.Duration) error {
	m, err := shard.Merge(files, maxSkew)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	if out == "" {
		out = layout.Results(dir).Result(m.Suite.Name)
	}
	stdout := pr.say()
	if err := pr.print(report.Points(m)); err != nil {
		return err
	}
	if err := result.Write(out, m); err != nil {
		return &exitError{exitUsage, err}
	}
	fmt.Fprintf(stdout, "merged %d of %d shards (latest start %.1f ms after its aligned time): %s\n", len(m.MergedFrom), m.MergedFrom[0].Count, m.StartSkewMs(), out)
	if m.Incomplete {
		return &exitError{exitUsage, errors.New("merged result incomplete: " + m.Error)}
	}
	return nil
}
