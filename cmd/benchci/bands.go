package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/bands"
	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/runner"
)

// bandsOptions are bands' flags.
type bandsOptions struct {
	sf       suiteFlags
	runs     int
	floor    string
	margin   float64
	progress bool
	format   *formatFlag
}

func bandsCmd() *cobra.Command {
	var o bandsOptions
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
			return runBands(cmd, o, args[0])
		},
	}
	o.sf.register(cmd)
	cmd.Flags().IntVar(&o.runs, "runs", 5, "how many unchanged runs")
	cmd.Flags().StringVar(&o.floor, "floor", "2%", "the narrowest band proposed")
	cmd.Flags().Float64Var(&o.margin, "margin", 1.25, "how much wider than the widest spread seen")
	cmd.Flags().BoolVar(&o.progress, "progress", true, "show progress on stderr")
	o.format = addFormat(cmd)
	return cmd
}

// runBands runs the suite --runs times and prints the bands proposed.
func runBands(cmd *cobra.Command, o bandsOptions, path string) error {
	floor, err := o.check()
	if err != nil {
		return err
	}
	opts, err := o.sf.options()
	if err != nil {
		return &exitError{exitUsage, err}
	}
	l, err := loadSuite(cmd.Context(), path, opts)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	if len(l.Suite.Variants) > 0 {
		// Tolerances are the suite's, shared by its variants, and
		// each configuration has its own noise: measure the one the
		// gate should be sized for, as a suite without variants.
		return &exitError{exitUsage, fmt.Errorf("bands: suite %s has variants; run bands on a suite with the one target whose noise should size the shared tolerances", l.Suite.Name)}
	}
	files, err := bandsRuns(cmd, o, l)
	if err != nil {
		return err
	}
	ps, err := bands.Propose(files, floor, o.margin)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	return report.Write(cmd.OutOrStdout(), o.format.name, bandsDoc(l.Suite.Name, o.runs, floor, o.margin, ps))
}

// check refuses flag values beyond their bounds, and returns --floor as
// a fraction.
func (o bandsOptions) check() (float64, error) {
	if err := inRange("--runs", o.runs, 2, maxBandsRuns); err != nil {
		return 0, err
	}
	fl, err := strconv.ParseFloat(strings.TrimSuffix(o.floor, "%"), 64)
	if err != nil || fl < 0 || !strings.HasSuffix(o.floor, "%") {
		return 0, &exitError{exitUsage, fmt.Errorf("--floor %q: want a percentage such as 2%%", o.floor)}
	}
	if o.margin < 1 {
		return 0, &exitError{exitUsage, fmt.Errorf("--margin %v: below 1 the bands would not hold the runs they came from", o.margin)}
	}
	return fl / 100, nil
}

// bandsRuns runs the suite --runs times, each complete and every point
// measured, or none.
func bandsRuns(cmd *cobra.Command, o bandsOptions, l *suitefile.File) ([]*result.File, error) {
	var files []*result.File
	for i := range o.runs {
		var obs runner.Observer
		if o.progress {
			obs = newProgress(cmd.ErrOrStderr(), fmt.Sprintf("%s run %d/%d", l.Suite.Name, i+1, o.runs))
		}
		limitMemory()
		f, err := runner.Run(cmd.Context(), runInput(l), runner.Options{Version: Version, Observer: obs})
		if err != nil {
			return nil, &exitError{exitUsage, err}
		}
		if f.Incomplete {
			return nil, &exitError{exitUsage, errors.New("run incomplete: " + f.Error)}
		}
		for _, p := range f.Points {
			if !p.Valid() {
				// A band sized without this point's noise would be
				// a guess: say so rather than print a short list.
				return nil, &exitError{exitInconclusive, fmt.Errorf("run %d: %s did not measure the server (%s), even after its reruns: bands need every point measured; rerun on a quieter machine", i+1, p.Label, strings.Join(p.Validity.Invalid, "; "))}
			}
		}
		files = append(files, f)
	}
	return files, nil
}
