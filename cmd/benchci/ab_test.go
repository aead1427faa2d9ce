package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/gitfixture"
	"github.com/benchci/benchci/internal/gitrev"
	"github.com/benchci/benchci/internal/testnet"
)

// abSuite is a suite on the simulator whose engine step is step.
func abSuite(step string) []byte {
	return []byte(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'ab',
  target: b.target.sim('tiny', step_base='` + step + `'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(8), arrival: b.arrival.constant() },
  sweep: b.sweep.rates([10], duration='1s', warmup='0s'),
  tolerance: { default: '20%' },
}
`)
}

// ci --ab runs the suite as it was at the base revision and as it is now,
// interleaved point by point, and judges the candidate against the base:
// a step three times slower regresses, the same suite does not.
func TestCIAB(t *testing.T) {
	repo := gitfixture.New(t)
	base := repo.Commit("base", map[string][]byte{"suites/ab.jsonnet": abSuite("4ms")})
	suitePath := filepath.Join(repo.Dir, "suites", "ab.jsonnet")
	for _, tc := range []struct {
		step string
		code int
	}{
		{"4ms", exitOK},
		{"12ms", exitFailed},
	} {
		if err := os.WriteFile(suitePath, abSuite(tc.step), 0o644); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		code, stdout, stderr := runCLI(t, context.Background(), "ci", "--ab", base, "--comment=false", "--summary", "", "--html", "",
			"--results", dir, "--baselines", filepath.Join(dir, "none"), "--report", filepath.Join(dir, "r.md"), "--progress=false", suitePath)
		if code == exitInconclusive {
			// The machine stalled through every rerun: said, with the evidence.
			if !strings.Contains(stdout, "INVALID, did not measure the server") {
				t.Errorf("step %s: exit 3 without the evidence:\n%s", tc.step, stdout)
			}
			continue
		}
		if code != tc.code {
			t.Fatalf("step %s: exit %d, want %d\n%s\n%s", tc.step, code, tc.code, stdout, stderr)
		}
		b, err := result.Read(filepath.Join(dir, "ab", "base.json"))
		if err != nil {
			t.Fatal(err)
		}
		c, err := result.Read(filepath.Join(dir, "ab", "candidate.json"))
		if err != nil {
			t.Fatal(err)
		}
		if b.Target.Sim.StepBaseMs != 4 || c.Suite.Order != "interleaved" || b.Suite.WorkloadHash != c.Suite.WorkloadHash {
			t.Errorf("base step %v ms, order %q", b.Target.Sim.StepBaseMs, c.Suite.Order)
		}
		md, _ := os.ReadFile(filepath.Join(dir, "r.md"))
		if !strings.Contains(string(md), "ab (A/B against "+base+")") || !strings.Contains(stderr, "A/B: each suite at "+base) {
			t.Errorf("step %s: report:\n%s\nstderr:\n%s", tc.step, md, stderr)
		}
	}
	// A revision that is not there is a usage error, said at once.
	code, _, stderr := runCLI(t, context.Background(), "ci", "--ab", "no-such-ref", "--comment=false", "--summary", "", "--results", t.TempDir(), "--progress=false", suitePath)
	if code != exitUsage || !strings.Contains(stderr, `resolve "no-such-ref"`) {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// abLaunchSuite launches the simulator, its step given by the server's own
// flags (the serving config a PR changes), on addr.
func abLaunchSuite(addr, step string) []byte {
	return []byte(fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'ablaunch',
  target: b.target.launch([%q, 'sim', '--addr', %q, '--profile', 'tiny', '--step-base', %q], url='http://%s',
                          env={ BENCHCI_TEST_CLI: '1' }, health='/health', start_timeout='30s', stop_grace='5s'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(8), arrival: b.arrival.constant() },
  sweep: b.sweep.rates([10, 20], duration='500ms', warmup='0s'),
  tolerance: { default: '20%%' },
}
`, os.Args[0], addr, step, addr))
}

