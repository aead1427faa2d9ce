package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/slo"
)

// readMeasured reads a results file that ci --measured gates, and judges
// its SLOs again. A results file is the file's word: its SLO verdicts, or
// the suite definition inside it, can be edited as easily as its figures
// could before they were verified. The suite in this checkout is the
// reference: the file's suite path must be here, its definition the one
// this checkout evaluates to (same hash), and its SLOs are judged from
// it. Only with ownSuite (--suite-from-results) is the file's own
// definition trusted, and a note says so.
func readMeasured(path string, opts suitefile.Options, ownSuite bool) (*result.File, string, error) {
	f, err := result.Read(path)
	if err != nil {
		return nil, "", err
	}
	if sh := f.Shard; sh != nil {
		return nil, "", fmt.Errorf("%s is shard %d of %d, which sent 1/%d of the load: merge the shards first (benchci merge)", path, sh.Index, sh.Count, sh.Count)
	}
	s, note, err := measuredSuite(f, opts, ownSuite)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	if note != "" {
		f.Notes = append(f.Notes, note)
	}
	slo.Judge(s, f)
	return f, note, nil
}

// measuredSuite returns the suite to judge f by: the checkout's, when f's
// suite file is here, else f's own definition (and a note).
func measuredSuite(f *result.File, opts suitefile.Options, ownSuite bool) (*suite.Suite, string, error) {
	own, err := suite.Decode(f.Suite.Definition)
	if err != nil {
		return nil, "", fmt.Errorf("the suite in the results: %w", err)
	}
	if ownSuite {
		// Read verified the definition against suite.hash where it can;
		// a file without a hash (or whose secrets were masked) cannot be,
		// and its definition is not trusted to judge itself.
		if err := f.Suite.CheckHash(); err != nil {
			return nil, "", fmt.Errorf("--suite-from-results: %w (no suite.hash, or a secret masked in it): judge it from the suite file in the checkout instead", err)
		}
		if !suiteAbsent(f) {
			if err := stillNamed(f, opts); err != nil {
				return nil, "", fmt.Errorf("--suite-from-results: %w", err)
			}
		}
		return own, "SLOs judged from the suite definition the results carry (--suite-from-results), not from a checkout", nil
	}
	if suiteAbsent(f) {
		// A results file can name any path: judging by the definition it
		// carries would let an edited file pass its own loosened SLOs.
		return nil, "", fmt.Errorf("its suite file %q is not in this checkout: run ci --measured from the repository root the suite was measured in, so its SLOs are judged from the suite as committed (or pass --suite-from-results to trust the definition the results carry)", f.Suite.Path)
	}
	l, err := loadSuite(context.Background(), f.Suite.Path, opts)
	if err != nil {
		return nil, "", err
	}
	for _, v := range l.Variants() {
		if v.Suite.RunName() != f.Suite.Name {
			continue
		}
		if v.Hash != f.Suite.Hash {
			return nil, "", fmt.Errorf("measured with another version of %s than this checkout's (suite hash %.12s, here %.12s): its SLOs or tolerances may differ; measure the suite as it is here, or check out the revision it was measured at",
				f.Suite.Path, f.Suite.Hash, v.Hash)
		}
		return v.Suite, "", nil
	}
	return nil, "", fmt.Errorf("%s in this checkout has no suite named %s", f.Suite.Path, f.Suite.Name)
}

// suiteAbsent reports whether f's suite file is not in this checkout.
func suiteAbsent(f *result.File) bool {
	if f.Suite.Path == "" {
		return true
	}
	_, err := os.Stat(f.Suite.Path)
	return errors.Is(err, os.ErrNotExist)
}

// stillNamed checks that f's suite file, as this checkout evaluates it
// now, still defines a suite by f's name. The gate reads which suites
// stay from the files as committed where they evaluate so, else from
// this same evaluation, made after an earlier step wrote the results: a
// file whose name turned on a file the run wrote would otherwise carry
// its results under the new name while its old name seemed to stay, and
// a rename would pass unseen.
func stillNamed(f *result.File, opts suitefile.Options) error {
	l, err := loadSuite(context.Background(), f.Suite.Path, opts)
	if err != nil {
		// Its results were measured here (this job gates them): a file
		// that will not say which suites it defines fails, where a name
		// that turns on what the run wrote would otherwise pass unseen.
		return fmt.Errorf("its suite file is in this checkout and must still define %s, but does not evaluate here (pass ci the flags the run was given, e.g. --ext-str): %w", f.Suite.Name, err)
	}
	defined := namesOf(l).names
	if defined[f.Suite.Name] {
		return nil
	}
	return fmt.Errorf("%s in this checkout defines %s, not %s: the results were measured from a definition this checkout no longer gives (a name that reads files the run writes, or a rename): measure it again from this checkout",
		f.Suite.Path, strings.Join(slices.Sorted(maps.Keys(defined)), ", "), f.Suite.Name)
}
