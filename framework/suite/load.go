package suite

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"

	"github.com/google/go-jsonnet"
	"github.com/google/go-jsonnet/ast"
	"github.com/hashicorp/go-multierror"

	"github.com/benchci/benchci/suites/lib"
)

// Options configure evaluation.
type Options struct {
	// JPaths are extra import directories, searched before the embedded library.
	JPaths []string
	// ExtStr are external variables (std.extVar) given as strings.
	ExtStr map[string]string
	// TLAStr are top-level arguments given as strings.
	TLAStr map[string]string
}

// Loaded is a suite together with what it was made from.
type Loaded struct {
	Suite *Suite
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
}

// LoadFile evaluates, decodes and validates the suite in path.
func LoadFile(path string, opts Options) (*Loaded, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load suite: %w", err)
	}
	return Load(path, string(src), opts)
}

// Load evaluates, decodes and validates a suite whose source is src; path
// names it in errors and resolves its relative imports. The error, when not
// nil, is either go-jsonnet's formatted evaluation error or a
// *multierror.Error holding every *FieldError found.
func Load(path, src string, opts Options) (*Loaded, error) {
	out, err := newVM(opts).EvaluateAnonymousSnippet(path, src)
	if err != nil {
		return nil, fmt.Errorf("evaluate %s: %w", path, err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(out)); err != nil {
		return nil, fmt.Errorf("evaluate %s: %w", path, err)
	}
	s, err := Decode(compact.Bytes())
	if err != nil {
		if me, ok := err.(*multierror.Error); ok {
			loc := newLocator(path, src)
			for _, e := range me.Errors {
				if fe, ok := e.(*FieldError); ok && fe.Pos == "" {
					fe.line, fe.col = loc.place(fe.Path)
					if fe.line > 0 {
						fe.Pos = fmt.Sprintf("%s:%d:%d", path, fe.line, fe.col)
					}
				}
			}
			// In the order they appear in the file, as a reader fixes them.
			sort.SliceStable(me.Errors, func(i, j int) bool {
				a, _ := me.Errors[i].(*FieldError)
				b, _ := me.Errors[j].(*FieldError)
				switch {
				case a == nil || b == nil || a.line == 0:
					return false // errors without a place go last
				case b.line == 0:
					return true
				}
				return a.line < b.line || (a.line == b.line && a.col < b.col)
			})
			me.ErrorFormat = listFormat(path)
		}
		return nil, err
	}
	sum := sha256.Sum256(compact.Bytes())
	l := &Loaded{Suite: s, Path: path, JSON: compact.Bytes(), Hash: hex.EncodeToString(sum[:]), WorkloadHash: WorkloadHash(s)}
	if err := l.resolveFiles(src); err != nil {
		return nil, err
	}
	if lc := s.Target.Launch; lc != nil && !filepath.IsAbs(lc.Dir) {
		// A launched server runs next to the suite unless told otherwise.
		lc.Dir = filepath.Join(filepath.Dir(path), lc.Dir)
	}
	return l, nil
}

// resolveFiles makes the data files a suite names (traces, datasets)
// relative to the suite's own directory, checks they can be read, and folds
// their contents into the workload hash: the same file name with other
// contents is another workload.
func (l *Loaded) resolveFiles(src string) error {
	h := sha256.New()
	h.Write([]byte(l.WorkloadHash))
	var me *multierror.Error
	files := 0
	for _, f := range l.Suite.dataFiles() {
		if *f.path == "" {
			continue
		}
		files++
		if !filepath.IsAbs(*f.path) {
			*f.path = filepath.Join(filepath.Dir(l.Path), *f.path)
		}
		data, err := os.ReadFile(*f.path)
		if err != nil {
			fe := &FieldError{Path: f.field, Msg: err.Error()}
			fe.line, fe.col = newLocator(l.Path, src).place(f.field)
			if fe.line > 0 {
				fe.Pos = fmt.Sprintf("%s:%d:%d", l.Path, fe.line, fe.col)
			}
			me = multierror.Append(me, fe)
			continue
		}
		sum := sha256.Sum256(data)
		h.Write(sum[:])
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

// WorkloadHash returns the hash of the suite's workload-defining fields.
func WorkloadHash(s *Suite) string {
	w := struct {
		API      string   `json:"api"`
		Request  Request  `json:"request"`
		Workload Workload `json:"workload"`
		Sweep    Sweep    `json:"sweep"`
		Trials   int      `json:"trials"`
	}{s.API, s.Request, s.Workload, s.Sweep, s.Trials}
	// Calibration changes how prompts reach their token targets on a given
	// server, not the targets: it is not part of the workload.
	w.Workload.Prompts.Calibrate = false
	b, err := json.Marshal(w)
	if err != nil {
		panic(fmt.Sprintf("suite: marshal workload: %v", err)) // plain data; cannot fail
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Decode decodes an evaluated suite, applies defaults and validates it.
func Decode(data []byte) (*Suite, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode suite: %w", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, multierror.Append(nil, &FieldError{Msg: fmt.Sprintf("a suite must evaluate to an object, got %s", jsonKind(v))})
	}
	s := Default()
	d := &decoder{}
	d.decode("", v, reflect.ValueOf(s).Elem())
	// Validate even after decode errors, so that every problem is listed,
	// but say nothing more of a field that could not be decoded: its zero
	// value would only draw a second, misleading complaint.
	errs := d.errs
	for _, e := range validate(s) {
		if !slices.ContainsFunc(d.errs, func(de *FieldError) bool { return de.Path == e.Path }) {
			errs = append(errs, e)
		}
	}
	if len(errs) == 0 {
		return s, nil
	}
	var me *multierror.Error
	for _, e := range errs {
		me = multierror.Append(me, e)
	}
	return nil, me
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

// newVM builds the one Jsonnet VM configuration benchci uses: user import
// paths first, then the embedded benchci.libsonnet.
func newVM(opts Options) *jsonnet.VM {
	vm := jsonnet.MakeVM()
	vm.Importer(&importer{
		files: &jsonnet.FileImporter{JPaths: opts.JPaths},
		lib:   &jsonnet.MemoryImporter{Data: map[string]jsonnet.Contents{lib.Name: jsonnet.MakeContents(lib.Benchci)}},
	})
	for k, v := range opts.ExtStr {
		vm.ExtVar(k, v)
	}
	for k, v := range opts.TLAStr {
		vm.TLAVar(k, v)
	}
	return vm
}

// importer resolves files on disk first, so a repo can pin its own copy of
// the library, and falls back to the embedded one.
type importer struct {
	files *jsonnet.FileImporter
	lib   *jsonnet.MemoryImporter
}

func (i *importer) Import(importedFrom, importedPath string) (jsonnet.Contents, string, error) {
	c, at, err := i.files.Import(importedFrom, importedPath)
	if err == nil {
		return c, at, nil
	}
	if importedPath == lib.Name {
		return i.lib.Import(importedFrom, importedPath)
	}
	return c, at, err
}

func jsonnetSnippetToAST(filename, src string) (ast.Node, error) {
	return jsonnet.SnippetToAST(filename, src)
}
