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
}`, u, trace))
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
