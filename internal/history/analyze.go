package history

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/internal/changepoint"
	"github.com/benchci/benchci/internal/errjoin"
	"github.com/benchci/benchci/internal/stats"
)

// Group is the versions of one baseline that share a workload hash: only
// their figures are comparable with each other.
type Group struct {
	WorkloadHash string    `json:"workload_hash"`
	Versions     []Version `json:"versions"`
	Series       []Series  `json:"series"`
}

// Series is one figure at one point across a group's versions.
type Series struct {
	// Point is the load point's label; "search" for the suite-wide
	// capacity, as baselines file it.
	Point  string        `json:"point"`
	Figure string        `json:"figure"` // "ttft.p99", "capacity", ...
	Unit   string        `json:"unit"`
	Better metric.Better `json:"better"`
	// Values has one entry per version, NaN where that version lacks
	// the figure (a probe rate a capacity search did not visit).
	Values  []float64 `json:"-"`
	Changes []Change  `json:"changes,omitempty"`
}

// Change is a commit where a figure moved and stayed moved.
type Change struct {
	// Version indexes the group's versions: the first at the new level.
	Version int    `json:"version"`
	Commit  string `json:"commit"`
	// Before and After are the levels (means) either side.
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	// Worse is set when the move is in the figure's bad direction.
	Worse bool    `json:"worse"`
	P     float64 `json:"p"`
	// Test is the test on the versions' histograms that judged the change
	// where the permutation test of the series alone could not (a short
	// series); "" when the permutation test did, at P.
	Test string `json:"test,omitempty"`
}

// Relative is the move as a share of the level before it.
// The reference is the earlier level; NaN when it is zero.
func (c Change) Relative() float64 {
	if d, ok := stats.RelDelta(c.After, c.Before); ok {
		return d
	}
	return math.NaN()
}

// DefaultMinShift is the smallest move history names a change: below the
// gate's default band, a move is noise it would wave through anyway.
const DefaultMinShift = 0.05

// Analyze groups versions by workload hash (in the order each hash first
// appears) and finds the change points of every figure of every point.
func Analyze(versions []Version, opts changepoint.Options) []Group {
	groups, _ := AnalyzeContext(context.Background(), versions, opts)
	return groups
}

// AnalyzeContext is Analyze that stops with ctx's error when ctx is done.
// The series are searched on a pool of goroutines; each search is
// seeded alike whichever goroutine runs it, so the answer is the same.
func AnalyzeContext(ctx context.Context, versions []Version, opts changepoint.Options) ([]Group, error) {
	if opts.MinShift == 0 {
		opts.MinShift = DefaultMinShift
	}
	var groups []Group
	index := map[string]int{}
	for _, v := range versions {
		h := v.Baseline.WorkloadHash
		i, ok := index[h]
		if !ok {
			i = len(groups)
			index[h] = i
			groups = append(groups, Group{WorkloadHash: h})
		}
		groups[i].Versions = append(groups[i].Versions, v)
	}
	type task struct {
		s        *Series
		versions []Version
	}
	var tasks []task
	for gi := range groups {
		g := &groups[gi]
		g.Series = series(g.Versions)
		for si := range g.Series {
			tasks = append(tasks, task{&g.Series[si], g.Versions})
		}
	}
	var next atomic.Int64
	errs := make([]error, len(tasks))
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(tasks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(tasks) || ctx.Err() != nil {
					return
				}
				t := tasks[i]
				t.s.Changes, errs[i] = changes(ctx, t.s, t.versions, opts)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("find change points: %w", err)
	}
	if err := errjoin.Join(errs...); err != nil {
		return nil, fmt.Errorf("find change points: %w", err)
	}
	return groups, nil
}

// series collects every figure of every point, points in the order they
// first appear and figures in the catalogue's order.
func series(versions []Version) []Series {
	type key struct{ point, figure string }
	var points []string
	seen := map[string]bool{}
	values := map[key][]float64{}
	for i, v := range versions {
		for _, s := range v.Baseline.Summary {
			if !seen[s.Point] {
				seen[s.Point] = true
				points = append(points, s.Point)
			}
			for fig, x := range s.Figures {
				k := key{s.Point, fig}
				if values[k] == nil {
					values[k] = nanSlice(len(versions))
				}
				values[k][i] = x
			}
		}
	}
	figures := []string{metric.Capacity}
	for _, k := range metric.Gated {
		figures = append(figures, k.String())
	}
	var out []Series
	for _, p := range points {
		for _, f := range figures {
			vs, ok := values[key{p, f}]
			if !ok {
				continue
			}
			s := Series{Point: p, Figure: f, Values: vs}
			if k, err := metric.ParseKey(f); err == nil {
				d := k.Def()
				s.Unit, s.Better = d.Unit, d.Better
			}
			out = append(out, s)
		}
	}
	return out
}

func nanSlice(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = math.NaN()
	}
	return xs
}

// changes runs the change-point search over the versions that have the
// figure and maps its cuts back to versions.
func changes(ctx context.Context, s *Series, versions []Version, opts changepoint.Options) ([]Change, error) {
	var xs []float64
	var at []int
	for i, x := range s.Values {
		if !math.IsNaN(x) {
			xs = append(xs, x)
			at = append(at, i)
		}
	}
	opts.Judge = judge(s, xs, at, versions, opts.MinShift)
	points, err := changepoint.EDivisiveContext(ctx, xs, opts)
	if err != nil {
		return nil, err
	}
	var out []Change
	for _, p := range points {
		v := at[p.Index]
		c := Change{Version: v, Commit: versions[v].Commit, Before: p.Before, After: p.After, P: p.P, Test: p.Test}
		c.Worse = (s.Better == metric.Lower && c.After > c.Before) || (s.Better == metric.Higher && c.After < c.Before)
		out = append(out, c)
	}
	return out, nil
}

// Changes lists every change in a group, largest relative move first.
func (g *Group) Changes() []SeriesChange {
	var out []SeriesChange
	for i := range g.Series {
		for _, c := range g.Series[i].Changes {
			out = append(out, SeriesChange{Series: &g.Series[i], Change: c})
		}
	}
	slices.SortStableFunc(out, func(a, b SeriesChange) int {
		return cmp.Compare(math.Abs(b.Relative()), math.Abs(a.Relative()))
	})
	return out
}

// SeriesChange is a change together with the figure it moved.
type SeriesChange struct {
	*Series
	Change
}

// Find returns the series of figure at point, or nil.
func (g *Group) Find(point, figure string) *Series {
	for i := range g.Series {
		if g.Series[i].Point == point && g.Series[i].Figure == figure {
			return &g.Series[i]
		}
	}
	return nil
}

// Points lists the group's load points in order of first appearance.
func (g *Group) Points() []string {
	var out []string
	for _, s := range g.Series {
		if !slices.Contains(out, s.Point) {
			out = append(out, s.Point)
		}
	}
	return out
}

// DefaultPoint is the point to show when none is asked for: the one with
// the most change points, else the highest-load point of the newest
// version (its last), where a slowdown shows first.
func (g *Group) DefaultPoint() string {
	count := map[string]int{}
	for _, s := range g.Series {
		if s.Point != "search" {
			count[s.Point] += len(s.Changes)
		}
	}
	best, n := "", 0
	for _, p := range g.Points() {
		if count[p] >= n && count[p] > 0 {
			best, n = p, count[p]
		}
	}
	if best != "" {
		return best
	}
	sum := g.Versions[len(g.Versions)-1].Baseline.Summary
	for i := len(sum) - 1; i >= 0; i-- {
		if sum[i].Point != "search" {
			return sum[i].Point
		}
	}
	return ""
}
