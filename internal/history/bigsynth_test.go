package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/result"
)

// bigSynth makes large baselines: quickstart's four points copied to n
// points (rates 2, 6, 12, 20, then 102, 106, ...), about 9 KiB a point,
// so 1,500 points make the 13 MB baseline of issue 40.
type bigSynth struct {
	tb   testing.TB
	src  *baseline.File
	base []result.Point
	ttft []*hdrhistogram.Histogram
}

func newBigSynth(tb testing.TB, n int) *bigSynth {
	src, err := baseline.Read(quickstart)
	if err != nil {
		tb.Fatal(err)
	}
	g := &bigSynth{tb: tb, src: src}
	for i := range n {
		p := src.Result.Points[i%len(src.Result.Points)]
		p.Rate += float64(100 * (i / len(src.Result.Points)))
		p.Label = fmt.Sprintf("rate=%g", p.Rate)
		h, err := result.DecodeHistogram(p.Histograms["ttft"])
		if err != nil {
			tb.Fatal(err)
		}
		g.base = append(g.base, p)
		g.ttft = append(g.ttft, h)
	}
	return g
}

// baseline is the big baseline with TTFT at a level at every point and,
// at the points moved, 1% noise besides: a version that re-recorded
// those points and kept the rest.
func (g *bigSynth) baseline(level float64, moved []int, rng *rand.Rand) []byte {
	r := *g.src.Result
	r.Points = append([]result.Point(nil), g.base...)
	for _, i := range moved {
		g.setTTFT(&r.Points[i], i, level*(1+0.01*rng.NormFloat64()))
	}
	if level != 1 {
		for i := range r.Points {
			if !contains(moved, i) {
				g.setTTFT(&r.Points[i], i, level)
			}
		}
	}
	b, err := baseline.FromResult(&r, "")
	if err != nil {
		g.tb.Fatal(err)
	}
	b.Provenance.Host = "test"
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(b); err != nil {
		g.tb.Fatal(err)
	}
	return buf.Bytes()
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func (g *bigSynth) setTTFT(p *result.Point, i int, f float64) {
	out := scaled(g.ttft[i], f)
	enc, err := result.EncodeHistogram(out)
	if err != nil {
		g.tb.Fatal(err)
	}
	hs := make(map[string]string, len(p.Histograms))
	for k, v := range p.Histograms {
		hs[k] = v
	}
	hs["ttft"] = enc
	p.Histograms = hs
	lat := make(map[string]result.Summary, len(p.Latency))
	for k, v := range p.Latency {
		lat[k] = v
	}
	lat["ttft"] = result.Summarize(out, 1000)
	p.Latency = lat
}

// bigRepo makes a repository of commits versions of an n-point baseline:
// each version re-records `moved` points (every point when moved >= n),
// TTFT rising 30% at the middle version.
func bigRepo(tb testing.TB, n, commits, moved int) string {
	tb.Helper()
	s := newStore(tb)
	g := newBigSynth(tb, n)
	rng := rand.New(rand.NewPCG(uint64(n), 9))
	for c := range commits {
		level := 1.0
		if c >= commits/2 {
			level = 1.3
		}
		var m []int
		for len(m) < min(moved, n) {
			if moved >= n {
				m = append(m, len(m))
			} else {
				m = append(m, rng.IntN(n))
			}
		}
		s.commit(fmt.Sprintf("baseline update %d", c+1), s.blob(g.baseline(level, m, rng)))
	}
	return s.dir
}
