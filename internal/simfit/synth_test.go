package simfit

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/sim"
)

// load is a point of a synthetic sweep.
type load struct {
	concurrency int
	rate        float64
	in, out     [2]int // uniform ranges of prompt and output tokens
}

// synthesize measures a sweep on the hidden profile in virtual time and
// writes it as a results file, through the same histograms and summaries
// the recorder writes: the fit then reads it back through result.Read as
// it reads a user's. Its seeds are not the fit's, so the fit replays other
// arrivals and lengths than those "measured", as it would on a real run.
func synthesize(t testing.TB, hidden sim.Profile, loads []load) string {
	t.Helper()
	f := &result.File{Schema: result.Schema, Tool: result.Tool{Name: "benchci", Version: "test"},
		Suite:  result.Suite{Name: "synthetic", Definition: json.RawMessage(`{}`)},
		Target: result.Target{Kind: "sim", Model: hidden.Model}}
	for i, l := range loads {
		// As many as a run of tens of seconds: every client several times.
		// Under the race detector, a third: a fit replays every point
		// hundreds of times, and the detector slows each replay tenfold.
		requests := max(synthRequests, 8*l.concurrency)
		run := sim.Run{Concurrency: l.concurrency, Rate: l.rate, Warmup: max(2*l.concurrency, 20), Requests: requests, Seed: 1000 + uint64(i), Turnaround: 200 * time.Microsecond,
			Lengths: func(r *rand.Rand) (int, int) {
				return l.in[0] + r.IntN(l.in[1]-l.in[0]+1), l.out[0] + r.IntN(l.out[1]-l.out[0]+1)
			}}
		res := sim.Simulate(hidden, run)
		if len(res.Samples) != requests {
			t.Fatalf("load %d: %d of %d requests finished", i, len(res.Samples), requests)
		}
		p := result.Point{Trial: 0}
		if l.concurrency > 0 {
			p.Mode, p.Concurrency, p.Label = result.ModeConcurrency, l.concurrency, fmt.Sprintf("concurrency=%d", l.concurrency)
		} else {
			p.Mode, p.Rate, p.Label = result.ModeRate, l.rate, "rate="+strconv.FormatFloat(l.rate, 'f', -1, 64)
		}
		hists := map[string]*hdrhistogram.Histogram{}
		h := func(name string, max int64) *hdrhistogram.Histogram {
			if hists[name] == nil {
				hists[name] = hdrhistogram.New(1, max, 3)
			}
			return hists[name]
		}
		us := func(d time.Duration) int64 { return max(int64(d/time.Microsecond), 1) }
		prompt, output := 0, 0
		for _, s := range res.Samples {
			must(t, h(metric.TTFT, 3_600_000_000).RecordValue(us(s.TTFT)))
			must(t, h(metric.E2E, 3_600_000_000).RecordValue(us(s.E2E)))
			if s.Output > 1 {
				must(t, h(metric.TPOT, 3_600_000_000).RecordValue(us(s.TPOT())))
			}
			must(t, h(result.PromptTokensHistogram, 1<<24).RecordValue(int64(s.Prompt)))
			must(t, h(result.OutputTokensHistogram, 1<<24).RecordValue(int64(s.Output)))
			prompt += s.Prompt
			output += s.Output
		}
		p.Requests = result.Requests{Sent: requests, Completed: requests, Warmup: run.Warmup}
		p.Window = result.Window{Start: time.Unix(0, 0).UTC(), Seconds: res.Window.Seconds()}
		p.Throughput = result.Throughput{Requests: float64(requests-1) / res.Window.Seconds(), OutputTokens: res.OutputPerSec()}
		p.Throughput.TotalTokens = p.Throughput.OutputTokens * float64(prompt+output) / float64(output)
		p.Latency = map[string]result.Summary{}
		p.Histograms = map[string]string{}
		for name, hh := range hists {
			enc, err := result.EncodeHistogram(hh)
			must(t, err)
			p.Histograms[name] = enc
			switch name {
			case result.PromptTokensHistogram:
				p.Tokens.Prompt = result.Summarize(hh, 1)
			case result.OutputTokensHistogram:
				p.Tokens.Output = result.Summarize(hh, 1)
			default:
				p.Latency[name] = result.Summarize(hh, 1000)
			}
		}
		f.Points = append(f.Points, p)
	}
	path := filepath.Join(t.TempDir(), "synthetic.json")
	must(t, result.Write(path, f))
	return path
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
