package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchci/benchci/internal/gitfixture"

	"github.com/benchci/benchci/internal/testnet"
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
// A command ending in "&" runs in the background, as the shell's job %1,
// %2, ... in the order started; "wait %N" waits for job N and checks its
// exit code (its "# exit N"), "kill %N" interrupts it, and a job still
// running when the guide ends is interrupted. A background command with
// --addr (benchci sim) is a server: the next step waits until its address
// accepts connections, as a reader waits for its "serving" line. The
// address 127.0.0.1:8000 in a guide's commands stands for a free loopback
// port the test holds, so guides run beside each other and other tests.
//
// A ```go block is a whole program (package main): the test builds the
// guide's programs in a module whose benchci is this checkout, and runs
// each at its place, in the guide's directory; a ```text block whose info
// string says "output" right after it is what the program must print. A
// guide's Go code that no longer compiles, or prints something else, fails
// the test.
//
// Each command runs as this test binary standing in for benchci (TestMain's
// BENCHCI_TEST_CLI), in the guide's own directory: the commands' relative
// paths (suites/, results/, baselines/) resolve there, so the guides run in
// parallel, each in a fresh copy: as many at once as the machine has
// cores (two at least, four at most), the test itself beside the others.
// More would make a loaded machine stall the guides' measurements (exit
// 3, which skips the rest of a guide).
//
// The reference pages under docs/ (those README.md links under
// "## Reference") are read the same way: any command they show runs, and
// any program builds, but a reference page may show none, where a guide
// with no command the test can run fails.
func TestGuides(t *testing.T) {
	t.Parallel()
	guides, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, reference := readmeDocs(t)
	n := 0
	var wg sync.WaitGroup
	defer wg.Wait()
	runners := make(chan struct{}, min(4, max(2, runtime.GOMAXPROCS(0))))
	for _, path := range guides {
		if filepath.Base(path) == "cli.md" { // generated, tested by TestCLIReference
			continue
		}
		isReference := reference[filepath.Base(path)]
		if !isReference {
			n++
		}
		runners <- struct{}{}
		wg.Go(func() {
			defer func() { <-runners }()
			runGuide(t, path, isReference)
		})
	}
	if n == 0 {
		t.Fatal("no guides under docs/")
	}
}

// runGuide runs one guide's steps as a subtest of t.
func runGuide(t *testing.T, path string, isReference bool) {
	t.Run(strings.TrimSuffix(filepath.Base(path), ".md"), func(t *testing.T) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		steps, err := parseGuide(string(src))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if isReference && len(steps) == 0 {
			return
		}
		g := &guideRun{t: t, path: path, dir: t.TempDir(), jobs: map[int]*guideJob{}}
		for _, d := range []string{"suites", "baselines", "deploy"} {
			copyTree(t, filepath.Join("..", "..", d), filepath.Join(g.dir, d))
		}
		addr := testnet.Addr(t)
		g.progs = buildGuidePrograms(t, steps)
		defer func() {
			for _, j := range g.jobs {
				j.stop()
			}
		}()
		for i, s := range steps {
			for k, a := range s.args {
				s.args[k] = strings.ReplaceAll(a, guideAddr, addr)
			}
			g.step(i, s)
		}
		if g.ran == 0 && !isReference {
			t.Fatalf("%s: no command the test can run", path)
		}
		t.Logf("%s: ran %d command(s), skipped %d marked not run here", filepath.Base(path), g.ran, g.skipped)
	})
}

// guideRun is one guide's run: its copy of the repository, its built
// programs and its background jobs.
type guideRun struct {
	t            *testing.T
	path, dir    string
	progs        map[int]string
	jobs         map[int]*guideJob
	ran, skipped int
}

