package sim

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
)

// BlockTokens is the prefix cache's block: vLLM's default block size. A
// prompt's cached part is its longest run of leading whole blocks that an
// earlier prompt also began with, as vLLM's automatic prefix caching
// hashes each block together with the blocks before it.
const BlockTokens = 16

// prefixBlocks bounds the cache (2M tokens); past it the oldest block
// hashes are forgotten first, as a full KV cache evicts.
const prefixBlocks = 1 << 17

// prefixCache holds the hashes of the blocks prompts began with, and
// counts prompt tokens looked up and found, as vLLM's
// prefix_cache_queries and prefix_cache_hits counters do.
type prefixCache struct {
	mu    sync.Mutex
	seed  maphash.Seed
	set   map[uint64]struct{}
	ring  []uint64 // insertion order, for eviction
	next  int
	hits  atomic.Int64
	total atomic.Int64
}

// lookup returns how many of tokens' leading tokens are cached (whole
// blocks, and never the last token, which is always computed), and
// remembers every whole block of tokens.
func (c *prefixCache) lookup(tokens []string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.set == nil {
		c.seed = maphash.MakeSeed()
		c.set = make(map[uint64]struct{})
	}
	var h maphash.Hash
	h.SetSeed(c.seed)
	cached, matching := 0, true
	for b := 0; b+BlockTokens <= len(tokens); b += BlockTokens {
		// The hash so far covers every token up to this block's end: a
		// block matches only after the same blocks.
		for _, t := range tokens[b : b+BlockTokens] {
			h.WriteString(t)
			h.WriteByte(0)
		}
		key := h.Sum64()
		if _, ok := c.set[key]; ok && matching {
			cached = b + BlockTokens
			continue
		}
		matching = false
		c.remember(key)
	}
	cached = max(0, min(cached, len(tokens)-1))
	c.total.Add(int64(len(tokens)))
	c.hits.Add(int64(cached))
	return cached
}

func (c *prefixCache) remember(key uint64) {
	if _, ok := c.set[key]; ok {
		return
	}
	if len(c.ring) < prefixBlocks {
		c.ring = append(c.ring, key)
	} else {
		delete(c.set, c.ring[c.next])
		c.ring[c.next] = key
		c.next = (c.next + 1) % prefixBlocks
	}
	c.set[key] = struct{}{}
}

// reset forgets every block, as vLLM's /reset_prefix_cache and SGLang's
// /flush_cache do; the counters keep counting.
func (c *prefixCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set, c.ring, c.next = nil, nil, 0
}

// promptSequence is a prompt as the simulator's tokenizer sees it: per
// message, its chat template's tokens (standing for the role markers)
// then one token per word; the assistant header closes a chat.
func promptSequence(msgs []string, roles []string, templateTokens int, chat bool) []string {
	var out []string
	for i, text := range msgs {
		if chat {
			for range templateTokens {
				out = append(out, "<|"+roles[i]+"|>")
			}
		}
		out = append(out, strings.Fields(text)...)
	}
	if chat {
		out = append(out, "<|assistant|>", "<|assistant|>", "<|assistant|>")
	}
	return out
}
