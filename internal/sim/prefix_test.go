package sim

import (
	"context"
	"hash/maphash"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func tokens(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

// Blocks are shared by their chained hash, held while a sequence uses
// them, cached after, and evicted least recently released first when the
// memory is needed; a reset forgets them.
func TestKVPoolSharesAndEvicts(t *testing.T) {
	seed := maphash.MakeSeed()
	shared := blockHashes(seed, tokens("s", 48), 16)
	k := newKVPool(8)
	// A sequence fills four blocks, three of them whole prompt blocks.
	if !k.take(4) {
		t.Fatal("take 4 of 8")
	}
	var held []*kvBlock
	for _, h := range shared {
		held = append(held, k.register(h))
	}
	if k.used() != 4 || len(k.cached) != 3 {
		t.Fatalf("used %d, cached %d; want 4 and 3", k.used(), len(k.cached))
	}
	for _, b := range held {
		k.unref(b)
	}
	k.give(1)
	if k.used() != 0 || k.available() != 8 || k.evictable.Len() != 3 {
		t.Fatalf("after release: used %d, available %d, evictable %d", k.used(), k.available(), k.evictable.Len())
	}
	// The same blocks after a different one are another chain.
	if got := k.match(blockHashes(seed, append(tokens("x", 16), tokens("s", 48)...), 16), 10); len(got) != 0 {
		t.Errorf("shifted prompt matched %d blocks", len(got))
	}
	got := k.match(append(shared, 42), 10)
	if len(got) != 3 || k.used() != 3 {
		t.Fatalf("matched %d blocks, used %d; want 3 and 3", len(got), k.used())
	}
	if m := k.match(shared, 2); len(m) != 2 {
		t.Errorf("a limit of 2 matched %d", len(m))
	} else {
		for _, b := range m {
			k.unref(b)
		}
	}
	for _, b := range got {
		k.unref(b)
	}
	// Memory pressure: seven blocks for others evict the two released
	// first, and a chain without its first block matches nothing.
	if !k.take(7) {
		t.Fatal("take 7 with 5 free and 3 cached")
	}
	if len(k.cached) != 1 || len(k.match(shared, 10)) != 0 {
		t.Errorf("cached %d blocks after eviction; the chain should be broken", len(k.cached))
	}
	if k.take(2) || k.available() != 1 {
		t.Errorf("took 2 with 1 available (available now %d)", k.available())
	}
	k.give(7) // the others finish: 7 free and one cached block
	// A reset frees what no one holds and unlists what a sequence holds,
	// which is freed when the sequence lets go of it.
	if !k.take(1) {
		t.Fatal("take 1")
	}
	b := k.register(shared[0])
	k.reset()
	if len(k.cached) != 0 || k.evictable.Len() != 0 || k.available() != 7 {
		t.Errorf("after reset: cached %d, evictable %d, available %d; want 0, 0, 7", len(k.cached), k.evictable.Len(), k.available())
	}
	k.unref(b)
	if k.available() != 8 || k.used() != 0 {
		t.Errorf("after the holder let go: available %d, used %d; want 8 and 0", k.available(), k.used())
	}
}

// A sequence prefills only what the cache does not hold, in whole blocks,
// and at least its last token: a prompt seen whole recomputes its last
// block, as vLLM V1 does.
func TestCachedPrefill(t *testing.T) {
	p, _ := Lookup("tiny")
	p.PrefixCaching = true
	e := newEngine(p)
	seed := maphash.MakeSeed()
	run := func(toks []string) int {
		t.Helper()
		s := newSeq(len(toks), 1, blockHashes(seed, toks, BlockTokens))
		e.waiting = append(e.waiting, s)
		b := e.schedule(time.Now())
		e.emit()
		if !s.live.finished.Load() {
			t.Fatal("a one-token request did not finish in its prefill step")
		}
		return b.prefill
	}
	prompt := tokens("p", 64)
	for _, c := range []struct {
		name string
		toks []string
		want int
	}{
		{"cold", prompt, 64},
		{"seen whole: the last block again", prompt, 16},
		{"six more tokens after it", append(prompt[:64:64], tokens("q", 6)...), 6},
		{"shorter than a block", prompt[:10], 10},
	} {
		if got := run(c.toks); got != c.want {
			t.Errorf("%s: prefilled %d, want %d", c.name, got, c.want)
		}
	}
}

// Under memory pressure the cache keeps what running sequences leave over:
// a long prompt that needs the whole KV cache evicts an earlier prefix,
// which then misses.
func TestPrefixCacheShrinksUnderMemoryPressure(t *testing.T) {
	t.Parallel()
	p, _ := Lookup("tiny")
	p.PrefixCaching, p.KVBlocks, p.BlockSize, p.MaxModelLen = true, 40, 16, 2048
	s, u := startServer(t, p)
	traces := make(chan Trace, 1)
	s.OnTrace = func(tr Trace) { traces <- tr }
	ask := func(prompt string) int {
		t.Helper()
		if code, out := post(t, u+"/v1/completions", `{"prompt":"`+prompt+`","max_tokens":1,"stream":true}`); code != 200 {
			t.Fatalf("HTTP %d %s", code, out)
		}
		return (<-traces).CachedTokens
	}
	system := strings.Repeat("rule ", 300) // 18 whole blocks of 16 tokens, 288
	other := strings.Repeat("other ", 600) // 38 blocks: all but two of the cache
	if got := []int{ask(system), ask(system)}; got[0] != 0 || got[1] != 288 {
		t.Fatalf("cached %v, want [0 288]", got)
	}
	ask(other)
	if got := ask(system); got != 0 {
		t.Errorf("after a prompt that needed the whole cache, %d tokens still cached", got)
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
	// The second prompt is held whole but its last block is recomputed.
	if q, h := metric("vllm:prefix_cache_queries_total"), metric("vllm:prefix_cache_hits_total"); q != 128 || h != 48 {
		t.Errorf("queries %d, hits %d; want 128 and 48", q, h)
	}
	post("/reset_prefix_cache", "")
	post("/v1/completions", body)
	if h := metric("vllm:prefix_cache_hits_total"); h != 48 {
		t.Errorf("after a reset, hits rose to %d", h)
	}
}

// The waiting gauge counts arrivals the loop has not taken in yet, and
// the simulator's peak gauge holds the queue's highest since the last
// scrape: a scrape between two bursts still sees them.
func TestWaitingPeakBetweenScrapes(t *testing.T) {
	e := newEngine(testProfile())
	for range 3 {
		if err := e.submit(t.Context(), &seq{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.waitingNow(); n != 3 {
		t.Errorf("waiting now %d, want the 3 arrivals not yet taken in", n)
	}
	for range 3 {
		<-e.arrivals
		e.pending.Add(-1)
	}
	if p := e.takePeak(); p != 3 {
		t.Errorf("peak %d, want 3", p)
	}
	if p := e.takePeak(); p != 0 {
		t.Errorf("peak after a scrape read it %d, want 0: the queue is empty now", p)
	}
}

// blockHashes returns the chained hashes of tokens' whole blocks.
func blockHashes(seed maphash.Seed, tokens []string, size int) []uint64 {
	b := newBlockHasher(seed, size)
	for _, t := range tokens {
		b.add(t)
	}
	return b.hashes
}