// step runs the guide's i-th step.
func (g *guideRun) step(i int, s guideStep) {
	t := g.t
	switch {
	case s.prog != "":
		g.ran++
		out, err := runGuideProgram(t, g.dir, g.progs[i])
		if err != nil {
			t.Fatalf("%s:%d: the Go program: %v\n%s", g.path, s.line, err, out)
		}
		if s.want != nil && strings.TrimRight(out, "\n ") != strings.TrimRight(*s.want, "\n ") {
			t.Fatalf("%s:%d: the Go program printed:\n%s\nthe guide shows:\n%s", g.path, s.line, out, *s.want)
		}
		t.Logf("%s:%d: Go program: ok\n%s", filepath.Base(g.path), s.line, out)
	case s.bg:
		g.ran++
		g.jobs[len(g.jobs)+1] = startGuideJob(t, g.dir, s)
	case s.wait != 0 || s.kill != 0:
		g.endJob(s)
	case s.file != "":
		p := filepath.Join(g.dir, filepath.FromSlash(s.file))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s.body), 0o644); err != nil {
			t.Fatal(err)
		}
	case s.skip:
		g.skipped++
	default:
		g.ran++
		start := time.Now()
		code, out := runGuideCommandOnce(t, g.dir, s.args)
		t.Logf("%s:%d: benchci %s: exit %d in %v", filepath.Base(g.path), s.line, strings.Join(s.args, " "), code, time.Since(start).Round(time.Millisecond))
		g.checkExit(s, code, out)
	}
}

// endJob stops (kill %N) or waits for (wait %N) a background job.
func (g *guideRun) endJob(s guideStep) {
	n := s.wait + s.kill
	j := g.jobs[n]
	if j == nil {
		g.t.Fatalf("%s:%d: no job %%%d", g.path, s.line, n)
	}
	if s.kill != 0 {
		j.stop()
		return
	}
	code, out := j.wait()
	g.t.Logf("%s:%d: benchci %s: exit %d", filepath.Base(g.path), j.step.line, strings.Join(j.step.args, " "), code)
	g.checkExit(j.step, code, out)
}

