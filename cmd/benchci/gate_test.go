package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// gateSuite takes the simulator profile as a top-level argument: the
// workload stays the same, only the "server" changes, as in a PR that
// changes serving config.
const gateSuite = `local b = import 'benchci.libsonnet';
function(profile='llama3-8b-h100') b.suite {
  name: 'gate',
  target: b.target.sim(profile),
  workload: { input_tokens: b.dist.fixed(64), output_tokens: b.dist.fixed(16), arrival: b.arrival.constant() },
  sweep: b.sweep.rates([4, 8], duration='2s', warmup='300ms'),
  slos: [b.slo.rate('error_rate', '<=', 0)],
  cost: b.cost.gpu(usd_per_hour=2),
}
`

// writeGateSuite writes gateSuite into a fresh directory.
func writeGateSuite(t *testing.T) (dir, suitePath string) {
	t.Helper()
	dir = t.TempDir()
	suitePath = filepath.Join(dir, "gate.jsonnet")
	if err := os.WriteFile(suitePath, []byte(gateSuite), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, suitePath
}

func gateDirs(t *testing.T) (dir, suitePath string) {
	t.Helper()
	dir, suitePath = writeGateSuite(t)
	// The baseline: a run on the fast profile, committed.
	code, stdout, stderr := runCLI(t, context.Background(), "run", "--progress=false", "--results", filepath.Join(dir, "base"), "--baselines", filepath.Join(dir, "baselines"), suitePath)
	skipIfStalled(t, code, stdout)
	if code != 0 {
		t.Fatalf("baseline run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, context.Background(), "baseline", "update", "--baselines", filepath.Join(dir, "baselines"), "--commit", "abc123", filepath.Join(dir, "base", "gate.json"))
	if code != 0 || !strings.Contains(stdout, "wrote ") {
		t.Fatalf("baseline update: exit %d\n%s\n%s", code, stdout, stderr)
	}
	return dir, suitePath
}

// virtualGateDirs is gateDirs for tests of the gate's wiring (comments,
// outputs): its baseline is a replay in virtual time, which ci --virtual
// compares with, so the test runs no seconds of load.
func virtualGateDirs(t *testing.T) (dir, suitePath string) {
	t.Helper()
	dir, suitePath = writeGateSuite(t)
	code, stdout, stderr := runCLI(t, context.Background(), "run", "--virtual", "--progress=false", "--results", filepath.Join(dir, "base"), suitePath)
	if code != 0 {
		t.Fatalf("baseline run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	writeVirtualBaseline(t, filepath.Join(dir, "base", "gate.json"), filepath.Join(dir, "baselines", "gate.json"))
	return dir, suitePath
}

// TestGate runs the end-to-end gate: the same server twice passes, a slower
// server fails with exit 1, and the markdown report says why.
func TestGate(t *testing.T) {
	dir, suitePath := gateDirs(t)
	baselines := filepath.Join(dir, "baselines")

	b, err := os.ReadFile(filepath.Join(baselines, "gate.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"schema": "benchci.baseline/v1"`, `"commit": "abc123"`, `"ttft.p99":`, `"histograms":`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("baseline lacks %s", want)
		}
	}
	if strings.Index(string(b), `"summary"`) > strings.Index(string(b), `"histograms"`) {
		t.Error("baseline summary is not above the histograms")
	}

	t.Run("same server passes", func(t *testing.T) {
		summary := filepath.Join(dir, "summary-same.md")
		outputs := filepath.Join(dir, "outputs-same")
		code, stdout, stderr := runCLI(t, context.Background(), "ci", "--progress=false", "--results", filepath.Join(dir, "same"),
			"--baselines", baselines, "--summary", summary, "--report", filepath.Join(dir, "same", "report.md"), "--outputs", outputs, "--comment=false", suitePath)
		skipIfStalled(t, code, stdout)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		if out, _ := os.ReadFile(outputs); string(out) != "verdict=pass\nregressions=0\nreport="+filepath.Join(dir, "same", "report.md")+"\nhtml="+filepath.Join(dir, "same", "report.html")+"\n" {
			t.Errorf("step outputs %q", out)
		}
		md, err := os.ReadFile(summary)
		if err != nil || !strings.Contains(string(md), "## benchci: ✅ 0 regressions") {
			t.Errorf("summary %v:\n%s", err, md)
		}
	})
	t.Run("slower server fails", func(t *testing.T) {
		report := filepath.Join(dir, "slow", "report.md")
		outputs := filepath.Join(dir, "outputs-slow")
		code, stdout, stderr := runCLI(t, context.Background(), "ci", "--progress=false", "--tla-str", "profile=llama3-70b-h100x4",
			"--results", filepath.Join(dir, "slow"), "--baselines", baselines, "--summary", "", "--report", report, "--outputs", outputs, "--comment=false", suitePath)
		if code != 1 {
			t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
		}
		if out, _ := os.ReadFile(outputs); !strings.HasPrefix(string(out), "verdict=fail\nregressions=") || strings.HasPrefix(string(out), "verdict=fail\nregressions=0\n") {
			t.Errorf("step outputs %q, want a failed verdict with its regressions counted", out)
		}
		md, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"❌", "regression", "ttft.p50 @ rate=4", "```mermaid", "sim llama3-8b-h100", "sim llama3-70b-h100x4"} {
			if !strings.Contains(string(md), want) {
				t.Errorf("report lacks %q:\n%s", want, md)
			}
		}
		// The same verdict from compare, as JSON.
		code, stdout, _ = runCLI(t, context.Background(), "compare", "--format", "json", filepath.Join(baselines, "gate.json"), filepath.Join(dir, "slow", "gate.json"))
		var r struct {
			Rows []struct{ Metric, Verdict string }
		}
		if code != 1 || json.Unmarshal([]byte(stdout), &r) != nil || len(r.Rows) == 0 {
			t.Fatalf("compare: exit %d\n%s", code, stdout)
		}
	})
}

// TestCIComments checks the comment path of ci against a fake GitHub, and
// that a failing comment does not change the verdict.
func TestCIComments(t *testing.T) {
	dir, suitePath := virtualGateDirs(t)
	var mu sync.Mutex
	var bodies []string
	forbid := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer tok-123" {
			t.Errorf("authorization %q", r.Header.Get("Authorization"))
		}
		switch {
		case forbid:
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"message":"Resource not accessible by integration"}`)
		case r.Method == http.MethodGet && r.URL.Path == "/repos/o/r/issues/5/comments":
			io.WriteString(w, "[]")
		case r.Method == http.MethodPost && r.URL.Path == "/repos/o/r/issues/5/comments":
			var in struct{ Body string }
			json.NewDecoder(r.Body).Decode(&in)
			bodies = append(bodies, in.Body)
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"id":1,"html_url":"https://github.test/o/r/pull/5#issuecomment-1"}`)
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL)
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	event := filepath.Join(dir, "event.json")
	os.WriteFile(event, []byte(`{"pull_request":{"number":5}}`), 0o644)
	t.Setenv("GITHUB_TOKEN", "tok-123")
	t.Setenv("GITHUB_API_URL", srv.URL)
	t.Setenv("GITHUB_REPOSITORY", "o/r")
	t.Setenv("GITHUB_EVENT_PATH", event)
	t.Setenv("GITHUB_SERVER_URL", "https://github.test")
	t.Setenv("GITHUB_RUN_ID", "77")

	args := []string{"ci", "--virtual", "--progress=false", "--results", filepath.Join(dir, "c"), "--baselines", filepath.Join(dir, "baselines"), "--summary", "",
		"--report", filepath.Join(dir, "c", "r.md"), "--artifact", "benchci-report", suitePath}
	code, stdout, stderr := runCLI(t, context.Background(), args...)
	if code != 0 || !strings.Contains(stdout, "comment: https://github.test/o/r/pull/5#issuecomment-1") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if len(bodies) != 1 || !strings.HasPrefix(bodies[0], "<!-- benchci:benchci -->") {
		t.Errorf("comment bodies %q", bodies)
	}
	// The HTML report sits beside the markdown one, and the comment
	// points to the run's artifacts for it.
	if html, err := os.ReadFile(filepath.Join(dir, "c", "r.html")); err != nil || !bytes.HasPrefix(html, []byte("<!doctype html>")) {
		t.Errorf("html report: %v", err)
	}
	if len(bodies) == 1 && !strings.Contains(bodies[0], "`r.html` in the **benchci-report** artifact of [this run](https://github.test/o/r/actions/runs/77#artifacts)") {
		t.Errorf("the comment does not link the HTML report:\n%s", bodies[0])
	}
	forbid = true
	code, _, stderr = runCLI(t, context.Background(), args...)
	if code != 0 || !strings.Contains(stderr, "warning: could not update the pull-request comment") || !strings.Contains(stderr, "fork") {
		t.Errorf("with a refused comment: exit %d (want the verdict's 0)\n%s", code, stderr)
	}
	if strings.Contains(stdout+stderr, "tok-123") {
		t.Error("the token was printed")
	}
}

func TestPRNumber(t *testing.T) {
	t.Parallel()
	for event, want := range map[string]int{
		`{"pull_request":{"number":12},"number":3}`: 12,
		`{"number":4}`:        4,
		`{"workflow_run":{}}`: 0,
		`not json`:            0,
	} {
		if got := prNumber([]byte(event)); got != want {
			t.Errorf("prNumber(%s) = %d, want %d", event, got, want)
		}
	}
}

// ci says why it did not comment instead of staying silent.
func TestCISaysWhyNoComment(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GITHUB_EVENT_NAME", "pull_request")
	dir := t.TempDir()
	path := writeSuite(t, dir, "nocomment", `
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([5], duration='300ms', warmup='0s'),`)
	_, _, stderr := runCLI(t, context.Background(), "ci", "--results", dir, "--baselines", dir, "--progress=false", "--summary", "",
		"--report", filepath.Join(dir, "report.md"), path)
	if !strings.Contains(stderr, "comment skipped: no GITHUB_TOKEN (a pull request from a fork") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// action.yml calls `benchci ci` with flags: each must be one ci defines,
// or every workflow using the action fails at its first run. (actionlint,
// in .ci/run, checks the workflows' inputs against action.yml.)
func TestActionUsesRealFlags(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	_, call, ok := strings.Cut(string(b), "args=(ci ")
	if !ok {
		t.Fatal("action.yml does not call benchci ci")
	}
	call, _, _ = strings.Cut(call, "$SUITES")
	flags := regexp.MustCompile(`--([a-z][a-z-]*)`).FindAllStringSubmatch(call, -1)
	if len(flags) < 8 {
		t.Fatalf("found %d flags in the call: %q", len(flags), call)
	}
	ci := ciCmd()
	for _, f := range flags {
		if ci.Flags().Lookup(f[1]) == nil {
			t.Errorf("action.yml passes --%s, which benchci ci does not define", f[1])
		}
	}
}

// ci --measured gates results files measured elsewhere (a merged sharded
// run) as ci gates its own runs: the same verdict as compare, the report
// and the HTML written, nothing run.
func TestCIMeasured(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const base, cand = "../../framework/result/testdata/quickstart-v1.json", "testdata/candidate.json"
	want, _, _ := runCLI(t, context.Background(), "compare", base, cand)
	code, stdout, stderr := runCLI(t, context.Background(), "ci", "--measured", "--suite-from-results", "--comment=false", "--summary", "", "--baselines", v1Baselines(t),
		"--report", filepath.Join(dir, "r.md"), cand)
	if code != want || code == exitUsage {
		t.Fatalf("exit %d, compare's %d\n%s\n%s", code, want, stdout, stderr)
	}
	md, err := os.ReadFile(filepath.Join(dir, "r.md"))
	if err != nil || !strings.Contains(string(md), "quickstart") {
		t.Errorf("report: %v\n%s", err, md)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.html")); err != nil {
		t.Error(err)
	}
	if strings.Contains(stdout+stderr, "progress") {
		t.Errorf("it ran something:\n%s%s", stdout, stderr)
	}
}

func TestParseEventBase(t *testing.T) {
	t.Parallel()
	ev := parseEvent([]byte(`{"pull_request":{"number":7,"base":{"sha":"0123abcd"}}}`))
	if ev.pr != 7 || ev.baseSHA != "0123abcd" {
		t.Errorf("parseEvent = %+v", ev)
	}
}

// v1Baselines is a baselines directory holding the quickstart baseline an
// earlier version wrote (framework/result/testdata/quickstart-v1.json),
// which the committed candidate fixtures were measured against.
func v1Baselines(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../framework/result/testdata/quickstart-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "quickstart.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
