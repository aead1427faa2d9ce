// Package suitefile evaluates suite files written in Jsonnet (with the
// embedded benchci.libsonnet), decodes them into suite.Suite, and places
// every problem at the file:line:col where it was written. It also
// resolves the data files a suite names and folds their contents into the
// workload hash.
package suitefile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/google/go-jsonnet"
	"github.com/hashicorp/go-multierror"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/inputfile"
	"github.com/benchci/benchci/suites/lib"
)

// Options configure evaluation.
type Options struct {
	// JPaths are extra import directories, searched before the embedded
	// library. Each must be inside Root.
	JPaths []string
	// Root is the repository the suite may read: its imports and data
	// files resolve inside it (see confine.go). Empty means the work tree
	// of the git repository holding the suite, or the suite's own
	// directory outside one.
	Root string
	// ExtStr are external variables (std.extVar) given as strings.
	ExtStr map[string]string
	// TLAStr are top-level arguments given as strings.
	TLAStr map[string]string
	// Known lists the simulator profiles and tokenizers this binary has;
	// nil skips those checks.
	Known *suite.Known
	// Budget bounds the evaluation's heap and time (see budget.go).
	Budget Budget
}

// File is a suite together with what it was made from.
type File struct {
	Suite *suite.Suite
	// Path is the file the suite was read from.
	Path string
	// JSON is the evaluated suite, before decoding, compacted.
	JSON json.RawMessage
	// Hash is the SHA-256 of JSON: the suite exactly as evaluated.
	Hash string
	// WorkloadHash covers only what decides the requests sent and how they
	// are paced (api, request, workload, sweep, trials), after defaults. Two
	// runs with equal workload hashes are comparable even when the target,
	// SLOs or tolerances changed, which is what a pull request changes.
	WorkloadHash string
	// Imports are the files on disk the suite's Jsonnet imported, as the
	// importer found them, in the order first read (the embedded library
	// is not one): with Path and the data files, what the suite is made of.
	Imports []string
}

// Load evaluates, decodes and validates the suite in path.
func Load(path string, opts Options) (*File, error) {
	return LoadContext(context.Background(), path, opts)
}

// LoadContext is Load whose evaluation stops when ctx is done.
func LoadContext(ctx context.Context, path string, opts Options) (*File, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load suite: %w", err)
	}
	return LoadSourceContext(ctx, path, string(src), opts)
}

// LoadSource evaluates, decodes and validates a suite whose source is src; path
// names it in errors and resolves its relative imports. The error, when not
// nil, is either go-jsonnet's formatted evaluation error or a
// *multierror.Error holding every *FieldError found (a call's wrong
// argument is one, placed at the call), or a *BudgetError when the
// evaluation went over opts.Budget.
func LoadSource(path, src string, opts Options) (*File, error) {
	return LoadSourceContext(context.Background(), path, src, opts)
}

