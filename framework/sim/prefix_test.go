package sim

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

func tokens(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

// The cache holds whole leading blocks, chained: the same block after a
// different one is not a hit; a prompt seen whole still computes its last
// token; a reset forgets.
func TestPrefixCacheBlocks(t *testing.T) {
	var c prefixCache
	shared := tokens("s", 48)
	if got := c.lookup(append(shared, tokens("a", 20)...)); got != 0 {
		t.Errorf("cold: %d cached", got)
	}
	cases := []struct {
		name string
		seq  []string
		want int
	}{
		{"three shared blocks", append(shared, tokens("b", 30)...), 48},
		{"40 shared tokens: two whole blocks", append(shared[:40:40], tokens("c", 30)...), 32},
		{"same blocks, shifted by one token", append([]string{"x"}, shared...), 0},
		{"seen whole", append(shared, tokens("b", 30)...), 48 + 16},
		{"shorter than a block", shared[:10], 0},
	}
	for _, tc := range cases {
		if got := c.lookup(tc.seq); got != tc.want {
			t.Errorf("%s: %d cached, want %d", tc.name, got, tc.want)
		}
	}
	same := append(shared[:32:32], tokens("d", 32)...)
	c.lookup(same)
	if got := c.lookup(same); got != 63 {
		t.Errorf("a prompt seen whole: %d cached, want all but its last token (63)", got)
	}
	c.reset()
	if got := c.lookup(same); got != 0 {
		t.Errorf("after a reset: %d cached", got)
	}
}

// /metrics counts prompt tokens looked up and found under vLLM's names,
// and POST /reset_prefix_cache empties the cache.
func TestPrefixCacheServed(t *testing.T) {
	p, _ := Lookup("llama3-8b-h100") // caches prefixes, as vLLM V1 does by default
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u, err := New(p).Listen(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	prompt := strings.Repeat("alpha beta gamma delta ", 16) // 64 words
	post := func(path, body string) {
		t.Helper()
		resp, err := http.Post(u+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s", path, resp.Status)
		}
	}
	metric := func(name string) int {
		resp, err := http.Get(u + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				n, _ := strconv.Atoi(v)
				return n
			}
		}
		t.Fatalf("no %s in /metrics", name)
		return 0
	}
	body := `{"prompt":"` + prompt + `","max_tokens":2}`
	post("/v1/completions", body)
	post("/v1/completions", body)
	if q, h := metric("vllm:prefix_cache_queries_total"), metric("vllm:prefix_cache_hits_total"); q != 128 || h != 63 {
		t.Errorf("queries %d, hits %d; want 128 and 63", q, h)
	}
	post("/reset_prefix_cache", "")
	post("/v1/completions", body)
	if h := metric("vllm:prefix_cache_hits_total"); h != 63 {
		t.Errorf("after a reset, hits rose to %d", h)
	}
}

// A sequence prefills only the tokens the cache does not hold, and at
// least one.
func TestCachedPrefill(t *testing.T) {
	for _, c := range []struct{ prompt, cached, want int }{{214, 0, 214}, {214, 208, 6}, {64, 64, 1}} {
		if got := newSeq(c.prompt, c.cached, 1).prefillLeft; got != c.want {
			t.Errorf("prompt %d, cached %d: prefill %d, want %d", c.prompt, c.cached, got, c.want)
		}
	}
}
