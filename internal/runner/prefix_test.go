package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/sim"
)

// agenticTrace writes a trace of conversations that share a system
// prompt of two blocks and grow their own context a block a turn, turns
// interleaved across conversations; it returns the path and the share of
// prompt tokens a prefix cache of whole blocks would hold replaying it.
func agenticTrace(t *testing.T, dir string, block, conversations, turns int) (string, float64) {
	t.Helper()
	var lines []string
	seen := map[string]bool{}
	var cached, total float64
	i := 0
	for turn := range turns {
		for c := range conversations {
			ids := []int{0, 1}
			for k := 0; k <= turn; k++ {
				ids = append(ids, 1000*(c+1)+k)
			}
			input := len(ids)*block + 20 // whole blocks, and a tail of the request's own
			shared := 0
			for j := 1; j <= len(ids); j++ {
				if !seen[fmt.Sprint(ids[:j])] {
					break
				}
				shared = j
			}
			for j := 1; j <= len(ids); j++ {
				seen[fmt.Sprint(ids[:j])] = true
			}
			cached += float64(shared * block)
			total += float64(input)
			b, _ := json.Marshal(map[string]any{"timestamp": float64(i) * 0.05, "input_tokens": input, "output_tokens": 4, "hash_ids": ids})
			lines = append(lines, string(b))
			i++
		}
	}
	path := filepath.Join(dir, "agentic.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, cached / total
}

// A trace's prefix structure reaches the server: replayed against the
// simulator's block prefix cache, the hit rate the server reports for a
// point is the one the trace implies, within 5%; and with the cache reset
// before every point, the second point's rate is its own, not inflated by
// the first's.
func TestTracePrefixReuse(t *testing.T) {
	dir := t.TempDir()
	trace, implied := agenticTrace(t, dir, 64, 30, 8)
	p, _ := sim.Lookup("llama3-8b-h100") // caches prefixes, as vLLM V1 does by default
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u, err := sim.New(p).Listen(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := runSource(t, filepath.Join(dir, "agentic.jsonnet"), fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'agentic',
  target: b.target.url('%s'),
  workload: {
    input_tokens: b.dist.fixed(100), output_tokens: b.dist.fixed(4),
    arrival: b.arrival.trace('%s', block_tokens=64),
  },
  sweep: b.sweep.rates([40, 60], duration='10s', warmup='0s', requests=240) + { reset_prefix_cache: true },
}`, u, filepath.Base(trace))) // beside the suite: a suite reads only its repository
	if len(f.Points) != 2 {
		t.Fatalf("%d points", len(f.Points))
	}
	for _, pt := range f.Points {
		got, ok := pt.Server["prefix_cache_hit_rate"]
		if !ok || math.Abs(got-implied) > 0.05*implied {
			t.Errorf("%s: hit rate %.4f (reported: %v), the trace implies %.4f", pt.Label, got, ok, implied)
		}
		if pt.PrefixCacheReset != "reset by POST /reset_prefix_cache" || pt.Requests.Sent != 240 {
			t.Errorf("%s: reset %q, sent %d", pt.Label, pt.PrefixCacheReset, pt.Requests.Sent)
		}
		t.Logf("%s: hit rate %.4f, implied %.4f", pt.Label, got, implied)
	}
	if slices.ContainsFunc(f.Notes, func(n string) bool { return strings.Contains(n, "prompts") && strings.Contains(n, "off") }) {
		t.Errorf("prompts missed their lengths: %q", f.Notes)
	}
}

// The issue a team hits on a staging server: the same suite run twice
// against one long-running server is served from the first run's prefix
// cache. Unsalted, the second run's hit rate shows it; with
// workload.prompts.salt: 'run' each run draws its own text and the
// second run is served cold, with the same lengths.
func TestSaltKeepsTheServerCold(t *testing.T) {
	p, _ := sim.Lookup("llama3-8b-h100")
	for _, tc := range []struct {
		salt     string
		warm     bool
		saltSeen func(a, b string) bool
	}{
		{"", true, func(a, b string) bool { return a == "" && b == "" }},
		{"'run'", false, func(a, b string) bool { return len(a) == 16 && len(b) == 16 && a != b }},
		{"'fixed-7'", true, func(a, b string) bool { return a == "fixed-7" && b == "fixed-7" }},
	} {
		t.Run("salt="+tc.salt, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			u, err := sim.New(p).Listen(ctx, "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			salt := ""
			if tc.salt != "" {
				salt = ", salt: " + tc.salt
			}
			src := fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'twice',
  target: b.target.url('%s'),
  workload: {
    input_tokens: b.dist.fixed(256), output_tokens: b.dist.fixed(4),
    arrival: b.arrival.poisson(), prompts: { kind: 'synthetic', calibrate: false%s },
  },
  sweep: b.sweep.rates([40], duration='2s', warmup='0s', requests=40),
}`, u, salt)
			l, err := suitefile.LoadSource(filepath.Join(t.TempDir(), "twice.jsonnet"), src, suitefile.Options{Known: Known()})
			if err != nil {
				t.Fatal(err)
			}
			// No reruns: a rerun empties the server's cache first (it resends
			// its prompts), which would hide the warm server on a busy machine.
			twice := func() *result.File {
				f, err := Run(context.Background(), inputOf(l), Options{Reruns: -1})
				if err != nil {
					t.Fatal(err)
				}
				return f
			}
			first, second := twice(), twice()
			hit := func(f *result.File) float64 {
				v, ok := f.Points[0].Server["prefix_cache_hit_rate"]
				if !ok {
					t.Fatalf("no hit rate recorded: %v", f.Points[0].Server)
				}
				return v
			}
			h1, h2 := hit(first), hit(second)
			t.Logf("hit rates: first %.3f, second %.3f; salts %q, %q", h1, h2, first.PromptSalt, second.PromptSalt)
			if h1 > 0.05 {
				t.Errorf("the first run on a fresh server hit %.3f of its prompt tokens in cache", h1)
			}
			if tc.warm && h2 < 0.8 {
				t.Errorf("the unsalted second run hit only %.3f: the test no longer shows the warm server", h2)
			}
			if !tc.warm && h2 > 0.05 {
				t.Errorf("the salted second run hit %.3f: served from the first run's cache", h2)
			}
			if !tc.saltSeen(first.PromptSalt, second.PromptSalt) {
				t.Errorf("recorded salts %q and %q", first.PromptSalt, second.PromptSalt)
			}
			if a, b := first.Points[0].Tokens.Prompt, second.Points[0].Tokens.Prompt; a.Min != b.Min || a.Max != b.Max || a.Mean != b.Mean {
				t.Errorf("salting changed the prompts' lengths: %+v against %+v", a, b)
			}
		})
	}
}

// One command's drawn salt gives each suite its own (two suites with one
// seed and one length distribution would otherwise send one text), the
// same to a suite's variants and to every shard given the drawn salt; a
// fixed salt is kept as written.
func TestPromptSaltPerSuite(t *testing.T) {
	t.Parallel()
	a, a2, b := PromptSalt("run", "drawn", "chat"), PromptSalt("run", "drawn", "chat"), PromptSalt("run", "drawn", "bursty")
	if a != a2 || a == b || len(a) != 16 {
		t.Errorf("salts %q, %q, %q", a, a2, b)
	}
	if got := PromptSalt("fixed-7", "drawn", "chat"); got != "fixed-7" {
		t.Errorf("fixed salt became %q", got)
	}
	if got := PromptSalt("", "drawn", "chat"); got != "" {
		t.Errorf("an unsalted suite got %q", got)
	}
	if x, y := PromptSalt("run", "", "chat"), PromptSalt("run", "", "chat"); x == y {
		t.Errorf("two runs without a drawn salt drew alike: %q", x)
	}
}
