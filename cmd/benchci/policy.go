package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/gitrev"
	"github.com/benchci/benchci/internal/inputfile"
	"github.com/benchci/benchci/internal/layout"
	"github.com/benchci/benchci/internal/policy"
	"github.com/benchci/benchci/internal/slo"
)

// policyReviewer finds the rules each suite is judged by. A pull request's
// suite is the change under review: its tolerances, SLOs, trials and the
// rest are read from the base, never taken from the change itself. The
// base's rules are the suite at the base revision and the rules its
// baseline was recorded with; where the change is stricter, its own apply.
type policyReviewer struct {
	// rev is the base revision ("" outside a pull request: the committed
	// baselines' recorded rules are then the reference).
	rev       string
	baselines string
	opts      suitefile.Options
	// ctx stops the base's suites' evaluation (SIGTERM, Ctrl-C).
	ctx context.Context
	// base is the base revision's tree, and head the change's as
	// committed (evaluateHere), each written on first use.
	base, head revTree
	// index holds the base's suites by name and by workload hash, to
	// find one this change moved (findBase).
	index map[string][]baseFound
	// committed holds the committed baselines, and defined what the
	// suite files they name (but the job's own) defined in this checkout
	// before the job ran, by path (recordDefined).
	committed []committedBaseline
	defined   map[string]definedHere
	// loaded holds the base's suite files evaluated (loadBase), by their
	// path in the base's tree: each committed baseline asks for its own
	// (recordDefined), a file's variants share one, and the index walks
	// them all.
	loaded map[string]loadedBase
}

// loadedBase is a base suite file as loadBase evaluated it.
type loadedBase struct {
	file *suitefile.File
	err  error
}

// revTree is a revision's tree, written once on first use, with the
// options that evaluate its suites from it alone.
type revTree struct {
	tree *gitrev.Tree
	opts suitefile.Options
	err  error
	tmp  string
}

// write writes rev's tree once: of the repository the baselines are
// committed in, as the revision names it; near's when there are none.
func (r *revTree) write(rev, baselines, near string, opts suitefile.Options) (*gitrev.Tree, error) {
	if r.tree == nil && r.err == nil {
		if st, err := os.Stat(baselines); err == nil && st.IsDir() {
			near = baselines
		}
		r.tmp, r.err = os.MkdirTemp("", "benchci-policy-")
		if r.err == nil {
			r.tree, r.err = gitrev.Write(near, rev, r.tmp, gitrev.DefaultLimits)
		}
		if r.err == nil {
			r.opts, r.err = atRevision(opts, r.tree)
		}
	}
	return r.tree, r.err
}

// remove removes the tree written.
func (r *revTree) remove() {
	if r.tmp != "" {
		os.RemoveAll(r.tmp)
	}
}

func newPolicyReviewer(ctx context.Context, rev, baselines string, opts suitefile.Options) *policyReviewer {
	return &policyReviewer{ctx: ctx, rev: rev, baselines: baselines, opts: opts}
}

// close removes the trees written: the base revision's and the change's.
func (p *policyReviewer) close() {
	p.base.remove()
	p.head.remove()
}

// baseTree writes the base revision's tree once; nil when there is no
// base revision or it cannot be written (the error says why).
func (p *policyReviewer) baseTree(near string) (*gitrev.Tree, error) {
	if p.rev == "" {
		return nil, nil
	}
	return p.base.write(p.rev, p.baselines, near, p.opts)
}

// baseSuite is the suite named name as defined at the base revision by
// the file at path (in this checkout's terms); nil when the base has no
// such file or suite.
func (p *policyReviewer) baseSuite(path, name string) (*suite.Suite, error) {
	if path == "" {
		return nil, nil
	}
	tree, err := p.baseTree(filepath.Dir(path))
	if tree == nil || err != nil {
		return nil, err
	}
	bp, err := tree.Path(path)
	if err != nil {
		return nil, nil // outside the repository: not the base's
	}
	if _, err := os.Stat(bp); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	l, err := p.loadBase(bp)
	if err != nil {
		return nil, fmt.Errorf("%s at %s does not evaluate: %w", path, p.rev, err)
	}
	return variantNamed(l, name), nil
}

