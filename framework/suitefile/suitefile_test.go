package suitefile

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/sim"
	"github.com/benchci/benchci/internal/target"
	"github.com/benchci/benchci/internal/tokenizer"
	"github.com/hashicorp/go-multierror"
)

var update = flag.Bool("update", false, "rewrite golden files")

// known is what a binary would check names against.
var known = &suite.Known{SimProfiles: sim.ProfileNames(), Tokenizers: tokenizer.Names,
	Sim: func(t *suite.Target) (string, error) {
		_, field, err := target.SimProfile(t)
		return field, err
	}}

func TestLoadGood(t *testing.T) {
	t.Parallel()
	l, err := Load("testdata/good/minimal.jsonnet", Options{Known: known})
	if err != nil {
		t.Fatal(err)
	}
	s := l.Suite
	checks := []struct {
		name      string
		got, want any
	}{
		{"name", s.Name, "minimal"},
		{"api default", s.API, suite.APIChat},
		{"sweep kind", s.Sweep.Kind, suite.SweepRate},
		{"duration default", s.Sweep.Duration.D(), 30 * time.Second},
		{"warmup default", s.Sweep.Warmup.D(), 5 * time.Second},
		{"arrival default", s.Workload.Arrival.Kind, suite.ArrivalPoisson},
		{"timeout default", s.Request.Timeout.D(), 5 * time.Minute},
		{"ignore_eos default", s.Request.IgnoreEOS, true},
		{"trials default", s.Trials, 1},
		{"input kind", s.Workload.InputTokens.Kind, suite.DistFixed},
		{"input value", s.Workload.InputTokens.Value, 64.0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if len(l.Hash) != 64 {
		t.Errorf("hash %q is not a SHA-256", l.Hash)
	}
}

func TestLoadFullWithExtAndTLA(t *testing.T) {
	t.Parallel()
	l, err := Load("testdata/good/full.jsonnet", Options{Known: known, ExtStr: map[string]string{"variant": "x"}, TLAStr: map[string]string{"rate": "8"}})
	if err != nil {
		t.Fatal(err)
	}
	s := l.Suite
	if s.Name != "full-x" {
		t.Errorf("name = %q: ext var not applied", s.Name)
	}
	if got := s.Sweep.Rates; len(got) != 2 || got[1] != 8 {
		t.Errorf("rates = %v: top-level argument not applied", got)
	}
	if s.Request.Timeout.D() != 90*time.Second || s.Request.IgnoreEOS || s.Request.Extra["temperature"] != 0.0 {
		t.Errorf("request = %+v", s.Request)
	}
	if s.Cost == nil || s.Cost.GPUs != 2 || s.Cost.Watts != 700 {
		t.Errorf("cost = %+v", s.Cost)
	}
	if len(s.SLOs) != 3 || s.SLOs[0].AtRate != 1 {
		t.Errorf("slos = %+v", s.SLOs)
	}
	if got, err := suite.ParseThreshold(s.SLOs[2]); err != nil || got != 0.01 {
		t.Errorf("error_rate threshold '1%%' = %v, %v; want 0.01", got, err)
	}
	// A different top-level argument is a different workload: the hash says so.
	l2, err := Load("testdata/good/full.jsonnet", Options{Known: known, ExtStr: map[string]string{"variant": "x"}, TLAStr: map[string]string{"rate": "9"}})
	if err != nil {
		t.Fatal(err)
	}
	if l2.Hash == l.Hash || l2.WorkloadHash == l.WorkloadHash {
		t.Error("hashes did not change with the sweep")
	}
	// Another target or SLO leaves the workload as it was.
	l.Suite.Target.URL = "http://127.0.0.1:9999"
	l.Suite.SLOs = nil
	if suite.WorkloadHash(l.Suite) != l.WorkloadHash {
		t.Error("workload hash changed with the target")
	}
}

// TestLoadBad compares each bad suite's error with its golden file.
func TestLoadBad(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/bad/*.jsonnet")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad suites: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			_, err := Load(f, Options{Known: known})
			if err == nil {
				t.Fatal("loaded without error")
			}
			golden := strings.TrimSuffix(f, ".jsonnet") + ".golden"
			got := err.Error() + "\n"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if got != string(want) {
				t.Errorf("error differs from %s:\n--- got\n%s--- want\n%s", golden, got, want)
			}
		})
	}
}

// TestAllErrorsAtOnce checks that decoding and validation problems are
// reported together, each with the line it was written on.
func TestAllErrorsAtOnce(t *testing.T) {
	t.Parallel()
	_, err := Load("testdata/bad/fields.jsonnet", Options{Known: known})
	var me *multierror.Error
	if !errors.As(err, &me) {
		t.Fatalf("error %T is not a multierror: %v", err, err)
	}
	want := map[string]string{ // path -> position
		"name":                         "testdata/bad/fields.jsonnet:3:3",
		"target.profile":               "testdata/bad/fields.jsonnet:4:3",
		"api":                          "testdata/bad/fields.jsonnet:5:3",
		"workload.input_tokens.median": "testdata/bad/fields.jsonnet:7:5",
		"workload.arrival.rate":        "testdata/bad/fields.jsonnet:8:33",
		"workload.output_tokens":       "testdata/bad/fields.jsonnet:6:3",
		"sweep.rates[0]":               "testdata/bad/fields.jsonnet:10:3",
		"sweep.duration":               "testdata/bad/fields.jsonnet:10:3",
		"slos[0].op":                   "testdata/bad/fields.jsonnet:12:5",
		"slos[0].threshold":            "testdata/bad/fields.jsonnet:12:5",
		"slos[0].at_rate":              "testdata/bad/fields.jsonnet:12:5",
		"slos[1].metric":               "testdata/bad/fields.jsonnet:13:7",
		"tolerance.default":            "testdata/bad/fields.jsonnet:15:16",
		"warmpu":                       "testdata/bad/fields.jsonnet:16:3",
	}
	got := map[string]string{}
	for _, e := range me.Errors {
		var fe *suite.FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("%T is not a FieldError: %v", e, e)
		}
		if _, seen := got[fe.Path]; !seen {
			got[fe.Path] = fe.Pos
		}
	}
	for path, pos := range want {
		if got[path] != pos {
			t.Errorf("%s: position %q, want %q", path, got[path], pos)
		}
	}
}

func TestImportFromUserPathWins(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A repo may pin its own library; the file on disk is used over the
	// embedded one. The import directory is in the repository: one outside
	// is refused (TestReadsOnlyTheRepository).
	libDir := filepath.Join(dir, "vendor")
	if err := os.Mkdir(libDir, 0o755); err != nil {
		t.Fatal(err)
	}
	lib := `{ suite:: { name: 'pinned' }, target:: { sim(p):: { kind: 'sim', profile: p } }, dist:: { fixed(v):: { kind: 'fixed', value: v } }, sweep:: { rates(r):: { rates: r } } }`
	if err := os.WriteFile(filepath.Join(libDir, "benchci.libsonnet"), []byte(lib), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `local b = import 'benchci.libsonnet'; b.suite { target: b.target.sim('tiny'), workload: { input_tokens: b.dist.fixed(1), output_tokens: b.dist.fixed(1) }, sweep: b.sweep.rates([1]) }`
	l, err := LoadSource(filepath.Join(dir, "inline.jsonnet"), src, Options{Known: known, JPaths: []string{libDir}, Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	if l.Suite.Name != "pinned" {
		t.Errorf("name = %q, want the pinned library's", l.Suite.Name)
	}
}

func TestDataFilesResolveAndHash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := `local b = import 'benchci.libsonnet';
b.suite {
  name: 'traced',
  target: b.target.sim('tiny'),
  workload: {
    input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(8),
    arrival: b.arrival.trace('data/trace.jsonl'),
  },
  sweep: b.sweep.rates([1]),
}
`
	path := filepath.Join(dir, "s.jsonnet")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, Options{Known: known})
	if err == nil || !strings.Contains(err.Error(), path+":7:5: workload.arrival.path:") {
		t.Fatalf("missing trace: error %v, want one at the arrival's line", err)
	}
	os.Mkdir(filepath.Join(dir, "data"), 0o755)
	trace := filepath.Join(dir, "data", "trace.jsonl")
	os.WriteFile(trace, []byte(`{"timestamp": 0}`+"\n"), 0o644)
	a, err := Load(path, Options{Known: known})
	if err != nil {
		t.Fatal(err)
	}
	if a.Suite.Workload.Arrival.Path != trace {
		t.Errorf("path %q, want it resolved next to the suite: %q", a.Suite.Workload.Arrival.Path, trace)
	}
	os.WriteFile(trace, []byte(`{"timestamp": 1}`+"\n"), 0o644)
	b, err := Load(path, Options{Known: known})
	if err != nil {
		t.Fatal(err)
	}
	if a.WorkloadHash == b.WorkloadHash || a.Hash != b.Hash {
		t.Error("another trace under the same name must change the workload hash (and only it)")
	}
}

// A suite read back from a results file is checked without the binary's
// registries: a profile renamed since must not make it unreadable.
func TestRecordedSuiteIgnoresRegistries(t *testing.T) {
	t.Parallel()
	src := `local b = import 'benchci.libsonnet';
b.suite { name: 'old', target: b.target.sim('renamed-since'), tokenizer: 'gone_base',
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(4) }, sweep: b.sweep.rates([1]) }`
	_, err := LoadSource("old.jsonnet", src, Options{Known: known})
	if err == nil || !strings.Contains(err.Error(), `unknown simulator profile "renamed-since"`) || !strings.Contains(err.Error(), `unknown tokenizer "gone_base"`) {
		t.Fatalf("with the registries: %v", err)
	}
	l, err := LoadSource("old.jsonnet", src, Options{})
	if err != nil {
		t.Fatalf("without the registries: %v", err)
	}
	if _, err := suite.Decode(l.JSON); err != nil {
		t.Errorf("decoding the recorded suite: %v", err)
	}
}

// Data files that are not regular files are refused at load, with the
// field's position, instead of hanging (a FIFO) or never ending (a device,
// refused as outside the repository: TestReadsOnlyTheRepository).
func TestDataFilesMustBeRegular(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.jsonl"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, path := range []string{"fifo.jsonl", "."} {
		src := fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'data',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(4), prompts: b.prompts.jsonl(%q) },
  sweep: b.sweep.rates([1]),
}`, path)
		_, err := LoadSource(filepath.Join(dir, "s.jsonnet"), src, Options{Known: known})
		if err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), "s.jsonnet:5:") {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// The library's telemetry helpers name each exporter by default and pass
// their options through.
func TestTelemetryHelpers(t *testing.T) {
	t.Parallel()
	src := `local b = import 'benchci.libsonnet';
b.suite {
  name: 'telemetry',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(1), output_tokens: b.dist.fixed(1) },
  sweep: b.sweep.rates([1]),
  telemetry: [
    b.telemetry.dcgm('http://127.0.0.1:9400/metrics'),
    b.telemetry.amd('http://127.0.0.1:5000/metrics', interval='2s'),
    b.telemetry.prometheus('node', 'http://127.0.0.1:9100/metrics', ['node_load1']),
  ],
}`
	l, err := LoadSource("inline.jsonnet", src, Options{Known: known})
	if err != nil {
		t.Fatal(err)
	}
	want := []suite.Telemetry{
		{Name: "dcgm", URL: "http://127.0.0.1:9400/metrics"},
		{Name: "amd", URL: "http://127.0.0.1:5000/metrics", Interval: suite.Duration(2 * time.Second)},
		{Name: "node", URL: "http://127.0.0.1:9100/metrics", Gauges: []string{"node_load1"}},
	}
	if !reflect.DeepEqual(l.Suite.Telemetry, want) {
		t.Errorf("telemetry %+v, want %+v", l.Suite.Telemetry, want)
	}
}

// A suite's relative imports resolve from its own directory, whatever the
// working directory: a suite in suites/ importing its neighbour.
func TestImportsResolveFromTheSuitesDirectory(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "suites")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	base := `local b = import 'benchci.libsonnet';
b.suite {
  name: 'base',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([1], duration='1s', warmup='0s'),
}`
	if err := os.WriteFile(filepath.Join(dir, "base.jsonnet"), []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "smoke.jsonnet"), []byte("(import 'base.jsonnet') { name: 'smoke' }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Load(filepath.Join(dir, "smoke.jsonnet"), Options{})
	if err != nil || l.Suite.Name != "smoke" {
		t.Fatalf("Load = %v, %v", l, err)
	}
	// The file imported is listed (an attestation names it); the embedded
	// library is not a file.
	if want := []string{filepath.Join(dir, "base.jsonnet")}; !slices.Equal(l.Imports, want) {
		t.Errorf("Imports = %q, want %q", l.Imports, want)
	}
}
