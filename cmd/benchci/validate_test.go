package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// validate applies a run's bounds to a suite and its data files, each
// problem with its file and line (issue 26: every input is hostile).
func TestValidateRefusesHostileInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("span.jsonl", "{\"timestamp\": 0, \"input_tokens\": 10, \"output_tokens\": 5}\n{\"timestamp\": 1e300, \"input_tokens\": 10, \"output_tokens\": 5}\n")
	write("order.jsonl", "{\"timestamp\": 2}\n{\"timestamp\": 1}\n")
	write("long.jsonl", strings.Repeat("{\"timestamp\": 0, \"input_length\": 102400000, \"output_length\": 10}\n", 5))
	imgs := filepath.Join(dir, "imgs")
	if err := os.Mkdir(imgs, 0o755); err != nil {
		t.Fatal(err)
	}
	// A valid PNG's head, made 300 MB long without writing it (sparse).
	png := filepath.Join(imgs, "big.png")
	write("imgs/big.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde")
	if err := os.Truncate(png, 300<<20); err != nil {
		t.Fatal(err)
	}
	const lengths = "input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5)"
	const sweep = "\n  sweep: b.sweep.rates([5], duration='1s', warmup='0s'),"
	for _, tc := range []struct {
		name, body, want string
	}{
		{"f8", "  target: b.target.sim('tiny'), api: 'completions',\n  workload: { " + lengths + ", arrival: b.arrival.trace('span.jsonl') }," + sweep,
			"f8.jsonnet: load trace " + dir + "/span.jsonl:2: timestamp 1e+300s is 1e+300 s after the first request's, more than the 168h0m0s a trace may span"},
		{"order", "  target: b.target.sim('tiny'), api: 'completions',\n  workload: { " + lengths + ", arrival: b.arrival.trace('order.jsonl') }," + sweep,
			"/order.jsonl:2: timestamp 1s is before the 2s of the request above it"},
		{"f9", "  target: b.target.sim('tiny'), api: 'completions',\n  workload: { " + lengths + ", arrival: b.arrival.trace('long.jsonl') }," + sweep,
			"/long.jsonl:5: 102400000 tokens is beyond any model's context (at most 4000000)"},
		{"f11", "  target: b.target.sim('tiny'),\n  workload: { " + lengths + ", images: { dir: 'imgs' } }," + sweep,
			"f11.jsonnet:5:89: workload.images.dir: " + png + " is 300 MiB, more than the 16 MiB an image may be"},
		{"f12", "  target: b.target.sim('tiny'),\n  workload: { " + lengths + ", images: { count: b.dist.fixed(1000000), sizes: [{ width: 64, height: 48 }] } }," + sweep,
			"f12.jsonnet:5:89: workload.images.count.value: 1e+06 is more than the 32 a request may have"},
		{"f13", "  target: b.target.sim('tiny'),\n  workload: { " + lengths + ", structured: { kind: 'tool_call', name: 'f', schema: { type: 'object', properties: { s: { type: 'string', minLength: 2e9 } } } } }," + sweep,
			"f13.jsonnet:5:123: workload.structured.schema: schema at /properties/s: minLength 2e+09 is more than the 262144 an answer may have"},
		{"m7", "  target: b.target.sim('tiny'),\n  workload: { " + lengths + ", models: [{ name: 'm' + i, weight: 1 } for i in std.range(1, 10000)] }," + sweep,
			"m7.jsonnet:5:79: workload.models: 10000 models, more than the 256 a mix may have"},
		{"trials", "  target: b.target.sim('tiny'),\n  trials: 1e9,\n  workload: { " + lengths + " }," + sweep,
			"trials.jsonnet:5:3: trials: 1000000000 is more than the 100 trials a point may have"},
		{"port", "  variants: { a: { target: b.target.launch(['serve'], url='http://127.0.0.1:8000') }, c: { target: b.target.launch(['serve'], url='http://localhost:8000') } },\n  order: 'interleaved',\n  workload: { " + lengths + " }," + sweep,
			"port.jsonnet:4:92: variants.c.target: interleaved variants keep their servers running side by side, and a launches one at http://localhost:8000 too"},
	} {
		path := writeSuite(t, dir, tc.name, tc.body)
		code, stdout, stderr := runCLI(t, context.Background(), "validate", path)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, want 2 and %q\n%s%s", tc.name, code, tc.want, stdout, stderr)
		}
	}
}