// loadBase evaluates the base's suite file at bp (a path in its tree)
// once, for baseSuite and baseIndex alike.
func (p *policyReviewer) loadBase(bp string) (*suitefile.File, error) {
	got, ok := p.loaded[bp]
	if !ok {
		got.file, got.err = loadSuite(p.ctx, bp, p.base.opts)
		if p.loaded == nil {
			p.loaded = map[string]loadedBase{}
		}
		p.loaded[bp] = got
	}
	return got.file, got.err
}

// baseFound is a suite of the base revision and where it was found.
type baseFound struct {
	suite *suite.Suite
	where string
	rel   string // the file, relative to the repository's root
}

// maxBaseSuites bounds the files evaluated to find a moved suite.
const maxBaseSuites = 500

// findBase is the base's version of a suite this change may have moved
// or renamed: the one named name in any suite file of the base, else the
// one that sent the same requests (workload hash), when only one did. A
// suite cannot shed its base's rules by moving to another file.
func (p *policyReviewer) findBase(near, name, workload string) (*baseFound, error) {
	tree, err := p.baseTree(near)
	if tree == nil || err != nil {
		return nil, err
	}
	index := p.baseIndex(tree)
	if fs := index["name:"+name]; len(fs) == 1 {
		return &fs[0], nil
	}
	variant := ""
	if i := strings.LastIndex(name, "/"); i >= 0 {
		variant = name[i+1:]
	}
	if fs := index["workload:"+workload+"/"+variant]; len(fs) == 1 && workload != "" {
		return &fs[0], nil
	}
	return nil, nil
}

// baseIndex is the base's suites by name and by workload hash, from the
// first maxBaseSuites suite files of its tree, built once.
func (p *policyReviewer) baseIndex(tree *gitrev.Tree) map[string][]baseFound {
	if p.index != nil {
		return p.index
	}
	p.index = map[string][]baseFound{}
	n := 0
	_ = filepath.WalkDir(tree.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonnet") || n >= maxBaseSuites {
			return nil
		}
		n++
		l, err := p.loadBase(path)
		if err != nil {
			return nil // not a suite, or not one that evaluates: nothing to inherit
		}
		rel, _ := filepath.Rel(tree.Dir, path)
		for _, v := range l.Variants() {
			vn := l.Suite.Name
			if v.Name != "" {
				vn += "/" + v.Name
			}
			f := baseFound{v.Suite, fmt.Sprintf("%s (suite %s) at %s", filepath.ToSlash(rel), vn, p.rev), rel}
			p.index["name:"+vn] = append(p.index["name:"+vn], f)
			p.index["workload:"+v.WorkloadHash+"/"+v.Name] = append(p.index["workload:"+v.WorkloadHash+"/"+v.Name], f)
		}
		return nil
	})
	return p.index
}

// variantNamed is the suite (or variant, "suite/variant") named name in
// l, or nil.
func variantNamed(l *suitefile.File, name string) *suite.Suite {
	for _, v := range l.Variants() {
		if v.Suite.RunName() == name {
			return v.Suite
		}
	}
	return nil
}

// recorded is the suite a results or baseline file was measured with.
func recorded(f *result.File) (*suite.Suite, error) {
	s, err := suite.Decode(f.Suite.Definition)
	if err != nil {
		return nil, fmt.Errorf("the suite recorded in it does not decode: %w", err)
	}
	return s, nil
}

// baselineAt reads the suite's baseline at the base revision, from the
// base's tree: the file and its bytes, nil when the base has none.
func (p *policyReviewer) baselineAt(path, near string) (*baseline.File, []byte, error) {
	tree, err := p.baseTree(near)
	if tree == nil || err != nil {
		return nil, nil, err
	}
	tp, err := tree.Path(path)
	if err != nil {
		return nil, nil, nil // outside the repository: not the base's
	}
	data, err := inputfile.ReadFile(tp, result.MaxFileBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	b, err := baseline.Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s at %s: %w", path, p.rev, err)
	}
	return b, data, nil
}

// reference is one source of the base's rules.
type reference struct {
	what  string
	suite *suite.Suite
}

