package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/requestlog"
	"github.com/benchci/benchci/internal/sim"
	"github.com/benchci/benchci/internal/testnet"
)

func writeSuite(t testing.TB, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name+".jsonnet")
	src := "local b = import 'benchci.libsonnet';\nb.suite {\n  name: '" + name + "',\n" + body + "\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runCLI(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(ctx, &stdout, &stderr, args)
	return code, stdout.String(), stderr.String()
}

// TestRunMatchesSimulator runs a suite end to end against the simulator and
// checks that what benchci measured is what the simulator was configured to
// produce. With one request in flight (closed loop, concurrency 1) the tiny
// profile's TTFT is one prefill step and its ITL one decode step:
//
//	TTFT = StepBase + PrefillPerToken x (input + chat template tokens)
//	ITL  = StepBase + DecodePerSeq
//
// The medians must not be below the model (0.2 ms of slack for the two
// clocks). Above it lies real time the model leaves out (two goroutine
// wake-ups inside the simulator, the client's own ~0.1 ms, more on a busy
// machine), so the upper bound is loose and only catches a wrong
// definition: see check below.
func TestRunMatchesSimulator(t *testing.T) {
	dir := t.TempDir()
	path := writeSuite(t, dir, "e2e", `
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(100), output_tokens: b.dist.fixed(20) },
  sweep: b.sweep.concurrency([1], duration='2s', warmup='300ms'),
  slos: [b.slo.p50('itl', '<', '100ms'), b.slo.rate('error_rate', '<=', 0)],
  cost: b.cost.gpu(usd_per_hour=1),`)
	code, stdout, stderr := runCLI(t, context.Background(), "run", "--results", dir, "--progress=false", path)
	skipIfStalled(t, code, stdout)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	f, err := result.Read(filepath.Join(dir, "e2e.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Points) != 1 || f.Incomplete || f.Target.Kind != "sim" || f.Suite.Hash == "" {
		t.Fatalf("results: %d points, incomplete %v, target %+v", len(f.Points), f.Incomplete, f.Target)
	}
	// The results say where chunk times came from; on Linux, the kernel.
	if runtime.GOOS == "linux" && !strings.HasPrefix(f.Tool.Timing, "kernel receive stamps") {
		t.Errorf("timing %q, want kernel receive stamps", f.Tool.Timing)
	}
	p := f.Points[0]
	prof, _ := sim.Lookup("tiny")
	// Prompt calibration sizes the prompt so that the server, chat
	// template included, counts exactly the 100 tokens asked for.
	promptTokens := 100
	// The medians cannot be below what the simulator is configured to take
	// (0.2 ms of slack for the two clocks); above, the bound is loose on
	// purpose so a loaded machine cannot fail it: it still catches a wrong
	// definition (TTFT taken at the role-only chunk falls below, E2E taken
	// for TTFT lands far above). How close benchci gets is measured by
	// `benchci selftest` and the ClientOverhead benchmark, not asserted here.
	check := func(what string, got float64, want time.Duration) {
		t.Helper()
		w := float64(want) / float64(time.Millisecond)
		if got < w-0.2 || got > 2*w+2 {
			t.Errorf("%s p50 = %.3f ms, simulator configured %.3f ms", what, got, w)
		} else {
			t.Logf("%s p50 = %.3f ms, configured %.3f ms", what, got, w)
		}
	}
	check("TTFT", p.Latency[metric.TTFT].P50, prof.IdleTTFT(promptTokens))
	check("ITL", p.Latency[metric.ITL].P50, prof.IdleITL())
	// TPOT spans 19 decode steps over 19 tokens, plus the final usage/[DONE] write.
	check("TPOT", p.Latency[metric.TPOT].P50, prof.IdleITL())
	if p.Tokens.Source["usage"] != p.Requests.Completed || p.Tokens.OutputMismatch != 0 {
		t.Errorf("tokens %+v: want all counts from usage and matching the request", p.Tokens)
	}
	if p.Tokens.Prompt.Min != float64(promptTokens) || p.Tokens.Prompt.Max != float64(promptTokens) || p.Tokens.PromptMismatch != 0 {
		t.Errorf("prompt tokens %+v (want all %d), mismatches %d", p.Tokens.Prompt, promptTokens, p.Tokens.PromptMismatch)
	}
	if c := f.Calibration; c == nil || c.Overhead != float64(prof.ChatTemplateTokens+3) || c.TokensPerWord != 1 {
		t.Errorf("calibration %+v, want the template's %d tokens and 1 token per word", c, prof.ChatTemplateTokens+3)
	}
	if p.Requests.Failed != 0 || p.Requests.Warmup == 0 || p.Cost == nil || p.Cost.PerMOutput <= 0 {
		t.Errorf("requests %+v cost %+v", p.Requests, p.Cost)
	}
	if len(f.SLOs) != 2 || !f.SLOs[0].Pass || !f.SLOs[1].Pass {
		t.Errorf("SLOs %+v", f.SLOs)
	}
	for _, want := range []string{"concurrency=1", "PASS  itl p50 < 100ms", "results: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

func TestRunSLOFailureExitsOne(t *testing.T) {
	dir := t.TempDir()
	path := writeSuite(t, dir, "slofail", `
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([20], duration='500ms', warmup='0s'),
  slos: [b.slo.p99('ttft', '<', '1us')],`)
	code, stdout, stderr := runCLI(t, context.Background(), "run", "--results", dir, "--progress=false", path)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "FAIL  ttft p99 < 1us @") && !strings.Contains(stdout, "FAIL  ttft p99 < 1us") {
		t.Errorf("stdout lacks the failed SLO:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "slofail.json")); err != nil {
		t.Errorf("results not written: %v", err)
	}
}

func TestRunBadSuiteExitsTwoBeforeRunning(t *testing.T) {
	dir := t.TempDir()
	good := writeSuite(t, dir, "good", `
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([1], duration='10s'),`)
	bad := writeSuite(t, dir, "bad", `
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([-1]),`)
	start := time.Now()
	code, _, stderr := runCLI(t, context.Background(), "run", "--results", dir, good, bad)
	if code != 2 || !strings.Contains(stderr, "bad.jsonnet:7:3: sweep.rates[0]") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	if time.Since(start) > 5*time.Second {
		t.Error("the good suite ran before the bad one was rejected")
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runCLI(t, context.Background(), "validate", "../../suites/quickstart.jsonnet")
	if code != 0 || !strings.Contains(stdout, "ok  ../../suites/quickstart.jsonnet") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	dir := t.TempDir()
	bad := writeSuite(t, dir, "v", `  target: 3,`)
	code, _, stderr = runCLI(t, context.Background(), "validate", bad, "--ext-str", "noequals")
	if code != 2 || !strings.Contains(stderr, "parsing --ext-str") {
		t.Errorf("bad flag: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, context.Background(), "validate", bad)
	if code != 2 || !strings.Contains(stderr, "v.jsonnet:4:3: target: want an object, got number 3") {
		t.Errorf("bad suite: exit %d\n%s", code, stderr)
	}
}

// validate reads a suite's data files as a run would: every bad trace line
// is reported with its file and line before anything runs.
func TestValidateReadsDataFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trace := filepath.Join(dir, "agent.jsonl")
	if err := os.WriteFile(trace, []byte("{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5, \"hash_ids\": [0, 1]}\n"+
		"{\"timestamp\": 5, \"input_length\": 10, \"output_length\": 5, \"hash_ids\": [0, -2]}\n"+
		"{\"timestamp\": 6, \"input_length\": 10, \"output_length\": 5, \"hash_idz\": [0]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "agent.jsonnet")
	src := `local b = import 'benchci.libsonnet';
b.suite {
  name: 'agent',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5), arrival: b.arrival.trace('agent.jsonl', block_tokens=16) },
  sweep: b.sweep.rates([1], duration='2s'),
}`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, context.Background(), "validate", path)
	// Every bad line, each with the file's path.
	if code != 2 || !strings.Contains(stderr, "agent.jsonl:2: hash_ids: negative block id -2") ||
		!strings.Contains(stderr, "agent.jsonl:3: json: unknown field \"hash_idz\"") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestInterruptWritesPartialResults stops a long run part-way, as Ctrl-C
// does, and checks that what was measured is written and marked incomplete.
func TestInterruptWritesPartialResults(t *testing.T) {
	dir := t.TempDir()
	path := writeSuite(t, dir, "interrupted", `
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(50) },
  sweep: b.sweep.rates([5, 10], duration='60s', warmup='0s'),`)
	// 4 s in, well inside the first point's 60 s, and past the loading,
	// preflight and calibration that a loaded machine can stretch beyond
	// a second or two.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(4*time.Second, cancel)
	start := time.Now()
	code, stdout, stderr := runCLI(t, ctx, "run", "--results", dir, "--progress=false", path)
	if code != 2 {
		t.Errorf("exit %d, want 2\n%s\n%s", code, stdout, stderr)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("took %v to stop", took)
	}
	f, err := result.Read(filepath.Join(dir, "interrupted.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !f.Incomplete || len(f.Points) != 1 || !f.Points[0].Incomplete || f.Points[0].Requests.Sent == 0 {
		t.Errorf("incomplete %v, points %d: %+v", f.Incomplete, len(f.Points), f.Points)
	}
	if !strings.Contains(stdout, "INCOMPLETE") {
		t.Errorf("table does not say incomplete:\n%s", stdout)
	}
}

func TestSimCommandRejectsUnknownProfile(t *testing.T) {
	t.Parallel()
	code, _, stderr := runCLI(t, context.Background(), "sim", "--profile", "gpt-9")
	if code != 2 || !strings.Contains(stderr, "unknown simulator profile \"gpt-9\"") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}

// TestOverallTimeout: --timeout ends a run like Ctrl-C, results kept.
func TestOverallTimeout(t *testing.T) {
	dir := t.TempDir()
	path := writeSuite(t, dir, "deadline", `
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(50) },
  sweep: b.sweep.rates([5], duration='60s', warmup='0s'),`)
	start := time.Now()
	// 4 s: past the setup a loaded machine stretches, inside the point.
	code, _, stderr := runCLI(t, context.Background(), "run", "--timeout", "4s", "--results", dir, "--progress=false", path)
	if code != 2 || !strings.Contains(stderr, "--timeout 4s reached") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("took %v", took)
	}
	f, err := result.Read(filepath.Join(dir, "deadline.json"))
	if err != nil || !f.Incomplete || len(f.Points) != 1 {
		t.Errorf("results %v: %+v", err, f)
	}
}

// A results directory that cannot be written fails the run before anything
// is measured (here a file stands where the directory should be; tests run
// as root, for whom permissions do not stop a write).
func TestRunUnwritableResultsFailsFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeSuite(t, dir, "probe", `
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([1], duration='2s'),`)
	blocked := filepath.Join(dir, "results")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, context.Background(), "run", "--results", blocked, "--progress=false", path)
	if code != 2 || !strings.Contains(stderr, "results directory") || stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// A server's words reach the log inert: an error body carrying GitHub
// workflow commands on lines of their own is printed on one line, with
// the commands broken.
func TestServerTextCannotCommandTheWorkflow(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "boom\n::error::pwned\n::add-mask::secret\n")
	}))
	defer srv.Close()
	dir := t.TempDir()
	path := writeSuite(t, dir, "hostile", fmt.Sprintf(`
  target: b.target.url('%s', model='m'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([1], duration='1s'),`, srv.URL))
	code, stdout, stderr := runCLI(t, context.Background(), "run", "--results", dir, "--progress=false", path)
	if code != 2 || !strings.Contains(stderr, "pwned") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, line := range strings.Split(stdout+stderr, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "::") || strings.Contains(line, "::error::") {
			t.Errorf("a workflow command got through: %q", line)
		}
	}
}

// Secrets that servers echo back are masked everywhere benchci writes: a
// key quoted in a 401 body, a launched server printing its environment.
func TestSecretsNeverReachOutputs(t *testing.T) {
	const key, token = "sk-test-secret-7d1f9a", "hf_launch-secret-42b7c1"
	t.Setenv("BENCHCI_TEST_API_KEY", key)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":"invalid api key %s"}`, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	}))
	defer srv.Close()
	dir := t.TempDir()
	echo := writeSuite(t, dir, "echo", fmt.Sprintf(`
  target: b.target.url('%s', model='m', api_key_env='BENCHCI_TEST_API_KEY'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([1], duration='1s'),`, srv.URL))
	printer := writeSuite(t, dir, "printer", fmt.Sprintf(`
  target: b.target.launch(['sh', '-c', 'env; exit 1'], url='http://%s', env={ HF_TOKEN: '%s' }, start_timeout='10s'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([1], duration='1s'),`, testnet.Addr(t), token))
	for _, path := range []string{echo, printer} {
		code, stdout, stderr := runCLI(t, context.Background(), "run", "--results", dir, "--progress=false", path)
		if code != 2 {
			t.Errorf("%s: exit %d", path, code)
		}
		outputs := map[string]string{"stdout": stdout, "stderr": stderr}
		for _, f := range []string{"echo.json", "printer.json", "printer.server.log"} {
			b, _ := os.ReadFile(filepath.Join(dir, f))
			outputs[f] = string(b)
		}
		for where, text := range outputs {
			if strings.Contains(text, key) || strings.Contains(text, token) {
				t.Errorf("%s: a secret reached %s:\n%s", filepath.Base(path), where, text)
			}
		}
		if !strings.Contains(stderr, "[REDACTED]") {
			t.Errorf("%s: stderr shows no masked secret:\n%s", filepath.Base(path), stderr)
		}
	}
}

// A throughput sweep sends every request at once (vLLM's rate inf) and
// measures until the last ends: one point, labelled rate=inf, with all
// its requests and a results file JSON can hold (no infinite rate).
func TestRunThroughputSweep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeSuite(t, dir, "offline", `
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(50), output_tokens: b.dist.fixed(8) },
  sweep: b.sweep.throughput(requests=30, max_concurrency=10),`)
	code, stdout, stderr := runCLI(t, context.Background(), "run", "--results", dir, "--progress=false", path)
	// A machine that stalled through every rerun makes the point
	// inconclusive (exit 3): its results are written all the same.
	if code != 0 && code != exitInconclusive {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	f, err := result.Read(filepath.Join(dir, "offline.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Points) != 1 {
		t.Fatalf("%d points, want 1", len(f.Points))
	}
	p := f.Points[0]
	if code == exitInconclusive && p.Valid() {
		t.Fatalf("exit 3 with a valid point\n%s", stdout)
	}
	if p.Label != "rate=inf" || p.Requests.Sent != 30 || p.Requests.Completed != 30 || p.Throughput.Requests <= 0 || p.Schedule.ClientSaturated && p.Valid() {
		t.Errorf("point %s: requests %+v, %.2f req/s, schedule %+v", p.Label, p.Requests, p.Throughput.Requests, p.Schedule)
	}
}

// --requests writes one line per request sent, each naming its point,
// and the lines add up to what the results file counted.
func TestRunWritesRequests(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeSuite(t, dir, "perreq", `
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(20), output_tokens: b.dist.fixed(6), cancel: b.cancel(0.5, b.dist.fixed(2)) },
  sweep: b.sweep.rates([20, 40], duration='500ms', warmup='200ms'),`)
	code, stdout, stderr := runCLI(t, context.Background(), "run", "--results", dir, "--progress=false", "--requests", "--request-gaps", path)
	// A machine that stalled through every rerun of a point makes the run
	// inconclusive (exit 3); its results and its log are written all the
	// same, and are what this test reads.
	if code != 0 && code != exitInconclusive {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	f, err := result.Read(filepath.Join(dir, "perreq.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	kept := map[string]int{} // the attempt each point's figures are from
	abandoned := 0
	for _, p := range f.Points {
		if p.Validity != nil {
			kept[p.Label] = len(p.Validity.Reruns)
		}
		abandoned += p.Requests.Abandoned
		if p.Requests.ErrorRate != 0 {
			t.Errorf("%s: error rate %v; abandoned streams are not errors", p.Label, p.Requests.ErrorRate)
		}
		want[p.Label] += p.Requests.Sent + p.Requests.Warmup + p.Requests.Canceled + p.Requests.ClientLimited + p.Requests.Abandoned
	}
	b, err := os.ReadFile(filepath.Join(dir, "perreq.requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r requestlog.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if r.Rerun < kept[r.Point] {
			continue // an attempt discarded on a busy machine: not in the figures
		}
		got[r.Point]++
		if r.Error == "" && (r.OutputTokens != 6 || len(r.GapsMs) != r.Chunks-1) {
			t.Errorf("record %+v: want 6 tokens and a gap between each chunk", r)
		}
		// The user stops at the first chunk that reaches 2 tokens: on a
		// busy machine the server may have put two tokens in one chunk.
		if r.Error == "abandoned" && (r.OutputTokens < 2 || r.OutputTokens >= 6) {
			t.Errorf("record %+v: abandoned at the chunk that reached 2 tokens, before all 6", r)
		}
	}
	if abandoned == 0 {
		t.Error("half the users abandon, yet no stream was abandoned")
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("lines per point %v, results counted %v", got, want)
	}
	if !strings.Contains(stdout, "requests: "+filepath.Join(dir, "perreq.requests.jsonl")) {
		t.Errorf("stdout does not name the requests file:\n%s", stdout)
	}
}

// bands proposes a tolerance field that the suite it came from accepts.
func TestBandsProposesValidTolerances(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	body := `
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(20), output_tokens: b.dist.fixed(6) },
  sweep: b.sweep.rates([20], duration='400ms', warmup='100ms'),
  cost: b.cost.gpu(usd_per_hour=1),`
	path := writeSuite(t, dir, "noise", body)
	code, stdout, stderr := runCLI(t, context.Background(), "bands", "--runs", "3", "--progress=false", path)
	if code == exitInconclusive {
		// The machine stalled through a point's reruns: bands says so
		// rather than propose bands without that point's noise.
		if !strings.Contains(stderr, "did not measure the server") {
			t.Errorf("exit 3 without the evidence:\n%s", stderr)
		}
		t.Skipf("this machine was too busy to measure the server (exit 3):\n%s", stderr)
	}
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"// benchci bands: 3 runs of noise", "tolerance: {", "'ttft.p99': '", "'cost': '"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	patched := writeSuite(t, dir, "patched", body+"\n"+stdout)
	if code, out, errOut := runCLI(t, context.Background(), "validate", patched); code != 0 {
		t.Errorf("the proposed field does not validate: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, _ := runCLI(t, context.Background(), "bands", "--runs", "1", path); code != exitUsage {
		t.Errorf("--runs 1: exit %d, want %d", code, exitUsage)
	}
}

// A launch target whose engine is not installed here: validate warns (the
// suite is valid; the runner may have it), and a run that measured nothing
// leaves the last run's results as they were instead of overwriting them
// with an empty file.
func TestMissingEngineLosesNothing(t *testing.T) {
	dir := t.TempDir()
	path := writeSuite(t, dir, "engine", fmt.Sprintf(`
  target: b.target.launch(['benchci-no-such-engine-7f3a', 'serve'], url='http://%s', start_timeout='5s'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([1], duration='1s'),`, testnet.Addr(t)))
	code, stdout, _ := runCLI(t, context.Background(), "validate", path)
	if code != 0 || !strings.Contains(stdout, "warning: the launch target runs benchci-no-such-engine-7f3a, which is not on this machine's PATH") {
		t.Errorf("validate: exit %d\n%s", code, stdout)
	}
	earlier := []byte(`{"an earlier run's results": true}`)
	out := filepath.Join(dir, "engine.json")
	if err := os.WriteFile(out, earlier, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, context.Background(), "run", "--results", dir, "--progress=false", path)
	if code != exitUsage || !strings.Contains(stderr, "nothing was measured; "+out+" is left as the last run wrote it") {
		t.Errorf("run: exit %d\n%s", code, stderr)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, earlier) {
		t.Errorf("the earlier results were overwritten: %s", got)
	}
}

// skipIfStalled skips a test whose run exited 3 because this machine
// stalled through every rerun of a point (a loaded CI machine's doing):
// what the test asserts needs a run that measured the server. A point
// invalid for benchci's own shortfalls (its limits, bodies not built, a
// warm-up that outlasted its window) is not skipped: those are bugs here.
func skipIfStalled(t *testing.T, code int, stdout string) {
	t.Helper()
	if code != exitInconclusive || !strings.Contains(stdout, "INVALID, did not measure the server") {
		return
	}
	for _, own := range []string{"own limits", "descriptor limit", "were not built", "warm-up requests were still running"} {
		if strings.Contains(stdout, own) {
			return
		}
	}
	for _, busy := range []string{"the machine stalled", "send lag P99", "req/s scheduled", "(steal)", "first tokens were read late", "got no CPU", "was stopped for"} {
		if strings.Contains(stdout, busy) {
			t.Skipf("this machine stalled through every rerun of a point (exit 3):\n%s", stdout)
		}
	}
}
