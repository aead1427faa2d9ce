package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/internal/sim"
	"github.com/benchci/benchci/internal/simfit"
)

// The fixture (testdata/simfit) was measured by benchci run on the
// simulator's server, over HTTP and the wall clock, with the tiny
// profile's step costs changed (closed.jsonnet, open.jsonnet): step_base
// 3 ms, decode_per_seq 400 µs, prefill_per_token 20 µs.
var simFitFixture = []string{"testdata/simfit/simfit-closed.json", "testdata/simfit/simfit-open.json"}

// TestSimFit fits tiny to the fixture: its output is the golden file's
// (held-out error first), and the profile it writes finds the costs the
// fixture's server ran with, within 5%.
func TestSimFit(t *testing.T) {
	if testing.Short() {
		t.Skip("fits and cross-validates: seconds")
	}
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "fitted.json")
	args := append([]string{"sim", "fit"}, simFitFixture...)
	// Two folds: the held-out check's output, at a third of the default's
	// fits (seven folds took minutes under the race detector on 2 cores).
	args = append(args, "--profile", "tiny", "--folds", "2", "--out", out)
	code, stdout, stderr := runCLI(t, context.Background(), args...)
	show := strings.ReplaceAll(fmt.Sprintf("$ benchci %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(args, " "), code, stdout, stderr), dir, "$TMP")
	golden(t, "simfit", show)
	if !strings.HasPrefix(stdout, "how far the fitted twin is off\n") || !strings.Contains(stdout, "held out ") {
		t.Errorf("the held-out error does not lead:\n%s", stdout)
	}
	p, err := simfit.ReadProfile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want time.Duration
	}{{"step_base", p.StepBase, 3 * time.Millisecond}, {"decode_per_seq", p.DecodePerSeq, 400 * time.Microsecond}, {"prefill_per_token", p.PrefillPerToken, 20 * time.Microsecond}} {
		if e := float64(c.got-c.want) / float64(c.want); math.Abs(e) > 0.05 {
			t.Errorf("%s fitted %v, the server ran %v: %+.1f%%", c.name, c.got, c.want, 100*e)
		}
	}
}

func TestSimFitJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("fits: seconds")
	}
	t.Parallel()
	// One parameter: the document's shape is what is tested (TestSimFit
	// fits all three), and a one-dimensional fit is a fifth of the work.
	args := append([]string{"sim", "fit", "--profile", "tiny", "--folds", "0", "--params", "step_base", "--format", "json"}, simFitFixture...)
	code, stdout, stderr := runCLI(t, context.Background(), args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Tables []struct {
			Title string           `json:"title"`
			Rows  []map[string]any `json:"rows"`
		} `json:"tables"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if len(doc.Tables) != 3 || len(doc.Tables[1].Rows) != 1 || doc.Tables[1].Rows[0]["parameter"] != "step_base" {
		t.Fatalf("want the error, the parameter and the points: %s", stdout)
	}
	if !strings.Contains(stderr, "no held-out check (--folds 0)") {
		t.Errorf("stderr does not say the error is in-sample only: %q", stderr)
	}
}

func TestSimFitRefuses(t *testing.T) {
	t.Parallel()
	// One point of the fixture: three parameters cannot be pinned by it.
	onePoint := editedFixture(t, filepath.Join(t.TempDir(), "one.json"), func(doc map[string]any) {
		doc["points"] = doc["points"].([]any)[:1]
	})
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"results of a changed profile", []string{simFitFixture[0]}, "a profile the suite changed: name the one to start from with --profile"},
		{"unknown parameter", []string{simFitFixture[0], "--profile", "tiny", "--params", "memory_efficiency"}, `no parameter "memory_efficiency"`},
		{"unknown profile", []string{simFitFixture[0], "--profile", "llama-3-8b@h999"}, "unknown GPU card"},
		{"not results", []string{"testdata/tiny.jsonnet", "--profile", "tiny"}, "not valid JSON"},
		{"negative folds", []string{simFitFixture[0], "--profile", "tiny", "--folds", "-1"}, "--folds"},
		{"one fold", []string{simFitFixture[0], "--profile", "tiny", "--folds", "1"}, "or 2 or more"},
		{"more parameters than points", []string{onePoint, "--profile", "tiny"}, "3 parameters (step_base, decode_per_seq, prefill_per_token) need at least 3 points of distinct loads or lengths to pin them, and the fit has 1"},
		{"timeout past the bound", []string{simFitFixture[0], "--profile", "tiny", "--timeout", "3h"}, "--timeout must be more than 0 and at most 2h0m0s"},
		{"a unified cache on cards", []string{simFitFixture[0], "--profile", "llama-3-8b@h100-sxm", "--unified-kv"}, "--unified-kv is a constant profile's"},
		{"a negative prefill chunk", []string{simFitFixture[0], "--profile", "tiny", "--max-prefill-chunk", "-1"}, "--max-prefill-chunk -1"},
		{"a prefill chunk where prompts go whole", []string{simFitFixture[0], "--profile", "llama-3-8b@h100-sxm-trtllm", "--max-prefill-chunk", "512"}, "prefills a prompt whole"},
		{"attention on cards", []string{simFitFixture[0], "--profile", "llama-3-8b@h100-sxm", "--params", "attend_ns_per_pair"}, `no parameter "attend_ns_per_pair"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, _, stderr := runCLI(t, context.Background(), append([]string{"sim", "fit"}, c.args...)...)
			if code != exitUsage || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, c.want)
			}
		})
	}
}

