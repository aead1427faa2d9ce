package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/layout"
	"github.com/benchci/benchci/internal/variants"
)

func baselineCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "baseline",
		Short: "Manage committed baselines",
		Long: `baseline manages the baseline files committed under baselines/: the figures
a run is gated against, with their provenance.`,
		Example: `  benchci baseline update results/quickstart.json`,
	}
	var dir, commit string
	update := &cobra.Command{
		Use:   "update RESULT...",
		Short: "Write baselines/<suite>.json from results, for review",
		Long: `update turns complete results files into baseline files, one per suite, with
provenance (tool version, date, commit, target, host). Commit them with the
change they measure; reviewers see the summary figures change in the diff.

A variant's results (results/<suite>/<variant>.json) become
baselines/<suite>/<variant>.json; results/<suite>.variants.json stands for
every variant it compared.`,
		Example: `  benchci run suites/quickstart.jsonnet
  benchci baseline update results/quickstart.json
  git add baselines/quickstart.json

  # Every variant the comparison holds, into another folder.
  benchci baseline update --baselines ci/baselines results/engine-shootout.variants.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if commit == "" {
				commit = currentCommit()
			}
			paths, err := expandVariants(args)
			if err != nil {
				return err
			}
			for _, path := range paths {
				r, err := result.Read(path)
				if err != nil {
					return err
				}
				out := layout.Baselines(dir).Baseline(r.Suite.Name)
				if err := virtualBaseline(r, out, path); err != nil {
					return &exitError{exitUsage, err}
				}
				b, err := baseline.FromResult(r, commit)
				if err != nil {
					return err
				}
				if err := baseline.WriteIn(dir, out, b); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (suite %s, %d points, from %s)\n", out, r.Suite.Name, len(b.Summary), path)
			}
			return nil
		},
	}
	update.Flags().StringVar(&dir, "baselines", layout.DefaultBaselines, "directory the baseline files are written to")
	deprecatedAlias(update, "dir", "baselines")
	update.Flags().StringVar(&commit, "commit", "", "commit recorded in provenance (default: $GITHUB_SHA, else git HEAD)")
	cmd.AddCommand(update)
	return cmd
}

// virtualBaseline refuses to make a virtual-time result (run --virtual) a
// baseline unless the baseline it replaces is virtual too. Refused rather
// than warned: a warning scrolls past in CI, and a virtual baseline would
// then turn every measured run's gate into a refusal (compare never mixes
// the two), or, replacing a measured baseline, throw away the measured
// figures a reviewer trusts. Where there is no baseline yet, a measured
// run is what a gate should start from.
func virtualBaseline(r *result.File, out, from string) error {
	if !r.Virtual {
		return nil
	}
	old, err := baseline.Read(out)
	switch {
	case errors.Is(err, baseline.ErrNotExist):
		return fmt.Errorf("%s is a virtual-time replay (run --virtual), not a measurement: it is not made a baseline (%s has none yet; record a measured run, benchci run without --virtual)", from, out)
	case err != nil:
		return err
	case !old.Result.Virtual:
		return fmt.Errorf("%s is a virtual-time replay (run --virtual) and %s holds measured figures: a virtual run does not replace a measured baseline", from, out)
	}
	return nil
}

func currentCommit() string {
	if sha := os.Getenv("GITHUB_SHA"); sha != "" {
		return sha
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// expandVariants replaces each variants comparison among paths by the
// results files of the variants it compared.
func expandVariants(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if !layout.IsVariants(p) {
			out = append(out, p)
			continue
		}
		r, err := variants.Read(p) // bounded, its schema and variants checked
		if err != nil {
			return nil, err
		}
		for _, v := range r.Variants {
			out = append(out, v.Path)
		}
	}
	return out, nil
}
