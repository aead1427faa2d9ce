// Package shard joins the results of a run split over machines (run
// --shard) into the result one machine would have measured.
//
// Nothing is resampled: each point's histograms are merged bucket by
// bucket (HdrHistogram merges are exact), so its percentiles are those of
// every request any shard sent; counts add, and throughputs are the
// shards' counts over the common window. The figures derived from those
// (cost, the knee, SLOs) are computed again on the merged points.
package shard

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/cost"
	"github.com/benchci/benchci/internal/offered"
	"github.com/benchci/benchci/internal/slo"
	"github.com/benchci/benchci/internal/sweep"
)

// DefaultMaxSkew is the start skew above which a merged result carries a
// warning: beyond it the shards' timelines no longer make one.
const DefaultMaxSkew = 100 * time.Millisecond

// Merge joins the shards' results. It refuses files that are not shards
// of one run: not a shard's, another suite or workload, another shard
// count, an index twice. A missing shard, or one that did not finish,
// makes the result incomplete, naming it; a shard that started a point
// more than maxSkew late is noted.
func Merge(files []*result.File, maxSkew time.Duration) (*result.File, error) {
	if len(files) == 0 {
		return nil, errors.New("merge: no shard results")
	}
	first := files[0]
	seen := map[int]string{}
	for _, f := range files {
		sh := f.Shard
		switch {
		case sh == nil:
			return nil, fmt.Errorf("merge: %s is not a shard's results (run --shard I/N writes them)", f.Suite.Name)
		case f.Suite.Name != first.Suite.Name:
			return nil, fmt.Errorf("merge: shards of two suites, %s and %s", first.Suite.Name, f.Suite.Name)
		case f.Suite.WorkloadHash != first.Suite.WorkloadHash:
			return nil, fmt.Errorf("merge: shard %d sent another workload (hash %.12s, shard %d's %.12s): the shards did not run one suite", sh.Index, f.Suite.WorkloadHash, first.Shard.Index, first.Suite.WorkloadHash)
		case f.Suite.Hash != first.Suite.Hash:
			return nil, fmt.Errorf("merge: shard %d ran another version of the suite (hash %.12s, shard %d's %.12s): its SLOs or tolerances differ", sh.Index, f.Suite.Hash, first.Shard.Index, first.Suite.Hash)
		case sh.Count != first.Shard.Count:
			return nil, fmt.Errorf("merge: shard %d is one of %d, shard %d one of %d", sh.Index, sh.Count, first.Shard.Index, first.Shard.Count)
		case sh.Index < 0 || sh.Index >= sh.Count:
			return nil, fmt.Errorf("merge: shard index %d out of 0..%d", sh.Index, sh.Count-1)
		}
		// Merging sums counts and merges histograms: a shard whose figures
		// contradict its histograms, or whose histograms were stripped,
		// would make the merged point's counts and percentiles disagree.
		if err := f.VerifyHistograms(); err != nil {
			return nil, fmt.Errorf("merge: shard %d of %d: %w", sh.Index, sh.Count, err)
		}
		if prev, dup := seen[sh.Index]; dup {
			return nil, fmt.Errorf("merge: shard %d of %d given twice (started %s and %s)", sh.Index, sh.Count, prev, sh.Started.Format(time.RFC3339))
		}
		seen[sh.Index] = sh.Started.Format(time.RFC3339)
	}
	s, err := suite.Decode(first.Suite.Definition)
	if err != nil {
		return nil, fmt.Errorf("merge: the suite in the shards' results: %w", err)
	}
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b *result.File) int { return cmp.Compare(a.Shard.Index, b.Shard.Index) })

	out := &result.File{
		Schema: result.Schema, Tool: first.Tool, Suite: first.Suite, Target: first.Target, Engine: first.Engine, Sent: first.Sent,
		Counting: first.Counting, Figures: first.Figures, Calibration: first.Calibration, ServerLog: first.ServerLog, PromptSalt: first.PromptSalt,
		Started: first.Started, Finished: first.Finished, Points: []result.Point{},
	}
	var problems []string
	for _, f := range files {
		out.MergedFrom = append(out.MergedFrom, *f.Shard)
		out.Started = minTime(out.Started, f.Started)
		if f.Finished.After(out.Finished) {
			out.Finished = f.Finished
		}
		if f.Incomplete {
			problems = append(problems, fmt.Sprintf("shard %d: %s", f.Shard.Index, f.Error))
		}
		if c := f.Calibration; c != nil && first.Calibration != nil && (c.Overhead != first.Calibration.Overhead || c.TokensPerWord != first.Calibration.TokensPerWord) {
			out.Notes = append(out.Notes, fmt.Sprintf("shard %d calibrated prompts as %.2f + %.3f tokens per word, shard %d as %.2f + %.3f: their prompts differ slightly in length",
				f.Shard.Index, c.Overhead, c.TokensPerWord, first.Shard.Index, first.Calibration.Overhead, first.Calibration.TokensPerWord))
		}
		if f.PromptSalt != out.PromptSalt && out.PromptSalt != "" {
			// Shards that each drew a salt sent different text; no one
			// salt repeats the merged run, so none is recorded.
			out.PromptSalt = ""
			out.Notes = append(out.Notes, "the shards drew their own prompt salts (workload.prompts.salt: 'run'), so their prompts' text differs and shared prefixes are not shared across shards; shards aligned by --start-at salt alike")
		}
		if sk := f.StartSkewMs(); sk > float64(maxSkew)/float64(time.Millisecond) {
			out.Notes = append(out.Notes, fmt.Sprintf("shard %d started a point %.0f ms after its aligned time (above %v): the shards' timelines did not line up, and the merged load came in a shifted wave", f.Shard.Index, sk, maxSkew))
		}
		for _, n := range f.Notes {
			if strings.Contains(n, ": "+offered.NotePrefix) {
				// A shard's offered rate is judged again on the merged
				// point, against the whole rate, below (and a shard's
				// own note, written before it was judged against its
				// share, may have judged it against the whole rate).
				continue
			}
			out.Notes = append(out.Notes, fmt.Sprintf("shard %d: %s", f.Shard.Index, n))
		}
	}
	var missing []string
	for i := range first.Shard.Count {
		if _, ok := seen[i]; !ok {
			missing = append(missing, strconv.Itoa(i))
		}
	}
	switch n := len(missing); {
	case n > 10:
		problems = append(problems, fmt.Sprintf("%d of %d shards missing (%s, ...)", n, first.Shard.Count, strings.Join(missing[:10], ", ")))
	case n > 1:
		problems = append(problems, fmt.Sprintf("shards %s of %d missing", strings.Join(missing, ", "), first.Shard.Count))
	case n == 1:
		problems = append(problems, fmt.Sprintf("shard %s of %d missing", missing[0], first.Shard.Count))
	}
	points, err := mergePoints(files, s)
	if err != nil {
		return nil, err
	}
	out.Points = points
	for _, p := range points {
		if p.Incomplete {
			problems = append(problems, fmt.Sprintf("%s: not every shard measured it", p.Label))
		}
		if n := offered.Note(s, &p, 1); n != "" {
			out.Notes = append(out.Notes, p.Label+": "+n)
		}
	}
	if len(problems) > 0 {
		out.Incomplete = true
		out.Error = strings.Join(problems, "; ")
	}
	out.Knee = sweep.Knee(points)
	slo.Judge(s, out)
	// The merged file is read back as any other: one that would not be
	// (counts that add past their bound) is not written.
	if err := out.Verify(); err != nil {
		return nil, fmt.Errorf("merge: the merged result: %w", err)
	}
	return out, nil
}

