package suitefile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// confinedSuite is a suite that evaluates x (line 2) and names extra
// workload fields (line 6), so a refusal has a known line.
const confinedSuite = `local b = import 'benchci.libsonnet';
local x = %s;
b.suite {
  name: if std.length(std.toString(x)) >= 0 then 'confined' else '',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(4)%s },
  sweep: b.sweep.rates([1]),
}
`

// scratchRepo lays out a repository (marked by .git) beside files it must
// not read, and returns the repository's root and the outside directory.
//
//	outside/secret.txt, outside/secret.libsonnet, outside/prompts.jsonl
//	repo/.git/
//	repo/lib/x.libsonnet
//	repo/suites/sibling.libsonnet, repo/suites/data/prompts.jsonl
//	repo/link-out -> outside/secret.txt, repo/zero -> /dev/zero
//	repo/link-in -> lib/x.libsonnet
//	repo/fifo (a named pipe), repo/adir/
func scratchRepo(t *testing.T) (root, outside string) {
	t.Helper()
	top := t.TempDir()
	root, outside = filepath.Join(top, "repo"), filepath.Join(top, "outside")
	for _, d := range []string{outside, filepath.Join(root, ".git"), filepath.Join(root, "lib"), filepath.Join(root, "suites", "data"), filepath.Join(root, "adir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(outside, "secret.txt"):                   "TOKEN=hunter2",
		filepath.Join(outside, "secret.libsonnet"):             "{ token: 'hunter2' }",
		filepath.Join(outside, "prompts.jsonl"):                `{"prompt": "hunter2"}` + "\n",
		filepath.Join(root, "lib", "x.libsonnet"):              "{ v: 1 }",
		filepath.Join(root, "suites", "sibling.libsonnet"):     "{ v: 2 }",
		filepath.Join(root, "suites", "data", "prompts.jsonl"): `{"prompt": "hello"}` + "\n",
	}
	for p, body := range files {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(root, "link-out"): filepath.Join(outside, "secret.txt"),
		filepath.Join(root, "zero"):     "/dev/zero",
		filepath.Join(root, "link-in"):  filepath.Join("lib", "x.libsonnet"),
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	return root, outside
}

// A pull request's suite is untrusted: it reads only files in its
// repository, whatever form the path takes, and the refusal says why and
// where. Nothing here may block: the FIFO is refused without being opened.
func TestReadsOnlyTheRepository(t *testing.T) {
	t.Parallel()
	root, outside := scratchRepo(t)
	path := filepath.Join(root, "suites", "s.jsonnet")
	for _, c := range []struct {
		name     string
		x        string // the expression on line 2
		workload string // fields added to the workload, on line 6
		line     int    // where the refusal is placed
		reason   string
	}{
		{"import of an absolute path", fmt.Sprintf("import %q", filepath.Join(outside, "secret.libsonnet")), "", 2, "is an absolute path, outside the repository"},
		{"importstr /proc/self/environ", "importstr '/proc/self/environ'", "", 2, "is an absolute path, outside the repository"},
		{"importbin /etc/passwd", "importbin '/etc/passwd'", "", 2, "is an absolute path, outside the repository"},
		{"importstr /dev/stdin", "importstr '/dev/stdin'", "", 2, "is an absolute path, outside the repository"},
		{".. out of the root", "importstr '../../outside/secret.txt'", "", 2, "climbs out of the repository"},
		{"a link in the repository to a file outside", "importstr '../link-out'", "", 2, "links to " + filepath.Join(outside, "secret.txt") + ", outside the repository"},
		{"a link in the repository to /dev/zero", "importbin '../zero'", "", 2, "links to /dev/zero, outside the repository"},
		{"a FIFO in the repository", "importstr '../fifo'", "", 2, "is a named pipe, not a regular file"},
		{"a directory", "importstr '../adir'", "", 2, "is a directory, not a regular file"},
		{"a data file at an absolute path", "null", fmt.Sprintf(", prompts: b.prompts.jsonl(%q)", filepath.Join(outside, "prompts.jsonl")), 6, "workload.prompts.path: \"" + filepath.Join(outside, "prompts.jsonl") + "\" is an absolute path, outside the repository"},
		{"a data file via ..", "null", ", prompts: b.prompts.jsonl('../../outside/prompts.jsonl')", 6, "workload.prompts.path: \"../../outside/prompts.jsonl\" climbs out of the repository"},
		{"a data file via a link outside", "null", ", prompts: b.prompts.jsonl('../link-out')", 6, "workload.prompts.path: \"../link-out\" links to"},
		{"an image directory that is a file", "null", ", images: { dir: 'data/prompts.jsonl' }", 6, "workload.images.dir: \"data/prompts.jsonl\" is a regular file, not a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := fmt.Sprintf(confinedSuite, c.x, c.workload)
			_, err := LoadSource(path, src, Options{Known: known})
			if err == nil {
				t.Fatal("evaluated: want it refused")
			}
			msg := err.Error()
			at := fmt.Sprintf("%s:%d:", path, c.line)
			if !strings.Contains(msg, c.reason) || !strings.Contains(msg, at) || !strings.Contains(msg, ErrOutside.Error()) {
				t.Errorf("error does not say %q at %s:\n%s", c.reason, at, msg)
			}
			if strings.Contains(msg, "hunter2") {
				t.Errorf("the refusal leaks what it refused:\n%s", msg)
			}
		})
	}
}

// Reading inside the repository is as before: neighbours, files up from
// the suite's directory, the bundled library, links that stay inside, and
// data files next to the suite.
func TestReadsInsideTheRepository(t *testing.T) {
	t.Parallel()
	root, _ := scratchRepo(t)
	path := filepath.Join(root, "suites", "s.jsonnet")
	for _, c := range []struct{ name, x, workload string }{
		{"the bundled library alone", "null", ""},
		{"a relative import beside the suite", "(import 'sibling.libsonnet').v", ""},
		{"an import up from suites/, inside the root", "(import '../lib/x.libsonnet').v", ""},
		{"a link that stays inside", "importstr '../link-in'", ""},
		{"a data file beside the suite", "null", ", prompts: b.prompts.jsonl('data/prompts.jsonl')"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := LoadSource(path, fmt.Sprintf(confinedSuite, c.x, c.workload), Options{Known: known}); err != nil {
				t.Error(err)
			}
		})
	}
}