// A fit replays at most simfit.MaxPoints points, evenly spaced, and says
// so; it stops at --timeout with an error that says what to do.
func TestSimFitCapsPointsAndStops(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(simFitFixture[0])
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	// The fixture's points, over and over: each a trial of its own.
	pts := f["points"].([]any)
	var many []any
	for i := 0; len(many) <= simfit.MaxPoints; i++ {
		p := maps.Clone(pts[i%len(pts)].(map[string]any))
		p["trial"] = i / len(pts)
		many = append(many, p)
	}
	f["points"] = many
	path := filepath.Join(t.TempDir(), "many.json")
	if data, err = json.Marshal(f); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, context.Background(), "sim", "fit", path, "--profile", "tiny", "--timeout", "1ms")
	for _, want := range []string{
		fmt.Sprintf("note: %d points are more than the %d a fit replays: fitting %d of them, evenly spaced", len(many), simfit.MaxPoints, simfit.MaxPoints),
		"--timeout 1ms: the fit stopped after", "context deadline exceeded", "or raise --timeout",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("want %q in stderr:\n%s", want, stderr)
		}
	}
	if code != exitUsage {
		t.Errorf("exit %d, want %d", code, exitUsage)
	}
	// How soon it returns is not asserted: a replay already begun ends
	// first, and on a loaded machine under -race that is a wall-clock
	// matter (seconds unloaded).
}

// The profile's path is printed as the results' suite names it: from the
// suite's own directory, where the loader resolves it, not from here. A
// suite path from the file that is not a local .jsonnet path is not
// looked at: a hostile file cannot make sim fit probe or print /etc.
func TestSimFitNamesThePathFromTheSuite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "profiles", "fitted.json")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	// The fixture's own suite, from this package's directory.
	const suitePath = "testdata/simfit/open.jsonnet"
	rel, err := relPath(filepath.Dir(suitePath), out)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want, never string }{
		{suitePath, "a suite in testdata/simfit names it as b.target.sim('file:" + filepath.ToSlash(rel) + "')", "from here"},
		{"/etc/passwd", "a suite names it as b.target.sim('file:" + out + "'), with the path from the suite's own directory", "/etc"},
		{"../../suites/quickstart.jsonnet", "with the path from the suite's own directory", "../../suites"},
	} {
		results := editedFixture(t, filepath.Join(dir, "open.json"), func(doc map[string]any) {
			doc["suite"].(map[string]any)["path"] = c.path
			doc["points"] = doc["points"].([]any)[:1] // one parameter, one point: the path is what is tested
		})
		code, stdout, stderr := runCLI(t, context.Background(), "sim", "fit", results, "--profile", "tiny", "--folds", "0", "--params", "step_base", "--out", out)
		if code != exitOK || !strings.Contains(stdout+stderr, c.want) || strings.Contains(stdout+stderr, c.never) {
			t.Errorf("suite path %s: exit %d, want %q and no %q in:\n%s%s", c.path, code, c.want, c.never, stdout, stderr)
		}
	}
}

// editedFixture writes the open-loop fixture, as edit changes its JSON,
// to path, and returns path.
func editedFixture(t *testing.T, path string, edit func(doc map[string]any)) string {
	t.Helper()
	var doc map[string]any
	data, err := os.ReadFile(simFitFixture[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	if data, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A fit of a llama.cpp-like server: the attention it prices and the
// batching it was told are in the file it writes, and the file reads
// back as the same profile.
func TestSimFitUnifiedCache(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "fitted.json")
	code, stdout, stderr := runCLI(t, context.Background(), "sim", "fit", simFitFixture[0], "--profile", "tiny", "--folds", "0",
		"--unified-kv", "--max-prefill-chunk", "256", "--params", "step_base,decode_per_seq,prefill_per_token,attend_ns_per_pair", "--out", out)
	if code != exitOK || !strings.Contains(stdout, "attend_ns_per_pair") {
		t.Fatalf("exit %d, want the fitted attention in:\n%s%s", code, stdout, stderr)
	}
	p, err := simfit.ReadProfile(out)
	if err != nil {
		t.Fatal(err)
	}
	tiny, _ := sim.Lookup("tiny")
	seed := simfit.Seed(tiny, []string{"attend_ns_per_pair"}).AttendNsPerPair
	if !p.UnifiedKV || p.MaxPrefillChunk != 256 || !(p.AttendNsPerPair > 0) || p.AttendNsPerPair == seed {
		t.Errorf("the file's profile: unified_kv %v, max_prefill_chunk %d, attend_ns_per_pair %v (seeded at %v); want true, 256 and a price the fit moved", p.UnifiedKV, p.MaxPrefillChunk, p.AttendNsPerPair, seed)
	}
	const after = "came after a point of"
	if strings.Contains(stdout, after) {
		t.Errorf("a sweep upward: the fit says a point came after a higher load:\n%s", stdout)
	}
	// The sweep coming down: its lower rates were measured with the
	// contexts the higher ones left in the server's one cache.
	down := editedFixture(t, filepath.Join(t.TempDir(), "down.json"), func(doc map[string]any) {
		slices.Reverse(doc["points"].([]any))
	})
	for _, unified := range []bool{true, false} {
		args := []string{"sim", "fit", down, "--profile", "tiny", "--folds", "0", "--params", "step_base,decode_per_seq,prefill_per_token"}
		if unified {
			args = append(args, "--unified-kv")
		}
		code, stdout, stderr := runCLI(t, context.Background(), args...)
		if said := strings.Contains(stdout, "rate=16, rate=8 "+after+" their results file"); code != exitOK || said != unified {
			t.Errorf("unified %v, a sweep coming down: exit %d, the note said %v, want %v:\n%s%s", unified, code, said, unified, stdout, stderr)
		}
	}
}
