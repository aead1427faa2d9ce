package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/gitfixture"
)

// policySuite is a suite on the simulator, replayed in virtual time so
// that two runs of one config give the same figures: a verdict here is
// the policy's, never the machine's. edit rewrites its text.
func policySuite(name, step string, edit func(string) string) []byte {
	s := `local b = import 'benchci.libsonnet';
b.suite {
  name: '` + name + `',
  target: b.target.sim('tiny', step_base='` + step + `'),
  workload: { input_tokens: b.dist.fixed(20), output_tokens: b.dist.fixed(16), arrival: b.arrival.constant() },
  sweep: b.sweep.rates([4, 8], duration='6s', warmup='1s'),
  trials: 2,
  slos: [b.slo.p99('ttft', '<', '500ms', at_rate=8)],
  goodput: { ttft: '500ms' },
  tolerance: { default: '5%' },
}
`
	if edit != nil {
		s = edit(s)
	}
	return []byte(s)
}

// policyRepo is a scratch repository whose base commit has the suite and
// a baseline recorded from it (virtual, as ci --virtual compares).
func policyRepo(t *testing.T) (*gitfixture.Repo, string) {
	t.Helper()
	repo := gitfixture.New(t)
	repo.Commit("suite", map[string][]byte{"suites/len.jsonnet": policySuite("len", "4ms", nil)})
	results := t.TempDir()
	code, out, errOut := runCLI(t, context.Background(), "run", "--virtual", "--progress=false", "--results", results,
		"--baselines", filepath.Join(repo.Dir, "baselines"), filepath.Join(repo.Dir, "suites", "len.jsonnet"))
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	writeVirtualBaseline(t, filepath.Join(results, "len.json"), filepath.Join(repo.Dir, "baselines", "len.json"))
	data, err := os.ReadFile(filepath.Join(repo.Dir, "baselines", "len.json"))
	if err != nil {
		t.Fatal(err)
	}
	return repo, repo.Commit("baseline", map[string][]byte{"baselines/len.json": data})
}

// runVirtual runs the suite file at path in virtual time into results,
// with no baseline to compare with (flags added), and fails the test on
// an exit other than want.
func runVirtual(t *testing.T, want int, results, path string, flags ...string) {
	t.Helper()
	args := append([]string{"run", "--virtual", "--progress=false", "--results", results, "--baselines", filepath.Join(t.TempDir(), "none")}, flags...)
	if code, out, errOut := runCLI(t, context.Background(), append(args, path)...); code != want {
		t.Fatalf("run: exit %d, want %d\n%s\n%s", code, want, out, errOut)
	}
}

// ciMeasured gates results files already measured (ci --measured, flags
// added) by the baselines of repo, with base as the base revision: the
// exit code, the output, the errors and the report.
func ciMeasured(t *testing.T, repo *gitfixture.Repo, base string, flags []string, results ...string) (int, string, string, string) {
	t.Helper()
	report := filepath.Join(t.TempDir(), "r.md")
	args := append([]string{"ci", "--measured", "--comment=false", "--summary", "", "--html", "", "--outputs", "",
		"--base-ref", base, "--baselines", filepath.Join(repo.Dir, "baselines"), "--report", report}, flags...)
	code, out, errOut := runCLI(t, context.Background(), append(args, results...)...)
	md, _ := os.ReadFile(report)
	return code, out, errOut, string(md)
}