// The base's and the candidate's launched servers take one address: they
// are launched in turn, one point each, and each point measured its own.
func TestCIABLaunchesInTurn(t *testing.T) {
	addr := testnet.Addr(t)
	repo := gitfixture.New(t)
	base := repo.Commit("base", map[string][]byte{"ablaunch.jsonnet": abLaunchSuite(addr, "4ms")})
	suitePath := filepath.Join(repo.Dir, "ablaunch.jsonnet")
	if err := os.WriteFile(suitePath, abLaunchSuite(addr, "12ms"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, context.Background(), "ci", "--ab", base, "--comment=false", "--summary", "", "--html", "",
		"--results", dir, "--baselines", filepath.Join(dir, "none"), "--report", filepath.Join(dir, "r.md"), "--progress=false", suitePath)
	if code != exitFailed && code != exitInconclusive {
		t.Fatalf("exit %d, want 1 (a 3x slower step)\n%s\n%s", code, stdout, stderr)
	}
	// Each point launches its side's server, and so does each rerun of it
	// (a trial a busy machine made invalid starts as fresh as the first).
	candidateStarts := 0
	for _, side := range []struct {
		name string
		step float64
	}{{"base", 4}, {"candidate", 12}} {
		f, err := result.Read(filepath.Join(dir, "ablaunch", side.name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if f.Incomplete || len(f.Points) != 2 {
			t.Fatalf("%s: incomplete %v (%s), %d points", side.name, f.Incomplete, f.Error, len(f.Points))
		}
		for _, p := range f.Points {
			if side.name == "candidate" {
				candidateStarts++
				if p.Validity != nil {
					candidateStarts += len(p.Validity.Reruns)
				}
			}
		}
		// Each point's TPOT is its own server's step: the other side's
		// server was stopped while it ran.
		for _, p := range f.Points {
			if tpot := p.Latency["tpot"].P50; tpot < side.step*0.9 || tpot > side.step*2 {
				t.Errorf("%s %s: TPOT p50 %.2f ms, want about %v", side.name, p.Label, tpot, side.step)
			}
		}
	}
	// The reviewer sees which flag the change turned, first.
	md, _ := os.ReadFile(filepath.Join(dir, "r.md"))
	lead, _, _ := strings.Cut(string(md), "## benchci")
	if !strings.Contains(lead, "launch --step-base:\u200b 4ms → 12ms") {
		t.Errorf("the comment does not name the changed flag first:\n%s", md)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "ablaunch", "candidate.server.log"))
	if n := strings.Count(string(log), "serving simulator profile tiny"); n != candidateStarts {
		t.Errorf("the candidate's server started %d times, want once per point and rerun (%d)", n, candidateStarts)
	}
}

// The base revision's tree holds no .git: its suites are confined to the
// whole tree (an import up from suites/ still resolves), and --jpath
// names the revision's own directory.
func TestABBaseRevisionRoot(t *testing.T) {
	repo := gitfixture.New(t)
	suite := []byte(`local b = import 'benchci.libsonnet';
local common = import '../lib/common.libsonnet';
local pinned = import 'pinned.libsonnet';
b.suite {
  name: common.name + pinned.suffix,
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(4) },
  sweep: b.sweep.rates([1]),
}
`)
	base := repo.Commit("base", map[string][]byte{
		"suites/s.jsonnet":        suite,
		"lib/common.libsonnet":    []byte("{ name: 'base' }"),
		"vendor/pinned.libsonnet": []byte("{ suffix: '-pinned' }"),
	})
	tree, err := gitrev.Write(repo.Dir, base, t.TempDir(), gitrev.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	bp, err := tree.Path(filepath.Join(repo.Dir, "suites", "s.jsonnet"))
	if err != nil {
		t.Fatal(err)
	}
	opts, err := atRevision(suitefile.Options{JPaths: []string{filepath.Join(repo.Dir, "vendor")}}, tree)
	if err != nil {
		t.Fatal(err)
	}
	l, err := suitefile.Load(bp, opts)
	if err != nil || l.Suite.Name != "base-pinned" {
		t.Fatalf("Load = %v, %v", l, err)
	}
}
