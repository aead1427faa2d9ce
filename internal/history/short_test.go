package history

import (
	"context"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/internal/changepoint"
	"github.com/benchci/benchci/internal/gitfixture"

	"github.com/benchci/benchci/framework/result"
)

// runBaselineN is the quickstart baseline as a fresh run of an engine at
// a speed would leave it: every point a new sample of about requests
// requests over 60 s, each latency drawn log-normally around the
// quickstart's median times slow (20 chunk gaps a request), and the
// highest-load point, saturated, completing 1/slow as many requests.
func runBaselineN(t *testing.T, src *baseline.File, rng *rand.Rand, slow, requests float64) []byte {
	t.Helper()
	r := *src.Result
	r.Points = append([]result.Point(nil), r.Points...)
	for i := range r.Points {
		p := &r.Points[i]
		mean := requests
		if i == len(r.Points)-1 {
			mean /= slow
		}
		n := int(math.Round(mean + math.Sqrt(mean)*rng.NormFloat64()))
		const window = 60.0
		p.Requests.Sent, p.Requests.Completed, p.Requests.Failed, p.Requests.ErrorRate = n, n, 0, 0
		p.Window.Seconds = window
		p.Throughput.Requests = float64(n) / window
		p.Throughput.OutputTokens = float64(100*n) / window
		p.Throughput.TotalTokens = float64(400*n) / window
		if c := p.Cost; c != nil {
			cc := *c
			cc.PerMOutput = cc.USDPerHour * 1e6 / (3600 * p.Throughput.OutputTokens)
			cc.PerMTotal = cc.USDPerHour * 1e6 / (3600 * p.Throughput.TotalTokens)
			p.Cost = &cc
		}
		p.Latency = map[string]result.Summary{}
		p.Histograms = map[string]string{}
		for _, name := range slices.Sorted(maps.Keys(src.Result.Points[i].Latency)) {
			s := src.Result.Points[i].Latency[name]
			count := n
			if name == "itl" {
				count = 20 * n
			}
			h := hdrhistogram.New(1, 3_600_000_000, 3)
			for range count {
				v := s.P50 * slow * math.Exp(0.35*rng.NormFloat64())
				if err := h.RecordValue(int64(v * 1000)); err != nil {
					t.Fatal(err)
				}
			}
			enc, err := result.EncodeHistogram(h)
			if err != nil {
				t.Fatal(err)
			}
			p.Histograms[name], p.Latency[name] = enc, result.Summarize(h, 1000)
		}
	}
	b, err := baseline.FromResult(&r, "")
	if err != nil {
		t.Fatal(err)
	}
	b.Provenance.Host = "test"
	path := filepath.Join(t.TempDir(), "b.json")
	if err := baseline.Write(path, b); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// sixVersions commits six fresh runs, the engine slow times slower from
// the fourth (slow 1: a flat history), and reads them back.
func sixVersions(t *testing.T, seed uint64, slow float64) []Version {
	t.Helper()
	return sixVersionsN(t, seed, slow, 500)
}

// sixVersionsN is sixVersions with about requests requests a point.
func sixVersionsN(t *testing.T, seed uint64, slow, requests float64) []Version {
	t.Helper()
	src, err := baseline.Read(quickstart)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 30))
	r := gitfixture.New(t)
	for i := range 6 {
		s := 1.0
		if i >= 3 {
			s = slow
		}
		r.Commit("baseline update", map[string][]byte{path: runBaselineN(t, src, rng, s, requests)})
	}
	repo, err := Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := repo.Versions(context.Background(), path)
	if err != nil || len(w.Versions) != 6 {
		t.Fatal(err, w)
	}
	return w.Versions
}

// moved counts a group's series whose level moved by min or more between
// versions 0-2 and 3-5, and of them those named a change at version 3;
// changes counts every change point.
func moved(g *Group, least float64) (moved, named, changes int) {
	for _, s := range g.Series {
		changes += len(s.Changes)
		before := (s.Values[0] + s.Values[1] + s.Values[2]) / 3
		after := (s.Values[3] + s.Values[4] + s.Values[5]) / 3
		if before == 0 || !(math.Abs(after/before-1) >= least) {
			continue
		}
		moved++
		for _, c := range s.Changes {
			if c.Version == 3 {
				named++
				break
			}
		}
	}
	return moved, named, changes
}

