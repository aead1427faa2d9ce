package metric

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated documentation blocks")

// The suite library's slo/tolerance comment and docs/metrics.md's table of
// figures are the catalogue's, block for block.
func TestGeneratedDocs(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, tc := range []struct {
		file, begin, end, body string
	}{
		{"suites/lib/benchci.libsonnet", "  // " + docBegin + "\n", "  // " + docEnd + "\n", sloDoc()},
		{"docs/metrics.md", "<!-- " + docBegin + " -->\n", "<!-- " + docEnd + " -->\n", readmeTable()},
	} {
		path := filepath.Join(root, tc.file)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		i, j := strings.Index(s, tc.begin), strings.Index(s, tc.end)
		if i < 0 || j < i {
			t.Fatalf("%s: no generated block (%q ... %q)", tc.file, tc.begin, tc.end)
		}
		got := s[i+len(tc.begin) : j]
		if got == tc.body {
			continue
		}
		if !*update {
			t.Errorf("%s: the generated block is stale; run go test ./framework/metric -update\n--- have\n%s--- want\n%s", tc.file, got, tc.body)
			continue
		}
		if err := os.WriteFile(path, []byte(s[:i+len(tc.begin)]+tc.body+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Every SLO metric is in the generated suite-library comment, so the
// comment cannot list 7 of 10 again.
func TestSLODocNamesEverySLOMetric(t *testing.T) {
	doc := strings.Join(strings.Fields(strings.ReplaceAll(sloDoc(), "//", "")), " ")
	for _, d := range All() {
		if d.SLO && !strings.Contains(doc, d.Name+",") && !strings.Contains(doc, d.Name+";") {
			t.Errorf("%s is missing from the slo documentation:\n%s", d.Name, doc)
		}
	}
}
