package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docsRoot is the repository's root, seen from this package's directory.
var docsRoot = filepath.Join("..", "..")

// docsLinkRE is a link from README.md to a page under docs/.
var docsLinkRE = regexp.MustCompile(`\]\(docs/([^)#/\s]+\.md)(#[^)\s]*)?\)`)

// readmeDocs are the docs/ pages README.md links from its "## Guides"
// section and from its "## Reference" section, by file name. TestGuides
// holds a guide to having commands it runs; a reference page may have
// none.
func readmeDocs(t *testing.T) (guides, reference map[string]bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(docsRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	guides, reference = map[string]bool{}, map[string]bool{}
	var in map[string]bool
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "## ") {
			switch strings.TrimSpace(strings.TrimPrefix(l, "## ")) {
			case "Guides":
				in = guides
			case "Reference":
				in = reference
			default:
				in = nil
			}
			continue
		}
		if in == nil {
			continue
		}
		for _, m := range docsLinkRE.FindAllStringSubmatch(l, -1) {
			in[m[1]] = true
		}
	}
	if len(guides) == 0 || len(reference) == 0 {
		t.Fatalf("README.md: %d guide(s) under ## Guides, %d page(s) under ## Reference: want both sections, with links to docs/", len(guides), len(reference))
	}
	return guides, reference
}
