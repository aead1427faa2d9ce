package history

import (
	"crypto/sha256"
	"sync"

	"github.com/benchci/benchci/framework/result"
)

// maxCached bounds the histograms histCache remembers (about 200 bytes
// each, so 50 MB at most): past it, a histogram not yet seen is decoded
// each time it comes, and not kept.
const maxCached = 1 << 18

// histCache verifies each distinct histogram once across a history's
// versions: keyed by the SHA-256 of its encoding, it keeps the summary
// the decoded histogram makes (at each scale asked) and one copy of the
// encoding, which the versions' kept points share. A baseline commit
// that re-records some points leaves the others' histograms byte for
// byte as they were: those are neither decoded again nor held twice.
type histCache struct {
	mu      sync.Mutex
	entries map[histKey]*histEntry
	decoded int
}

type histKey struct {
	sum   [sha256.Size]byte
	scale float64
}

type histEntry struct {
	ready   chan struct{} // closed once summary and err are set
	summary result.Summary
	err     error
	enc     string
}

func newHistCache() *histCache { return &histCache{entries: map[histKey]*histEntry{}} }

// summarize is result.VerifyOptions.Summarize: the summary of the
// histogram enc encodes, decoded the first time its contents come (once,
// however many goroutines ask for it at once).
func (c *histCache) summarize(enc string, scale float64) (result.Summary, error) {
	k := histKey{sha256.Sum256([]byte(enc)), scale}
	c.mu.Lock()
	e, ok := c.entries[k]
	if !ok {
		c.decoded++
		e = &histEntry{ready: make(chan struct{}), enc: enc}
		if len(c.entries) < maxCached {
			c.entries[k] = e
		}
	}
	c.mu.Unlock()
	if ok {
		<-e.ready
		return e.summary, e.err
	}
	h, err := result.DecodeHistogram(enc)
	if err == nil {
		e.summary = result.Summarize(h, scale)
	}
	e.err = err
	close(e.ready)
	return e.summary, e.err
}

// intern returns the copy of enc the cache holds (a latency histogram's,
// as the versions' kept points are), or enc.
func (c *histCache) intern(enc string) string {
	k := histKey{sha256.Sum256([]byte(enc)), 1000}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[k]; ok && e.err == nil {
		return e.enc
	}
	return enc
}

// decodes is how many histograms the cache decoded.
func (c *histCache) decodes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.decoded
}
