package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/errjoin"
	"github.com/benchci/benchci/internal/gitrev"
	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/runner"
)

// The two sides of an A/B run, as variants of each suite.
const (
	abBase      = "base"
	abCandidate = "candidate"
)

// abRun is one suite measured at the base revision and as it is now,
// interleaved point by point on one machine: the verdict compares the
// two, so what the machine did to one it did to the other.
type abRun struct {
	base, cand *result.File
	// gate judges the candidate against the base; committed against the
	// baseline in the repository (for reference), nil without one.
	gate, committed *compare.Report
}

// runAB runs each suite at ref and as it is now. A suite that did not
// exist at ref, or sent other requests there, cannot be judged against
// it: it runs alone and is gated by its committed baseline, as without
// --ab, and the report says why.
func runAB(cmd *cobra.Command, o runOptions, ref string, paths []string) ([]abRun, []*result.File, error) {
	if o.salt == "" {
		o.salt = runner.DrawSalt()
	}
	opts, err := o.suites.options()
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "benchci-ab-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	// The repository is the one holding the suites (the first's).
	tree, err := gitrev.Write(filepath.Dir(paths[0]), ref, dir, gitrev.DefaultLimits)
	if err != nil {
		return nil, nil, &exitError{exitUsage, fmt.Errorf("--ab: %w", err)}
	}
	baseOpts, err := atRevision(opts, tree)
	if err != nil {
		return nil, nil, &exitError{exitUsage, fmt.Errorf("--ab: %w", err)}
	}
	stderr := cmd.ErrOrStderr()
	fmt.Fprintf(stderr, "A/B: each suite at %s (%.12s) and as it is now, interleaved point by point\n", ref, tree.Commit)
	var runs []abRun
	var alone []string
	for _, p := range paths {
		base, cand, err := abPair(cmd, p, ref, tree, opts, baseOpts)
		if err != nil {
			return nil, nil, err
		}
		if base == nil {
			alone = append(alone, p)
			continue
		}
		run, err := runABPair(cmd, o, ref, base, cand)
		if err != nil {
			return runs, nil, err
		}
		runs = append(runs, run)
	}
	var single []*result.File
	if len(alone) > 0 {
		single, err = runAll(cmd, o, alone)
	}
	return runs, single, err
}

// abPair loads suite p as it is now and at ref. A nil base with no error:
// the suite cannot be judged against ref (stderr says why) and runs alone.
func abPair(cmd *cobra.Command, p, ref string, tree *gitrev.Tree, opts, baseOpts suitefile.Options) (base, cand *suitefile.File, err error) {
	stderr := cmd.ErrOrStderr()
	cand, err = loadSuite(cmd.Context(), p, opts)
	if err != nil {
		return nil, nil, &exitError{exitUsage, err}
	}
	bp, err := tree.Path(p)
	if err == nil {
		base, err = loadSuite(cmd.Context(), bp, baseOpts)
	}
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "A/B: %s cannot be evaluated at %s (%v): gated by its committed baseline alone\n", p, ref, firstLine(err))
		return nil, cand, nil
	case len(cand.Suite.Variants) > 0 || len(base.Suite.Variants) > 0:
		fmt.Fprintf(stderr, "A/B: %s has variants, which already run side by side: gated by its committed baseline alone\n", p)
		return nil, cand, nil
	case base.WorkloadHash != cand.WorkloadHash:
		fmt.Fprintf(stderr, "A/B: %s sends other requests than at %s (workload hash %.12s, now %.12s): gated by its committed baseline alone\n", p, ref, base.WorkloadHash, cand.WorkloadHash)
		return nil, cand, nil
	}
	return base, cand, nil
}

// runABPair runs base and cand interleaved point by point, as two
// variants, and judges the candidate against the base.
func runABPair(cmd *cobra.Command, o runOptions, ref string, base, cand *suitefile.File) (abRun, error) {
	base.Suite.Variant, cand.Suite.Variant = abBase, abCandidate
	vs := []suitefile.Variant{{Name: abBase, File: base}, {Name: abCandidate, File: cand}}
	// The base's and the candidate's servers (launch targets) may take
	// one address: they are launched in turn, one point each.
	files, _, errs := runAndWrite(cmd.Context(), cmd, o, vs, suite.OrderInterleaved, true)
	if len(errs) > 0 {
		return abRun{}, errjoin.Join(errs...)
	}
	run := abRun{base: files[0], cand: files[1]}
	var err error
	if run.gate, err = compare.Gate(files[0], files[1]); err != nil {
		return abRun{}, err
	}
	run.gate.Suite = cand.Suite.Name + " (A/B against " + ref + ")"
	// The committed baseline, for reference: the candidate under the
	// suite's own name, as a run without --ab would write it.
	asSuite := *files[1]
	asSuite.Suite.Name, asSuite.Suite.Variant = cand.Suite.Name, ""
	if r, err := compareWithBaseline(o.baselines, &asSuite); err == nil && !r.NoBaseline {
		run.committed = r
	}
	return run, nil
}

// atRevision is opts for the suites of the revision written in tree: the
// tree holds no .git, so it is named as their repository root (else each
// suite could read only its own directory), and the import directories
// are the revision's own, at the same places in it.
func atRevision(opts suitefile.Options, tree *gitrev.Tree) (suitefile.Options, error) {
	var dirs []string
	for _, dir := range opts.JPaths {
		p, err := tree.Path(dir)
		if err != nil {
			return opts, fmt.Errorf("import directory %s: %w", dir, err)
		}
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			continue // added by the change: the revision had nothing there
		}
		dirs = append(dirs, p)
	}
	// The working directory, the importer's last resort, is the
	// revision's too: a file the change added there must not stand in
	// for what the base imported (a benchci.libsonnet of its own).
	if cwd, err := tree.Path("."); err == nil {
		dirs = append(dirs, cwd)
	}
	opts.Root, opts.JPaths = tree.Dir, dirs
	return opts, nil
}

// firstLine is an error's first line, for a one-line notice; the error
// may quote a suite file of the revision, so it is printed inert.
func firstLine(err error) string {
	line, _, _ := strings.Cut(err.Error(), "\n")
	return report.OneLine(line)
}
