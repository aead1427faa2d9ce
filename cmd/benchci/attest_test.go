package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/internal/gitfixture"
)

// attestSuite is a short simulator suite whose engine setting comes from
// an imported config file, with an SLO on TTFT of slo.
func attestSuite(name, slo, tolerance string) []byte {
	return []byte(`local b = import 'benchci.libsonnet';
local serving = import 'serving.libsonnet';
b.suite {
  name: '` + name + `',
  target: b.target.sim('tiny', max_num_seqs=serving.max_num_seqs),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(8), arrival: b.arrival.constant() },
  sweep: b.sweep.rates([10], duration='1s', warmup='0s'),
  slos: [b.slo.p99('ttft', '<', '` + slo + `')],
  tolerance: { default: '` + tolerance + `' },
}
`)
}

// attestRepo is a repository with two suites run: "pass", whose SLO
// holds, and "fail", whose SLO no server can meet.
type attestRepo struct {
	*gitfixture.Repo
	base string
}

func newAttestRepo(t *testing.T) *attestRepo {
	t.Helper()
	repo := gitfixture.New(t)
	base := repo.Commit("suites", map[string][]byte{
		"suites/serving.libsonnet": []byte("{ max_num_seqs: 64 }\n"),
		"suites/pass.jsonnet":      attestSuite("pass", "10s", "20%"),
		"suites/fail.jsonnet":      attestSuite("fail", "1us", "20%"),
	})
	for _, s := range []string{"pass", "fail"} {
		code, stdout, stderr := runCLI(t, context.Background(), "run", "--progress=false", "--results", filepath.Join(repo.Dir, "results"),
			"--baselines", filepath.Join(repo.Dir, "none"), filepath.Join(repo.Dir, "suites", s+".jsonnet"))
		if code == exitInconclusive {
			t.Skipf("this machine was too busy to measure the server:\n%s", stdout)
		}
		if want := map[string]int{"pass": exitOK, "fail": exitFailed}[s]; code != want {
			t.Fatalf("run %s: exit %d, want %d\n%s\n%s", s, code, want, stdout, stderr)
		}
	}
	return &attestRepo{Repo: repo, base: base}
}

// attest writes the statement about results/<suite>.json and returns its path.
func (r *attestRepo) attest(t *testing.T, suite string) string {
	t.Helper()
	out := filepath.Join(r.Dir, "results", suite+".intoto.json")
	code, stdout, stderr := runCLI(t, context.Background(), "attest", "--out", out, filepath.Join(r.Dir, "results", suite+".json"))
	if code != exitOK {
		t.Fatalf("attest %s: exit %d\n%s\n%s", suite, code, stdout, stderr)
	}
	return out
}

func TestAttestVerify(t *testing.T) {
	repo := newAttestRepo(t)
	pass, fail := repo.attest(t, "pass"), repo.attest(t, "fail")
	statement, err := os.ReadFile(pass)
	if err != nil {
		t.Fatal(err)
	}
	now := attestNow
	t.Cleanup(func() { attestNow = now })
	for _, tc := range []struct {
		name string
		// edit changes the checkout, or returns another statement to verify.
		edit  func(t *testing.T) string
		args  []string
		code  int
		wants []string
	}{
		{name: "round trip", code: exitOK, wants: []string{"✅ verified:", "3 of 3 subject(s) match", "1 of 1 verdict(s) passed", "no looser than the suites' at"}},
		{name: "changed config file", code: exitFailed, edit: func(t *testing.T) string {
			write(t, filepath.Join(repo.Dir, "suites", "serving.libsonnet"), "{ max_num_seqs: 8 }\n")
			return pass
		}, wants: []string{"❌ not verified: 1 problem(s)", "suites/serving.libsonnet changed: sha256 "}},
		{name: "failed SLO", code: exitFailed, edit: func(*testing.T) string { return fail },
			wants: []string{"❌ not verified: 1 problem(s)", "FAILED  ttft p99 < 1us (rate=10)"}},
		{name: "too old", code: exitFailed, edit: func(*testing.T) string {
			attestNow = func() time.Time { return time.Now().Add(31 * 24 * time.Hour) }
			return pass
		}, wants: []string{"older than --max-age 720h"}},
		{name: "any age", code: exitOK, args: []string{"--max-age", "0"}, edit: func(*testing.T) string {
			attestNow = func() time.Time { return time.Now().Add(31 * 24 * time.Hour) }
			return pass
		}, wants: []string{"(no --max-age)"}},
		{name: "edited definition", code: exitFailed, edit: func(t *testing.T) string {
			return rewrite(t, statement, func(st map[string]any) {
				run := st["predicate"].(map[string]any)["runs"].([]any)[0].(map[string]any)
				s := run["suite"].(map[string]any)
				s["definition"] = strings.Replace(s["definition"].(string), `"10s"`, `"20s"`, 1)
			})
		}, wants: []string{"the predicate does not agree with itself", "its definition hashes to"}},
		{name: "subject outside the checkout", code: exitFailed, edit: func(t *testing.T) string {
			return rewrite(t, statement, func(st map[string]any) {
				st["subject"].([]any)[0].(map[string]any)["name"] = "../../etc/passwd"
			})
		}, wants: []string{"not a path in a checkout"}},
		{name: "wrong predicate type", code: exitUsage, edit: func(t *testing.T) string {
			return rewrite(t, statement, func(st map[string]any) { st["predicateType"] = "https://slsa.dev/provenance/v1" })
		}, wants: []string{"not benchci's"}},
		{name: "not JSON", code: exitUsage, edit: func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "x.json")
			write(t, p, string(statement[:len(statement)/2]))
			return p
		}, wants: []string{"is not an in-toto statement"}},
		{name: "loosened policy", code: exitFailed, args: []string{"--against", "HEAD"}, edit: func(t *testing.T) string {
			// The release branch now holds a stricter SLO and tolerance;
			// the checkout's suite file stays the one measured.
			measured, err := os.ReadFile(filepath.Join(repo.Dir, "suites", "pass.jsonnet"))
			if err != nil {
				t.Fatal(err)
			}
			repo.Commit("stricter", map[string][]byte{"suites/pass.jsonnet": attestSuite("pass", "5s", "10%")})
			write(t, filepath.Join(repo.Dir, "suites", "pass.jsonnet"), string(measured))
			return pass
		}, wants: []string{"❌ not verified: 1 problem(s)", "looser than at HEAD: tolerance.default: 10% → 20%", "looser than at HEAD: slos"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := filepath.Join(repo.Dir, "suites", "serving.libsonnet")
			before, err := os.ReadFile(config)
			if err != nil {
				t.Fatal(err)
			}
			defer write(t, config, string(before))
			attestNow = now
			path := pass
			if tc.edit != nil {
				path = tc.edit(t)
			}
			args := append([]string{"verify", "--checkout", repo.Dir, "--against", repo.base}, tc.args...)
			code, stdout, stderr := runCLI(t, context.Background(), append(args, path)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.wants {
				if !strings.Contains(stdout+stderr, w) {
					t.Errorf("output lacks %q:\n%s\n%s", w, stdout, stderr)
				}
			}
			if tc.code != exitUsage && !strings.Contains(stdout, "gh attestation verify") {
				t.Errorf("output does not say how to check the signature:\n%s", stdout)
			}
		})
	}
}

