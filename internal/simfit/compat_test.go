package simfit

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/benchci/benchci/internal/sim"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Profile files fitted by earlier builds replay as they did when they were
// fitted: a team's twin must not move because benchci did. The files in
// testdata/fitted-before were written by `benchci sim fit` at 57c3f4a^ (the
// roofline1 files, the last build before versions), at 57c3f4a (the first
// build of roofline version 2; constant-tiny.json too) and at 6c58785 (the
// TensorRT-LLM 8B file, the last build before that engine's request path)
// and at 4393055 (the "named" file, which names the 5 ms and its whole
// prefills under version 2), one per engine, card family and
// tensor-parallel degree, and L40S at TP 2 and 4 fitted at 4caa57d (the
// "pcie-ring" files, under the ring all-reduce) and at f36dd45 (the
// "pcie-nccl" ones, under NCCL's, both version 2); the
// golden figures are what those builds replayed (checked with their own
// Simulate when the golden was written). A change to the cost model that
// moves them must come with a new roofline version, under which only new
// files are priced; -update is for adding a file, not for that. Figures
// are to the microsecond, so that a platform that fuses multiply-adds
// (arm64) reads them as amd64 does.
func TestOldProfileFilesReplayAsFitted(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "fitted-before", "*.json"))
	must(t, err)
	if len(files) < 16 {
		t.Fatalf("%d files in testdata/fitted-before", len(files))
	}
	var got bytes.Buffer
	for _, path := range files {
		p, err := ReadProfile(path)
		if err != nil {
			t.Fatalf("%s no longer reads: %v", path, err)
		}
		fmt.Fprintf(&got, "%s: request overhead %v, whole prefills %v", filepath.Base(path), p.RequestOverhead, p.NoChunkedPrefill)
		for _, c := range []int{1, 12} {
			res := sim.Simulate(p, sim.Run{Concurrency: c, Warmup: 2 * c, Requests: 8 * c, Seed: 1, Turnaround: minTurnaround,
				Lengths: func(*rand.Rand) (int, int) { return 1505, 120 }})
			var ttft, tpot []time.Duration
			for _, s := range res.Samples {
				ttft, tpot = append(ttft, s.TTFT), append(tpot, s.TPOT())
			}
			fmt.Fprintf(&got, "; %d clients: TTFT %v, TPOT %v", c, sim.Quantile(ttft, 0.5).Round(time.Microsecond), sim.Quantile(tpot, 0.5).Round(time.Microsecond))
		}
		got.WriteByte('\n')
	}
	golden := filepath.Join("testdata", "fitted-before", "replayed.golden")
	if *update {
		must(t, os.WriteFile(golden, got.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	must(t, err)
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("profile files fitted by earlier builds replay differently now:\n got:\n%s\nwant:\n%s", got.Bytes(), want)
	}
}
