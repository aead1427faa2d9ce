package variants

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Read refuses what is not a comparison it can follow: another schema,
// no variants or too many, a variant naming no results file.
func TestReadRefuses(t *testing.T) {
	dir := t.TempDir()
	many := `{"schema":"benchci.variants/v1","variants":[` + strings.Repeat(`{"name":"x","path":"x.json"},`, MaxVariants) + `{"name":"y","path":"y.json"}]}`
	for name, body := range map[string]string{
		"schema":   `{"schema":"benchci.results/v1","variants":[{"name":"a","path":"a.json"}]}`,
		"none":     `{"schema":"benchci.variants/v1","variants":[]}`,
		"too many": many,
		"no path":  `{"schema":"benchci.variants/v1","variants":[{"name":"a"}]}`,
		"corrupt":  `{"schema":"benchci.variants/v1","varia`,
	} {
		p := filepath.Join(dir, "x.variants.json")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(p); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "ok.variants.json"), []byte(`{"schema":"benchci.variants/v1","variants":[{"name":"a","path":"a.json"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := Read(filepath.Join(dir, "ok.variants.json")); err != nil || r.Variants[0].Path != "a.json" {
		t.Errorf("a valid comparison: %v", err)
	}
}