// attest names the files a suite is made of, and what it measured.
func TestAttestStatement(t *testing.T) {
	repo := newAttestRepo(t)
	data, err := os.ReadFile(repo.attest(t, "pass"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Type    string `json:"_type"`
		Subject []struct {
			Name        string            `json:"name"`
			Digest      map[string]string `json:"digest"`
			Annotations map[string]string `json:"annotations"`
		} `json:"subject"`
		PredicateType string       `json:"predicateType"`
		Predicate     sloPredicate `json:"predicate"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range st.Subject {
		names = append(names, s.Name+" "+s.Annotations["role"])
		if len(s.Digest["sha256"]) != 64 {
			t.Errorf("%s: digest %v", s.Name, s.Digest)
		}
	}
	if got, want := strings.Join(names, ", "), "results/pass.json results, suites/pass.jsonnet suite, suites/serving.libsonnet import"; got != want {
		t.Errorf("subjects %s, want %s", got, want)
	}
	p := st.Predicate
	if st.Type != "https://in-toto.io/Statement/v1" || st.PredicateType != sloPredicateType || len(p.Runs) != 1 || len(p.Runs[0].SLOs) != 1 || !p.Runs[0].SLOs[0].Pass ||
		p.Commit != repo.base || p.Benchci != Version || !strings.HasPrefix(p.Runs[0].Target.SimProfile, "tiny") || p.Runs[0].Suite.File != "suites/pass.jsonnet" || p.Runs[0].PolicySHA256 == "" {
		t.Errorf("statement:\n%s", data)
	}
}

// attest refuses results that prove nothing about a release.
func TestAttestRefuses(t *testing.T) {
	repo := newAttestRepo(t)
	src, err := os.ReadFile(filepath.Join(repo.Dir, "results", "pass.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(f map[string]any)
		want string
	}{
		{"incomplete", func(f map[string]any) { f["incomplete"], f["error"] = true, "stopped" }, "an incomplete run"},
		{"virtual", func(f map[string]any) { f["virtual"] = true }, "virtual-time"},
		{"shard", func(f map[string]any) {
			f["shard"] = map[string]any{"index": 0, "count": 2, "started": "2026-01-01T00:00:00Z", "finished": "2026-01-01T00:01:00Z"}
		}, "shard 0 of 2"},
		{"suite changed since", nil, "evaluates to another suite than the one measured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(repo.Dir, "results", "edited.json")
			if tc.edit == nil {
				write(t, path, string(src))
				suite := filepath.Join(repo.Dir, "suites", "pass.jsonnet")
				before, _ := os.ReadFile(suite)
				defer write(t, suite, string(before))
				write(t, suite, string(attestSuite("pass", "9s", "20%")))
			} else {
				var f map[string]any
				if err := json.Unmarshal(src, &f); err != nil {
					t.Fatal(err)
				}
				tc.edit(f)
				data, _ := json.Marshal(f)
				write(t, path, string(data))
			}
			code, stdout, stderr := runCLI(t, context.Background(), "attest", path)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d with %q\n%s\n%s", code, exitUsage, tc.want, stdout, stderr)
			}
		})
	}
}

// rewrite is statement with edit applied, written to a file.
func rewrite(t *testing.T, statement []byte, edit func(map[string]any)) string {
	t.Helper()
	var st map[string]any
	if err := json.Unmarshal(statement, &st); err != nil {
		t.Fatal(err)
	}
	edit(st)
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "edited.intoto.json")
	write(t, p, string(data))
	return p
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
