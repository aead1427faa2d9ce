package simfit

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/sim"
)

// TestPoints reads what the fit replays of each point, and leaves out,
// with its reason, what it cannot replay.
func TestPoints(t *testing.T) {
	t.Parallel()
	tiny, _ := sim.Lookup("tiny")
	path := synthesize(t, tiny, []load{
		{concurrency: 2, in: [2]int{10, 20}, out: [2]int{5, 10}},
		{rate: 10, in: [2]int{10, 20}, out: [2]int{5, 10}},
	})
	read := func(edit func(f *result.File)) ([]Point, []Skipped) {
		f, err := result.Read(path)
		must(t, err)
		edit(f)
		pts, skipped, err := Points([]*result.File{f}, []string{path}, -1)
		must(t, err)
		return pts, skipped
	}
	pts, skipped := read(func(f *result.File) {
		f.Points[1].Schedule.SendRate = 8.5
		f.Points[0].Overhead = &result.Overhead{TTFTMeanMs: 0.4} // the least load: the network
		f.Points[1].Overhead = &result.Overhead{TTFTMeanMs: 30}
	})
	if len(pts) != 2 || len(skipped) != 0 {
		t.Fatalf("%d points, skipped %v", len(pts), skipped)
	}
	c, r := pts[0], pts[1]
	if c.Name != "concurrency=2" || c.Warmup < 4 || c.Requests < 16 || c.Measured[FigTPOT] <= 0 || c.Noise[FigTPOT] < MinNoise {
		t.Errorf("closed loop: %+v", c)
	}
	if r.Rate != 8.5 {
		t.Errorf("rate %v, want the rate sent, 8.5", r.Rate)
	}
	if c.Network != 400*time.Microsecond || r.Network != c.Network {
		t.Errorf("network %v and %v, want the overhead at the least load, 0.4 ms", c.Network, r.Network)
	}
	// A long point replays fewer requests, down to a round of its clients.
	long, skipped := read(func(f *result.File) {
		delete(f.Points[0].Histograms, result.PromptTokensHistogram)
		f.Points[0].Tokens.Prompt.Mean = 100_000
	})
	if len(skipped) != 0 || long[0].Requests+long[0].Warmup > MaxReplayTokens/100_000 || long[0].Requests < 2 {
		t.Errorf("long prompts: %d + %d requests, skipped %v", long[0].Warmup, long[0].Requests, skipped)
	}
	if len(c.prompt.q) != lengthQuantiles || c.prompt.q[0] < 10 || c.prompt.q[len(c.prompt.q)-1] > 20 {
		t.Errorf("prompt lengths %v, want quantiles of 10 to 20", c.prompt.q)
	}

	for _, s := range []struct {
		name string
		edit func(p *result.Point)
		why  string
	}{
		{"failed", func(p *result.Point) { p.Requests.Failed, p.Requests.Completed = 3, p.Requests.Completed-3 }, "failed"},
		{"saturated", func(p *result.Point) { p.Schedule.Saturation = "queue grew" }, "saturation"},
		{"invalid", func(p *result.Point) {
			p.Validity = &result.Validity{Invalid: []string{"the machine stalled 188.8 ms in 4 pauses\x1b[2J" + strings.Repeat("x", 500)}}
		}, "marked the trial invalid: the machine stalled 188.8 ms in 4 pauses"},
		{"few answers", func(p *result.Point) { p.Requests.Completed = 3 }, "fewer than"},
		{"no token counts", func(p *result.Point) { p.Tokens.Prompt = result.Summary{} }, "token counts"},
		{"too large", func(p *result.Point) {
			// 10,000 clients of 100,000-token prompts: a round is 1,000 million tokens.
			p.Concurrency, p.Label = 10_000, "concurrency=10000"
			delete(p.Histograms, result.PromptTokensHistogram)
			p.Tokens.Prompt.Mean = 100_000
		}, "million tokens"},
	} {
		_, skipped := read(func(f *result.File) { s.edit(&f.Points[0]) })
		if len(skipped) != 1 || !strings.Contains(skipped[0].Why, s.why) {
			t.Errorf("%s: skipped %v, want the first point, saying %q", s.name, skipped, s.why)
		} else if why := skipped[0].Why; len([]rune(why)) > 240 || strings.ContainsRune(why, '\x1b') {
			t.Errorf("%s: a reason from the file is shown unbounded or raw: %q", s.name, why)
		}
	}
}

