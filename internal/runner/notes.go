package runner

import (
	"fmt"
	"math"
	"strconv"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
)

// offeredNoiseSDs is how many standard deviations of its own noise the
// offered rate may stray from the nominal one before a note says so: at 2,
// one honest point in twenty gets a note, which costs a reader a line,
// while a seed that offered 7.9 of 10 req/s no longer goes unseen.
const offeredNoiseSDs = 2

// pointNotes are the caveats a reader of one point's figures needs: where
// the figures describe something other than what the row's label says.
// shards is how many machines share the point's load (1: this one alone).
func pointNotes(s *suite.Suite, p *result.Point, shards int) []string {
	var notes []string
	secs := p.Window.Seconds
	if e2e := p.Latency[metric.E2E].P50 / 1000; secs > 0 && e2e > secs && p.Requests.Completed > 0 {
		notes = append(notes, fmt.Sprintf("the median request took %.3g s, longer than the %.3g s window: request throughput counts answers that ended inside the window, so it undercounts this point (sent %.3g req/s, completed %.3g req/s in the window)",
			e2e, secs, p.Schedule.SendRate, p.Throughput.Requests))
	}
	if sh := p.Tokens.CoalescedShare(); sh > result.MaxCoalescedShare {
		notes = append(notes, fmt.Sprintf("%.1f%% of chunk gaps came in one socket read with the chunk before (the client fell behind the streams, or the server wrote several chunks at once): they are kept out of ITL, which describes the other %.1f%%",
			100*sh, 100*(1-sh)))
	}
	if n := offeredNoise(s, p, shards); n != "" {
		notes = append(notes, n)
	}
	return notes
}

// offeredNoise says when the arrivals drawn for an open-loop point offered
// a rate further from the nominal one than the process's own noise
// explains. A renewal process with gaps of coefficient of variation c
// puts about rate*T*c^2 variance on the count in a window of T seconds
// (Poisson: c = 1; gamma of shape k: c^2 = 1/k). Constant arrivals are
// exact, bursts and traces have their own shape, and a point bounded by
// its request count has a window set by its completions: none is judged.
//
// A shard of N sends every N-th arrival of the point's timeline, so it
// is judged against its share, rate/N: its gaps are sums of N of the
// whole's, of c^2/N, which puts a standard deviation of sqrt(rate*T*c^2)/N
// on its count. Against the whole rate every shard would be "below".
func offeredNoise(s *suite.Suite, p *result.Point, shards int) string {
	if p.Rate <= 0 || s.Sweep.Requests > 0 || p.Incomplete {
		return ""
	}
	if r := s.Sweep.Ramp; r != nil && r.Over > s.Sweep.Warmup {
		return "" // the ramp lowers the offered rate inside the window by design
	}
	var cv2 float64
	switch s.Workload.Arrival.Kind {
	case suite.ArrivalPoisson:
		cv2 = 1
	case suite.ArrivalGamma:
		cv2 = 1 / s.Workload.Arrival.Burstiness
	default:
		return ""
	}
	secs := p.Window.Seconds
	if secs <= 0 {
		return ""
	}
	n := float64(max(shards, 1))
	want := p.Rate / n * secs
	got := p.Schedule.ScheduledRate * secs
	sd := math.Sqrt(p.Rate*secs*cv2) / n
	if sd == 0 || math.Abs(got-want) <= offeredNoiseSDs*sd {
		return ""
	}
	dir := "below"
	if got > want {
		dir = "above"
	}
	nominal := strconv.FormatFloat(p.Rate, 'g', -1, 64)
	if shards > 1 {
		nominal = fmt.Sprintf("%.3g (this shard's 1/%d of %s)", p.Rate/n, shards, nominal)
	}
	return fmt.Sprintf("the arrivals drawn offered %.3g req/s, %.1f standard deviations %s the nominal %s (its noise over %.3g s is ±%.2g req/s): the figures are for the rate offered; a longer duration, or trials, bring it closer",
		p.Schedule.ScheduledRate, math.Abs(got-want)/sd, dir, nominal, secs, sd/secs)
}

// serverOverhead is the client's mean TTFT minus the server's own, where
// the server reports it: the network, any gateway and the client. A
// saturated point's answers are the early ones, while the server's mean
// covers its whole queue: no overhead can be read from the two. Nor from
// a difference below zero, which no request can have (the client's clock
// starts before the server's and stops after it): the two means then
// differ in what they cover (the server's includes the warm-up requests)
// or in how they are stamped, by more than the overhead itself, and the
// note says so instead of printing a negative overhead.
func serverOverhead(p *result.Point) (*result.Overhead, string) {
	st, ok := p.Server["server_ttft_mean_s"]
	ttft := p.Latency[metric.TTFT]
	if !ok || ttft.Count == 0 || p.Schedule.Saturation != "" {
		return nil, ""
	}
	d := ttft.Mean - st*1000
	if d < 0 {
		return nil, fmt.Sprintf("the client's TTFT mean (%.2f ms) is %.2f ms below the server's own (%.2f ms), which no request can be: the two differ in what they cover (the server's mean includes the warm-up requests and its own queue accounting) or in their clocks, so the network, gateway and client overhead cannot be read from them",
			ttft.Mean, -d, st*1000)
	}
	return &result.Overhead{TTFTMeanMs: d}, ""
}
