package sim

import (
	"container/list"
	"hash/maphash"
	"strings"
)

// BlockTokens is the block of profiles that set none: vLLM's default
// block size. A prompt's cached part is its longest run of leading whole
// blocks that an earlier prompt also began with, as vLLM's automatic
// prefix caching hashes each block together with the blocks before it.
const BlockTokens = 16

// prefixBlocks bounds the cached blocks of a profile without a sized KV
// cache (2M tokens); past it the least recently used are forgotten first.
const prefixBlocks = 1 << 17

// blockHasher makes the chained hashes of a prompt's whole blocks as its
// tokens come: the hash of block j covers every token up to its end, so a
// block matches only after the same blocks. The handler computes them,
// off the engine's goroutine, without a slice of the tokens (a 4M-token
// prompt's would be 64 MB, and its making twice that).
type blockHasher struct {
	h      maphash.Hash
	size   int
	n      int      // tokens so far
	hashes []uint64 // of the whole blocks so far
}

func newBlockHasher(seed maphash.Seed, size int) *blockHasher {
	// Never nil, even for a prompt shorter than a block: the engine reads
	// non-nil hashes as "the prefix cache was asked" (its hit rate).
	b := &blockHasher{size: size, hashes: []uint64{}}
	b.h.SetSeed(seed)
	return b
}

func (b *blockHasher) add(token string) {
	b.h.WriteString(token)
	b.h.WriteByte(0)
	if b.n++; b.n%b.size == 0 {
		b.hashes = append(b.hashes, b.h.Sum64())
	}
}

// kvBlock is a KV-cache block whose tokens have a known prefix hash, so
// other sequences can share it. refs counts the sequences holding it;
// with none it stays cached, evictable, until its memory is needed.
type kvBlock struct {
	hash       uint64
	refs       int
	registered bool          // findable by its hash (false after a reset)
	lru        *list.Element // in the evictable list while refs == 0
}

// kvPool is the engine's KV cache in the manner of vLLM V1's block
// manager: blocks are free, private to a sequence (the ones still being
// filled, and generated tokens), or cached under their prefix hash and
// shared by every sequence whose prompt begins with the same blocks.
// Cached blocks no sequence holds are reused last, least recently
// released first, so under memory pressure the prefix cache shrinks to
// what running sequences leave over, as it does on a real server. Only
// the engine goroutine touches it.
type kvPool struct {
	capacity  int // blocks; 0: unlimited (the constant profiles)
	free      int // never used, or released private blocks
	cached    map[uint64]*kvBlock
	evictable *list.List // kvBlocks with refs == 0, oldest release first
}

func newKVPool(capacity int) *kvPool {
	return &kvPool{capacity: capacity, free: capacity, cached: map[uint64]*kvBlock{}, evictable: list.New()}
}

// available is how many blocks an allocation may take: the free ones and
// the cached ones no sequence holds.
func (k *kvPool) available() int { return k.free + k.evictable.Len() }

// used is the blocks sequences hold, for the usage gauge (0 without a
// sized cache).
func (k *kvPool) used() int {
	if k.capacity == 0 {
		return 0
	}
	return k.capacity - k.available()
}

// take reserves n private blocks, evicting cached ones when the free run
// out; false, with nothing taken, when the cache cannot hold them.
//
//go:norace
func (k *kvPool) take(n int) bool {
	if k.capacity == 0 || n <= 0 {
		return true
	}
	if n > k.available() {
		return false
	}
	f := min(n, k.free)
	k.free -= f
	for range n - f {
		k.evict()
	}
	return true
}

// evict forgets the least recently released cached block; its memory
// becomes the caller's.
//
//go:norace
func (k *kvPool) evict() {
	b := k.evictable.Remove(k.evictable.Front()).(*kvBlock)
	b.lru = nil
	if b.registered {
		delete(k.cached, b.hash)
	}
}

// give returns n private blocks.
//
//go:norace
func (k *kvPool) give(n int) {
	if k.capacity > 0 {
		k.free += n
	}
}

// ref takes a hold on a cached block.
//
//go:norace
func (k *kvPool) ref(b *kvBlock) {
	if b.refs == 0 && b.lru != nil {
		k.evictable.Remove(b.lru)
		b.lru = nil
	}
	b.refs++
}

// unref drops a hold; a block no one holds stays cached (evictable) if
// it can still be found, and is free memory otherwise.
//
//go:norace
func (k *kvPool) unref(b *kvBlock) {
	b.refs--
	if b.refs > 0 {
		return
	}
	if !b.registered {
		k.give(1)
		return
	}
	b.lru = k.evictable.PushBack(b)
	if k.capacity == 0 {
		for len(k.cached) > prefixBlocks && k.evictable.Len() > 0 {
			k.evict()
		}
	}
}

// match holds the cached blocks hashes begins with, at most limit of them.
//
//go:norace
func (k *kvPool) match(hashes []uint64, limit int) []*kvBlock {
	var out []*kvBlock
	for _, h := range hashes[:min(limit, len(hashes))] {
		b, ok := k.cached[h]
		if !ok {
			break
		}
		k.ref(b)
		out = append(out, b)
	}
	return out
}

// register makes one of a sequence's private blocks findable under hash,
// held by that sequence; if another sequence registered the same hash
// first, the sequence shares that block and its private one is freed.
//
//go:norace
func (k *kvPool) register(hash uint64) *kvBlock {
	if b, ok := k.cached[hash]; ok {
		k.ref(b)
		k.give(1)
		return b
	}
	b := &kvBlock{hash: hash, refs: 1, registered: true}
	k.cached[hash] = b
	return b
}

// reset forgets every cached block, as vLLM's /reset_prefix_cache and
// SGLang's /flush_cache do: the ones no sequence holds become free, the
// held ones stay with their sequences but can no longer be found. The
// counters keep counting.
func (k *kvPool) reset() {
	for k.evictable.Len() > 0 {
		k.evict()
		k.give(1)
	}
	for h, b := range k.cached {
		b.registered = false
		delete(k.cached, h)
	}
}

// hashPrompt feeds a prompt to b as the simulator's tokenizer sees it:
// per message (chat), the chat template's tokens for its role, then its
// words; after the last, the assistant header.
func hashPrompt(b *blockHasher, msgs []string, roles []string, templateTokens int, chat bool) {
	for i, text := range msgs {
		if chat {
			role := "<|" + roles[i] + "|>"
			for range templateTokens {
				b.add(role)
			}
		}
		for w := range strings.FieldsSeq(text) {
			b.add(w)
		}
	}
	if chat {
		for range 3 {
			b.add("<|assistant|>")
		}
	}
}