// review compares the rules cand was run with (the definition it
// records) with the base's, and returns the review and the suite the gate
// judges cand by. name is the suite's own name (an A/B candidate's
// without its side), base the A/B base's recorded suite, if any. With no
// reference at all (a new suite), the review is nil and cand's rules
// judge it.
func (p *policyReviewer) review(name, path string, cand *result.File, base *result.File) (*compare.Policy, *suite.Suite, error) {
	cs, err := recorded(cand)
	if err != nil {
		return nil, nil, err
	}
	refs, err := p.suiteRefs(name, path, cand, base)
	if err != nil {
		return nil, nil, err
	}
	var notes []string
	bpath := layout.Baselines(p.baselines).Baseline(name)
	now, err := baseline.Read(bpath)
	if err != nil && !errors.Is(err, baseline.ErrNotExist) {
		now = nil // unreadable: the gate says why when it compares
	}
	var then *baseline.File
	var thenBytes []byte
	if p.rev != "" {
		if then, thenBytes, err = p.baselineAt(bpath, filepath.Dir(path)); err != nil {
			return nil, nil, fmt.Errorf("the base's rules: its baseline: %w", err)
		}
	}
	recordedWith := then
	at := " at " + p.rev
	if p.rev == "" {
		recordedWith, at = now, ""
	}
	if recordedWith != nil && recordedWith.Result.Suite.HasDefinition() {
		if s, err := recorded(recordedWith.Result); err == nil {
			refs = append(refs, reference{fmt.Sprintf("the rules %s was recorded with%s", bpath, at), s})
		} else {
			notes = append(notes, fmt.Sprintf("%s%s: %v", bpath, at, err))
		}
	}
	if len(refs) == 0 {
		if len(notes) > 0 {
			// Nothing of the base's rules reads: judging by cand's own
			// would let the change loosen its gate unseen.
			return nil, nil, fmt.Errorf("the base's rules cannot be read (%s): record the baseline again with this benchci", strings.Join(notes, "; "))
		}
		return nil, cs, nil
	}
	rev, eff, err := againstRefs(refs, notes, cs)
	if err != nil {
		return nil, nil, err
	}
	if len(rev.Looser) > 0 {
		if why := p.approval(bpath, now, thenBytes, cand, cs); why != "" {
			rev.Approved = why
			eff = cs
		}
	}
	return rev, eff, nil
}

// againstRefs reviews cs's rules against each reference's, and returns
// the review and the stricter rules of them all.
func againstRefs(refs []reference, notes []string, cs *suite.Suite) (*compare.Policy, *suite.Suite, error) {
	rev := &compare.Policy{}
	var whats []string
	seen := map[string]bool{}
	eff := cs
	for i, r := range refs {
		whats = append(whats, r.what)
		changes, err := policy.Diff(r.suite, cs)
		if err != nil {
			return nil, nil, fmt.Errorf("the rules of %s: %w", r.what, err)
		}
		for _, c := range changes {
			if seen[c.Field] {
				continue
			}
			seen[c.Field] = true
			switch {
			case c.Looser:
				rev.Looser = append(rev.Looser, c.String())
			case i == 0:
				// Tightened against the base's suite; against an older
				// recording of its rules it would be no news of this change.
				rev.Stricter = append(rev.Stricter, c.String())
			}
		}
		if eff, err = policy.Stricter(r.suite, eff); err != nil {
			return nil, nil, err
		}
	}
	rev.Reference = strings.Join(append(whats, notes...), "; ")
	return rev, eff, nil
}

// suiteRefs is the base's version of the suite: the A/B base's recorded
// suite, else the one at the base revision, at path or moved elsewhere;
// none for a new suite or outside a pull request. A base that cannot be
// read is an error: judging by the change's own rules would be the hole
// this closes.
func (p *policyReviewer) suiteRefs(name, path string, cand, base *result.File) ([]reference, error) {
	switch {
	case base != nil:
		bs, err := recorded(base)
		if err != nil {
			return nil, fmt.Errorf("the A/B base: %w", err)
		}
		return []reference{{fmt.Sprintf("%s at %s", path, p.rev), bs}}, nil
	case p.rev == "":
		return nil, nil
	}
	bs, err := p.baseSuite(path, name)
	if err != nil {
		return nil, fmt.Errorf("the base's rules: %w", err)
	}
	if bs != nil {
		return []reference{{fmt.Sprintf("%s at %s", path, p.rev), bs}}, nil
	}
	found, err := p.findBase(filepath.Dir(path), name, cand.Suite.WorkloadHash)
	if err != nil || found == nil {
		if err != nil {
			err = fmt.Errorf("the base's rules: %w", err)
		}
		return nil, err
	}
	return []reference{{found.where + " (moved or renamed here)", found.suite}}, nil
}