// LoadSourceContext is LoadSource whose evaluation stops when ctx is
// done: it returns a *BudgetError wrapping ctx's error at once.
func LoadSourceContext(ctx context.Context, path, src string, opts Options) (*File, error) {
	repo, err := repository(opts, path)
	if err != nil {
		return nil, err
	}
	vm, imp, err := newVM(opts, path, repo)
	if err != nil {
		return nil, err
	}
	kept := &keepError{ErrorFormatter: vm.ErrorFormatter}
	vm.ErrorFormatter = kept
	out, err := evaluate(ctx, vm, path, src, opts.Budget)
	if be := (*BudgetError)(nil); errors.As(err, &be) {
		return nil, be
	}
	if err != nil {
		if placed := argumentError(path, src, kept.err); placed != nil {
			return nil, placed
		}
		return nil, fmt.Errorf("evaluate %s: %w", path, err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(out)); err != nil {
		return nil, fmt.Errorf("evaluate %s: %w", path, err)
	}
	s, err := suite.DecodeWith(compact.Bytes(), withSuiteDir(opts.Known, filepath.Dir(path), repo))
	if err != nil {
		if me, ok := err.(*multierror.Error); ok {
			loc := newLocator(path, src)
			for _, e := range me.Errors {
				if fe, ok := e.(*suite.FieldError); ok && fe.Pos == "" {
					loc.set(fe, path)
				}
			}
			// In the order they appear in the file, as a reader fixes them.
			sort.SliceStable(me.Errors, func(i, j int) bool {
				a, _ := me.Errors[i].(*suite.FieldError)
				b, _ := me.Errors[j].(*suite.FieldError)
				switch {
				case a == nil || b == nil || a.Line == 0:
					return false // errors without a place go last
				case b.Line == 0:
					return true
				}
				return a.Line < b.Line || (a.Line == b.Line && a.Col < b.Col)
			})
			me.ErrorFormat = listFormat(path)
		}
		return nil, err
	}
	sum := sha256.Sum256(compact.Bytes())
	l := &File{Suite: s, Path: path, JSON: compact.Bytes(), Hash: hex.EncodeToString(sum[:]), WorkloadHash: suite.WorkloadHash(s), Imports: imp.order}
	if err := l.resolveFiles(src, repo); err != nil {
		return nil, err
	}
	targets := []*suite.Target{&s.Target}
	for _, name := range s.VariantNames() {
		if t := s.Variants[name].Target; t != nil {
			targets = append(targets, t)
		}
	}
	for _, t := range targets {
		if lc := t.Launch; lc != nil && !filepath.IsAbs(lc.Dir) {
			// A launched server runs next to the suite unless told otherwise.
			lc.Dir = filepath.Join(filepath.Dir(path), lc.Dir)
		}
		if field, err := resolveSimFiles(t, filepath.Dir(path), repo); err != nil {
			return nil, fmt.Errorf("%s: target.%s: %w", path, field, err)
		}
	}
	return l, nil
}

// resolveSimFiles makes the profile files a sim target names (file:PATH,
// spec.fitted) relative to the suite's directory, as its data files are,
// and confined to its repository as they are: the field and the reason
// when one is refused. A missing file is left for the profile's own check
// to name.
func resolveSimFiles(t *suite.Target, dir string, repo *confinement) (string, error) {
	resolve := func(p string) (string, error) {
		d, name := dir, p
		if filepath.IsAbs(p) && repo.contains(filepath.Clean(p)) {
			// Resolved before (the sim check resolves in place): checked
			// again where it is.
			d, name = filepath.Dir(p), filepath.Base(p)
		}
		real, err := repo.file(d, name, false)
		if errors.Is(err, os.ErrNotExist) && !filepath.IsAbs(p) {
			return filepath.Join(dir, p), nil
		}
		return real, err
	}
	if p, ok := strings.CutPrefix(t.Profile, suite.ProfileFilePrefix); ok && p != "" {
		real, err := resolve(p)
		if err != nil {
			return "profile", err
		}
		t.Profile = suite.ProfileFilePrefix + real
	}
	if sp := t.Spec; sp != nil && sp.Fitted != "" {
		real, err := resolve(sp.Fitted)
		if err != nil {
			return "spec.fitted", err
		}
		sp.Fitted = real
	}
	return "", nil
}

// withSuiteDir has known's sim check read profile files relative to the
// suite's directory: it resolves them in the target before checking it.
func withSuiteDir(known *suite.Known, dir string, repo *confinement) *suite.Known {
	if known == nil || known.Sim == nil {
		return known
	}
	k := *known
	k.Sim = func(t *suite.Target) (string, error) {
		if field, err := resolveSimFiles(t, dir, repo); err != nil {
			return field, err
		}
		return known.Sim(t)
	}
	return &k
}

// Variant is one variant of a suite, ready to run as a suite of its own.
type Variant struct {
	// Name is the variant's name; empty for a suite without variants.
	Name string
	*File
}

// Variants expands a suite into one File per variant (see suite.Expand),
// in the order they run. Each keeps the suite's workload hash, since a
// variant cannot change what is sent, and records its own definition.
// A suite without variants is its own single, unnamed variant.
func (l *File) Variants() []Variant {
	named := l.Suite.Expand()
	if len(named) == 1 && named[0].Variant == "" {
		return []Variant{{File: l}}
	}
	out := make([]Variant, 0, len(named))
	for _, n := range named {
		def, err := json.Marshal(n.Suite)
		if err != nil {
			panic(fmt.Sprintf("suitefile: marshal variant %s: %v", n.Variant, err)) // plain data
		}
		sum := sha256.Sum256(def)
		out = append(out, Variant{Name: n.Variant, File: &File{
			Suite: n.Suite, Path: l.Path, JSON: def, Hash: hex.EncodeToString(sum[:]), WorkloadHash: l.WorkloadHash, Imports: l.Imports,
		}})
	}
	return out
}

// resolveFiles makes the data files a suite names (traces, datasets)
// relative to the suite's own directory, checks they can be read, and folds
// their contents into the workload hash: the same file name with other
// contents is another workload.
func (l *File) resolveFiles(src string, repo *confinement) error {
	h := sha256.New()
	h.Write([]byte(l.WorkloadHash))
	var me *multierror.Error
	files := 0
	for _, f := range l.Suite.DataFiles() {
		if *f.Path == "" {
			continue
		}
		files++
		dir := filepath.Dir(l.Path)
		// What is hashed is what was checked: the file with its links
		// resolved. The suite keeps the name as written, next to it.
		real, err := repo.file(dir, *f.Path, f.Dir)
		if !filepath.IsAbs(*f.Path) {
			*f.Path = filepath.Join(dir, *f.Path)
		}
		var sum []byte
		if err == nil {
			hash := hashFile
			if f.Dir {
				hash = hashImageDir
			}
			sum, err = hash(real)
		}
		if err != nil {
			fe := &suite.FieldError{Path: f.Field, Msg: err.Error()}
			newLocator(l.Path, src).set(fe, l.Path)
			me = multierror.Append(me, fe)
			continue
		}
		h.Write(sum)
	}
	if me != nil {
		me.ErrorFormat = listFormat(l.Path)
		return me
	}
	if files > 0 {
		l.WorkloadHash = hex.EncodeToString(h.Sum(nil))
	}
	return nil
}

func listFormat(path string) multierror.ErrorFormatFunc {
	return func(errs []error) string {
		var b bytes.Buffer
		fmt.Fprintf(&b, "%s: %d problem(s):", path, len(errs))
		for _, e := range errs {
			b.WriteString("\n  ")
			b.WriteString(e.Error())
		}
		return b.String()
	}
}

// repository is the root a suite at path may read (opts.Root, else the
// one findRoot finds).
func repository(opts Options, path string) (*confinement, error) {
	root := opts.Root
	if root == "" {
		var err error
		if root, err = findRoot(path); err != nil {
			return nil, err
		}
	}
	return newConfinement(root)
}

// newVM builds the one Jsonnet VM configuration benchci uses for the suite
// at path: user import paths first, then the embedded benchci.libsonnet,
// every file read confined to repo.
func newVM(opts Options, path string, repo *confinement) (*jsonnet.VM, *importer, error) {
	for _, dir := range opts.JPaths {
		if err := repo.dir(dir); err != nil {
			return nil, nil, fmt.Errorf("evaluate %s: %w", path, err)
		}
	}
	jpaths := slices.Clone(opts.JPaths)
	// The working directory is where relative imports once resolved
	// from, the last resort kept; outside the repository it is no place
	// to import from, so it is left out rather than refused.
	if repo.dir(".") == nil {
		jpaths = append(jpaths, ".")
	}
	vm := jsonnet.MakeVM()
	imp := &importer{
		suite:  path,
		jpaths: jpaths,
		repo:   repo,
		read:   map[string]jsonnet.Contents{},
		lib:    &jsonnet.MemoryImporter{Data: map[string]jsonnet.Contents{lib.Name: jsonnet.MakeContents(lib.Benchci)}},
	}
	vm.Importer(imp)
	for k, v := range opts.ExtStr {
		vm.ExtVar(k, v)
	}
	for k, v := range opts.TLAStr {
		vm.TLAVar(k, v)
	}
	return vm, imp, nil
}

// importer resolves files on disk first, so a repo can pin its own copy of
// the library, and falls back to the embedded one. It searches as
// jsonnet.FileImporter does (the importing file's directory, then the
// import directories, last given first) but reads only what repo allows:
// FileImporter reads any path, /proc and FIFOs included.
type importer struct {
	// suite is the suite's path: the anonymous snippet it is evaluated
	// as imports from "", which would resolve its relative imports from
	// the working directory; they resolve from its own directory, as the
	// jsonnet tool resolves them (the working directory stays the last
	// resort, where they used to resolve).
	suite  string
	jpaths []string
	repo   *confinement
	// read holds each file imported, by where it was found: go-jsonnet
	// wants the same Contents each time a file is imported again.
	read map[string]jsonnet.Contents
	lib  *jsonnet.MemoryImporter
	// order lists the files read from disk, once each, in the order
	// read: an attestation names every file the suite was made of.
	order []string
}

func (i *importer) Import(importedFrom, importedPath string) (jsonnet.Contents, string, error) {
	if importedFrom == "" {
		importedFrom = i.suite
	}
	dirs := []string{filepath.Dir(importedFrom)}
	for k := len(i.jpaths) - 1; k >= 0; k-- {
		dirs = append(dirs, i.jpaths[k])
	}
	// A name that climbs out from one directory may be found from
	// another; it is refused only when it is found nowhere.
	var climbed error
	for _, dir := range dirs {
		at := filepath.Join(dir, importedPath)
		if c, ok := i.read[at]; ok {
			return c, at, nil
		}
		real, err := i.repo.file(dir, importedPath, false)
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue
		case errors.Is(err, errClimbs):
			if climbed == nil {
				climbed = err
			}
			continue
		case err != nil:
			return jsonnet.Contents{}, "", fmt.Errorf("import %w", err)
		}
		// Checked to be a regular file; opened without blocking, and
		// bounded, in case it was swapped since.
		data, err := inputfile.ReadFile(real, MaxDataFile)
		if err != nil {
			return jsonnet.Contents{}, "", fmt.Errorf("import %q: %w", importedPath, err)
		}
		c := jsonnet.MakeContentsRaw(data)
		i.read[at] = c
		i.order = append(i.order, at)
		return c, at, nil
	}
	if importedPath == lib.Name {
		return i.lib.Import(importedFrom, importedPath)
	}
	if climbed != nil {
		return jsonnet.Contents{}, "", fmt.Errorf("import %w", climbed)
	}
	return jsonnet.Contents{}, "", fmt.Errorf("couldn't open import %q: no match locally or in the Jsonnet library paths", importedPath)
}