// checkExit holds a command's exit code to the one the guide shows.
func (g *guideRun) checkExit(s guideStep, code int, out string) {
	if code == exitInconclusive && s.exit != exitInconclusive {
		// The machine stalled through every rerun: the run says so
		// instead of a verdict, and the guide's next steps read results
		// this machine could not measure.
		g.t.Skipf("%s:%d: this machine was too busy to measure the server (exit 3):\n%s", g.path, s.line, out)
	}
	if code == exitUsage && s.exit == exitOK && strings.Contains(out, "the shards did not load the server at one time") {
		// Shards started together from one shell, as the scale-out demo
		// runs them without --start-at, begin apart when a busy machine
		// starts one late; merge refuses them, as it must.
		// TestShardsMergeToTheSingleRun holds the aligned case.
		g.t.Skipf("%s:%d: this busy machine started the shards apart:\n%s", g.path, s.line, out)
	}
	if code != s.exit {
		g.t.Fatalf("%s:%d: benchci %s: exit %d, the guide says %d\n%s", g.path, s.line, strings.Join(s.args, " "), code, s.exit, out)
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
	// bg runs args in the background; wait and kill name a job (%N).
	bg         bool
	wait, kill int
	// prog is a Go program; want, when set, what it must print.
	prog string
	want *string
}

// guideAddr is the address guides write for a server they start; the test
// substitutes one it holds.
const guideAddr = "127.0.0.1:8000"

var (
	fenceRE   = regexp.MustCompile("^```\\s*([A-Za-z0-9_-]*)(.*)$")
	titleRE   = regexp.MustCompile(`\btitle=(\S+)`)
	exitRE    = regexp.MustCompile(`#\s*exit\s+(\d+)\s*$`)
	notRunRE  = regexp.MustCompile(`#\s*not run here\b.*$`)
	commentRE = regexp.MustCompile(`\s+#.*$`)
	bgRE      = regexp.MustCompile(`\s*&\s*$`)
	jobRE     = regexp.MustCompile(`^(wait|kill) %([1-9][0-9]*)$`)
	outputRE  = regexp.MustCompile(`\boutput\b`)
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
		if lang == "go" {
			body := strings.Join(block, "\n") + "\n"
			if !strings.HasPrefix(strings.TrimSpace(body), "package main") {
				return nil, fmt.Errorf("line %d: a Go block that is not a whole program (package main): the test could not run it", start)
			}
			steps = append(steps, guideStep{line: start, prog: body})
			continue
		}
		if lang == "text" && outputRE.MatchString(info) {
			if len(steps) == 0 || steps[len(steps)-1].prog == "" || steps[len(steps)-1].want != nil {
				return nil, fmt.Errorf("line %d: an output block that follows no Go program", start)
			}
			want := strings.Join(block, "\n")
			steps[len(steps)-1].want = &want
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
			cmdline := commentRE.ReplaceAllString(line, "")
			if m := jobRE.FindStringSubmatch(cmdline); m != nil {
				n, _ := strconv.Atoi(m[2])
				if m[1] == "wait" {
					s.wait = n
				} else {
					s.kill = n
				}
				steps = append(steps, s)
				continue
			}
			if bgRE.MatchString(cmdline) {
				s.bg = true
				cmdline = bgRE.ReplaceAllString(cmdline, "")
			}
			words, err := shellWords(cmdline)
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
// dirFree are the guides' commands that read nothing from their
// directory and print the same every time: two guides run sim check,
// which is 25 s under the race detector, and one run answers both.
var dirFree = map[string]bool{"sim check": true}

var guideOnce sync.Map // command line -> *onceRun

type onceRun struct {
	once sync.Once
	code int
	out  string
}

// runGuideCommandOnce is runGuideCommand, run once a test binary for a
// command of dirFree.
func runGuideCommandOnce(t *testing.T, dir string, args []string) (int, string) {
	key := strings.Join(args, " ")
	if !dirFree[key] {
		return runGuideCommand(t, dir, args)
	}
	v, _ := guideOnce.LoadOrStore(key, &onceRun{code: -1})
	r := v.(*onceRun)
	r.once.Do(func() { r.code, r.out = runGuideCommand(t, dir, args) })
	return r.code, r.out
}

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
	// Only what the project tracks: a reader who followed a guide in this
	// checkout has its suites and baselines beside the project's, and the
	// guide's own commands would then find them already there.
	tracked := gitfixture.Tracked(t, src)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if !d.Type().IsRegular() || !tracked(rel) {
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
// here" skips, a titled block is a file, "&" runs in the background and
// "wait %N"/"kill %N" end a job, a go block is a program and a text
// output block right after it what it prints, other languages are prose,
// and a command that is not benchci's, a Go fragment or an output block
// without its program is refused.
func TestParseGuide(t *testing.T) {
	src := "intro\n" +
		"```sh\n# a comment\nbenchci validate 'suites/a b.jsonnet'\nbenchci run \\\n  suites/x.jsonnet  # exit 1\nkubectl apply -f k8s/  # not run here: no cluster\n```\n" +
		"```console\n$ benchci report results/x.json\nsuite x ...\n```\n" +
		"```jsonnet title=suites/x.jsonnet\n{ name: 'x' }\n```\n" +
		"```text\ngit push\n```\n" +
		"```sh\nbenchci sim --addr 127.0.0.1:8000 &\nbenchci run --shard 0/2 suites/x.jsonnet &  # exit 1\nwait %2  # it failed\nkill %1\n```\n" +
		"```go\npackage main\n\nfunc main() { println(1) }\n```\n" +
		"```text output\n1\n```\n" +
		"```go\npackage main\n```\n"
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
		case s.prog != "":
			w := "unchecked"
			if s.want != nil {
				w = *s.want
			}
			got = append(got, fmt.Sprintf("go %q prints %q", strings.TrimSpace(s.prog), w))
		case s.wait != 0:
			got = append(got, fmt.Sprintf("wait %d", s.wait))
		case s.kill != 0:
			got = append(got, fmt.Sprintf("kill %d", s.kill))
		case s.bg:
			got = append(got, fmt.Sprintf("%q exit %d in the background", s.args, s.exit))
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
		`["sim" "--addr" "127.0.0.1:8000"] exit 0 in the background`,
		`["run" "--shard" "0/2" "suites/x.jsonnet"] exit 1 in the background`,
		"wait 2",
		"kill 1",
		`go "package main\n\nfunc main() { println(1) }" prints "1"`,
		`go "package main" prints "unchecked"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, bad := range []string{"```sh\ngit push\n```\n", "```sh\nbenchci run x | tee y\n```\n", "```sh\nbenchci run x\n",
		"```sh\nbenchci run x & benchci run y\n```\n", "```sh\nwait\n```\n", "```sh\nkill %x\n```\n",
		"```go\nfmt.Println(1)\n```\n", "```text output\n1\n```\n",
		"```go\npackage main\n```\n```text output\n1\n```\n```text output\n2\n```\n"} {
		if _, err := parseGuide(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// guideJob is a command a guide runs in the background.
type guideJob struct {
	step guideStep
	cmd  *exec.Cmd
	out  *bytes.Buffer
	done chan struct{}
}

// startGuideJob starts s in the background and, when it is a server
// (--addr), waits until the address accepts connections.
func startGuideJob(t *testing.T, dir string, s guideStep) *guideJob {
	t.Helper()
	cmd := exec.Command(os.Args[0], s.args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BENCHCI_TEST_CLI=1")
	j := &guideJob{step: s, cmd: cmd, out: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = j.out, j.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("benchci %s: %v", strings.Join(s.args, " "), err)
	}
	go func() { cmd.Wait(); close(j.done) }()
	for i, a := range s.args {
		addr, ok := strings.CutPrefix(a, "--addr=")
		if !ok && a == "--addr" && i+1 < len(s.args) {
			addr, ok = s.args[i+1], true
		}
		if !ok {
			continue
		}
		// The server's own start (it binds before it prints), bounded by
		// a minute on a busy machine; an exit first is its failure.
		for deadline := time.Now().Add(time.Minute); ; {
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				break
			}
			select {
			case <-j.done:
				t.Fatalf("benchci %s exited before serving:\n%s", strings.Join(s.args, " "), j.out)
			case <-time.After(20 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				j.stop()
				t.Fatalf("benchci %s: nothing accepts on %s after a minute", strings.Join(s.args, " "), addr)
			}
		}
	}
	return j
}

// wait waits for the job's end: its exit code and output.
func (j *guideJob) wait() (int, string) {
	<-j.done
	return j.cmd.ProcessState.ExitCode(), j.out.String()
}

// stop interrupts the job, as kill %N (or Ctrl-C) does, and waits for it;
// a job that ignores the interrupt for half a minute is killed.
func (j *guideJob) stop() {
	select {
	case <-j.done:
		return
	default:
	}
	j.cmd.Process.Signal(os.Interrupt)
	select {
	case <-j.done:
	case <-time.After(30 * time.Second):
		j.cmd.Process.Kill()
		<-j.done
	}
}

// buildGuidePrograms builds the Go programs among steps, by index, in a
// module of their own whose benchci is this checkout (a replace), with the
// checkout's go.sum and no network: what a reader of the guide compiles.
func buildGuidePrograms(t *testing.T, steps []guideStep) map[int]string {
	t.Helper()
	progs := map[int]string{}
	var pkgs []string
	mod := t.TempDir()
	for i, s := range steps {
		if s.prog == "" {
			continue
		}
		name := fmt.Sprintf("p%d", i)
		if err := os.MkdirAll(filepath.Join(mod, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mod, name, "main.go"), []byte(s.prog), 0o644); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, "./"+name)
		progs[i] = filepath.Join(mod, "bin", name)
	}
	if len(pkgs) == 0 {
		return progs
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	gomod := fmt.Sprintf("module guide\n\ngo 1.26\n\nrequire github.com/benchci/benchci v0.0.0\n\nreplace github.com/benchci/benchci => %s\n", root)
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	// go test puts its own GOROOT/bin first on the test's PATH.
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the guide's Go programs need the go command: %v", err)
	}
	// -mod=mod lets go add the requirements benchci's imports bring; the
	// module cache this checkout was built from has them all.
	cmd := exec.CommandContext(t.Context(), gobin, append([]string{"build", "-mod=mod", "-o", filepath.Join(mod, "bin") + string(filepath.Separator)}, pkgs...)...)
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOPROXY=off", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the guide's Go programs: %v\n%s", err, out)
	}
	return progs
}

// runGuideProgram runs a built program in dir: its output, and an error
// when it did not exit 0.
func runGuideProgram(t *testing.T, dir, bin string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}