// validate knows the simulator's chat template, so it warns, with the
// share of requests, where the prompt lengths asked for reach below the
// shortest chat prompt it takes; completions have no template, and a
// URL's template is the model's, measured by the run's calibration.
func TestValidateWarnsOfPromptsBelowTheTemplate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const sweep = "\n  sweep: b.sweep.rates([2], duration='10s', warmup='0s'),"
	for _, tc := range []struct {
		name, body, want string
	}{
		// tiny's template is 5 tokens a message and 3 for the assistant
		// header: one word makes 9; uniform 2-20 draws 7 of 19 values
		// below it.
		{"below", "  target: b.target.sim('tiny'),\n  workload: { input_tokens: b.dist.uniform(2, 20), output_tokens: b.dist.fixed(5) }," + sweep,
			"% of requests ask for fewer prompt tokens than the shortest chat prompt the simulator takes (9: one word in its 5-token chat template and the assistant header)"},
		{"above", "  target: b.target.sim('tiny'),\n  workload: { input_tokens: b.dist.uniform(9, 20), output_tokens: b.dist.fixed(5) }," + sweep, ""},
		{"completions", "  target: b.target.sim('tiny'), api: 'completions',\n  workload: { input_tokens: b.dist.uniform(2, 20), output_tokens: b.dist.fixed(5) }," + sweep, ""},
		{"url", "  target: b.target.url('http://127.0.0.1:9', model='m'),\n  workload: { input_tokens: b.dist.uniform(2, 20), output_tokens: b.dist.fixed(5) }," + sweep, ""},
	} {
		path := writeSuite(t, dir, tc.name, tc.body)
		code, stdout, stderr := runCLI(t, context.Background(), "validate", path)
		warned := strings.Contains(stdout, "shortest chat prompt")
		if code != 0 || warned != (tc.want != "") || !strings.Contains(stdout, tc.want) {
			t.Errorf("%s: exit %d, stdout:\n%s%s\nwant a warning %v (%q)", tc.name, code, stdout, stderr, tc.want != "", tc.want)
		}
		if tc.want != "" {
			// Judged over 10,000 draws: within 2 points of 7/19.
			var share float64
			for _, line := range strings.Split(stdout, "\n") {
				if strings.Contains(line, "shortest chat prompt") {
					fmt.Sscanf(strings.TrimSpace(line), "warning: %f%%", &share)
				}
			}
			if share < 100*7/19.0-2 || share > 100*7/19.0+2 {
				t.Errorf("%s: %v%% of requests below, want about 7/19 = 36.8%%", tc.name, share)
			}
		}
	}
}

// A suite's evaluation stops on SIGTERM or Ctrl-C (the command's context,
// issue 40): validate returns at once, the suites after it unread.
func TestValidateStopsOnSignal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	loop := filepath.Join(dir, "loop.jsonnet")
	// 2^60 shallow calls that allocate little: only the clock or the
	// context ends them.
	if err := os.WriteFile(loop, []byte("local f(n) = if n == 0 then 0 else std.min(f(n - 1), f(n - 1));\n{ description: f(60) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	code, _, stderr := runCLI(t, ctx, "validate", loop, loop)
	// A hang guard, not a timing: a loaded machine must not fail it.
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("cancelled after 100ms, validate returned after %v", took)
	}
	if code != exitUsage || !strings.Contains(stderr, "context canceled") || strings.Count(stderr, "loop.jsonnet") > 1 {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}