// MaxDataFile bounds the data files a suite names (datasets, traces,
// recorded lengths): they are hashed, and read again by the run. It is
// the suite's own bound, which the workload's readers apply.
const MaxDataFile = suite.MaxDataFile

// hashImageDir hashes a directory of images (workload.images.dir): the
// names and contents of its PNG and JPEG files, in name order.
func hashImageDir(dir string) ([]byte, error) {
	files, err := suite.ImageFiles(dir)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	for _, f := range files {
		// An image over the bound the run refuses is refused here too,
		// before a byte of it is hashed.
		if st, err := os.Stat(f); err == nil && st.Size() > suite.MaxImageFile {
			return nil, fmt.Errorf("%s is %d MiB, more than the %d MiB an image may be", f, st.Size()>>20, suite.MaxImageFile>>20)
		}
		sum, err := hashFile(f)
		if err != nil {
			return nil, err
		}
		h.Write([]byte(filepath.Base(f)))
		h.Write(sum)
	}
	return h.Sum(nil), nil
}

// hashFile returns the SHA-256 of a regular file, read as a stream: a
// device (/dev/zero) or a FIFO would never end or would hang, and a large
// dataset must not be held in memory to be hashed. inputfile refuses the
// first two without reading them.
func hashFile(path string) ([]byte, error) {
	f, err := inputfile.Open(path, MaxDataFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}
