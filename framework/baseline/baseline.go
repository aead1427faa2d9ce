// Package baseline is the committed baseline file: the reference result a
// suite's candidates are compared with, reviewed like code. Its layout is
// stable and diff-friendly: provenance and summary figures at the top in a
// fixed key order, the full result with its encoded histograms below.
package baseline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/inputfile"
	"github.com/benchci/benchci/internal/stats"
)

// Schema names this file format.
const Schema = "benchci.baseline/v1"

// File is one suite's baseline.
type File struct {
	Schema       string     `json:"schema"`
	Suite        string     `json:"suite"`
	WorkloadHash string     `json:"workload_hash"`
	Provenance   Provenance `json:"provenance"`
	// Summary holds the compared figures per point (medians over trials),
	// so a baseline update reads as a diff of numbers in review.
	Summary []Summary `json:"summary"`
	// Result is the run the baseline was made from, histograms included.
	Result *result.File `json:"result"`
}

// Provenance says where a baseline came from.
type Provenance struct {
	Tool      string    `json:"tool"`
	Recorded  time.Time `json:"recorded"`
	Commit    string    `json:"commit,omitempty"`
	SuiteHash string    `json:"suite_hash"`
	Target    string    `json:"target"`
	Engine    string    `json:"engine,omitempty"`
	Model     string    `json:"model"`
	Host      string    `json:"host"`
}

// Summary is one point's figures, keyed as the metric catalogue keys them
// (metric.Gated).
type Summary struct {
	Point   string             `json:"point"`
	Figures map[string]float64 `json:"figures"`
}

// FromResult makes a baseline from a complete result.
func FromResult(r *result.File, commit string) (*File, error) {
	if r.Incomplete {
		return nil, fmt.Errorf("baseline from %s: the run is incomplete (%s); record a complete run", r.Suite.Name, r.Error)
	}
	if len(r.Points) == 0 {
		return nil, fmt.Errorf("baseline from %s: the run has no points", r.Suite.Name)
	}
	if sh := r.Shard; sh != nil {
		return nil, fmt.Errorf("baseline from %s: it is shard %d of %d, which sent 1/%d of the load; merge the shards first (benchci merge)", r.Suite.Name, sh.Index, sh.Count, sh.Count)
	}
	// A reference must have measured the server: a point none of whose
	// trials did would leave every later comparison of it inconclusive.
	valid := map[string]bool{}
	for i := range r.Points {
		valid[r.Points[i].Label] = valid[r.Points[i].Label] || r.Points[i].Valid()
	}
	for i := range r.Points {
		if p := &r.Points[i]; !valid[p.Label] {
			return nil, fmt.Errorf("baseline from %s: no trial at %s measured the server (%s); record it on a quieter machine",
				r.Suite.Name, p.Label, strings.Join(p.Validity.Invalid, "; "))
		}
	}
	if c := r.Capacity; c != nil && c.Bound == result.CapacityInconclusive {
		return nil, fmt.Errorf("baseline from %s: the capacity search was inconclusive (%s); record it on a quieter machine", r.Suite.Name, c.Why)
	}
	target := r.Target.Kind + " " + r.Target.URL
	if r.Target.Sim != nil {
		target = "sim " + r.Target.Sim.Name
	}
	f := &File{
		Schema: Schema, Suite: r.Suite.Name, WorkloadHash: r.Suite.WorkloadHash,
		Provenance: Provenance{
			Tool: r.Tool.Version, Recorded: r.Finished, Commit: commit, SuiteHash: r.Suite.Hash,
			Target: target, Model: r.Target.Model, Engine: engineName(r),
			Host: fmt.Sprintf("%s/%s, %d CPUs", runtime.GOOS, runtime.GOARCH, runtime.NumCPU()),
		},
		Result: r,
	}
	f.Summary = summarize(r)
	return f, nil
}

// summarize lists every point's gated figures, the median over its
// trials, in sweep order, and a capacity search's result as point
// "search": the figures the gate compares, so that a baseline update
// reads as a diff of those numbers.
func summarize(r *result.File) []Summary {
	var out []Summary
	if c := r.Capacity; c != nil {
		out = append(out, Summary{Point: "search", Figures: map[string]float64{metric.Capacity: c.Rate}})
	}
	var order []string
	trials := map[string][]*result.Point{}
	for i := range r.Points {
		p := &r.Points[i]
		if !p.Valid() {
			continue // the gate leaves it out; so does its summary
		}
		if _, ok := trials[p.Label]; !ok {
			order = append(order, p.Label)
		}
		trials[p.Label] = append(trials[p.Label], p)
	}
	for _, label := range order {
		s := Summary{Point: label, Figures: map[string]float64{}}
		for _, k := range metric.Gated {
			var vs []float64
			for _, p := range trials[label] {
				if v, missing := p.Value(k); missing == "" && !math.IsNaN(v) {
					vs = append(vs, v)
				}
			}
			// The median of the trials that have the figure, as the gate
			// compares it; none: the figure does not exist here.
			if len(vs) > 0 {
				s.Figures[k.String()] = stats.Median(vs)
			}
		}
		out = append(out, s)
	}
	return out
}