func minTime(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

// mergePoints joins the shards' points by label and trial, in the order
// the first shard that has each ran them.
func mergePoints(files []*result.File, s *suite.Suite) ([]result.Point, error) {
	type key struct {
		label string
		trial int
	}
	var order []key
	parts := map[key][]*result.Point{}
	shards := map[key][]int{}
	for _, f := range files {
		for i := range f.Points {
			p := &f.Points[i]
			k := key{p.Label, p.Trial}
			if _, ok := parts[k]; !ok {
				order = append(order, k)
			} else if q := parts[k][0]; q.Mode != p.Mode || q.Rate != p.Rate || q.Concurrency != p.Concurrency {
				return nil, fmt.Errorf("merge %s (trial %d): shard %d measured it as %s rate %v concurrency %d, shard %d as %s rate %v concurrency %d: not one point",
					k.label, k.trial, shards[k][0], q.Mode, q.Rate, q.Concurrency, f.Shard.Index, p.Mode, p.Rate, p.Concurrency)
			}
			parts[k] = append(parts[k], p)
			shards[k] = append(shards[k], f.Shard.Index)
		}
	}
	var out []result.Point
	for _, k := range order {
		p, err := mergePoint(parts[k], shards[k], s)
		if err != nil {
			return nil, fmt.Errorf("merge %s (trial %d): %w", k.label, k.trial, err)
		}
		p.Incomplete = p.Incomplete || len(parts[k]) < files[0].Shard.Count
		out = append(out, p)
	}
	return out, nil
}

func mergePoint(ps []*result.Point, idx []int, s *suite.Suite) (result.Point, error) {
	first := ps[0]
	// The shards measured one point over one window: a shard whose window
	// is less than half another's (and that was not stopped early) did not
	// measure the same point, and would move the merged throughput.
	var widest float64
	for _, q := range ps {
		widest = max(widest, q.Window.Seconds)
	}
	for i, q := range ps {
		if q.Window.Seconds < widest/2 && q.Schedule.Saturation == "" && !q.Incomplete {
			return result.Point{}, fmt.Errorf("shard %d measured it over %.3g s, another shard over %.3g s: not one window", idx[i], q.Window.Seconds, widest)
		}
	}
	// And at one time: shards run one after the other each loaded the
	// server with their share alone, and their sum claims a load it never
	// had. Their windows must overlap by at least half the shortest.
	if err := overlapping(ps, idx); err != nil {
		return result.Point{}, err
	}
	p := result.Point{Label: first.Label, Mode: first.Mode, Rate: first.Rate, Concurrency: first.Concurrency, Trial: first.Trial,
		Server: first.Server, Queue: first.Queue} // the first shard's view: its own requests in flight
	m, err := mergeMeasured(ps)
	if err != nil {
		return p, err
	}
	p.Measured = m
	p.Schedule.TargetRate = first.Schedule.TargetRate
	var reasons, saturations []string
	for i, q := range ps {
		sc := q.Schedule
		p.Schedule.ScheduledRate += sc.ScheduledRate
		p.Schedule.SendRate += sc.SendRate
		p.Schedule.CapWaits += sc.CapWaits
		p.Schedule.StartSkewMs = max(p.Schedule.StartSkewMs, sc.StartSkewMs)
		if sc.ClientSaturated {
			p.Schedule.ClientSaturated = true
			reasons = append(reasons, fmt.Sprintf("shard %d: %s", idx[i], sc.Reason))
		}
		if sc.Saturation != "" {
			saturations = append(saturations, fmt.Sprintf("shard %d: %s", idx[i], sc.Saturation))
		}
		p.Incomplete = p.Incomplete || q.Incomplete
		// A shard that did not measure the server makes the whole point's
		// figures another load's: the merged point is as invalid.
		if v := q.Validity; v != nil {
			if p.Validity == nil {
				p.Validity = &result.Validity{}
			}
			for _, why := range v.Invalid {
				p.Validity.Invalid = append(p.Validity.Invalid, fmt.Sprintf("shard %d: %s", idx[i], why))
			}
			p.Validity.StallMs = max(p.Validity.StallMs, v.StallMs)
			p.Validity.MaxStallMs = max(p.Validity.MaxStallMs, v.MaxStallMs)
			p.Validity.StealShare = max(p.Validity.StealShare, v.StealShare)
		}
	}
	p.Schedule.Reason = strings.Join(reasons, "; ")
	p.Schedule.Saturation = strings.Join(saturations, "; ")
	// Every shard scrapes the same exporters over the same point: the
	// first's figures stand for the point, and its measured power prices
	// the merged throughput.
	p.Telemetry = first.Telemetry
	cost.Price((*cost.Deployment)(s.Cost), s.TelemetryNames(), &p)
	return p, nil
}

// mergeMeasured adds the shards' counts, merges their histograms and
// summarizes them again, and sums their throughputs over the common
// window: the shards' windows have one length when they were aligned,
// and the merged window is their mean length from the earliest start.
func mergeMeasured(ps []*result.Point) (result.Measured, error) {
	m := result.Measured{Latency: map[string]result.Summary{}, Histograms: map[string]string{}}
	r := &m.Requests
	r.Errors, r.LastError = map[string]int{}, map[string]string{}
	m.Tokens.Source = map[string]int{}
	var secs, outTok, totTok, reqs, good float64
	var hasGood bool
	var tokens, chunks float64
	var st result.ServerTimings
	var stTPOT float64
	names := map[string]bool{}
	for _, q := range ps {
		qr := q.Requests
		addCounts(r, &qr)
		r.ClientLimitError = cmp.Or(r.ClientLimitError, qr.ClientLimitError)
		for k, e := range qr.LastError {
			if _, ok := r.LastError[k]; !ok {
				r.LastError[k] = e
			}
		}
		m.Window.Start = minTime(m.Window.Start, q.Window.Start)
		w := q.Window.Seconds
		secs += w
		outTok += q.Throughput.OutputTokens * w
		totTok += q.Throughput.TotalTokens * w
		reqs += q.Throughput.Requests * w
		if g := q.Throughput.Goodput; g != nil {
			good += *g * w
			hasGood = true
		}
		t := q.Tokens
		addCounts(&m.Tokens, &t)
		if t.PerChunk > 0 {
			n := t.Output.Mean * float64(t.Output.Count)
			tokens += n
			chunks += n / t.PerChunk
		}
		if sv := q.ServerTimings; sv != nil {
			st.Requests += sv.Requests
			st.PromptMsMean += sv.PromptMsMean * float64(sv.Requests)
			stTPOT += sv.TPOTMsMean * float64(sv.Requests)
		}
		for name := range q.Histograms {
			names[name] = true
		}
		for name := range q.Latency {
			m.Latency[name] = result.Summary{} // filled below, from the merged histogram
		}
	}
	if r.Sent > 0 {
		r.ErrorRate = float64(r.Failed) / float64(r.Sent)
	}
	if len(r.Errors) == 0 {
		r.Errors = nil
	}
	if len(r.LastError) == 0 {
		r.LastError = nil
	}
	m.Window.Seconds = secs / float64(len(ps))
	if w := m.Window.Seconds; w > 0 {
		m.Throughput = result.Throughput{Requests: reqs / w, OutputTokens: outTok / w, TotalTokens: totTok / w}
		if hasGood {
			g := good / w
			m.Throughput.Goodput = &g
		}
	}
	if chunks > 0 {
		m.Tokens.PerChunk = tokens / chunks
	}
	if st.Requests > 0 {
		st.PromptMsMean /= float64(st.Requests)
		st.TPOTMsMean = stTPOT / float64(st.Requests)
		m.ServerTimings = &st
	}
	hists := map[string]*hdrhistogram.Histogram{}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		h, err := result.MergeHistograms(name, ps)
		if err != nil {
			return m, err
		}
		hists[name] = h
		enc, err := result.EncodeHistogram(h)
		if err != nil {
			return m, err
		}
		m.Histograms[name] = enc
		if _, ok := m.Latency[name]; ok {
			m.Latency[name] = result.Summarize(h, 1000)
		}
	}
	if h := hists[metric.PromptTokensHistogram]; h != nil {
		m.Tokens.Prompt = result.Summarize(h, 1)
	}
	if h := hists[metric.OutputTokensHistogram]; h != nil {
		m.Tokens.Output = result.Summarize(h, 1)
	}
	if h := hists[metric.PromptTokensAskedHistogram]; h != nil {
		s := result.Summarize(h, 1)
		m.Tokens.PromptAsked = &s
	}
	m.Slices = mergeSlices(ps)
	// Each model of a mix merges the same way; a shard that sent a model
	// nothing still counts its window.
	models := map[string]bool{}
	for _, q := range ps {
		for name := range q.Models {
			models[name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(models)) {
		qs := make([]*result.Point, len(ps))
		for i, q := range ps {
			qs[i] = &result.Point{Measured: result.Measured{Window: q.Window}}
			if qm := q.Models[name]; qm != nil {
				qs[i].Measured = *qm
			}
		}
		mm, err := mergeMeasured(qs)
		if err != nil {
			return m, fmt.Errorf("model %s: %w", name, err)
		}
		if m.Models == nil {
			m.Models = map[string]*result.Measured{}
		}
		m.Models[name] = &mm
	}
	return m, nil
}

// mergeSlices adds the shards' time slices; their TTFT percentiles are
// left out, since per-slice histograms are not kept to merge them.
func mergeSlices(ps []*result.Point) *result.Slices {
	var out *result.Slices
	for _, q := range ps {
		sl := q.Slices
		if sl == nil {
			continue
		}
		if out == nil {
			out = &result.Slices{WidthS: sl.WidthS, WindowStartS: sl.WindowStartS}
		}
		if sl.WidthS != out.WidthS {
			continue // not the same cut: cannot be added
		}
		for len(out.Slices) < len(sl.Slices) {
			out.Slices = append(out.Slices, result.Slice{})
		}
		for i, x := range sl.Slices {
			o := &out.Slices[i]
			o.Sent += x.Sent
			o.Finished += x.Finished
			o.Completed += x.Completed
			o.Failed += x.Failed
			o.InFlight += x.InFlight
			o.OutputTokPS += x.OutputTokPS
		}
	}
	return out
}

// minOverlap is the least share of the shortest window that every shard's
// window must share with the others' for them to be one point's.
const minOverlap = 0.5

// overlapping checks that the shards measured the point at one time: the
// latest window start comes before the earliest window end by at least
// minOverlap of the shortest window. Windows without a recorded start
// (files of earlier versions) are not judged.
func overlapping(ps []*result.Point, idx []int) error {
	var late, early int = -1, -1
	var lastStart, firstEnd time.Time
	shortest := math.Inf(1)
	zero := 0
	for _, q := range ps {
		if q.Window.Start.IsZero() {
			zero++
		}
	}
	switch {
	case zero == len(ps):
		return nil // files of earlier versions: nothing to judge
	case zero > 0:
		// One shard without a start would otherwise switch the check off
		// for all: a file edited to pass.
		return fmt.Errorf("%d of %d shards record no start for the point's window: they cannot be shown to have run at one time", zero, len(ps))
	}
	for i, q := range ps {
		if q.Window.Seconds <= 0 {
			return nil
		}
		end := q.Window.Start.Add(time.Duration(q.Window.Seconds * float64(time.Second)))
		if late < 0 || q.Window.Start.After(lastStart) {
			late, lastStart = i, q.Window.Start
		}
		if early < 0 || end.Before(firstEnd) {
			early, firstEnd = i, end
		}
		shortest = min(shortest, q.Window.Seconds)
	}
	shared := firstEnd.Sub(lastStart).Seconds()
	if shared >= minOverlap*shortest {
		return nil
	}
	const why = "the shards did not load the server at one time, so their sum is a load it never had; run them together (--start-at aligns them)"
	if shared <= 0 {
		return fmt.Errorf("shard %d's window began %.3g s after shard %d's had ended: %s", idx[late], -shared, idx[early], why)
	}
	return fmt.Errorf("shard %d's and shard %d's windows overlapped %.3g s, less than half the shortest window (%.3g s): %s", idx[late], idx[early], shared, shortest, why)
}