// approval is the approval in git of a loosening: the suite's baseline
// re-recorded in this change (so the owners of baselines/ review it) with
// rules no stricter than the change's. "" when there is none.
func (p *policyReviewer) approval(bpath string, now *baseline.File, thenBytes []byte, cand *result.File, cs *suite.Suite) string {
	if p.rev == "" || now == nil {
		return ""
	}
	nowBytes, err := os.ReadFile(bpath)
	if err != nil || bytes.Equal(nowBytes, thenBytes) {
		return ""
	}
	// Recorded with this very suite (its hash, which the reader checks
	// against the definition it carries), not a copy edited to carry
	// looser rules.
	if cand.Suite.Hash == "" || now.Result.Suite.Hash != cand.Suite.Hash {
		return ""
	}
	// A new measurement, not the base's figures with new rules pasted in.
	if then, err := baseline.Parse(thenBytes); len(thenBytes) > 0 && err == nil && then.Result.Started.Equal(now.Result.Started) {
		return ""
	}
	s, err := recorded(now.Result)
	if err != nil {
		return ""
	}
	changes, err := policy.Diff(s, cs)
	if err != nil || len(policy.Looser(changes)) > 0 {
		return ""
	}
	// "Changed", not "measured again": the checks above cannot tell a
	// run from an edit that carries the rules and moves started; the
	// baseline-edit table above the verdict shows which figures moved.
	return fmt.Sprintf("%s, changed in this change to this suite's rules (reviewed by the owners of %s; its edit table shows the figures it moved)", bpath, filepath.Dir(bpath))
}

// judgeBy judges cand's SLOs and sanity again by s, the suite the gate
// judges it by, whatever verdicts cand carries: a file's verdicts are its
// word, as easily edited as its figures (which are verified) and never
// read by the gate as they are. A candidate whose recorded suite does not
// decode is refused.
func judgeBy(s *suite.Suite, cand *result.File) error {
	if _, err := recorded(cand); err != nil {
		return err
	}
	slo.Judge(s, cand)
	return nil
}

// goneSuites reports the baselines of suites that this change deleted or
// renamed while their baseline stays: each is gated as missing (its
// points are), so a suite cannot leave the gate without its baseline
// leaving in the same change, where the owners of baselines/ see it.
// Only suites the base defined are named: a baseline left behind earlier
// is the base's business. ran holds the suites this job judged; the
// committed baselines are those recordDefined read before the job ran.
func (p *policyReviewer) goneSuites(ran []*result.File) []*compare.Report {
	if p.rev == "" {
		return nil
	}
	names := map[string]bool{}
	var unmatched []*result.File
	for _, f := range ran {
		names[f.Suite.Name] = true
		// Only a suite without a baseline of its own can be another's
		// new name (variants of one suite share their requests).
		if _, err := os.Stat(layout.Baselines(p.baselines).Baseline(f.Suite.Name)); err != nil {
			unmatched = append(unmatched, f)
		}
	}
	var out []*compare.Report
	for _, c := range p.committed {
		name, spath := c.b.Result.Suite.Name, c.spath
		if names[name] || p.stays(spath, name, ran) {
			continue
		}
		if bs, err := p.baseSuite(spath, name); err != nil || bs == nil {
			continue // not the base's either: not this change's doing
		}
		why := fmt.Sprintf("suite %s was deleted in this change (%s no longer defines it) while %s stays", name, spath, c.path)
		if to := renamedTo(c.b.Result, spath, unmatched); to != "" {
			why = fmt.Sprintf("suite %s was renamed to %s in this change (%s) while %s stays", name, to, renamedBy(c.b.Result, spath, unmatched), c.path)
		}
		why += ": move or delete the baseline in the same change (benchci baseline update), so the owners of baselines/ review it"
		out = append(out, compare.SuiteGone(c.b.Result, why))
	}
	return out
}