// writeVirtualBaseline makes a baseline of a virtual run, which benchci
// baseline update refuses to start from (a plan is not a measurement);
// ci --virtual compares with such baselines only.
func writeVirtualBaseline(t *testing.T, results, to string) {
	t.Helper()
	f, err := result.Read(results)
	if err != nil {
		t.Fatal(err)
	}
	b, err := baseline.FromResult(f, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := baseline.Write(to, b); err != nil {
		t.Fatal(err)
	}
}

// ciPolicy runs the gate of repo's work tree against base, as the
// workflow does on a pull request, on the suites named.
func ciPolicy(t *testing.T, repo *gitfixture.Repo, base string, suites ...string) (int, string, string) {
	return ciPolicyWith(t, repo, base, nil, suites...)
}

// ciPolicyWith is ciPolicy with more flags.
func ciPolicyWith(t *testing.T, repo *gitfixture.Repo, base string, flags []string, suites ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	args := []string{"ci", "--virtual", "--comment=false", "--summary", "", "--html", "", "--outputs", "", "--progress=false",
		"--base-ref", base, "--results", dir, "--baselines", filepath.Join(repo.Dir, "baselines"), "--report", filepath.Join(dir, "r.md")}
	args = append(args, flags...)
	for _, s := range suites {
		args = append(args, filepath.Join(repo.Dir, "suites", s))
	}
	code, out, errOut := runCLI(t, context.Background(), args...)
	md, err := os.ReadFile(filepath.Join(dir, "r.md"))
	if err != nil {
		t.Fatalf("no report (exit %d): %v\n%s\n%s", code, err, out, errOut)
	}
	// The report breaks "word:" and "@" with a zero-width space (no emoji
	// shortcode or mention forms); a reader does not see it.
	return code, out + errOut, strings.ReplaceAll(string(md), "\u200b", "")
}

// A pull request cannot loosen the gate it is judged by: each of twelve
// lenient edits fails the gate and is named at the top of the comment,
// however the figures moved; stricter and neutral edits raise no alarm.
func TestPolicyComesFromTheBase(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	repo, base := policyRepo(t)
	suitePath := filepath.Join(repo.Dir, "suites", "len.jsonnet")
	restore := func() {
		t.Helper()
		if err := os.WriteFile(suitePath, policySuite("len", "4ms", nil), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	replace := func(old, new string) func(string) string {
		return func(s string) string {
			if !strings.Contains(s, old) {
				t.Fatalf("the suite has no %q", old)
			}
			return strings.Replace(s, old, new, 1)
		}
	}
	for _, tc := range []struct {
		name string
		// step is the engine's step in the change (the base's is 4ms).
		step string
		edit func(string) string
		// named: what the comment must name; "" for a change that
		// loosens nothing and must pass.
		named string
	}{
		{"tolerance loosened with a 30% slower step", "5.2ms", replace(`default: '5%'`, `default: '50%'`), "tolerance.default"},
		{"the moved figures turned off", "5.2ms", replace(`default: '5%'`, `default: '5%', tpot: 'off', itl: 'off', e2e: 'off'`), "tolerance.e2e"},
		{"SLO threshold loosened", "4ms", replace(`'<', '500ms'`, `'<', '5s'`), "slos: ttft p99 @ rate=8"},
		{"SLO deleted", "4ms", replace(`slos: [b.slo.p99('ttft', '<', '500ms', at_rate=8)],`, ``), "the SLO was removed"},
		{"trials reduced", "4ms", replace(`trials: 2`, `trials: 1`), "trials"},
		{"duration shortened", "4ms", replace(`duration='6s'`, `duration='3s'`), "sweep.duration"},
		{"warm-up lengthened past the point", "4ms", replace(`warmup='1s'`, `warmup='8s'`), "sweep.warmup"},
		{"a judged rate dropped", "4ms", replace(`[4, 8]`, `[8]`), "sweep.rates"},
		{"goodput loosened", "4ms", replace(`goodput: { ttft: '500ms' }`, `goodput: { ttft: '5s' }`), "goodput.ttft"},
		{"sanity off", "4ms", replace(`trials: 2,`, `trials: 2, sanity: { off: true },`), "sanity.off"},

		{"unchanged", "4ms", nil, ""},
		{"tolerance tightened", "4ms", replace(`default: '5%'`, `default: '3%'`), ""},
		{"a stricter band on one figure", "4ms", replace(`default: '5%'`, `default: '5%', 'ttft.p99': '2%'`), ""},
		{"SLO tightened", "4ms", replace(`'<', '500ms'`, `'<', '400ms'`), ""},
		{"SLO added", "4ms", replace(`at_rate=8)]`, `at_rate=8), b.slo.p99('e2e', '<', '10s')]`), ""},
		{"sanity bound lowered", "4ms", replace(`trials: 2,`, `trials: 2, sanity: { max_error_rate: 0.1 },`), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer restore()
			if err := os.WriteFile(suitePath, policySuite("len", tc.step, tc.edit), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, md := ciPolicy(t, repo, base, "len.jsonnet")
			if tc.named == "" {
				if code != exitOK || strings.Contains(md, "policy loosened") || tc.edit == nil && !strings.Contains(md, "the same config: this is a rerun") {
					t.Fatalf("a change that loosens nothing: exit %d\n%s\n%s", code, out, md)
				}
				return
			}
			lead, _, _ := strings.Cut(md, "## benchci")
			if code != exitFailed || !strings.Contains(lead, "⛔ **policy loosened: len.**") || !strings.Contains(lead, tc.named) {
				t.Fatalf("exit %d, want %d with %q named first\n%s\n%s", code, exitFailed, tc.named, out, md)
			}
			if !strings.Contains(out, "policy len: looser than the base's: ") {
				t.Errorf("the terminal does not say it:\n%s", out)
			}
			// The serving change is named beside the rule change.
			if want := `sim step\_base: 4ms → 5.2ms`; tc.step != "4ms" && !strings.Contains(md, want) {
				t.Errorf("the comment does not name the changed override (%s):\n%s", want, md)
			}
		})
	}
}

// With --ab, the base's rules are the suite at the base revision: the
// same loosening, measured side by side, fails the same way.
func TestPolicyLoosenedUnderAB(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	repo, base := policyRepo(t)
	loose := policySuite("len", "5.2ms", func(s string) string { return strings.Replace(s, `default: '5%'`, `default: '50%'`, 1) })
	if err := os.WriteFile(filepath.Join(repo.Dir, "suites", "len.jsonnet"), loose, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, md := ciPolicyWith(t, repo, base, []string{"--ab", base}, "len.jsonnet")
	if code != exitFailed || !strings.Contains(md, "⛔ **policy loosened: len (A/B against") || !strings.Contains(md, "tolerance.default: 5% → 50%") ||
		!strings.Contains(md, "| ±5% |") {
		t.Fatalf("exit %d\n%s\n%s", code, out, md)
	}
}

// The loosening a baseline re-recorded in the same change approves
// passes, and the comment names the approval; judged by the new rules.
func TestPolicyLooseningApprovedByTheBaseline(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	repo, base := policyRepo(t)
	suitePath := filepath.Join(repo.Dir, "suites", "len.jsonnet")
	loose := policySuite("len", "4.4ms", func(s string) string { return strings.Replace(s, `default: '5%'`, `default: '50%'`, 1) })
	if err := os.WriteFile(suitePath, loose, 0o644); err != nil {
		t.Fatal(err)
	}
	// Not yet approved: a 10% slower step passes its own 50% band, but is
	// judged by the base's 5%, and the loosening fails the gate.
	code, out, md := ciPolicy(t, repo, base, "len.jsonnet")
	if code != exitFailed || !strings.Contains(md, "⛔ **policy loosened: len.**") || !strings.Contains(md, "±5%") {
		t.Fatalf("unapproved: exit %d\n%s\n%s", code, out, md)
	}
	// Re-recorded with the new rules: approved, named, and judged by them.
	results := t.TempDir()
	runVirtual(t, exitOK, results, suitePath)
	writeVirtualBaseline(t, filepath.Join(results, "len.json"), filepath.Join(repo.Dir, "baselines", "len.json"))
	code, out, md = ciPolicy(t, repo, base, "len.jsonnet")
	if code != exitOK || !strings.Contains(md, "policy loosened, approved: len.") || !strings.Contains(md, "changed in this change to this suite's rules") {
		t.Fatalf("approved: exit %d\n%s\n%s", code, out, md)
	}
}

// A suite deleted, or renamed (git mv and a new name), while its baseline
// stays is named and gated as missing.
func TestSuiteGoneWhileItsBaselineStays(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	repo, base := policyRepo(t)
	other := policySuite("other", "4ms", func(s string) string { return strings.Replace(s, "fixed(20)", "fixed(24)", 1) })
	repo.Commit("another suite", map[string][]byte{"suites/other.jsonnet": other})
	suitePath := filepath.Join(repo.Dir, "suites", "len.jsonnet")

	// Renamed: the same requests under a new name and file, 3x slower.
	if err := os.Remove(suitePath); err != nil {
		t.Fatal(err)
	}
	renamed := policySuite("len2", "12ms", nil)
	if err := os.WriteFile(filepath.Join(repo.Dir, "suites", "len2.jsonnet"), renamed, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, md := ciPolicy(t, repo, base, "len2.jsonnet")
	if code != exitFailed || !strings.Contains(md, "suite len was renamed to len2 in this change (the same workload hash)") || !strings.Contains(md, "missing") {
		t.Fatalf("renamed: exit %d\n%s\n%s", code, out, md)
	}

	// Deleted: the job runs the other suites only.
	if err := os.Remove(filepath.Join(repo.Dir, "suites", "len2.jsonnet")); err != nil {
		t.Fatal(err)
	}
	code, out, md = ciPolicy(t, repo, base, "other.jsonnet")
	if code != exitFailed || !strings.Contains(md, "suite len was deleted in this change") {
		t.Fatalf("deleted: exit %d\n%s\n%s", code, out, md)
	}

	// Deleted with its baseline, in the same change: the deletion the
	// baseline edits already show; no suite is missing.
	if err := os.Remove(filepath.Join(repo.Dir, "baselines", "len.json")); err != nil {
		t.Fatal(err)
	}
	code, out, md = ciPolicy(t, repo, base, "other.jsonnet")
	if code != exitOK || strings.Contains(md, "suite len was deleted") {
		t.Fatalf("deleted with its baseline: exit %d\n%s\n%s", code, out, md)
	}
}

// A suite cannot seem to stay by reading what the run writes: its name
// here is the one it had when the job began (a suite file may import a
// results file, and results/ is in the repository).
func TestRenamedSuiteCannotHideBehindTheRunsFiles(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	repo, base := policyRepo(t)
	// Renamed, 3x slower, looser, sending other requests, and named len
	// again once the run has overwritten the results file it reads.
	hide := policySuite("len", "12ms", func(s string) string {
		s = strings.Replace(s, "name: 'len',", "name: if std.length(importstr '../results/len2.json') < 100 then 'len2' else 'len',", 1)
		s = strings.Replace(s, "fixed(16)", "fixed(17)", 1) // other requests: no base found by them
		return strings.Replace(s, `'5%'`, `'50%'`, 1)
	})
	// The pull request commits the suite and the file it reads.
	repo.Commit("the change", map[string][]byte{"suites/len.jsonnet": hide, "results/len2.json": []byte("{}")})
	marker := filepath.Join(repo.Dir, "results", "len2.json")
	suitePath := filepath.Join(repo.Dir, "suites", "len.jsonnet")
	report := filepath.Join(t.TempDir(), "r.md")
	code, out, errOut := runCLI(t, context.Background(), "ci", "--virtual", "--comment=false", "--summary", "", "--html", "", "--outputs", "",
		"--progress=false", "--base-ref", base, "--results", filepath.Join(repo.Dir, "results"),
		"--baselines", filepath.Join(repo.Dir, "baselines"), "--report", report, suitePath)
	md, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("no report (exit %d): %v\n%s\n%s", code, err, out, errOut)
	}
	if code != exitFailed || !strings.Contains(string(md), "suite len was renamed to len2 in this change") {
		t.Fatalf("renamed behind the run's files: exit %d\n%s\n%s\n%s", code, out, errOut, md)
	}

	// Gated later from the results the run wrote (ci --measured), the
	// file names len again by then, while the results carry len2: the
	// results are refused, or (measured from a path not in this
	// checkout) the rename is found, for the gate reads the suite files
	// as committed.
	tree := jsonTree(t, marker)
	tree["suite"].(map[string]any)["path"] = "/elsewhere/suites/len.jsonnet"
	moved := filepath.Join(filepath.Dir(marker), "moved.json")
	if data, err := json.Marshal(tree); err != nil || os.WriteFile(moved, data, 0o644) != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		results string
		trust   []string
		code    int
		says    string
	}{
		{marker, nil, exitUsage, "has no suite named len2"},
		{marker, []string{"--suite-from-results"}, exitUsage, "defines len, not len2"},
		{moved, []string{"--suite-from-results"}, exitFailed, "suite len was"},
	} {
		code, out, errOut, md := ciMeasured(t, repo, base, c.trust, c.results)
		if code != c.code || !strings.Contains(errOut+md, c.says) {
			t.Fatalf("measured %s %v, renamed behind the run's files: exit %d, want %d saying %q\n%s\n%s\n%s", filepath.Base(c.results), c.trust, code, c.code, c.says, out, errOut, md)
		}
	}

}

// A suite file that breaks while the job runs another suite is left to
// the job that runs it, which fails on it (a file may need another job's
// flags to evaluate).
func TestBrokenSuiteFileIsLeftToItsJob(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	repo, base := policyRepo(t)
	other := policySuite("other", "4ms", func(s string) string { return strings.Replace(s, "fixed(20)", "fixed(24)", 1) })
	repo.Commit("broken", map[string][]byte{"suites/other.jsonnet": other, "suites/len.jsonnet": []byte("error 'gone'\n")})
	code, out, md := ciPolicy(t, repo, base, "other.jsonnet")
	if code != exitOK || strings.Contains(md, "suite len was") {
		t.Fatalf("broken, run elsewhere: exit %d\n%s\n%s", code, out, md)
	}
	code, out, errOut := runCLI(t, context.Background(), "ci", "--virtual", "--comment=false", "--summary", "", "--html", "", "--outputs", "",
		"--progress=false", "--base-ref", base, "--results", t.TempDir(), "--baselines", filepath.Join(repo.Dir, "baselines"),
		"--report", filepath.Join(t.TempDir(), "r.md"), filepath.Join(repo.Dir, "suites", "len.jsonnet"))
	if code != exitUsage || !strings.Contains(errOut, "RUNTIME ERROR: gone") {
		t.Fatalf("broken, run here: exit %d\n%s\n%s", code, out, errOut)
	}
}

// A suite renamed along with deleting its old baseline leaves the gate
// the way a deleted baseline does, and is as loud: the report leads with
// the deletion though no suite the job ran names it.
func TestRenamedWithItsBaselineDeletedIsLoud(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	repo, base := policyRepo(t)
	renamed := policySuite("len2", "12ms", func(s string) string { return strings.Replace(s, `'5%'`, `'50%'`, 1) })
	if err := os.WriteFile(filepath.Join(repo.Dir, "suites", "len.jsonnet"), renamed, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(repo.Dir, "baselines", "len.json")); err != nil {
		t.Fatal(err)
	}
	code, out, md := ciPolicy(t, repo, base, "len.jsonnet")
	lead, _, _ := strings.Cut(md, "## benchci")
	if !strings.Contains(out, "baseline len: deleted here") || !strings.Contains(lead, "deletes the baseline of len") {
		t.Fatalf("exit %d\n%s\n%s", code, out, md)
	}
}

// JSON kept beside the baselines that is not one (a team's owners list)
// is not named as a deleted baseline when the change removes it; a
// baseline removed beside it still is, and so is a .json that does not
// read as JSON at all (a baseline gone bad).
func TestDeletedJSONThatIsNotABaseline(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	repo, _ := policyRepo(t)
	base := repo.Commit("owners", map[string][]byte{
		"baselines/owners.json": []byte(`{"owners": ["@platform"]}` + "\n"),
		"baselines/broken.json": []byte(`{"schema": "benchci.baseline/v1", "result": {`),
	})
	for _, f := range []string{"owners.json", "broken.json"} {
		if err := os.Remove(filepath.Join(repo.Dir, "baselines", f)); err != nil {
			t.Fatal(err)
		}
	}
	code, out, md := ciPolicy(t, repo, base, "len.jsonnet")
	if strings.Contains(out+md, "baseline owners: deleted") || !strings.Contains(out, "baseline broken: deleted here") {
		t.Fatalf("owners.json and a broken baseline removed: exit %d\n%s\n%s", code, out, md)
	}
	if err := os.Remove(filepath.Join(repo.Dir, "baselines", "len.json")); err != nil {
		t.Fatal(err)
	}
	if _, out, md := ciPolicy(t, repo, base, "len.jsonnet"); !strings.Contains(out, "baseline len: deleted here") || strings.Contains(out+md, "baseline owners: deleted") {
		t.Fatalf("len.json removed too:\n%s\n%s", out, md)
	}
}

// A baseline recorded in another clone (a cluster's, by an absolute
// path) or from another directory (a relative path that does not name
// the file from the repository's root) still names its suite's file
// here, by the longest tail of its path the base has: a rename of that
// suite is found, and a file the change adds at a longer tail (a decoy
// that still defines the old name) does not stand in for it.
func TestRenamedSuiteOfABaselineRecordedElsewhere(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	for _, c := range []struct {
		recorded string
		decoy    bool
	}{
		{"/elsewhere/clone/suites/len.jsonnet", false},
		{"/home/runner/clone/suites/len.jsonnet", true},
		{"clone/suites/len.jsonnet", false},
	} {
		repo, _ := policyRepo(t)
		bpath := filepath.Join(repo.Dir, "baselines", "len.json")
		tree := jsonTree(t, bpath)
		tree["result"].(map[string]any)["suite"].(map[string]any)["path"] = c.recorded
		data, err := json.Marshal(tree)
		if err != nil {
			t.Fatal(err)
		}
		base := repo.Commit("baseline recorded elsewhere", map[string][]byte{"baselines/len.json": data})
		renamed := policySuite("len2", "12ms", func(s string) string {
			return strings.Replace(strings.Replace(s, `'5%'`, `'50%'`, 1), "fixed(16)", "fixed(17)", 1)
		})
		if err := os.WriteFile(filepath.Join(repo.Dir, "suites", "len.jsonnet"), renamed, 0o644); err != nil {
			t.Fatal(err)
		}
		if c.decoy {
			if err := os.MkdirAll(filepath.Join(repo.Dir, "clone", "suites"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(repo.Dir, "clone", "suites", "len.jsonnet"), policySuite("len", "4ms", nil), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		code, out, md := ciPolicy(t, repo, base, "len.jsonnet")
		if code != exitFailed || !strings.Contains(md, "suite len was") {
			t.Errorf("recorded as %s (decoy %v): exit %d\n%s\n%s", c.recorded, c.decoy, code, out, md)
		}
	}
}

// A baseline's suite path recorded on Windows, from another directory
// of the repository (a run from suites/ records "len.jsonnet"), in other
// letter case, or leading at the base to some other file still names its
// suite: an unchanged suite passes, and one renamed (slower, looser, its
// workload changed, so no other check catches it) is named. A file the
// change adds where the recorded path would lie cannot stand in for it,
// nor can a copy of the suite at the base (a link is written as one).
// Each of these renames passed with exit 0 (all but the last on 11ef980,
// the last on fef993d's mapping by path alone, and eight on fa69109's;
// found by attack helpers): the suite file was found neither here nor at
// the base, or at the base defined no such suite, and the gone-suite
// check skipped it.
func TestBaselineSuitePathRecordedElsewhere(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	oldSuite := policySuite("len", "4ms", nil)
	cases := []recordedLayout{
		{name: "windows", recorded: `C:\Users\ci\clone\suites\len.jsonnet`},
		{name: "windows .\\", recorded: `.\len.jsonnet`},
		{name: "windows .\\ below", recorded: `.\llm\len.jsonnet`, suiteAt: "suites/llm/len.jsonnet"},
		{name: "run from suites/", recorded: "len.jsonnet"},
		{name: "run from suites/, a decoy at the root", recorded: "./len.jsonnet", decoy: true},
		{name: "a directory link at the base", recorded: "len.jsonnet", link: [2]string{"bench", "suites"}},
		{name: "a file link at the base", recorded: "len.jsonnet", link: [2]string{"compat/len.jsonnet", "../suites/len.jsonnet"}},
		{name: "another file of that name at the base", recorded: "len.jsonnet", base: map[string][]byte{"docs/examples/len.jsonnet": []byte("// example\n")}},
		{name: "a shorter tail at the base", recorded: "llm/len.jsonnet", suiteAt: "suites/llm/len.jsonnet", base: map[string][]byte{"len.jsonnet": []byte("// root\n")}},
		{name: "letter case", recorded: `C:\Users\ci\clone\Suites\len.jsonnet`},
		{name: "a backslash in a file's name", recorded: `/other/clone/suites/a\b.jsonnet`, suiteAt: `suites/a\b.jsonnet`},
		// The base's links decide which file is the suite's, not the
		// change's: a link turned into a copy of the old suite does not
		// keep it, and an alias link deleted does not lose it.
		{name: "a link at the base made a copy", recorded: "len.jsonnet", link: [2]string{"compat/len.jsonnet", "../suites/len.jsonnet"},
			change: []map[string][]byte{{"compat/len.jsonnet": nil}, {"compat/len.jsonnet": oldSuite}}},
		{name: "an alias link deleted", recorded: "len.jsonnet", link: [2]string{"compat/len.jsonnet", "../suites/len.jsonnet"},
			change: []map[string][]byte{{"compat/len.jsonnet": nil}}},
	}
	for _, c := range cases {
		for _, renamed := range []bool{false, true} {
			code, out, md := ciRecordedElsewhere(t, c, renamed)
			want, says := exitOK, "0 regressions"
			if renamed {
				want, says = exitFailed, "suite len was renamed to len2"
			}
			if code != want || !strings.Contains(md, says) || strings.Contains(md, "was deleted") {
				t.Errorf("%s (recorded %q), renamed %v: exit %d, want %d and %q\n%s\n%s", c.name, c.recorded, renamed, code, want, says, out, md)
			}
		}
	}
}

// recordedLayout is a repository whose baseline of suite len records
// its suite file as recorded (TestBaselineSuitePathRecordedElsewhere).
type recordedLayout struct {
	name, recorded, suiteAt string
	base                    map[string][]byte   // committed at the base beside the baseline
	link                    [2]string           // a link committed at the base: path, target
	decoy                   bool                // the change adds len.jsonnet at the root, defining len
	change                  []map[string][]byte // committed by the change, in turn, before the rest
}

// ciRecordedElsewhere gates a change to a repository whose baseline of
// suite len records its suite file as recorded: the suite renamed (and
// slowed, loosened, its workload changed) or left as it is.
func ciRecordedElsewhere(t *testing.T, c recordedLayout, renamed bool) (int, string, string) {
	t.Helper()
	suiteAt := c.suiteAt
	repo, _ := policyRepo(t)
	tree := jsonTree(t, filepath.Join(repo.Dir, "baselines", "len.json"))
	tree["result"].(map[string]any)["suite"].(map[string]any)["path"] = c.recorded
	data, err := json.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"baselines/len.json": data}
	maps.Copy(files, c.base)
	if suiteAt == "" {
		suiteAt = "suites/len.jsonnet"
	} else {
		files["suites/len.jsonnet"], files[suiteAt] = nil, policySuite("len", "4ms", nil)
	}
	rev := repo.Commit("baseline recorded elsewhere", files)
	if c.link[0] != "" {
		rev = repo.Link("a link", c.link[0], c.link[1])
	}
	// The change is committed, as a pull request's is: the gate reads
	// the other suite files as HEAD has them.
	for _, files := range c.change {
		repo.Commit("the change, in part", files)
	}
	change := map[string][]byte{}
	if renamed {
		change[suiteAt] = policySuite("len2", "12ms", func(s string) string {
			return strings.Replace(strings.Replace(s, `'5%'`, `'50%'`, 1), "fixed(16)", "fixed(17)", 1)
		})
	}
	if c.decoy {
		change["len.jsonnet"] = policySuite("len", "4ms", nil)
	}
	repo.Commit("the change", change)
	return ciPolicy(t, repo, rev, strings.TrimPrefix(suiteAt, "suites/"))
}

// A directory moved in the change and left behind as a link to its new
// place (suites -> bench, baselines -> bl) still names, at the base,
// the files the base had at the old path: a rename behind it is found.
func TestRenamedBehindADirectoryLink(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	for _, dir := range []string{"suites", "baselines"} {
		repo, base := policyRepo(t)
		if err := os.Rename(filepath.Join(repo.Dir, dir), filepath.Join(repo.Dir, dir+"-moved")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(dir+"-moved", filepath.Join(repo.Dir, dir)); err != nil {
			t.Fatal(err)
		}
		renamed := policySuite("len2", "12ms", func(s string) string { return strings.Replace(s, `'5%'`, `'50%'`, 1) })
		if err := os.WriteFile(filepath.Join(repo.Dir, "suites", "len.jsonnet"), renamed, 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, md := ciPolicy(t, repo, base, "len.jsonnet")
		if code != exitFailed || !strings.Contains(md, "suite len was renamed to len2") {
			t.Errorf("%s moved behind a link: exit %d\n%s\n%s", dir, code, out, md)
		}
	}
}

// ci --measured gates results kept anywhere, the repository's root
// included, of a suite that imports committed files.
func TestMeasuredAtTheRootOfASuiteWithImports(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	repo, _ := policyRepo(t)
	withLib := policySuite("len", "4ms", func(s string) string {
		return strings.Replace(s, "tolerance: { default: '5%' },", "tolerance: import '../lib/tolerance.libsonnet',", 1)
	})
	base := repo.Commit("a library", map[string][]byte{"suites/len.jsonnet": withLib, "lib/tolerance.libsonnet": []byte("{ default: '5%' }\n")})
	runVirtual(t, exitOK, repo.Dir, filepath.Join(repo.Dir, "suites", "len.jsonnet"))
	code, out, errOut, _ := ciMeasured(t, repo, base, nil, filepath.Join(repo.Dir, "len.json"))
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// In a repository whose suites/ or baselines/ is a committed link, a
// change that points the link elsewhere is judged by what the base's
// link led to: a suite renamed behind it is found, and baselines left
// behind by it are named as deleted.
func TestCommittedLinkPointedElsewhere(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	repoWith := func(linked string) (*gitfixture.Repo, string) {
		repo := gitfixture.New(t)
		suiteDir := map[bool]string{true: "bench", false: "suites"}[linked == "suites"]
		repo.Commit("suite", map[string][]byte{suiteDir + "/len.jsonnet": policySuite("len", "4ms", nil)})
		if linked == "suites" {
			repo.Link("link", "suites", "bench")
		}
		results := t.TempDir()
		runVirtual(t, exitOK, results, filepath.Join(repo.Dir, "suites", "len.jsonnet"))
		blDir := map[bool]string{true: "bl", false: "baselines"}[linked == "baselines"]
		writeVirtualBaseline(t, filepath.Join(results, "len.json"), filepath.Join(repo.Dir, blDir, "len.json"))
		data, err := os.ReadFile(filepath.Join(repo.Dir, blDir, "len.json"))
		if err != nil {
			t.Fatal(err)
		}
		base := repo.Commit("baseline", map[string][]byte{blDir + "/len.json": data})
		if linked == "baselines" {
			base = repo.Link("link", "baselines", "bl")
		}
		return repo, base
	}
	repoint := func(repo *gitfixture.Repo, link string) {
		if err := os.Remove(filepath.Join(repo.Dir, link)); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(repo.Dir, link+"2"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(link+"2", filepath.Join(repo.Dir, link)); err != nil {
			t.Fatal(err)
		}
	}

	repo, base := repoWith("suites")
	repoint(repo, "suites")
	renamed := policySuite("len2", "12ms", func(s string) string {
		return strings.Replace(strings.Replace(s, `'5%'`, `'50%'`, 1), "fixed(16)", "fixed(17)", 1)
	})
	if err := os.WriteFile(filepath.Join(repo.Dir, "suites", "len.jsonnet"), renamed, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, md := ciPolicy(t, repo, base, "len.jsonnet"); code != exitFailed || !strings.Contains(md, "suite len was") {
		t.Errorf("suites -> bench pointed elsewhere: exit %d\n%s\n%s", code, out, md)
	}

	repo, base = repoWith("baselines")
	repoint(repo, "baselines")
	if code, out, md := ciPolicy(t, repo, base, "len.jsonnet"); !strings.Contains(out, "baseline len: deleted here") || !strings.Contains(md, "deletes the baseline of len") {
		t.Errorf("baselines -> bl pointed elsewhere: exit %d\n%s\n%s", code, out, md)
	}
}

// A suite file the gate reads for another job's suite may import what
// the repository does not commit (a library directory a setup step
// fills, ignored by git): it is read as the work tree has it, and the
// job passes.
func TestOtherSuiteImportingAnIgnoredLibrary(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	repo, _ := policyRepo(t)
	vendored := policySuite("len", "4ms", func(s string) string {
		return strings.Replace(s, "tolerance: { default: '5%' },", "tolerance: import 'tolerance.libsonnet',", 1)
	})
	other := policySuite("other", "4ms", func(s string) string { return strings.Replace(s, "fixed(20)", "fixed(24)", 1) })
	base := repo.Commit("vendored", map[string][]byte{"suites/len.jsonnet": vendored, "suites/other.jsonnet": other, ".gitignore": []byte("vendor/\n")})
	if err := os.MkdirAll(filepath.Join(repo.Dir, "vendor"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo.Dir, "vendor", "tolerance.libsonnet"), []byte("{ default: '5%' }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, md := ciPolicyWith(t, repo, base, []string{"--jpath", filepath.Join(repo.Dir, "vendor")}, "other.jsonnet")
	if code != exitOK || strings.Contains(md, "suite len was") {
		t.Fatalf("exit %d\n%s\n%s", code, out, md)
	}
}

// A suite that needs a flag (--ext-str, as docs/scale-out.md's) is gated
// from the results the shards wrote when the gate job passes the same
// flag, as benchci-shards.yml's does: the base's rules need it too.
func TestMeasuredSuiteNeedingTheShardsFlags(t *testing.T) {
	t.Parallel() // run --virtual: exact, whatever else runs
	repo, _ := policyRepo(t)
	flagged := policySuite("len", "4ms", func(s string) string {
		return strings.Replace(s, "step_base='4ms'", "step_base=std.extVar('step')", 1)
	})
	base := repo.Commit("the step is a flag", map[string][]byte{"suites/len.jsonnet": flagged})
	results := t.TempDir()
	runVirtual(t, exitOK, results, filepath.Join(repo.Dir, "suites", "len.jsonnet"), "--ext-str", "step=4ms")
	code, out, errOut, _ := ciMeasured(t, repo, base, []string{"--suite-from-results", "--ext-str", "step=4ms"}, filepath.Join(results, "len.json"))
	if code != exitOK || !strings.Contains(out+errOut, "SLOs judged from the suite definition the results carry") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// The gate finds a renamed suite with --baselines relative to the
// working directory, as workflows pass it (its default is "baselines"):
// read as relative, the committed baselines were not walked at all.
func TestRenamedWithRelativeBaselines(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	repo, base := policyRepo(t)
	renamed := policySuite("len2", "12ms", func(s string) string {
		return strings.Replace(strings.Replace(s, `'5%'`, `'50%'`, 1), "fixed(16)", "fixed(17)", 1)
	})
	repo.Commit("rename", map[string][]byte{"suites/len.jsonnet": renamed})
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(cwd, filepath.Join(repo.Dir, "baselines"))
	if err != nil || filepath.IsAbs(rel) {
		t.Fatalf("no relative path to the baselines: %q, %v", rel, err)
	}
	dir := t.TempDir()
	code, out, errOut := runCLI(t, context.Background(), "ci", "--virtual", "--comment=false", "--summary", "", "--html", "", "--outputs", "", "--progress=false",
		"--base-ref", base, "--results", dir, "--baselines", rel, "--report", filepath.Join(dir, "r.md"), filepath.Join(repo.Dir, "suites", "len.jsonnet"))
	md, _ := os.ReadFile(filepath.Join(dir, "r.md"))
	if code != exitFailed || !strings.Contains(strings.ReplaceAll(string(md), "\u200b", ""), "suite len was renamed to len2") {
		t.Fatalf("--baselines %s: exit %d\n%s\n%s\n%s", rel, code, out, errOut, md)
	}
}

// A suite whose file no longer evaluates once the run wrote its results
// (it imports through a committed link, and raises an error when the
// results are there) is refused, not left to "the job that runs it":
// this job gates that run's results.
func TestMeasuredSuiteThatStopsEvaluating(t *testing.T) {
	t.Parallel() // run --virtual: exact, whatever else runs
	repo, base := policyRepo(t)
	hide := policySuite("len", "12ms", func(s string) string {
		s = strings.Replace(s, "local b = import 'benchci.libsonnet';", "local b = import 'benchci.libsonnet';\nlocal c = import '../lib/common.libsonnet';", 1)
		s = strings.Replace(s, "name: 'len',", "name: if std.length(importstr '../results/len2.json') < 100 then 'len2' else error 'results present',", 1)
		s = strings.Replace(s, "fixed(16)", "fixed(17)", 1)
		return strings.Replace(s, "tolerance: { default: '5%' },", "tolerance: { default: c.tol },", 1)
	})
	repo.Commit("the change", map[string][]byte{"suites/len.jsonnet": hide, "results/len2.json": []byte("{}"), "libsrc/common.libsonnet": []byte("{ tol: '50%' }\n")})
	repo.Link("a library link", "lib", "libsrc")
	runVirtual(t, exitOK, filepath.Join(repo.Dir, "results"), filepath.Join(repo.Dir, "suites", "len.jsonnet"))
	code, out, errOut, _ := ciMeasured(t, repo, base, []string{"--suite-from-results"}, filepath.Join(repo.Dir, "results", "len2.json"))
	if code != exitUsage || !strings.Contains(errOut, "must still define len2, but does not evaluate here") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// --suite-from-results still gates results measured from another
// version of a suite file this checkout has, as long as the file still
// defines the suite by that name.
func TestMeasuredFromAnotherVersionOfThisSuite(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	repo, base := policyRepo(t)
	results := t.TempDir()
	suitePath := filepath.Join(repo.Dir, "suites", "len.jsonnet")
	runVirtual(t, exitOK, results, suitePath)
	stricter := policySuite("len", "4ms", func(s string) string { return strings.Replace(s, `'5%'`, `'4%'`, 1) })
	if err := os.WriteFile(suitePath, stricter, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags []string
		code  int
		says  string
	}{
		{nil, exitUsage, "measured with another version of"},
		{[]string{"--suite-from-results"}, exitOK, "SLOs judged from the suite definition the results carry"},
	} {
		code, out, errOut, _ := ciMeasured(t, repo, base, tc.flags, filepath.Join(results, "len.json"))
		if code != tc.code || !strings.Contains(out+errOut, tc.says) {
			t.Errorf("%v: exit %d, want %d saying %q\n%s\n%s", tc.flags, code, tc.code, tc.says, out, errOut)
		}
	}
}

// benchci compare judges by the rules the reference was recorded with
// where they are stricter, and a loosened rule fails it, named.
func TestComparePolicyFromTheReference(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	dir := t.TempDir()
	suitePath := filepath.Join(dir, "len.jsonnet")
	var files []string
	for i, tolerance := range []string{`'5%'`, `'50%'`} {
		src := policySuite("len", []string{"4ms", "5.2ms"}[i], func(s string) string { return strings.Replace(s, `'5%'`, tolerance, 1) })
		if err := os.WriteFile(suitePath, src, 0o644); err != nil {
			t.Fatal(err)
		}
		results := filepath.Join(dir, fmt.Sprint("r", i))
		runVirtual(t, exitOK, results, suitePath)
		files = append(files, filepath.Join(results, "len.json"))
	}
	code, out, errOut := runCLI(t, context.Background(), "compare", "--format", "markdown", files[0], files[1])
	md := strings.ReplaceAll(out, "\u200b", "")
	if code != exitFailed || !strings.Contains(md, "⛔ **policy loosened: len.**") || !strings.Contains(md, "tolerance.default: 5% → 50%") ||
		!strings.Contains(md, "| ±5% |") {
		t.Fatalf("exit %d\n%s\n%s", code, md, errOut)
	}

	// A reference that records no rules (older files have none) leaves
	// the candidate's own, and says so.
	tree := jsonTree(t, files[0])
	tree["suite"].(map[string]any)["definition"] = nil
	none := filepath.Join(dir, "none.json")
	if data, err := json.Marshal(tree); err != nil || os.WriteFile(none, data, 0o644) != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, context.Background(), "compare", none, files[1])
	if code != exitOK || !strings.Contains(errOut, "records no suite definition") || !strings.Contains(errOut, "judged by its own tolerances") {
		t.Fatalf("no recorded rules: exit %d\n%s\n%s", code, out, errOut)
	}
}

// compare judges the candidate's SLOs again, whatever verdicts its file
// carries: a candidate edited to say its failed SLOs passed fails them.
func TestCompareJudgesTheCandidatesSLOsAgain(t *testing.T) {
	t.Parallel() // run --virtual: exact, whatever else runs
	dir := t.TempDir()
	suitePath := filepath.Join(dir, "len.jsonnet")
	src := policySuite("len", "12ms", func(s string) string { return strings.Replace(s, `'<', '500ms'`, `'<', '20ms'`, 1) })
	if err := os.WriteFile(suitePath, src, 0o644); err != nil {
		t.Fatal(err)
	}
	var files []string
	for i := range 2 {
		results := filepath.Join(dir, fmt.Sprint("r", i))
		runVirtual(t, exitFailed, results, suitePath)
		files = append(files, filepath.Join(results, "len.json"))
	}
	tree := jsonTree(t, files[1])
	slos := tree["slos"].([]any)
	for _, v := range slos {
		v.(map[string]any)["pass"] = true
	}
	edited := filepath.Join(dir, "edited.json")
	if data, err := json.Marshal(tree); err != nil || os.WriteFile(edited, data, 0o644) != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, context.Background(), "compare", files[0], edited)
	if code != exitFailed || !strings.Contains(out+errOut, "SLO") {
		t.Fatalf("a candidate saying its failed SLOs passed: exit %d\n%s\n%s", code, out, errOut)
	}
}

// A suite cannot shed its base's rules by moving to another file or
// taking another name: the base's version is found by name, or by the
// requests it sends, and judges it.
func TestMovedSuiteKeepsItsBaseRules(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	repo, _ := policyRepo(t)
	strict := func(s string) string { return strings.Replace(s, `'<', '500ms'`, `'<', '5ms'`, 1) }
	// The base tightens len's SLO without recording its baseline again,
	// and adds a suite gated by its SLOs alone.
	base := repo.Commit("tighten", map[string][]byte{
		"suites/len.jsonnet": policySuite("len", "4ms", strict),
		"suites/slo.jsonnet": policySuite("slo", "4ms", func(s string) string { return strict(strings.Replace(s, "fixed(20)", "fixed(24)", 1)) }),
	})
	move := func(from, to string, src []byte) {
		t.Helper()
		if err := os.Remove(filepath.Join(repo.Dir, "suites", from)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo.Dir, "suites", to), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Moved and renamed, with no baseline: found by its requests.
	move("slo.jsonnet", "slo-moved.jsonnet", policySuite("slo-v2", "4ms", func(s string) string { return strings.Replace(s, "fixed(20)", "fixed(24)", 1) }))
	code, out, md := ciPolicy(t, repo, base, "slo-moved.jsonnet")
	if code != exitFailed || !strings.Contains(md, "⛔ **policy loosened: slo-v2.**") || !strings.Contains(md, "moved or renamed here") ||
		!strings.Contains(md, "slos: ttft p99 @ rate=8: &lt; 5ms → &lt; 500ms") {
		t.Fatalf("moved and renamed: exit %d\n%s\n%s", code, out, md)
	}
	// Moved, with a baseline recorded before the base tightened it: the
	// base's suite, found by name, still judges it.
	move("len.jsonnet", "len-moved.jsonnet", policySuite("len", "4ms", nil))
	code, out, md = ciPolicy(t, repo, base, "len-moved.jsonnet")
	if code != exitFailed || !strings.Contains(md, "⛔ **policy loosened: len.**") || !strings.Contains(md, "slos: ttft p99 @ rate=8: &lt; 5ms → &lt; 500ms") {
		t.Fatalf("moved: exit %d\n%s\n%s", code, out, md)
	}
}

// A base revision that cannot be read fails the gate, saying why: judging
// by the change's own rules instead would reopen the hole.
func TestPolicyUnreadableBaseFails(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	repo, _ := policyRepo(t)
	code, out, md := ciPolicy(t, repo, "no-such-ref", "len.jsonnet")
	if code != exitUsage || !strings.Contains(out, "the base's rules") || !strings.Contains(out, "fetch-depth: 0") {
		t.Fatalf("exit %d\n%s\n%s", code, out, md)
	}
}

// A baseline that carries the change's looser rules over the base's
// figures (edited, not measured again) does not approve the loosening.
func TestPolicyApprovalNeedsANewMeasurement(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	repo, base := policyRepo(t)
	suitePath := filepath.Join(repo.Dir, "suites", "len.jsonnet")
	if err := os.WriteFile(suitePath, policySuite("len", "5.2ms", func(s string) string { return strings.Replace(s, `'5%'`, `'50%'`, 1) }), 0o644); err != nil {
		t.Fatal(err)
	}
	results := t.TempDir()
	runVirtual(t, exitOK, results, suitePath)
	cand, err := result.Read(filepath.Join(results, "len.json"))
	if err != nil {
		t.Fatal(err)
	}
	bpath := filepath.Join(repo.Dir, "baselines", "len.json")
	old, err := baseline.Read(bpath)
	if err != nil {
		t.Fatal(err)
	}
	forged := old.Result
	forged.Suite = cand.Suite // the change's suite, hash and all, over the base's figures
	b, err := baseline.FromResult(forged, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := baseline.Write(bpath, b); err != nil {
		t.Fatal(err)
	}
	code, out, md := ciPolicy(t, repo, base, "len.jsonnet")
	if code != exitFailed || !strings.Contains(md, "⛔ **policy loosened: len.**") || strings.Contains(md, "policy loosened, approved") {
		t.Fatalf("exit %d\n%s\n%s", code, out, md)
	}
}

// The base's suite is evaluated from the base's files alone: a library
// the change adds on an import path does not rewrite the base's rules.
func TestPolicyBaseReadsOnlyTheBase(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	repo, _ := policyRepo(t)
	strict := func(s string) string {
		return strings.Replace(strings.Replace(s, `'<', '500ms'`, `'<', '5ms'`, 1), "fixed(20)", "fixed(24)", 1)
	}
	base := repo.Commit("a suite gated by its SLO", map[string][]byte{"suites/slo.jsonnet": policySuite("slo", "4ms", strict)})
	lib, err := os.ReadFile("../../suites/lib/benchci.libsonnet")
	if err != nil {
		t.Fatal(err)
	}
	hostile := strings.Replace(string(lib), "{ metric: metric, stat: stat, op: op, threshold: threshold,", "{ metric: metric, stat: stat, op: op, threshold: '500ms',", 1)
	if hostile == string(lib) {
		t.Fatal("the library's latency SLO changed shape; update this test")
	}
	repo.Commit("the change: a library on the import path", map[string][]byte{"lib/benchci.libsonnet": []byte(hostile)})
	code, out, md := ciPolicyWith(t, repo, base, []string{"--jpath", filepath.Join(repo.Dir, "lib")}, "slo.jsonnet")
	if code != exitFailed || !strings.Contains(md, "⛔ **policy loosened: slo.**") || !strings.Contains(md, "&lt; 5ms → &lt; 500ms") {
		t.Fatalf("exit %d\n%s\n%s", code, out, md)
	}
}

// jsonTree reads a results or baseline file as a JSON tree to edit.
func jsonTree(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tree map[string]any
	if err := json.Unmarshal(data, &tree); err != nil {
		t.Fatal(err)
	}
	return tree
}

// rehash sets a file's suite.hash (st is its "suite" object) to its
// edited definition's, as the run that wrote it would have, so that the
// file reads and the edit is judged, not refused as tampered.
func rehash(t *testing.T, st map[string]any) {
	t.Helper()
	def, err := json.Marshal(st["definition"])
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(def)
	st["hash"] = hex.EncodeToString(sum[:])
}

// A baseline recorded by a build that let a suite set retry budget 0 (no
// cap then; refused since f069c87) still judges a candidate by its rules:
// testdata/retry-budget-0/baseline.json was written at f069c87^, and the
// candidate, written now, loosens the default tolerance. Before the
// recorded definition was migrated it did not decode, and compare judged
// the candidate by its own rules, passing the loosening. A base whose
// recorded rules cannot be read at all is refused, not passed over.
func TestCompareJudgesByRulesRecordedBeforeARefusal(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "retry-budget-0")
	base, cand := filepath.Join(dir, "baseline.json"), filepath.Join(dir, "loosened.json")
	code, out, errOut := runCLI(t, context.Background(), "compare", base, cand)
	if code != exitFailed || !strings.Contains(errOut, "looser than the base's: tolerance.default: 10% (benchci's default) → 40%") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}

	// The same baseline with a budget no build accepted, hashed again so
	// that it reads: its rules cannot be decoded.
	raw := jsonTree(t, base)
	st := raw["suite"].(map[string]any)
	st["definition"].(map[string]any)["request"].(map[string]any)["retry"].(map[string]any)["budget"] = 2.0
	rehash(t, st)
	bad, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	badPath := filepath.Join(t.TempDir(), "baseline.json")
	if err := os.WriteFile(badPath, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, context.Background(), "compare", badPath, cand)
	if code != exitUsage || !strings.Contains(errOut, "the rules it was recorded with cannot be read") {
		t.Fatalf("unreadable rules: exit %d\n%s\n%s", code, out, errOut)
	}

	// A file written through framework/result without a definition
	// stores null: it recorded no rules, and is not refused for them.
	st["definition"], st["hash"] = nil, ""
	none, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(badPath, none, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, context.Background(), "compare", badPath, cand)
	if code == exitUsage || strings.Contains(errOut, "cannot be read") {
		t.Fatalf("no recorded rules: exit %d\n%s\n%s", code, out, errOut)
	}
}

// A baseline recorded before suite times were bounded still judges a
// candidate by its rules: testdata/recorded-before-bounds/baseline.json
// was written at 6855499^ with request.timeout 48h (at most 24h since
// 776e9eb), and the candidate, written now, loosens the default
// tolerance. Before the recorded times were clamped (suite.Decode), its
// rules did not decode and compare exited 2, asking for a new baseline.
func TestCompareJudgesByRulesRecordedBeforeABound(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "recorded-before-bounds")
	code, out, errOut := runCLI(t, context.Background(), "compare", filepath.Join(dir, "baseline.json"), filepath.Join(dir, "loosened.json"))
	if code != exitFailed || !strings.Contains(errOut, "looser than the base's: tolerance.default: 10% (benchci's default) → 40%") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// ci refuses, rather than judging a suite by its own rules, when nothing
// of the base's rules reads: the base has no suite of that name or
// workload, and the baseline it kept recorded rules this benchci cannot
// decode (a retry budget of 2, which no build accepted, hashed again so
// that the file reads). The pull request restores the suite, loosened.
func TestCIRefusesWhenNoBaseRulesRead(t *testing.T) {
	t.Parallel() // ci --virtual: exact, whatever else runs
	repo, _ := policyRepo(t)
	raw := jsonTree(t, filepath.Join(repo.Dir, "baselines", "len.json"))
	st := raw["result"].(map[string]any)["suite"].(map[string]any)
	st["definition"].(map[string]any)["request"] = map[string]any{"retry": map[string]any{"on": []any{"429"}, "max_attempts": 3, "budget": 2}}
	rehash(t, st)
	unreadable, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	base := repo.Commit("suite gone, its baseline kept", map[string][]byte{"suites/len.jsonnet": nil, "baselines/len.json": unreadable})
	if err := os.WriteFile(filepath.Join(repo.Dir, "suites", "len.jsonnet"),
		policySuite("len", "4ms", func(s string) string { return strings.Replace(s, `'5%'`, `'50%'`, 1) }), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := ciPolicy(t, repo, base, "len.jsonnet")
	if code != exitUsage || !strings.Contains(out, "the base's rules cannot be read") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// The committed baselines are read through links to directories inside
// the repository (a variant's baselines moved and left as a link), each
// under its name in baselines/ and once (a link back up, a file linked
// twice); a link out of the repository is not followed.
func TestWalkBaselinesFollowsLinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, f := range []string{"baselines/x.json", "bl/v/a.json", "bl/v/notes.txt"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "stray.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"baselines/v": "../bl/v", "baselines/loop": "..", "baselines/out": outside, "baselines/y.json": "x.json"} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	walkBaselines(filepath.Join(dir, "baselines"), dir, func(path string) {
		rel, _ := filepath.Rel(dir, path)
		got = append(got, filepath.ToSlash(rel))
	})
	slices.Sort(got)
	if want := []string{"baselines/v/a.json", "baselines/x.json"}; !slices.Equal(got, want) {
		t.Errorf("walked %q, want %q", got, want)
	}
}