// Write writes f atomically with stable formatting. A symbolic link at
// path is refused, not written through.
func Write(path string, f *File) error {
	return WriteIn(filepath.Dir(path), path, f)
}

// WriteIn is Write for a path inside dir (the baselines directory): no
// symbolic link below dir, at path or on the way, is followed.
func WriteIn(dir, path string, f *File) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		return fmt.Errorf("write baseline %s: %w", path, err)
	}
	return result.WriteFileAtomicIn(dir, path, b.Bytes())
}

// ErrNotExist is returned by Read when there is no baseline yet.
var ErrNotExist = errors.New("no baseline")

// Read reads and checks a baseline file.
func Read(path string) (*File, error) {
	data, err := inputfile.ReadFile(path, result.MaxFileBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read baseline %s: %w", path, ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("read baseline: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("read baseline %s: %w", path, err)
	}
	return f, nil
}

// ReadReference reads what a comparison may take as its reference: a
// baseline file, or a results file used as one (of any version: results
// are migrated). The file is read once and parsed by the schema it names,
// so what was checked is what is compared.
func ReadReference(path string) (*result.File, error) {
	data, err := result.ReadBytes(path)
	if err != nil {
		return nil, err // names the path already
	}
	if OtherSchema(data) {
		f, err := result.Parse(data)
		if err != nil {
			return nil, fmt.Errorf("read results %s: %w", path, err)
		}
		return f, nil
	}
	b, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("read baseline %s: %w", path, err)
	}
	return b.Result, nil
}

// OtherSchema reports whether data is JSON naming a schema other than a
// baseline's (a results file, or no benchci file at all). Data that is
// not JSON names none, and may be a baseline gone bad.
func OtherSchema(data []byte) bool {
	var head struct {
		Schema string `json:"schema"`
	}
	return json.Unmarshal(data, &head) == nil && head.Schema != Schema
}

// Parse decodes and checks a baseline file's contents. The embedded result
// gets the results file's own checks (and migration); the rest is strict.
func Parse(data []byte) (*File, error) { return ParseWith(data, result.VerifyOptions{}) }

// ParseWith is Parse checking the embedded result as o says
// (result.VerifyWith): a partial verification for a reader that shows
// only the summary's figures and the histograms it names. The summary is
// checked against the result either way.
func ParseWith(data []byte, o result.VerifyOptions) (*File, error) {
	if err := result.CheckShape(data); err != nil {
		return nil, err
	}
	// A file that decodes is decoded in one pass (and its result in
	// another); one that does not goes the long way, whose errors say
	// what is wrong with it.
	type rawFile struct {
		File
		Result json.RawMessage `json:"result"`
	}
	var raw rawFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err == nil && raw.Schema == Schema && len(bytes.TrimSpace(data[dec.InputOffset():])) == 0 {
		r, err := result.ParseWith(raw.Result, o)
		if err != nil {
			return nil, fmt.Errorf("result: %w", err)
		}
		return check(raw.File, r)
	}
	var head struct {
		Schema string          `json:"schema"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("not valid JSON (truncated or corrupt?): %w", err)
	}
	if head.Schema != Schema {
		return nil, fmt.Errorf("schema %q, want %q", head.Schema, Schema)
	}
	r, err := result.ParseWith(head.Result, o)
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	raw = rawFile{} // nothing of the first decoding
	dec = json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	return check(raw.File, r)
}

// check checks a baseline's header and summary against its result r.
func check(f File, r *result.File) (*File, error) {
	f.Result = r
	if f.Suite != r.Suite.Name || f.WorkloadHash != r.Suite.WorkloadHash {
		return nil, fmt.Errorf("header (suite %q) does not match its result (suite %q); was it edited by hand?", f.Suite, r.Suite.Name)
	}
	if err := verify(&f); err != nil {
		return nil, err
	}
	return &f, nil
}

// verify checks that the summary at the top, which reviewers read in the
// diff, says what the result below it measured, and that there is
// something to gate on: a baseline edited by hand, or one with no points
// (which would turn the gate off), is refused.
func verify(f *File) error {
	if len(f.Result.Points) == 0 {
		return errors.New("the baseline has no points: it would gate nothing; record a complete run")
	}
	want := summarize(f.Result)
	if len(want) != len(f.Summary) {
		return fmt.Errorf("the summary lists %d points, its result %d; was it edited by hand?", len(f.Summary), len(want))
	}
	for i, w := range want {
		got := f.Summary[i]
		if got.Point != w.Point || len(got.Figures) != len(w.Figures) {
			return fmt.Errorf("summary point %q does not match its result's %q; was it edited by hand?", got.Point, w.Point)
		}
		for k, v := range w.Figures {
			g, ok := got.Figures[k]
			if !ok || math.Abs(g-v) > 1e-9*max(math.Abs(v), 1) {
				return fmt.Errorf("summary %s %s reads %v, its result measured %v; was it edited by hand?", w.Point, k, g, v)
			}
		}
	}
	return nil
}

func engineName(r *result.File) string {
	if r.Engine == nil || r.Engine.Name == "unknown" {
		return ""
	}
	return strings.TrimSpace(r.Engine.Name + " " + r.Engine.Version)
}