// stays reports whether the suite file at spath defines name in this
// checkout as the job began: by recordDefined's evaluation, else (the
// job's own files) by what the job ran of it. A file that does not
// evaluate stays as far as this check goes: the job that runs it fails
// on it (and one that needs another job's flags evaluates there).
func (p *policyReviewer) stays(spath, name string, ran []*result.File) bool {
	if here, ok := p.defined[spath]; ok {
		return here.err != nil || here.names[name]
	}
	ranIt := false
	for _, f := range ran {
		if samePath(f.Suite.Path, spath) {
			ranIt = true
			if f.Suite.Name == name {
				return true
			}
		}
	}
	return !ranIt // the job's own file, which it could not run: it fails on it
}

// committedBaseline is a committed baseline and where it lies.
type committedBaseline struct {
	path string
	b    *baseline.File
	// spath is its suite file in this checkout (suitePathHere).
	spath string
}

// suitePathHere is where a baseline's recorded suite path lies in this
// checkout: as recorded, or (recorded in another clone, or from another
// directory, as a cluster's run may record it) the longest tail of it,
// whichever first names a file at the base, else here. The base's files
// come first: a file this change adds at a longer tail cannot stand in
// for the suite's. A path that leads to no file of the base defining the
// suite is mapped by the suite's name instead (baseFileOf). root is the
// repository's work tree ("": none, and sp is left as it is).
func (p *policyReviewer) suitePathHere(root, sp string) string {
	if sp == "" || root == "" {
		return sp
	}
	tree, _ := p.baseTree(p.baselines)
	atBase := func(path string) bool {
		if tree == nil {
			return false
		}
		at, err := tree.Path(path)
		if err != nil {
			return false
		}
		_, err = os.Stat(at)
		return err == nil
	}
	here := func(path string) bool {
		_, err := os.Stat(path)
		return err == nil
	}
	var cands []string
	if rel, err := filepath.Rel(root, absPath(sp)); err == nil && filepath.IsLocal(rel) {
		cands = append(cands, sp)
	}
	for _, tail := range recordedTails(sp) {
		cands = append(cands, filepath.Join(root, tail))
	}
	for _, exists := range []func(string) bool{atBase, here} {
		if i := slices.IndexFunc(cands, exists); i >= 0 {
			return cands[i]
		}
	}
	return sp
}

// maxRecordedPath bounds the recorded suite path split into tails (whose
// bytes grow as its square); a longer one is tried as written, then by
// the suite's name (baseFileOf).
const maxRecordedPath = 4096

// recordedTails are the relative tails of a recorded suite path, longest
// first. A path recorded on Windows separates with backslashes, which
// filepath.ToSlash leaves alone elsewhere, so both split it.
func recordedTails(sp string) []string {
	if len(sp) > maxRecordedPath {
		return nil
	}
	parts := strings.FieldsFunc(filepath.ToSlash(filepath.Clean(sp)), func(r rune) bool { return r == '/' || r == '\\' })
	var tails []string
	for i := range parts {
		if tail := filepath.FromSlash(strings.Join(parts[i:], "/")); filepath.IsLocal(tail) {
			tails = append(tails, tail)
		}
	}
	return tails
}

// baseFileOf is where the base defines the suite a committed baseline
// names when the path mapped from its record does not lead there: the
// one suite file of the base that defines name, relative to the root,
// counting no copy the base wrote for one of its links (those are the
// same file); "" where the path leads there, or none or several do.
// Mapped by path alone, a path recorded from another directory
// ("len.jsonnet", run from suites/), on Windows, or in other letter case
// led nowhere, the gone-suite check skipped it, and a renamed suite
// passed. The choice is the base's alone: which files are links here is
// the change's to say.
func (p *policyReviewer) baseFileOf(spath, name string) string {
	if p.rev == "" || name == "" {
		return ""
	}
	if bs, err := p.baseSuite(spath, name); err == nil && bs != nil {
		return ""
	}
	tree, err := p.baseTree(p.baselines)
	if tree == nil || err != nil {
		return ""
	}
	var own []string
	for _, f := range p.baseIndex(tree)["name:"+name] {
		if !tree.Linked(f.rel) {
			own = append(own, f.rel)
		}
	}
	if len(own) != 1 {
		return ""
	}
	return own[0]
}

// absPath is p absolute ("" where it cannot be).
func absPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return ""
	}
	return abs
}

// definedHere is what a suite file of this checkout defines: the names
// its suite and variants run under, or why it does not evaluate (both
// empty: there is no such file).
type definedHere struct {
	names map[string]bool
	err   error
}

