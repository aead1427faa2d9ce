package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/bands"
	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/runner"
)

func bandsCmd() *cobra.Command {
	var (
		sf       suiteFlags
		runs     int
		floor    string
		margin   float64
		progress bool
		format   *formatFlag
	)
	cmd := &cobra.Command{
		Use:   "bands SUITE",
		Short: "Run a suite several times unchanged and propose tolerance bands from the spread",
		Long: `bands runs SUITE --runs times with nothing changed and proposes, per gated
figure, the band the gate would need to pass any of those runs against any
other: the largest relative difference seen between two runs at one point,
times --margin, at least --floor. It prints the suite's tolerance field for
review; nothing is written. The error rate keeps its percentage-point band.
With --format markdown or json the proposals are a table instead.`,
		Example: `  benchci bands --runs 8 suites/gate.jsonnet`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := inRange("--runs", runs, 2, maxBandsRuns); err != nil {
				return err
			}
			fl, err := strconv.ParseFloat(strings.TrimSuffix(floor, "%"), 64)
			if err != nil || fl < 0 || !strings.HasSuffix(floor, "%") {
				return &exitError{exitUsage, fmt.Errorf("--floor %q: want a percentage such as 2%%", floor)}
			}
			if margin < 1 {
				return &exitError{exitUsage, fmt.Errorf("--margin %v: below 1 the bands would not hold the runs they came from", margin)}
			}
			opts, err := sf.options()
			if err != nil {
				return &exitError{exitUsage, err}
			}
			l, err := loadSuite(cmd.Context(), args[0], opts)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			if len(l.Suite.Variants) > 0 {
				// Tolerances are the suite's, shared by its variants, and
				// each configuration has its own noise: measure the one the
				// gate should be sized for, as a suite without variants.
				return &exitError{exitUsage, fmt.Errorf("bands: suite %s has variants; run bands on a suite with the one target whose noise should size the shared tolerances", l.Suite.Name)}
			}
			var files []*result.File
			for i := range runs {
				var obs runner.Observer
				if progress {
					obs = newProgress(cmd.ErrOrStderr(), fmt.Sprintf("%s run %d/%d", l.Suite.Name, i+1, runs))
				}
				f, err := runner.Run(cmd.Context(), runInput(l), runner.Options{Version: Version, Observer: obs})
				if err != nil {
					return &exitError{exitUsage, err}
				}
				if f.Incomplete {
					return &exitError{exitUsage, errors.New("run incomplete: " + f.Error)}
				}
				for _, p := range f.Points {
					if !p.Valid() {
						// A band sized without this point's noise would be
						// a guess: say so rather than print a short list.
						return &exitError{exitInconclusive, fmt.Errorf("run %d: %s did not measure the server (%s), even after its reruns: bands need every point measured; rerun on a quieter machine", i+1, p.Label, strings.Join(p.Validity.Invalid, "; "))}
					}
				}
				files = append(files, f)
			}
			ps, err := bands.Propose(files, fl/100, margin)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			return report.Write(cmd.OutOrStdout(), format.name, bandsDoc(l.Suite.Name, runs, fl/100, margin, ps))
		},
	}
	sf.register(cmd)
	cmd.Flags().IntVar(&runs, "runs", 5, "how many unchanged runs")
	cmd.Flags().StringVar(&floor, "floor", "2%", "the narrowest band proposed")
	cmd.Flags().Float64Var(&margin, "margin", 1.25, "how much wider than the widest spread seen")
	cmd.Flags().BoolVar(&progress, "progress", true, "show progress on stderr")
	format = addFormat(cmd)
	return cmd
}
