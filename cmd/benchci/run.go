package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/report"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/runner"
	"github.com/benchci/benchci/framework/suite"
)

type runOptions struct {
	suites     suiteFlags
	resultsDir string
	progress   bool
}

func runCmd() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run SUITE...",
		Short: "Run suites, write results/<suite>.json and print a table",
		Long: `run evaluates every suite first (so a typo in the last one fails before the
first one runs), then runs them in order: it starts the simulator or checks
the server, runs each sweep point with a progress line, prints a table,
writes results/<suite>.json and checks the SLOs.

Ctrl-C stops the run; what was measured is still written, marked incomplete.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runSuites(cmd, o, args) },
	}
	o.suites.register(cmd)
	cmd.Flags().StringVar(&o.resultsDir, "results", "results", "directory for results files")
	cmd.Flags().BoolVar(&o.progress, "progress", true, "show progress on stderr")
	return cmd
}

func runSuites(cmd *cobra.Command, o runOptions, paths []string) error {
	opts, err := o.suites.options()
	if err != nil {
		return err
	}
	var loaded []*suite.Loaded
	var loadErrs []error
	for _, p := range paths {
		l, err := suite.LoadFile(p, opts)
		if err != nil {
			loadErrs = append(loadErrs, err)
			continue
		}
		loaded = append(loaded, l)
	}
	if len(loadErrs) > 0 {
		return &exitError{exitUsage, errors.Join(loadErrs...)}
	}

	ctx := cmd.Context()
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	sloFailed := false
	for _, l := range loaded {
		var obs runner.Observer
		if o.progress {
			obs = newProgress(stderr, l.Suite.Name)
		}
		f, runErr := runner.Run(ctx, l, runner.Options{Version: Version, Observer: obs})
		out := filepath.Join(o.resultsDir, l.Suite.Name+".json")
		if err := result.Write(out, f); err != nil {
			return errors.Join(runErr, err)
		}
		if err := report.Table(stdout, f); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "results: %s\n\n", out)
		if runErr != nil {
			return &exitError{exitUsage, runErr}
		}
		for _, s := range f.SLOs {
			if !s.Pass {
				sloFailed = true
			}
		}
	}
	if sloFailed {
		return errSLO
	}
	return nil
}