// recordDefined reads the committed baselines and evaluates, before the
// job runs, every suite file they name that the job does not run itself
// (jobPaths: the job's own evaluation names those); goneSuites judges
// by what they defined then. Evaluated again after the run, a file could
// define other names, for a suite may read files the run writes
// (results/ is in the repository): a suite renamed in a change would
// then seem to stay. An earlier step's run may have written there
// already: evaluateHere reads the files as committed where it can.
func (p *policyReviewer) recordDefined(jobPaths []string) {
	if p.rev == "" {
		return
	}
	p.committed, p.defined = []committedBaseline{}, map[string]definedHere{}
	// Once: each call opens the repository.
	root, err := gitrev.Root(p.baselines)
	walkRoot := root
	if err != nil {
		root, walkRoot = "", p.baselines
	}
	walkBaselines(p.baselines, walkRoot, func(path string) {
		b, err := baseline.Read(path)
		if err != nil {
			return
		}
		spath := p.suitePathHere(root, b.Result.Suite.Path)
		if root != "" {
			if rel := p.baseFileOf(spath, b.Result.Suite.Name); rel != "" {
				spath = filepath.Join(root, rel)
			}
		}
		p.committed = append(p.committed, committedBaseline{path, b, spath})
		if spath == "" || slices.ContainsFunc(jobPaths, func(j string) bool { return samePath(j, spath) }) {
			return
		}
		if _, done := p.defined[spath]; !done {
			p.defined[spath] = p.evaluateHere(spath)
		}
	})
}

// walkBaselines calls fn with every .json file under dir, by its path
// under dir's name, following links to directories inside root (a
// baselines directory, or a variant's, moved and left as a link is
// still read; one out of the repository is not). Breadth first, each
// real directory and file once: a file reached by two paths (a link back
// up) is read by the shorter.
func walkBaselines(dir, root string, fn func(path string)) {
	// Absolute both: a real path of a relative dir is relative, and no
	// relative path is inside an absolute root (--baselines defaults to
	// "baselines").
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	inside := func(real string) bool {
		if abs, err := filepath.Abs(real); err == nil {
			real = abs
		}
		rel, err := filepath.Rel(root, real)
		return err == nil && filepath.IsLocal(rel) || real == root
	}
	seen := map[string]bool{}
	queue := []string{dir}
	for len(queue) > 0 && len(seen) < 100_000 {
		d := queue[0]
		queue = queue[1:]
		real, err := filepath.EvalSymlinks(d)
		if err != nil || seen[real] || !inside(real) {
			continue
		}
		seen[real] = true
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			path := filepath.Join(d, e.Name())
			st, err := os.Stat(path) // through a link
			switch {
			case err != nil:
			case st.IsDir():
				queue = append(queue, path)
			case st.Mode().IsRegular() && strings.HasSuffix(e.Name(), ".json"):
				if real, err := filepath.EvalSymlinks(path); err == nil && !seen[real] && inside(real) {
					seen[real] = true
					fn(path)
				}
			}
		}
	}
}

// deletedBaselines names the suites whose baseline the base revision has
// and this checkout does not: deleted in this change.
func (p *policyReviewer) deletedBaselines() []string {
	if p.rev == "" {
		return nil
	}
	tree, err := p.baseTree(p.baselines)
	if tree == nil || err != nil {
		return nil
	}
	dir, err := tree.Path(p.baselines)
	if err != nil {
		return nil
	}
	var out []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, path)
		name, ok := strings.CutSuffix(filepath.ToSlash(rel), ".json")
		if err != nil || !ok || !d.Type().IsRegular() {
			return nil
		}
		// The suite's baseline as this checkout names it (variants' in
		// subdirectories).
		if _, err := os.Lstat(layout.Baselines(p.baselines).Baseline(name)); errors.Is(err, os.ErrNotExist) && isBaselineFile(path) {
			out = append(out, name)
		}
		return nil
	})
	return out
}

// isBaselineFile reports whether the file at path is a baseline: JSON
// that names the baseline schema. Other JSON kept beside the baselines
// (a team's notes, an owners list) is not one, and its deletion is not a
// baseline's; a file that does not read as JSON at all may be a baseline
// gone bad, and counts as one.
func isBaselineFile(path string) bool {
	data, err := result.ReadBytes(path)
	return err != nil || !baseline.OtherSchema(data)
}