// An import directory outside the repository would let a suite import
// from anywhere through it: refused, naming it. Options.Root names the
// repository where no .git marks it (ci --ab's tree of the base revision).
func TestImportDirectoriesAndRoot(t *testing.T) {
	t.Parallel()
	root, outside := scratchRepo(t)
	path := filepath.Join(root, "suites", "s.jsonnet")
	src := fmt.Sprintf(confinedSuite, "(import 'x.libsonnet').v", "")
	_, err := LoadSource(path, src, Options{Known: known, JPaths: []string{outside}})
	if err == nil || !strings.Contains(err.Error(), "import directory "+outside+" is outside the repository") {
		t.Errorf("an import directory outside: %v", err)
	}
	if _, err := LoadSource(path, src, Options{Known: known, JPaths: []string{filepath.Join(root, "lib")}}); err != nil {
		t.Errorf("an import directory inside: %v", err)
	}
	// With the suites directory as the root, ../lib is outside it.
	_, err = LoadSource(path, fmt.Sprintf(confinedSuite, "(import '../lib/x.libsonnet').v", ""), Options{Known: known, Root: filepath.Dir(path)})
	if err == nil || !strings.Contains(err.Error(), "climbs out of the repository ("+filepath.Dir(path)+")") {
		t.Errorf("Options.Root: %v", err)
	}
}

// Without a .git above it, a suite's repository is its own directory.
func TestRootWithoutGit(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := findRoot(filepath.Join(dir, "s.jsonnet"))
	if err != nil || got != dir {
		t.Errorf("findRoot = %q, %v; want %q", got, err, dir)
	}
	// A .git file (a worktree's) marks a root as a directory does.
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), ".git"), []byte("gitdir: elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := findRoot(filepath.Join(dir, "s.jsonnet")); got != filepath.Dir(dir) {
		t.Errorf("findRoot = %q, want the worktree %q", got, filepath.Dir(dir))
	}
}

// A simulator profile file (file:PATH, spec.fitted) is a file the suite
// reads like any other: confined to the repository.
func TestSimProfileFilesStayInTheRepository(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ target, field string }{
		{`{ kind: 'sim', profile: 'file:/etc/passwd' }`, "target.profile"},
		{`{ kind: 'sim', profile: 'file:../../../etc/passwd' }`, "target.profile"},
		{`{ kind: 'sim', spec: { model: 'llama-3-8b', gpu: 'h100-sxm', fitted: '/etc/passwd' } }`, "target.spec.fitted"},
	} {
		src := `local b = import 'benchci.libsonnet';
b.suite {
  name: 'p',
  target: ` + tc.target + `,
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(4) },
  sweep: b.sweep.rates([1]),
}`
		for _, opts := range []Options{{}, {Known: known}} {
			_, err := LoadSource(filepath.Join(root, "s.jsonnet"), src, opts)
			if err == nil || !strings.Contains(err.Error(), "a suite reads only files in its repository") || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("%s (known %v): %v", tc.target, opts.Known != nil, err)
			}
		}
	}
}
