package suitefile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// confineRepo is a scratch repository (a .git directory marks its root)
// with a suite directory, a library beside it, and a secret outside it.
func confineRepo(t *testing.T) (root, outside string) {
	t.Helper()
	top := t.TempDir()
	root = filepath.Join(top, "repo")
	outside = filepath.Join(top, "secret.txt")
	for _, d := range []string{".git", "suites", "lib", "data"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		outside:                                   "TOKEN=hunter2hunter2",
		filepath.Join(root, "lib", "x.libsonnet"): `{ name: 'from-lib' }`,
		filepath.Join(root, "data", "p.jsonl"):    `{"prompt": "hello there"}` + "\n",
		filepath.Join(root, "suites", "note.txt"): "inside",
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "suites", "out-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "suites", "note.txt"), filepath.Join(root, "suites", "in-link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "suites", "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return root, outside
}

// confineSuite is a valid suite whose name is expr and whose prompts come
// from prompts (a jsonl file; "" for synthetic prompts).
func confineSuite(expr, prompts string) string {
	p := ""
	if prompts != "" {
		p = ", prompts: b.prompts.jsonl('" + prompts + "')"
	}
	return `local b = import 'benchci.libsonnet';
b.suite {
  name: ` + expr + `,
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(4)` + p + ` },
  sweep: b.sweep.rates([1]),
}`
}

// A suite is untrusted code: whatever it names outside its repository,
// or that is not a plain file, is refused at the line that names it,
// before a byte is read; what is inside evaluates.
func TestReadsOnlyTheRepository(t *testing.T) {
	t.Parallel()
	root, outside := confineRepo(t)
	suitePath := filepath.Join(root, "suites", "s.jsonnet")
	for _, tc := range []struct {
		name, expr, prompts string
		// why is in the refusal; "" for a suite that must evaluate.
		why string
	}{
		{"import of an absolute path", `(import '` + outside + `').x`, "", "is an absolute path"},
		{"importstr of the environment", `importstr '/proc/self/environ'`, "", "is an absolute path"},
		{"importbin of a system file", `std.toString(importbin '/etc/passwd')`, "", "is an absolute path"},
		{"importstr climbing out with ..", `importstr '../../secret.txt'`, "", "climbs out of the repository"},
		{"a link inside pointing outside", `importstr 'out-link'`, "", "outside the repository"},
		{"a FIFO, which would hang", `importstr 'fifo'`, "", "not a regular file"},
		{"a device", `importstr '/dev/zero'`, "", "is an absolute path"},
		{"a directory", `importstr '../lib'`, "", "not a regular file"},
		{"a data file by absolute path", `'data'`, outside, "is an absolute path"},
		{"a data file climbing out", `'data'`, "../../secret.txt", "climbs out of the repository"},
		{"a data file through an outward link", `'data'`, "out-link", "outside the repository"},

		{"the bundled library and a name", `'plain'`, "", ""},
		{"a library elsewhere in the repository", `(import '../lib/x.libsonnet').name`, "", ""},
		{"a link that stays inside", `importstr 'in-link'`, "", ""},
		{"a data file in the repository", `'data'`, "../data/p.jsonl", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := confineSuite(tc.expr, tc.prompts)
			l, err := LoadSource(suitePath, src, Options{Known: known})
			if tc.why == "" {
				if err != nil {
					t.Fatalf("refused a file in the repository: %v", err)
				}
				if strings.Contains(string(l.JSON), "hunter2") {
					t.Errorf("the secret was read: %s", l.JSON)
				}
				return
			}
			if err == nil {
				t.Fatalf("evaluated (%s)", l.JSON)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.why) || !strings.Contains(msg, "a suite reads only files in its repository") {
				t.Errorf("the refusal does not say why (%q): %v", tc.why, err)
			}
			if !strings.Contains(msg, "s.jsonnet:") {
				t.Errorf("the refusal names no file:line: %v", err)
			}
			if strings.Contains(msg, "hunter2") {
				t.Errorf("the refusal quotes the secret: %v", err)
			}
		})
	}
}

// An import directory outside the repository is refused: a suite could
// import anything through it.
func TestImportDirectoryOutsideTheRepository(t *testing.T) {
	t.Parallel()
	root, outside := confineRepo(t)
	_, err := LoadSource(filepath.Join(root, "suites", "s.jsonnet"), confineSuite(`'plain'`, ""),
		Options{Known: known, JPaths: []string{filepath.Dir(outside)}})
	if err == nil || !strings.Contains(err.Error(), "is outside the repository") {
		t.Errorf("an import directory outside: %v", err)
	}
}
