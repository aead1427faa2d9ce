package history

import (
	"crypto/sha256"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sync"

	"github.com/benchci/benchci/framework/baseline"
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

// shared keeps one copy of each trial and each point's summary figures
// across a history's versions: a baseline commit that re-records some
// points leaves the others as they were, and a history of a large
// baseline would otherwise hold them once a version.
type shared struct {
	mu      sync.Mutex
	trial   map[[sha256.Size]byte]*Trial
	figures map[[sha256.Size]byte]map[string]float64
}

func newShared() *shared {
	return &shared{trial: map[[sha256.Size]byte]*Trial{}, figures: map[[sha256.Size]byte]map[string]float64{}}
}

// trials is what history keeps of ps (trial), each trial the copy
// already kept when an earlier version had it.
func (s *shared) trials(ps []result.Point, intern func(string) string) []*Trial {
	var out []*Trial
	for i := range ps {
		t := trial(&ps[i], intern)
		if t == nil {
			continue
		}
		h := sha256.New()
		fmt.Fprintf(h, "%q %d %x %x", t.Label, t.Completed, math.Float64bits(t.Requests), math.Float64bits(t.Seconds))
		for _, name := range slices.Sorted(maps.Keys(t.Histograms)) {
			fmt.Fprintf(h, " %q %d:", name, len(t.Histograms[name]))
			io.WriteString(h, t.Histograms[name])
		}
		var k [sha256.Size]byte
		h.Sum(k[:0])
		s.mu.Lock()
		if kept, ok := s.trial[k]; ok {
			t = kept
		} else {
			s.trial[k] = t
		}
		s.mu.Unlock()
		out = append(out, t)
	}
	return out
}

// summaries replaces each point's figures with the copy already kept
// when an earlier version had the same ones. The figures are shared:
// nothing may change them.
func (s *shared) summaries(sum []baseline.Summary) {
	for i := range sum {
		h := sha256.New()
		fmt.Fprintf(h, "%q", sum[i].Point)
		for _, name := range slices.Sorted(maps.Keys(sum[i].Figures)) {
			fmt.Fprintf(h, " %q %x", name, math.Float64bits(sum[i].Figures[name]))
		}
		var k [sha256.Size]byte
		h.Sum(k[:0])
		s.mu.Lock()
		if kept, ok := s.figures[k]; ok {
			sum[i].Figures = kept
		} else {
			s.figures[k] = sum[i].Figures
		}
		s.mu.Unlock()
	}
}
