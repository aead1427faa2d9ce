package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// readmeMaxLines bounds README.md: it is the front door (what benchci is,
// how to set it up, a tour, and links), and the reference lives in docs/.
const readmeMaxLines = 300

// readmeSetupWithin is how far down README.md a newcomer finds the two
// set-up commands.
const readmeSetupWithin = 40

// readmeRunCommand is README.md's first set-up command: the quickstart on
// the embedded simulator. The second is the test command .ci/run runs.
const readmeRunCommand = "go run ./cmd/benchci run suites/quickstart.jsonnet"

// docsRoot is the repository's root, seen from this package's directory.
var docsRoot = filepath.Join("..", "..")

// TestREADME holds README.md to its job as the front door: at most
// readmeMaxLines lines, the two set-up commands in its first
// readmeSetupWithin lines (the test command exactly as .ci/run runs it),
// and every page under docs/ linked from its Guides or its Reference
// section, once.
func TestREADME(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(docsRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move reference into docs/ and link it", len(lines), readmeMaxLines)
	}
	testCmd := ciTestCommand(t)
	top := lines[:min(len(lines), readmeSetupWithin)]
	for _, cmd := range []string{readmeRunCommand, testCmd} {
		if !slices.ContainsFunc(top, func(l string) bool { return commandOf(l) == cmd }) {
			t.Errorf("README.md's first %d lines do not show the set-up command %q", readmeSetupWithin, cmd)
		}
	}

	guides, reference := readmeDocs(t)
	pages, err := filepath.Glob(filepath.Join(docsRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no pages under docs/")
	}
	for _, p := range pages {
		name := filepath.Base(p)
		switch g, r := guides[name], reference[name]; {
		case g && r:
			t.Errorf("docs/%s is linked from both README.md's Guides and its Reference: it is one or the other", name)
		case !g && !r:
			t.Errorf("docs/%s is linked from neither README.md's Guides nor its Reference", name)
		}
	}
	for name := range guides {
		if _, err := os.Stat(filepath.Join(docsRoot, "docs", name)); err != nil {
			t.Errorf("README.md's Guides link docs/%s: %v", name, err)
		}
	}
	for name := range reference {
		if _, err := os.Stat(filepath.Join(docsRoot, "docs", name)); err != nil {
			t.Errorf("README.md's Reference links docs/%s: %v", name, err)
		}
	}
}

// ciTestCommand is the go test line .ci/run runs.
func ciTestCommand(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join(docsRoot, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "go test ") {
			cmds = append(cmds, commandOf(l))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 1 {
		t.Fatalf(".ci/run: %d go test lines (%q), want one", len(cmds), cmds)
	}
	return cmds[0]
}

// commandOf is a shell line without its trailing comment and spaces.
func commandOf(line string) string {
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	return strings.TrimSpace(line)
}

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

// linkRE is a markdown link or image: its target, without a title.
var linkRE = regexp.MustCompile(`\]\(\s*<?([^()\s<>]+)>?(?:\s+"[^"]*")?\s*\)`)

// TestDocsLinks checks every link in README.md and docs/*.md: a relative
// one names a file in this repository, and an anchor one of the headings
// of the page it names; an absolute one is a public web page (https or
// http). Nothing links outside the repository by a relative path (such
// as ../shared).
func TestDocsLinks(t *testing.T) {
	root, err := filepath.Abs(docsRoot)
	if err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(root, "README.md")}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, pages...)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		anchors[path] = headingAnchors(string(b))
		return anchors[path]
	}
	n := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, file)
		text := string(b)
		if strings.Contains(text, "../shared") {
			t.Errorf("%s names ../shared, which is not in this repository", rel)
		}
		for _, m := range linkRE.FindAllStringSubmatch(proseOf(text), -1) {
			n++
			target := m[1]
			switch {
			case strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "http://"):
				continue
			case strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "/"):
				t.Errorf("%s: link %q is neither relative nor a public web page", rel, target)
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				if r, err := filepath.Rel(root, dest); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
					t.Errorf("%s: link %q leaves the repository", rel, target)
					continue
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %q: no such file", rel, target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(dest, ".md") && !anchorsOf(dest)[anchor] {
				t.Errorf("%s: link %q: no heading with anchor #%s in %s", rel, target, anchor, filepath.Base(dest))
			}
		}
	}
	if n == 0 {
		t.Fatal("no links found: the test reads nothing")
	}
}

// proseOf is markdown text with its fenced code blocks and code spans
// blanked (newlines kept), so that what it finds there is not taken for a
// link or a heading.
func proseOf(text string) string {
	b := []byte(proseOfHeadings(text))
	// Code spans: a run of n backticks up to the next run of exactly n.
	run := func(i int) int {
		j := i
		for j < len(b) && b[j] == '`' {
			j++
		}
		return j - i
	}
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		n := run(i)
		end := -1
		for j := i + n; j < len(b); {
			if b[j] != '`' {
				j++
				continue
			}
			if m := run(j); m == n {
				end = j
				break
			} else {
				j += m
			}
		}
		if end < 0 {
			i += n
			continue
		}
		for k := i; k < end+n; k++ {
			if b[k] != '\n' {
				b[k] = ' '
			}
		}
		i = end + n
	}
	return string(b)
}

// headingAnchors are the anchors GitHub gives a page's headings: lower
// case, punctuation dropped, spaces as hyphens, a repeat suffixed -1, -2.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, l := range strings.Split(proseOfHeadings(text), "\n") {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimLeft(l, "#")
		if h == "" || h[0] != ' ' {
			continue
		}
		var s strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				s.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				s.WriteRune(r)
			}
		}
		a := s.String()
		if k := seen[a]; k > 0 {
			anchors[a+"-"+strconv.Itoa(k)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// proseOfHeadings is text with fenced code blocks blanked, code spans kept
// (a heading's code span is part of its anchor).
func proseOfHeadings(text string) string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, l := range lines {
		tl := strings.TrimSpace(l)
		switch {
		case fence == "" && (strings.HasPrefix(tl, "```") || strings.HasPrefix(tl, "~~~")):
			fence = tl[:3]
			lines[i] = ""
		case fence != "":
			if strings.HasPrefix(tl, fence) && strings.Trim(tl, fence[:1]) == "" {
				fence = ""
			}
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// TestDocsLinkHelpers pins the link and anchor readers on small pages.
func TestDocsLinkHelpers(t *testing.T) {
	src := "# A page\n\n## Planning in seconds: run --virtual\n\n## `benchci run`\n\n## A page\n\n" +
		"See [x](a.md#b) and `[not](a link)` and [y](\n" +
		"```sh\n[no](c.md)\n# not a heading\n```\n" +
		"[Valid or\ninconclusive](#a-page-1).\n"
	var got []string
	for _, m := range linkRE.FindAllStringSubmatch(proseOf(src), -1) {
		got = append(got, m[1])
	}
	if want := []string{"a.md#b", "#a-page-1"}; !slices.Equal(got, want) {
		t.Errorf("links %q, want %q", got, want)
	}
	a := headingAnchors(src)
	for _, want := range []string{"a-page", "planning-in-seconds-run---virtual", "benchci-run", "a-page-1"} {
		if !a[want] {
			t.Errorf("no anchor %q in %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Errorf("a comment in a code block taken for a heading: %v", a)
	}
}
