package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/redact"
	"github.com/benchci/benchci/framework/report"
	"github.com/benchci/benchci/framework/requestlog"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/runner"
	"github.com/benchci/benchci/framework/suitefile"
)

type runOptions struct {
	suites     suiteFlags
	resultsDir string
	baselines  string
	progress   bool
	verbose    bool
	requests   bool
	gaps       bool
	timeout    time.Duration
}

func (o *runOptions) register(cmd *cobra.Command) {
	o.suites.register(cmd)
	cmd.Flags().StringVar(&o.resultsDir, "results", "results", "directory for results files")
	cmd.Flags().StringVar(&o.baselines, "baselines", "baselines", "directory of baseline files")
	cmd.Flags().BoolVar(&o.progress, "progress", true, "show progress on stderr")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "after the summary, list every compared figure")
	cmd.Flags().BoolVar(&o.requests, "requests", false, "write one JSON line per request to <results>/<suite>.requests.jsonl")
	cmd.Flags().BoolVar(&o.gaps, "request-gaps", false, "with --requests, add every chunk gap to each line")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 0, "stop after this long overall, writing what was measured as incomplete (0: no limit)")
}

func runCmd() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run SUITE...",
		Short: "Run suites, write results/<suite>.json and print a table",
		Long: `run evaluates every suite first (so a typo in the last one fails before the
first one runs), then runs them in order: it starts the simulator or checks
the server, runs each sweep point with a progress line, prints a table,
writes results/<suite>.json, checks the SLOs, and compares with
baselines/<suite>.json when there is one.

Ctrl-C stops the run; what was measured is still written, marked incomplete.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			results, err := runAll(cmd, o, args)
			if err != nil {
				return err
			}
			failed := false
			for _, f := range results {
				r, err := compareWithBaseline(o.baselines, f)
				if err != nil {
					return err
				}
				if err := printComparison(cmd.OutOrStdout(), r, o.verbose); err != nil {
					return err
				}
				failed = failed || r.Failed()
			}
			if failed {
				return &exitError{exitFailed, errors.New("regression or SLO failure")}
			}
			return nil
		},
	}
	o.register(cmd)
	return cmd
}

// runAll loads every suite, then runs each, writing its results and table.
// It returns the results of the suites that ran; nil with an error when the
// suites did not load. A suite that fails part-way still has its partial
// results written, and the error is returned with what ran.
func runAll(cmd *cobra.Command, o runOptions, paths []string) ([]*result.File, error) {
	opts, err := o.suites.options()
	if err != nil {
		return nil, err
	}
	var loaded []*suitefile.File
	var loadErrs []error
	for _, p := range paths {
		l, err := suitefile.Load(p, opts)
		if err != nil {
			loadErrs = append(loadErrs, err)
			continue
		}
		loaded = append(loaded, l)
	}
	if len(loadErrs) > 0 {
		return nil, &exitError{exitUsage, errors.Join(loadErrs...)}
	}
	// A results directory that cannot be written fails now, not after an
	// hour of measuring.
	if err := probeDir(o.resultsDir); err != nil {
		return nil, &exitError{exitUsage, err}
	}
	ctx := cmd.Context()
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.timeout, fmt.Errorf("--timeout %v reached", o.timeout))
		defer cancel()
	}
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	for _, l := range loaded {
		// Said before the hour of measuring, not after a gate that could
		// not have failed.
		for _, w := range compare.Power(l.Suite) {
			fmt.Fprintf(stderr, "warning: %s: %s\n", l.Suite.Name, w)
		}
	}
	var results []*result.File
	for _, l := range loaded {
		var obs runner.Observer
		if o.progress {
			obs = newProgress(stderr, l.Suite.Name)
		}
		if err := os.MkdirAll(o.resultsDir, 0o755); err != nil {
			return results, err
		}
		serverLog := filepath.Join(o.resultsDir, l.Suite.Name+".server.log")
		os.Remove(serverLog) // a fresh log per run; relaunches append to it
		ropts := runner.Options{Version: Version, Observer: obs, ServerLog: serverLog}
		var closeRequests func() error
		reqPath := filepath.Join(o.resultsDir, l.Suite.Name+".requests.jsonl")
		if o.requests {
			rl, closer, err := openRequests(reqPath, o.gaps)
			if err != nil {
				return results, &exitError{exitUsage, err}
			}
			ropts.Requests, closeRequests = rl, closer
		}
		f, runErr := runner.Run(ctx, l, ropts)
		if closeRequests != nil {
			if err := closeRequests(); err != nil {
				runErr = errors.Join(runErr, fmt.Errorf("requests file: %w", err))
			}
		}
		out := filepath.Join(o.resultsDir, l.Suite.Name+".json")
		// What was measured is printed first, so a failed write (a full
		// disk) still leaves the figures in the log.
		if err := report.Table(stdout, f); err != nil {
			return results, err
		}
		if err := result.Write(out, f); err != nil {
			return results, &exitError{exitUsage, errors.Join(runErr, err)}
		}
		if o.requests {
			fmt.Fprintf(stdout, "requests: %s\n", reqPath)
		}
		fmt.Fprintf(stdout, "results: %s\n\n", out)
		if runErr != nil {
			return append(results, f), &exitError{exitUsage, runErr}
		}
		results = append(results, f)
	}
	return results, nil
}

// openRequests creates the per-request file. Error texts quote servers,
// so what is written is masked like every other output.
func openRequests(path string, gaps bool) (*requestlog.Writer, func() error, error) {
	file, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	rl := requestlog.New(redact.NewWriter(file), gaps)
	return rl, func() error { return errors.Join(rl.Close(), file.Close()) }, nil
}

// printComparison writes the summary that leads the PR comment too and,
// verbose, every compared figure after it.
func printComparison(w io.Writer, r *compare.Report, verbose bool) error {
	if err := report.Summary(w, r); err != nil {
		return err
	}
	if verbose && !r.NoBaseline {
		return report.Diff(w, r)
	}
	return nil
}

// probeDir makes dir if needed and checks a file can be written in it.
func probeDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	f, err := os.CreateTemp(dir, ".benchci-probe-*")
	if err != nil {
		return fmt.Errorf("results directory %s cannot be written: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}
