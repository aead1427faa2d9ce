package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestGuides runs every command the guides under docs/ show, in order within
// a guide, in a temporary copy of the repository's suites/ and baselines/,
// and checks that each exits as the guide says: 0, or the code a trailing
// "# exit N" comment names. A guide's commands are the lines of its ```sh
// blocks and the "$ " lines of its ```console blocks. A fenced block whose
// info string says title=PATH (```jsonnet title=suites/x.jsonnet) is a file
// the reader writes: the test writes it there at that point. A command that
// cannot run here (a GPU server, git push, kubectl) carries a trailing
// "# not run here" comment, or sits in a block of another language; the
// test counts those it skips, and fails on any other command that is not
// benchci's, so nothing is skipped silently.
//
// Each command runs as this test binary standing in for benchci (TestMain's
// BENCHCI_TEST_CLI), in the guide's own directory: the commands' relative
// paths (suites/, results/, baselines/) resolve there, so the guides run in
// parallel, each in a fresh copy.
func TestGuides(t *testing.T) {
	guides, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range guides {
		if filepath.Base(path) == "cli.md" { // generated, tested by TestCLIReference
			continue
		}
		n++
		t.Run(strings.TrimSuffix(filepath.Base(path), ".md"), func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			steps, err := parseGuide(string(src))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			dir := t.TempDir()
			for _, d := range []string{"suites", "baselines"} {
				copyTree(t, filepath.Join("..", "..", d), filepath.Join(dir, d))
			}
			ran, skipped := 0, 0
			for _, s := range steps {
				switch {
				case s.file != "":
					p := filepath.Join(dir, filepath.FromSlash(s.file))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(s.body), 0o644); err != nil {
						t.Fatal(err)
					}
				case s.skip:
					skipped++
				default:
					ran++
					start := time.Now()
					code, out := runGuideCommand(t, dir, s.args)
					t.Logf("%s:%d: benchci %s: exit %d in %v", filepath.Base(path), s.line, strings.Join(s.args, " "), code, time.Since(start).Round(time.Millisecond))
					if code == exitInconclusive && s.exit != exitInconclusive {
						// The machine stalled through every rerun: the run
						// says so instead of a verdict, and the guide's next
						// steps read results this machine could not measure.
						t.Skipf("%s:%d: this machine was too busy to measure the server (exit 3):\n%s", path, s.line, out)
					}
					if code != s.exit {
						t.Fatalf("%s:%d: benchci %s: exit %d, the guide says %d\n%s", path, s.line, strings.Join(s.args, " "), code, s.exit, out)
					}
				}
			}
			if ran == 0 {
				t.Fatalf("%s: no command the test can run", path)
			}
			t.Logf("%s: ran %d command(s), skipped %d marked not run here", filepath.Base(path), ran, skipped)
		})
	}
	if n == 0 {
		t.Fatal("no guides under docs/")
	}
}

// guideStep is a command to run (args, the exit code expected), one
// skipped, or a file to write.
type guideStep struct {
	line       int
	args       []string
	exit       int
	skip       bool
	file, body string
}

var (
	fenceRE   = regexp.MustCompile("^```\\s*([A-Za-z0-9_-]*)(.*)$")
	titleRE   = regexp.MustCompile(`\btitle=(\S+)`)
	exitRE    = regexp.MustCompile(`#\s*exit\s+(\d+)\s*$`)
	notRunRE  = regexp.MustCompile(`#\s*not run here\b.*$`)
	commentRE = regexp.MustCompile(`\s+#.*$`)
)