// samePath reports whether two paths, each absolute or relative to the
// working directory, name one file.
func samePath(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	x, errA := filepath.Abs(a)
	y, errB := filepath.Abs(b)
	return errA == nil && errB == nil && x == y
}

// evaluateHere is what the suite file at path defines in this change:
// as committed (HEAD's tree) where it evaluates there, else as the work
// tree has it. The work tree may hold files an earlier step's run wrote
// (results/), which a suite can import: read as committed, its name
// cannot turn on them. Where the committed tree does not evaluate (an
// ignored library directory, a generated file, a file not committed
// yet), the work tree's reading stands.
func (p *policyReviewer) evaluateHere(path string) definedHere {
	if _, err := os.Stat(path); err != nil {
		return definedHere{}
	}
	if l := p.committedSuite(path); l != nil {
		return namesOf(l)
	}
	l, err := loadSuite(p.ctx, path, p.opts)
	if err != nil {
		return definedHere{err: err}
	}
	return namesOf(l)
}

// committedSuite is the suite file at path as the change commits it
// (HEAD's tree), nil where it is not there or does not evaluate there.
func (p *policyReviewer) committedSuite(path string) *suitefile.File {
	tree, err := p.head.write("HEAD", p.baselines, filepath.Dir(path), p.opts)
	if err != nil {
		return nil
	}
	hp, err := tree.Path(path)
	if err != nil {
		return nil
	}
	if _, err := os.Stat(hp); err != nil {
		return nil
	}
	l, err := loadSuite(p.ctx, hp, p.head.opts)
	if err != nil {
		return nil
	}
	return l
}

// namesOf is what a loaded suite file defines: its runs' names.
func namesOf(l *suitefile.File) definedHere {
	names := map[string]bool{}
	for _, v := range l.Variants() {
		names[v.Suite.RunName()] = true
	}
	return definedHere{names: names}
}

// renamedTo names the suite among ran that is base under another name:
// the same file (spath, base's suite file in this checkout), or the same
// requests (workload hash).
func renamedTo(base *result.File, spath string, ran []*result.File) string {
	i := slices.IndexFunc(ran, func(f *result.File) bool { return renamedBy(base, spath, []*result.File{f}) != "" })
	if i < 0 {
		return ""
	}
	return ran[i].Suite.Name
}

func renamedBy(base *result.File, spath string, ran []*result.File) string {
	for _, f := range ran {
		switch {
		case f.Suite.Name == base.Suite.Name:
		case base.Suite.WorkloadHash != "" && f.Suite.WorkloadHash == base.Suite.WorkloadHash:
			return "the same workload hash"
		case f.Suite.Path == base.Suite.Path || samePath(f.Suite.Path, spath):
			return "the same file"
		}
	}
	return ""
}

// recordedPolicy reviews cand's rules against those base was recorded
// with (benchci compare has no git revision to read the base's from); a
// base recording no suite leaves cand's own rules. A base whose recorded
// rules do not read is refused: judging by cand's own would let a change
// loosen its gate unseen.
func recordedPolicy(path string, base, cand *result.File) (*compare.Policy, *suite.Suite, error) {
	cs, err := recorded(cand)
	if err != nil {
		return nil, nil, err
	}
	if !base.Suite.HasDefinition() {
		return nil, cs, nil
	}
	bs, err := recorded(base)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: the rules it was recorded with cannot be read, so the candidate cannot be judged by them (record it again with this benchci): %w", path, err)
	}
	return againstRefs([]reference{{"the rules " + path + " was recorded with", bs}}, nil, cs)
}

// configBase is the run a candidate's serving config is shown against:
// its baseline as the base has it (a baseline re-recorded in this change
// would show the change against itself), else the checkout's; nil
// without one.
func (p *policyReviewer) configBase(name, path string) *result.File {
	bpath := layout.Baselines(p.baselines).Baseline(name)
	if p.rev != "" {
		if b, _, err := p.baselineAt(bpath, filepath.Dir(path)); err == nil && b != nil {
			return b.Result
		}
	}
	if b, err := baseline.Read(bpath); err == nil {
		return b.Result
	}
	return nil
}
