package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
