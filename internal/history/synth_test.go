package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/result"
)

// store writes commits straight into a repository's object store, with
// no work tree, so that a few thousand commits take seconds: each commit
// holds a README and, unless its blob is zero, baselines/quickstart.json.
type store struct {
	tb     testing.TB
	dir    string
	r      *git.Repository
	parent []plumbing.Hash
	when   time.Time
}

func newStore(tb testing.TB) *store {
	dir := tb.TempDir()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		tb.Fatal(err)
	}
	return &store{tb: tb, dir: dir, r: r, when: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}
}

func (s *store) put(enc func(o plumbing.EncodedObject) error) plumbing.Hash {
	o := s.r.Storer.NewEncodedObject()
	if err := enc(o); err != nil {
		s.tb.Fatal(err)
	}
	h, err := s.r.Storer.SetEncodedObject(o)
	if err != nil {
		s.tb.Fatal(err)
	}
	return h
}

func (s *store) blob(data []byte) plumbing.Hash {
	return s.put(func(o plumbing.EncodedObject) error {
		o.SetType(plumbing.BlobObject)
		w, err := o.Writer()
		if err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
		return w.Close()
	})
}

func (s *store) tree(entries ...object.TreeEntry) plumbing.Hash {
	return s.put((&object.Tree{Entries: entries}).Encode)
}

// commit commits a tree holding the baseline blob b (none if zero) on
// the branch, and returns the commit's hash.
func (s *store) commit(msg string, b plumbing.Hash) string {
	s.tb.Helper()
	entries := []object.TreeEntry{{Name: "README.md", Mode: filemode.Regular, Hash: s.blob([]byte(msg))}}
	if !b.IsZero() {
		dir := s.tree(object.TreeEntry{Name: "quickstart.json", Mode: filemode.Regular, Hash: b})
		entries = append(entries, object.TreeEntry{Name: "baselines", Mode: filemode.Dir, Hash: dir})
	}
	s.when = s.when.Add(time.Hour)
	sig := object.Signature{Name: "Test", Email: "test@example.invalid", When: s.when}
	c := &object.Commit{Author: sig, Committer: sig, Message: msg + "\n", TreeHash: s.tree(entries...), ParentHashes: s.parent}
	h := s.put(c.Encode)
	s.parent = []plumbing.Hash{h}
	if err := s.r.Storer.SetReference(plumbing.NewHashReference(plumbing.Master, h)); err != nil {
		s.tb.Fatal(err)
	}
	return h.String()
}

// synthRepo makes a repository of n commits on one line, each changing
// baselines/quickstart.json: TTFT rises 30% at the middle commit, every
// other figure keeps its level, and 1% noise moves TTFT and the output
// throughput in every version, so that every commit's blob is new.
func synthRepo(tb testing.TB, n int) string {
	tb.Helper()
	s := newStore(tb)
	g := newSynth(tb)
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	for i := range n {
		level := 1.0
		if i >= n/2 {
			level = 1.3
		}
		s.commit(fmt.Sprintf("baseline update %d", i+1), s.blob(g.baseline(level, rng)))
	}
	return s.dir
}

// synth makes quickstart baselines with TTFT at a level.
type synth struct {
	tb   testing.TB
	src  *baseline.File
	ttft map[string]*hdrhistogram.Histogram
}

func newSynth(tb testing.TB) *synth {
	src, err := baseline.Read(quickstart)
	if err != nil {
		tb.Fatal(err)
	}
	ttft := map[string]*hdrhistogram.Histogram{}
	for _, p := range src.Result.Points {
		if ttft[p.Label], err = result.DecodeHistogram(p.Histograms["ttft"]); err != nil {
			tb.Fatal(err)
		}
	}
	return &synth{tb, src, ttft}
}

func (g *synth) baseline(level float64, rng *rand.Rand) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(synthBaseline(g.tb, g.src, g.ttft, level, rng)); err != nil {
		g.tb.Fatal(err)
	}
	return b.Bytes()
}

// synthBaseline is src with TTFT scaled by level and 1% noise, and the
// output throughput moved by 1% noise, summarized as benchci writes it.
func synthBaseline(tb testing.TB, src *baseline.File, ttft map[string]*hdrhistogram.Histogram, level float64, rng *rand.Rand) *baseline.File {
	r := *src.Result
	r.Points = append([]result.Point(nil), r.Points...)
	for i := range r.Points {
		p := &r.Points[i]
		f := level * (1 + 0.01*rng.NormFloat64())
		h := ttft[p.Label]
		out := hdrhistogram.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
		for _, b := range h.Distribution() {
			if b.Count > 0 {
				out.RecordValues(int64(float64(b.To)*f), b.Count)
			}
		}
		enc, err := result.EncodeHistogram(out)
		if err != nil {
			tb.Fatal(err)
		}
		p.Histograms = map[string]string{}
		for k, v := range src.Result.Points[i].Histograms {
			p.Histograms[k] = v
		}
		p.Histograms["ttft"] = enc
		p.Latency = map[string]result.Summary{}
		for k, v := range src.Result.Points[i].Latency {
			p.Latency[k] = v
		}
		p.Latency["ttft"] = result.Summarize(out, 1000)
		p.Throughput.OutputTokens *= 1 + 0.01*rng.NormFloat64()
	}
	b, err := baseline.FromResult(&r, "")
	if err != nil {
		tb.Fatal(err)
	}
	b.Provenance.Host = "test"
	return b
}