// A point is named when an earlier point of its results file kept more
// requests in flight, of the server's slots: a server of one cache
// still held their contexts. An open loop keeps its rate times its mean
// latency in flight, a burst (a rate of 0) every request it sent.
func TestAfterHigherLoad(t *testing.T) {
	t.Parallel()
	tiny, _ := sim.Lookup("tiny")
	path := synthesize(t, tiny, []load{
		{concurrency: 8, in: [2]int{10, 20}, out: [2]int{5, 10}},
		{concurrency: 4, in: [2]int{10, 20}, out: [2]int{5, 10}},
		{concurrency: 1, in: [2]int{10, 20}, out: [2]int{5, 10}},
		{rate: 10, in: [2]int{10, 20}, out: [2]int{5, 10}},
		{rate: 20, in: [2]int{10, 20}, out: [2]int{5, 10}},
	})
	f, err := result.Read(path)
	must(t, err)
	// The open loop: 10 req/s of 200 ms each keep 2 in flight.
	e2e := f.Points[3].Latency[metric.E2E]
	e2e.Mean = 200
	f.Points[3].Latency[metric.E2E] = e2e
	f.Points[4].Rate, f.Points[4].Label = 0, "every request at once"
	f.Points = append(f.Points, f.Points[3])
	f.Points[5].Label = "rate=10 after the burst"
	pts, _, err := Points([]*result.File{f}, []string{path}, -1)
	must(t, err)
	for _, c := range []struct {
		slots int
		want  []string
	}{
		// 4 slots: 8 clients left no more than 4 did.
		{4, []string{"concurrency=1", "rate=10", "rate=10 after the burst"}},
		{8, []string{"concurrency=4", "concurrency=1", "rate=10", "rate=10 after the burst"}},
	} {
		if got := AfterHigherLoad(pts, c.slots); !slices.Equal(got, c.want) {
			t.Errorf("%d slots: %q, want %q", c.slots, got, c.want)
		}
	}
	// Another results file is taken for another run of the server.
	other, _, err := Points([]*result.File{f, f}, []string{"a.json", "b.json"}, -1)
	must(t, err)
	if got := AfterHigherLoad(other, 4); len(got) != 6 || got[3] != "b.json:concurrency=1" {
		t.Errorf("two files: %q, want each file's three", got)
	}
}

// A fit of more parameters than distinct conditions is refused; further
// trials of a condition pin nothing more, though each drew its own
// arrivals and lengths.
func TestPinned(t *testing.T) {
	t.Parallel()
	tiny, _ := sim.Lookup("tiny")
	closed := load{concurrency: 2, in: [2]int{10, 20}, out: [2]int{5, 10}}
	open := load{rate: 10, in: [2]int{10, 20}, out: [2]int{5, 10}}
	// Five trials of each: every one replayed with a seed of its own.
	trials := readPoints(t, synthesize(t, tiny, []load{closed, open, closed, open, closed, open, closed, open, closed, open}))
	params, err := ParamsFor(tiny, nil)
	must(t, err)
	if n := Distinct(trials); n != 2 {
		t.Errorf("five trials of two conditions: %d distinct, want 2", n)
	}
	if err := Pinned(params, trials); err == nil || !strings.Contains(err.Error(), "need at least 3 points") {
		t.Errorf("3 parameters on 2 conditions: %v", err)
	}
	if err := Pinned(params[:2], trials); err != nil {
		t.Errorf("2 parameters on 2 conditions: %v", err)
	}
	longer := trials[1]
	longer.prompt.mean *= 4 // the same rate, prompts four times as long
	if err := Pinned(params, append(trials, longer)); err != nil {
		t.Errorf("3 parameters on 2 loads and a second length: %v", err)
	}
}

// A point is queued when its TTFT median, the server's mean TTFT or the
// twin's predicted TTFT is three times the least load's, else below the
// knee.
func TestQueued(t *testing.T) {
	t.Parallel()
	pt := func(ttft, server float64) Point {
		return Point{Measured: map[string]float64{FigTTFT: ttft, FigServerTTFT: server}, prompt: lengths{mean: 100}}
	}
	pts := []Point{pt(7, 7), pt(12, 31), pt(11, 12), pt(180, 200)}
	got := Queued(pts, nil)
	if want := []bool{false, true, false, true}; !slices.Equal(got, want) {
		t.Errorf("measured alone: %v, want %v", got, want)
	}
	preds := []Prediction{nil, nil, {FigTTFT: 87}, nil}
	if got := Queued(pts, preds); !got[2] {
		t.Errorf("a point the twin put a queue on is not queued: %v", got)
	}
	long := pt(40, 40)
	long.prompt.mean = 1000 // ten times the prompts: compared with itself alone
	if got := Queued(append(pts, long), nil); got[4] {
		t.Errorf("a longer prompt's TTFT is taken for a queue: %v", got)
	}
}