// The case: six versions, the engine 30% slower from the fourth.
// Six values give the permutation test 20 splits, so alone it names none
// of the 36 figures that moved 25% or more (its p cannot go under 0.05);
// judged from the versions' histograms it names 35, all at the fourth
// version: every P50, P90, throughput and cost, and every P99 but one
// (TTFT P99 at rate=2, p=0.015 from about 1,500 requests a side, short of
// 0.01). Over 20 flat six-version histories (fresh samples, no step) no
// change point is named.
func TestShortSeriesNamesEveryFigureThatMoved(t *testing.T) {
	versions := sixVersions(t, 1, 1.3)
	analyze := func(vs []Version, judged bool) Group {
		t.Helper()
		defer func(j bool) { judging = j }(judging)
		judging = judged
		gs := Analyze(vs, changepoint.Options{})
		if len(gs) != 1 {
			t.Fatalf("%d groups", len(gs))
		}
		return gs[0]
	}
	g := analyze(versions, true)
	m, named, _ := moved(&g, 0.25)
	_, before, _ := moved(new(analyze(versions, false)), 0.25)
	t.Logf("six versions, 30%% slower at the fourth: %d figures moved 25%% or more; named %d by the permutation test alone, %d with the histograms", m, before, named)
	if m < 30 || named < m-1 {
		for _, s := range g.Series {
			if len(s.Changes) > 0 {
				continue
			}
			t.Logf("%s %s %v %+v", s.Point, s.Figure, s.Values, s.Changes)
		}
		t.Errorf("named %d of %d figures that moved 25%% or more", named, m)
	}
	if before >= named {
		t.Errorf("the permutation test alone named %d of %d: the case no longer shows the short series' problem", before, m)
	}
	for _, s := range g.Series {
		for _, c := range s.Changes {
			if c.Version != 3 {
				t.Errorf("%s at %s: a change at version %d", s.Figure, s.Point, c.Version)
			}
			if c.P > 0.05 && c.Test == "" {
				t.Errorf("%s at %s: p=%.3f and no test said why", s.Figure, s.Point, c.P)
			}
		}
	}

	// Flat histories: six versions drawn without replacement from one pool
	// of 24 fresh runs. The first four are disjoint, so independent; the
	// other 16 reuse runs in new orders and mixes. Drawing from a pool,
	// rather than making 120 runs, is what keeps this test to seconds
	// under the race detector (making and reading a run is most of its
	// cost); a run's place in a history is what the change point search
	// sees, and each history is still six exchangeable runs of one engine.
	false_ := 0
	for h, vs := range drawHistories(flatVersions(t, 24), rand.New(rand.NewPCG(100, 30))) {
		g := analyze(vs, true)
		_, _, c := moved(&g, 0.25)
		false_ += c
		for _, s := range g.Series {
			for _, c := range s.Changes {
				t.Logf("flat history %d: %s at %s: %+v", h, s.Figure, s.Point, c)
			}
		}
	}
	t.Logf("20 flat six-version histories: %d change points", false_)
	if false_ != 0 {
		t.Errorf("%d change points in 20 flat histories, want 0", false_)
	}
}

// drawHistories draws 20 six-version histories from a pool of 24 runs:
// the first four disjoint, so independent, the other 16 in new orders
// and mixes drawn by rng.
func drawHistories(pool []Version, rng *rand.Rand) [][]Version {
	var out [][]Version
	for h := range 20 {
		if h < 4 {
			out = append(out, slices.Clone(pool[6*h:6*h+6]))
			continue
		}
		var vs []Version
		for _, i := range rng.Perm(len(pool))[:6] {
			vs = append(vs, pool[i])
		}
		out = append(out, vs)
	}
	return out
}

// flatVersions commits n fresh runs of one engine and reads them back.
func flatVersions(t *testing.T, n int) []Version {
	t.Helper()
	src, err := baseline.Read(quickstart)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 30))
	r := gitfixture.New(t)
	for range n {
		r.Commit("baseline update", map[string][]byte{path: runBaselineN(t, src, rng, 1, 500)})
	}
	repo, err := Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := repo.Versions(context.Background(), path)
	if err != nil || len(w.Versions) != n {
		t.Fatal(err, w)
	}
	return w.Versions
}
