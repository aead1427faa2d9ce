package suitefile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchci/benchci/internal/sim"
	"github.com/benchci/benchci/internal/simfit"
)

// A fitted profile file is named relative to the suite, as data files
// are, whichever directory benchci runs in: as a sim target's profile
// and as the efficiencies of a variant's what-if on other cards.
func TestProfileFilesResolveFromTheSuitesDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := `local b = import 'benchci.libsonnet';
b.suite {
  name: 'twin',
  target: b.target.sim('file:fit/fitted.json', max_num_seqs=64),
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(8) },
  sweep: b.sweep.rates([1]),
  variants: {
    fitted: {},
    h200: { target: b.target.simSpec('llama-3-8b', 'h200', tp=2, weights='fp8', fitted='fit/fitted.json') },
  },
}
`
	path := filepath.Join(dir, "s.jsonnet")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, Options{Known: known})
	if err == nil || !strings.Contains(err.Error(), "fitted.json") {
		t.Fatalf("missing profile file: error %v, want one naming it", err)
	}
	p, err := sim.Resolve("llama-3-8b@h100-sxm")
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.MemoryEfficiency = 0.6
	file := filepath.Join(dir, "fit", "fitted.json")
	os.Mkdir(filepath.Dir(file), 0o755)
	if err := simfit.Write(file, &simfit.File{Schema: simfit.FileSchema, Profile: p}); err != nil {
		t.Fatal(err)
	}
	l, err := Load(path, Options{Known: known})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Suite.Target.Profile; got != "file:"+file {
		t.Errorf("profile %q, want it resolved next to the suite: %q", got, "file:"+file)
	}
	if got := l.Suite.Variants["h200"].Target.Spec.Fitted; got != file {
		t.Errorf("spec.fitted %q, want %q", got, file)
	}
}
