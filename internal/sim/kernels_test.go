package sim

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The roofline's terms hold against kernels timed on a real GPU, and the
// docs/simulator.md shows what `benchci sim check --markdown` prints.
func TestKernelChecksWithinTolerance(t *testing.T) {
	t.Parallel()
	ks, err := KernelChecks()
	if err != nil {
		t.Fatal(err)
	}
	gated := map[string]int{}
	for _, k := range ks {
		if k.Gated {
			gated[k.Model+", "+k.Weights]++
		}
		if !k.Within() {
			t.Errorf("%s on %s, %s: measured %.2f %s, roofline %.2f (%+.0f%%), beyond ±%.0f%%",
				k.Model, k.GPU, k.What, k.Measured, k.Unit, k.Modelled, 100*k.Error(), 100*KernelTolerance)
		}
	}
	// Each BF16 card with its decode batches, the KV read and the long
	// prefills; of the FP8 runs only the KV read (attention stays BF16).
	want := map[string]int{"llama-3-8b, bf16": 9, "qwen2.5-7b, bf16": 9, "llama-3-8b, fp8": 1, "llama-3-70b, fp8": 1}
	if !reflect.DeepEqual(gated, want) {
		t.Errorf("gated figures per run: %v, want %v", gated, want)
	}
	readme, err := os.ReadFile("../../docs/simulator.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), KernelMarkdown(ks)) {
		t.Errorf("docs/simulator.md's table of measured kernels is stale: regenerate it with `go run ./cmd/benchci sim check --markdown`")
	}
}

var update = flag.Bool("update", false, "rewrite measured/*.card.json from the built-in cards")

// The card files steps.py reads are the built-in cards, so what was timed
// is what the simulator models.
func TestMeasuredCardsMatchBuiltins(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("measured/*.card.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no card files: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var got ModelCard
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		want, ok := LookupModel(strings.TrimSuffix(filepath.Base(f), ".card.json"))
		if !ok {
			t.Fatalf("%s names no built-in card", f)
		}
		if *update {
			b, err := json.MarshalIndent(want, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s differs from the built-in card %q: go test ./internal/sim -run MeasuredCards -update, then time it again", f, want.Name)
		}
	}
}
