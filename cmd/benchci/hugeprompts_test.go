package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkHugePrompts runs issue 39's hostile trace as a user would: 400
// prompts of 4M tokens at 100 req/s for a 3 s point, against the embedded
// simulator (which refuses them, as any 8k-context server would), in a
// process of its own. It reports the run's wall time and the process's
// peak resident memory, and fails if the point was measured again (a
// rerun builds the same prompts) or is not inconclusive for the client's
// shortfall:
//
//	go test ./cmd/benchci -run '^$' -bench HugePrompts -benchtime 1x
func BenchmarkHugePrompts(b *testing.B) {
	dir := b.TempDir()
	var trace strings.Builder
	for i := range 400 {
		fmt.Fprintf(&trace, "{\"timestamp\": %.3f, \"input_tokens\": 4000000, \"output_tokens\": 8}\n", float64(i)/100)
	}
	if err := os.WriteFile(filepath.Join(dir, "huge.jsonl"), []byte(trace.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	suitePath := writeSuite(b, dir, "huge", `  target: b.target.sim('llama3-8b-h100'),
  api: 'completions',
  workload: { input_tokens: b.dist.fixed(256), output_tokens: b.dist.fixed(8), arrival: b.arrival.trace('huge.jsonl') },
  sweep: b.sweep.rates([100], duration='3s', warmup='0s'),`)
	var wall time.Duration
	var peak int64
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "run", "--progress=false", "--results", filepath.Join(dir, "results"), suitePath)
		cmd.Env = append(os.Environ(), "BENCHCI_TEST_CLI=1")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		t0 := time.Now()
		err := cmd.Run()
		wall = time.Since(t0)
		if ee := (*exec.ExitError)(nil); err != nil && !errors.As(err, &ee) {
			b.Fatal(err)
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = max(peak, ru.Maxrss) // KiB on Linux
		}
		checkHugeResult(b, filepath.Join(dir, "results", "huge.json"), out.String())
	}
	b.ReportMetric(wall.Seconds(), "run-s")
	b.ReportMetric(float64(peak)/1024, "peak-rss-MiB")
}

// checkHugeResult holds the point to what the trace calls for: one
// attempt, invalid for the prompts the client could not build in time.
func checkHugeResult(b *testing.B, path, out string) {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	var f struct {
		Points []struct {
			Validity struct {
				Invalid []string `json:"invalid"`
				Reruns  []string `json:"reruns"`
			} `json:"validity"`
		} `json:"points"`
	}
	if err := json.Unmarshal(data, &f); err != nil || len(f.Points) != 1 {
		b.Fatalf("results: %v, %d points\n%s", err, len(f.Points), out)
	}
	v := f.Points[0].Validity
	why := strings.Join(v.Invalid, "; ")
	if len(v.Reruns) > 0 || !strings.Contains(why, "not measured again: a request took") {
		b.Errorf("reruns %q, invalid %q: want one attempt, not measured again", v.Reruns, why)
	}
}
