package main

import (
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/runner"
	"github.com/benchci/benchci/internal/workload"
	"github.com/spf13/cobra"
)

func validateCmd() *cobra.Command {
	var sf suiteFlags
	cmd := &cobra.Command{
		Use:   "validate SUITE...",
		Short: "Evaluate and check suites and their data files without running them, listing every problem",
		Long: `validate evaluates each SUITE as run would and checks it, then reads its
data files (datasets, traces) through with a run's bounds, without starting
a target or sending a request. It prints one line per valid suite (its
sweep, variants and SLOs, with a warning where a gate lacks the trials to
see a regression, or where prompt lengths reach below the shortest chat
prompt the simulator takes) and every problem of the others on stderr; the
exit code is 2 when any suite is invalid. A URL's chat template is the
model's: run measures it (calibration) and warns there.`,
		Example: `  benchci validate suites/*.jsonnet
  benchci validate --tla-str step_base=19.8ms suites/gate.jsonnet`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := sf.options()
			if err != nil {
				return err
			}
			bad := 0
			for _, path := range args {
				l, err := loadSuite(cmd.Context(), path, opts)
				if err == nil {
					// The data files too: a trace or dataset that does not
					// read fails here, not minutes into a run. They are
					// read through with a run's bounds but not kept, so
					// validating a large file costs a few megabytes.
					if err = workload.Check(l.Suite); err != nil {
						err = fmt.Errorf("%s: %w", path, err)
					}
				}
				if err != nil {
					if cmd.Context().Err() != nil {
						return err // SIGTERM or Ctrl-C: no more suites
					}
					fmt.Fprintln(cmd.ErrOrStderr(), err)
					bad++
					continue
				}
				if err := printValid(cmd.OutOrStdout(), path, l.Suite); err != nil {
					return err
				}
			}
			if bad > 0 {
				return &exitError{exitUsage, fmt.Errorf("%d of %d suite(s) invalid", bad, len(args))}
			}
			return nil
		},
	}
	sf.register(cmd)
	return cmd
}

// printValid prints the line of a valid suite at path, then its warnings.
func printValid(w io.Writer, path string, s *suite.Suite) error {
	sweep := fmt.Sprintf("%d %s point(s) x %d trial(s)", len(s.Sweep.Rates)+len(s.Sweep.Concurrencies), s.Sweep.Kind, s.Trials)
	if s.Sweep.Kind == suite.SweepCapacity {
		sweep = fmt.Sprintf("capacity search in [%g, %g] req/s", s.Sweep.Min, s.Sweep.Max)
	}
	if n := len(s.Variants); n > 0 {
		sweep += fmt.Sprintf(", %d variants (%s), %s", n, strings.Join(s.VariantNames(), ", "), s.Order)
	}
	fmt.Fprintf(w, "ok  %s  (suite %s: %s, %d SLO(s))\n", path, s.Name, sweep, len(s.SLOs))
	warnings := powerWarnings(s)
	if lw := launchWarning(s); lw != "" {
		warnings = append(warnings, lw)
	}
	if pw, err := runner.PromptFloorWarning(s); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	} else if pw != "" {
		warnings = append(warnings, pw)
	}
	for _, warning := range warnings {
		fmt.Fprintf(w, "    warning: %s\n", warning)
	}
	return nil
}

// launchWarning says when a launch target's program is not on this
// machine's PATH: the suite is valid (the runner that runs it may have
// the engine), but run here it would fail before measuring anything.
func launchWarning(s *suite.Suite) string {
	l := s.Target.Launch
	if s.Target.Kind != suite.TargetLaunch || l == nil || len(l.Command) == 0 {
		return ""
	}
	prog := l.Command[0]
	if strings.ContainsRune(prog, '/') {
		return "" // a path, relative to the launch directory: checked when it starts
	}
	if _, err := exec.LookPath(prog); err != nil {
		return fmt.Sprintf("the launch target runs %s, which is not on this machine's PATH: a run here fails before it measures (on a machine with the engine, or with --tla-str target=sim where the suite offers it, it runs)", prog)
	}
	return ""
}