// parseGuide reads a guide's commands and files, in order.
func parseGuide(src string) ([]guideStep, error) {
	var steps []guideStep
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		lang, info := m[1], m[2]
		start := i + 1
		j := start
		for j < len(lines) && strings.TrimSpace(lines[j]) != "```" {
			j++
		}
		if j == len(lines) {
			return nil, fmt.Errorf("line %d: a code block that never closes", i+1)
		}
		block := lines[start:j]
		i = j
		if t := titleRE.FindStringSubmatch(info); t != nil {
			steps = append(steps, guideStep{line: start, file: t[1], body: strings.Join(block, "\n") + "\n"})
			continue
		}
		if lang != "sh" && lang != "console" {
			continue
		}
		for k := 0; k < len(block); k++ {
			line, at := block[k], start+k+1
			if lang == "console" {
				if !strings.HasPrefix(line, "$ ") {
					continue // output
				}
				line = strings.TrimPrefix(line, "$ ")
			}
			for strings.HasSuffix(line, "\\") && k+1 < len(block) {
				k++
				line = strings.TrimSuffix(line, "\\") + " " + strings.TrimPrefix(block[k], "> ")
			}
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			s := guideStep{line: at}
			if notRunRE.MatchString(line) {
				s.skip = true
				steps = append(steps, s)
				continue
			}
			if e := exitRE.FindStringSubmatch(line); e != nil {
				s.exit, _ = strconv.Atoi(e[1])
			}
			words, err := shellWords(commentRE.ReplaceAllString(line, ""))
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", at, err)
			}
			if len(words) == 0 || words[0] != "benchci" {
				return nil, fmt.Errorf("line %d: %q is not a benchci command: mark it '# not run here' or put it in a ```text block", at, line)
			}
			s.args = words[1:]
			steps = append(steps, s)
		}
	}
	return steps, nil
}

// shellWords splits a command line as a POSIX shell would for the simple
// lines the guides hold: words, single and double quotes, no expansion.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				w.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		case strings.IndexByte("|&;<>$`*?", c) >= 0:
			return nil, fmt.Errorf("%q: shell syntax the test does not run (%c)", s, c)
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("%q: unclosed quote", s)
	}
	if in {
		words = append(words, w.String())
	}
	return words, nil
}

// runGuideCommand runs benchci with args in dir: this test binary, as
// TestMain's BENCHCI_TEST_CLI makes it, so that the working directory is
// the guide's own.
func runGuideCommand(t *testing.T, dir string, args []string) (int, string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BENCHCI_TEST_CLI=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee := (*exec.ExitError)(nil); err != nil && !errors.As(err, &ee) {
		t.Fatalf("benchci %s: %v", strings.Join(args, " "), err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// copyTree copies the regular files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestParseGuide pins how a guide's blocks become steps: sh lines and
// console "$ " lines run, "# exit N" sets the code expected, "# not run
// here" skips, a titled block is a file, other languages are prose, and a
// command that is not benchci's is refused unless marked.
func TestParseGuide(t *testing.T) {
	src := "intro\n" +
		"```sh\n# a comment\nbenchci validate 'suites/a b.jsonnet'\nbenchci run \\\n  suites/x.jsonnet  # exit 1\nkubectl apply -f k8s/  # not run here: no cluster\n```\n" +
		"```console\n$ benchci report results/x.json\nsuite x ...\n```\n" +
		"```jsonnet title=suites/x.jsonnet\n{ name: 'x' }\n```\n" +
		"```text\ngit push\n```\n"
	steps, err := parseGuide(src)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, s := range steps {
		switch {
		case s.file != "":
			got = append(got, "file "+s.file+": "+strings.TrimSpace(s.body))
		case s.skip:
			got = append(got, "skip")
		default:
			got = append(got, fmt.Sprintf("%q exit %d", s.args, s.exit))
		}
	}
	want := []string{
		`["validate" "suites/a b.jsonnet"] exit 0`,
		`["run" "suites/x.jsonnet"] exit 1`,
		"skip",
		`["report" "results/x.json"] exit 0`,
		"file suites/x.jsonnet: { name: 'x' }",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, bad := range []string{"```sh\ngit push\n```\n", "```sh\nbenchci run x | tee y\n```\n", "```sh\nbenchci run x\n"} {
		if _, err := parseGuide(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
