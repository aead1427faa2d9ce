package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/gitfixture"
)

// committedResult is the result inside the committed quickstart baseline,
// as a JSON tree to edit.
func committedResult(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile("../../framework/result/testdata/quickstart-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var b struct {
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	return b.Result
}

// shardOfCommitted writes the committed quickstart baseline's result as
// shard i of n into dir, and returns its path.
func shardOfCommitted(t *testing.T, dir string, i, n int, edit func(map[string]any)) string {
	t.Helper()
	r := committedResult(t)
	r["shard"] = map[string]any{"index": i, "count": n, "started": r["started"], "finished": r["finished"]}
	if edit != nil {
		edit(r)
	}
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "quickstart.shard-"+itoa(i)+"-of-"+itoa(n)+".json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// The attack's hostile shards (F2-F6, M1, M8) are refused, each with
// exit 2 and a reason, and nothing hangs or grows.
func TestMergeRefusesHostileShards(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string) []string
		want  string
	}{
		{"a FIFO named as a shard does not hang (F6)", func(t *testing.T, dir string) []string {
			shardOfCommitted(t, dir, 0, 2, nil)
			if err := syscall.Mkfifo(filepath.Join(dir, "quickstart.shard-1-of-2.json"), 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{dir}
		}, "named pipe"},
		{"/dev/zero (F6)", func(t *testing.T, dir string) []string {
			return []string{shardOfCommitted(t, dir, 0, 2, nil), "/dev/zero"}
		}, "device"},
		{"completed inflated (F2)", func(t *testing.T, dir string) []string {
			return []string{shardOfCommitted(t, dir, 0, 2, nil), shardOfCommitted(t, dir, 1, 2, func(r map[string]any) {
				p := r["points"].([]any)[0].(map[string]any)
				p["requests"].(map[string]any)["completed"] = 100000
				p["requests"].(map[string]any)["sent"] = 100000
			})}
		}, "do not add up"},
		{"a count of 2e9 (F5)", func(t *testing.T, dir string) []string {
			return []string{shardOfCommitted(t, dir, 0, 2000000000, nil)}
		}, "index 0 of 2000000000"},
		{"histograms stripped (F4)", func(t *testing.T, dir string) []string {
			return []string{shardOfCommitted(t, dir, 0, 2, nil), shardOfCommitted(t, dir, 1, 2, func(r map[string]any) {
				delete(r["points"].([]any)[0].(map[string]any), "histograms")
			})}
		}, "has no histogram behind it"},
		{"one label, two rates (M8)", func(t *testing.T, dir string) []string {
			return []string{shardOfCommitted(t, dir, 0, 2, nil), shardOfCommitted(t, dir, 1, 2, func(r map[string]any) {
				p := r["points"].([]any)[0].(map[string]any)
				p["rate"] = 2.5
			})}
		}, "label rate=2 with rate 2.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"merge", "-o", filepath.Join(dir, "merged.json")}, tc.setup(t, dir)...)
			if len(args) == 4 && !strings.HasSuffix(args[3], ".json") {
				args = []string{"merge", args[3]}
			}
			code, out, errOut := runCLI(t, ctx, args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("merge: exit %d, want 2 saying %q\n%s\n%s", code, tc.want, out, errOut)
			}
		})
	}
}

// Two honest shards merge; one shard alone is not gated as the whole run
// (M1).
func TestOneShardIsNotTheWholeRun(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, b := shardOfCommitted(t, dir, 0, 2, nil), shardOfCommitted(t, dir, 1, 2, nil)
	merged := filepath.Join(dir, "merged.json")
	if code, out, errOut := runCLI(t, ctx, "merge", "-o", merged, a, b); code != 0 {
		t.Fatalf("merge of two honest shards: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := runCLI(t, ctx, "ci", "--measured", "--comment=false", "--baselines", v1Baselines(t),
		"--report", filepath.Join(dir, "r.md"), "--html", "", "--summary", "", "--outputs", "", a)
	if code != 2 || !strings.Contains(out+errOut, "shard 0 of 2") {
		t.Fatalf("ci --measured on one shard: exit %d, want 2 naming the shard\n%s\n%s", code, out, errOut)
	}
}

// F7: a baseline edited consistently (throughputs halved, cost doubled,
// in its result and its summary) reads as a valid baseline, and a run
// with half the throughput then passes against it. The report leads with
// what the edit moved, each move flagged as more lenient.
func TestBaselineEditIsLoud(t *testing.T) {
	honest, err := os.ReadFile("../../framework/result/testdata/quickstart-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	repo := gitfixture.New(t)
	base := repo.Commit("baseline", map[string][]byte{"baselines/quickstart.json": honest})
	b, err := baseline.Read(filepath.Join(repo.Dir, "baselines", "quickstart.json"))
	if err != nil {
		t.Fatal(err)
	}
	slow := b.Result
	for i := range slow.Points {
		p := &slow.Points[i]
		p.Throughput.Requests /= 2
		p.Throughput.OutputTokens /= 2
		p.Throughput.TotalTokens /= 2
		if p.Cost != nil {
			p.Cost.PerMOutput *= 2
			p.Cost.PerMTotal *= 2
		}
	}
	edited, err := baseline.FromResult(slow, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := baseline.Write(filepath.Join(repo.Dir, "baselines", "quickstart.json"), edited); err != nil {
		t.Fatal(err)
	}
	cand := filepath.Join(t.TempDir(), "quickstart.json")
	if err := result.Write(cand, slow); err != nil {
		t.Fatal(err)
	}
	reportPath := filepath.Join(t.TempDir(), "r.md")
	code, out, errOut := runCLI(t, context.Background(), "ci", "--measured", "--suite-from-results", "--comment=false", "--base-ref", base,
		"--baselines", filepath.Join(repo.Dir, "baselines"), "--report", reportPath, "--html", "", "--summary", "", "--outputs", "", cand)
	if code != 0 {
		t.Fatalf("ci: exit %d, want 0 (the slower run passes the edited baseline)\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "baseline quickstart: edited here") || !strings.Contains(out, "make the gate more lenient") {
		t.Errorf("the terminal does not say what the edit moved:\n%s", out)
	}
	md, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatal(err)
	}
	// The edit leads, before the verdict, with the changes under test.
	lead, _, _ := strings.Cut(string(md), "## benchci")
	if !strings.HasPrefix(lead, "<!-- benchci:") || !strings.Contains(lead, "\n> ⚠️ **This pull request edits the baseline of quickstart**") {
		t.Fatalf("the report does not lead with the edit:\n%s", md)
	}
	if !strings.Contains(string(md), "| rate=2 | output\\_throughput | 166.9 | 83.44 | -50.0% | more lenient |") {
		t.Errorf("the report does not name the halved throughput as more lenient:\n%s", md)
	}
}

// F19: merge stops on SIGTERM and Ctrl-C (the root command's context)
// instead of reading on.
func TestMergeStopsWhenCanceled(t *testing.T) {
	dir := t.TempDir()
	a, b := shardOfCommitted(t, dir, 0, 2, nil), shardOfCommitted(t, dir, 1, 2, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(dir, "merged.json")
	code, stdout, stderr := runCLI(t, ctx, "merge", "-o", out, a, b)
	if code == 0 || !strings.Contains(stdout+stderr, "canceled") {
		t.Fatalf("merge under a canceled context: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a merged result was written: %v", err)
	}
}

// N2: ci --measured judges SLOs again, from the suite as this checkout has
// it: verdicts edited in a results file, or a suite definition loosened in
// it, cannot pass a run that fails.
func TestMeasuredSLOsAreJudgedAgain(t *testing.T) {
	doc := committedResult(t)
	dir := t.TempDir()
	gate := func(doc map[string]any, flags ...string) (int, string) {
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "quickstart.json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"ci", "--measured", "--comment=false", "--base-ref", "", "--baselines", filepath.Join(dir, "none"),
			"--report", filepath.Join(dir, "r.md"), "--html", "", "--summary", "", "--outputs", ""}, flags...)
		code, out, errOut := runCLI(t, context.Background(), append(args, path)...)
		return code, out + errOut
	}
	// A results file can name any suite path: one that is not in the
	// checkout is refused, unless the results' own definition is trusted
	// on purpose (every SLO of the committed run then passes).
	doc["suite"].(map[string]any)["path"] = filepath.Join(dir, "absent.jsonnet")
	if code, out := gate(doc); code != 2 || !strings.Contains(out, "not in this checkout") {
		t.Fatalf("a suite path not in the checkout: exit %d, want 2\n%s", code, out)
	}
	if code, out := gate(doc, "--suite-from-results"); code != 0 || !strings.Contains(out, "✅") || !strings.Contains(out, "note: quickstart: SLOs judged from the suite definition the results carry") {
		t.Fatalf("the committed run, its own definition trusted: exit %d, want 0 and a note\n%s", code, out)
	}
	// Without its hash, the definition cannot be checked, nor trusted.
	hash := doc["suite"].(map[string]any)["hash"]
	doc["suite"].(map[string]any)["hash"] = ""
	if code, out := gate(doc, "--suite-from-results"); code != 2 || !strings.Contains(out, "cannot be checked against a hash") {
		t.Fatalf("a definition without its hash, trusted: exit %d, want 2\n%s", code, out)
	}
	doc["suite"].(map[string]any)["hash"] = hash
	// A stricter suite, measured by the same run: its SLO fails, whatever
	// the file's verdicts say.
	slos := doc["suite"].(map[string]any)["definition"].(map[string]any)["slos"].([]any)
	slos[0].(map[string]any)["threshold"] = "1ms"
	for _, s := range doc["slos"].([]any) {
		s.(map[string]any)["pass"] = true
	}
	// The definition no longer hashes to the suite.hash the run stored:
	// refused as edited, before any SLO is judged.
	if code, out := gate(doc, "--suite-from-results"); code != 2 || !strings.Contains(out, "its stored suite definition no longer hashes to its suite.hash") {
		t.Errorf("a definition edited after the run: exit %d, want 2\n%s", code, out)
	}
	// Hashed again to match, it reads, and its SLO is judged.
	rehash(t, doc["suite"].(map[string]any))
	if code, out := gate(doc, "--suite-from-results"); code != 1 || !strings.Contains(out, "SLO FAILED") {
		t.Errorf("verdicts edited to pass: exit %d, want 1\n%s", code, out)
	}
	// The suite file in the checkout differs from the one measured.
	suitePath := filepath.Join(dir, "quickstart.jsonnet")
	if err := os.WriteFile(suitePath, []byte("local b = import 'benchci.libsonnet';\nb.suite { name: 'quickstart', target: b.target.sim('tiny'), workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(8) }, sweep: b.sweep.rates([6], duration='2s'), slos: [b.slo.p99('ttft', '<', '1000s')] }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	doc["suite"].(map[string]any)["path"] = suitePath
	if code, out := gate(doc); code != 2 || !strings.Contains(out, "another version of") {
		t.Errorf("a suite that differs from the checkout's: exit %d, want 2\n%s", code, out)
	}
}

// N5: a pull request that deletes a suite's baseline turns its gate off;
// the report leads with that.
func TestBaselineDeletionIsLoud(t *testing.T) {
	honest, err := os.ReadFile("../../framework/result/testdata/quickstart-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	repo := gitfixture.New(t)
	base := repo.Commit("baseline", map[string][]byte{"baselines/quickstart.json": honest})
	if err := os.Remove(filepath.Join(repo.Dir, "baselines", "quickstart.json")); err != nil {
		t.Fatal(err)
	}
	b, err := baseline.Read("../../framework/result/testdata/quickstart-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	cand := filepath.Join(t.TempDir(), "quickstart.json")
	if err := result.Write(cand, b.Result); err != nil {
		t.Fatal(err)
	}
	reportPath := filepath.Join(t.TempDir(), "r.md")
	code, out, errOut := runCLI(t, context.Background(), "ci", "--measured", "--suite-from-results", "--comment=false", "--base-ref", base,
		"--baselines", filepath.Join(repo.Dir, "baselines"), "--report", reportPath, "--html", "", "--summary", "", "--outputs", "", cand)
	md, _ := os.ReadFile(reportPath)
	if code != 0 || !strings.Contains(out, "baseline quickstart: deleted here") || !strings.Contains(string(md), "deletes the baseline of quickstart") {
		t.Fatalf("exit %d\n%s\n%s\n%s", code, out, errOut, md)
	}
}

// N9: one shard's window shrunk to nothing would move the merged
// throughput: refused.
func TestMergeRefusesAShrunkWindow(t *testing.T) {
	dir := t.TempDir()
	a := shardOfCommitted(t, dir, 0, 2, nil)
	b := shardOfCommitted(t, dir, 1, 2, func(r map[string]any) {
		p := r["points"].([]any)[0].(map[string]any)
		p["window"].(map[string]any)["seconds"] = 1e-300
		p["throughput"] = map[string]any{"requests": 0, "output_tokens": 0, "total_tokens": 0}
	})
	code, out, errOut := runCLI(t, context.Background(), "merge", "-o", filepath.Join(dir, "m.json"), a, b)
	if code != 2 || !strings.Contains(errOut, "not one window") {
		t.Fatalf("merge: exit %d\n%s\n%s", code, out, errOut)
	}
}

// Every knob has a bound: out-of-range run and ci flags are refused
// before anything runs, naming the flag and its range.
func TestRunFlagsBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--reruns", "1000000"}, "--reruns 1000000: at most 10"},
		{[]string{"ci", "--reruns", "11"}, "--reruns 11: at most 10"},
		{[]string{"run", "--point-gap", "100h"}, "--point-gap 100h0m0s: want 0 to 1h0m0s"},
		{[]string{"run", "--point-gap", "-1s"}, "--point-gap -1s"},
		{[]string{"ci", "--timeout", "-5m"}, "--timeout -5m0s"},
	} {
		args := append(tc.args, "--results", t.TempDir(), "../../suites/quickstart.jsonnet")
		code, _, stderr := runCLI(t, context.Background(), args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}

// The other commands' counts and times are bounded too.
func TestCommandFlagsBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bands", "--runs", "100000", "../../suites/quickstart.jsonnet"}, "--runs 100000: want 2 to 50"},
		{[]string{"bands", "--runs", "1", "../../suites/quickstart.jsonnet"}, "--runs 1: want 2 to 50"},
		{[]string{"selftest", "--streams", "1000000"}, "--streams 1000000: want 1 to 10000"},
		{[]string{"selftest", "--rates", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17"}, "at most 16 values"},
		{[]string{"selftest", "--duration", "100h"}, "--duration 100h0m0s: want 100ms to 10m0s"},
		{[]string{"sim", "--max-num-seqs", "100000000"}, "--max-num-seqs 100000000: want 0 to 65536"},
		{[]string{"sim", "--step-base", "1h"}, "--step-base 1h0m0s: want 0s to 10s"},
		{[]string{"sim", "--decode-per-seq", "-1ms"}, "--decode-per-seq -1ms: want 0 to 1s"},
	} {
		code, _, stderr := runCLI(t, context.Background(), tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}
