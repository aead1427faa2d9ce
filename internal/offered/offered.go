// Package offered judges the rate an open-loop point's arrivals really
// offered against the nominal one, within the process's own noise. The run
// notes it per point and the merge of shards on the whole, so it lives
// apart from the load generator, which a merge must not link.
package offered

import (
	"fmt"
	"math"
	"strconv"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
)

// noiseSDs is how many standard deviations of its own noise the
// offered rate may stray from the nominal one before a note says so: at 2,
// one honest point in twenty gets a note, which costs a reader a line,
// while a seed that offered 7.9 of 10 req/s no longer goes unseen.
const noiseSDs = 2

// NotePrefix starts every Note, so that a merge of shards
// can tell their notes on the offered rate from others.
const NotePrefix = "the arrivals drawn offered "

// Judge says whether the arrivals drawn for an open-loop point offered
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
func Judge(s *suite.Suite, p *result.Point, shards int) (Off, bool) {
	if p.Rate <= 0 || s.Sweep.Requests > 0 || p.Incomplete {
		return Off{}, false
	}
	if r := s.Sweep.Ramp; r != nil && r.Over > s.Sweep.Warmup {
		return Off{}, false // the ramp lowers the offered rate inside the window by design
	}
	var cv2 float64
	switch s.Workload.Arrival.Kind {
	case suite.ArrivalPoisson:
		cv2 = 1
	case suite.ArrivalGamma:
		cv2 = 1 / s.Workload.Arrival.Burstiness
	default:
		return Off{}, false
	}
	secs := p.Window.Seconds
	if secs <= 0 {
		return Off{}, false
	}
	n := float64(max(shards, 1))
	want := p.Rate / n * secs
	got := p.Schedule.ScheduledRate * secs
	sd := math.Sqrt(p.Rate*secs*cv2) / n
	if sd == 0 || math.Abs(got-want) <= noiseSDs*sd {
		return Off{}, false
	}
	return Off{Offered: p.Schedule.ScheduledRate, SDs: math.Abs(got-want) / sd, Below: got < want, Seconds: secs, NoisePerSec: sd / secs}, true
}

// Off is a point whose arrivals strayed from the nominal rate beyond their
// noise.
type Off struct {
	// Offered is the rate the arrivals drawn offered, per second.
	Offered float64
	// SDs is how many standard deviations of the process's noise away from
	// the nominal rate it is, Below on which side.
	SDs   float64
	Below bool
	// Seconds is the window; NoisePerSec one standard deviation, per second.
	Seconds, NoisePerSec float64
}

// Note says, in a line, what Judge found: "" when the point offered its
// rate within noise (or is not judged).
func Note(s *suite.Suite, p *result.Point, shards int) string {
	o, ok := Judge(s, p, shards)
	if !ok {
		return ""
	}
	dir := "above"
	if o.Below {
		dir = "below"
	}
	nominal := strconv.FormatFloat(p.Rate, 'g', -1, 64)
	if shards > 1 {
		nominal = fmt.Sprintf("%.3g (this shard's 1/%d of %s)", p.Rate/float64(shards), shards, nominal)
	}
	return fmt.Sprintf(NotePrefix+"%.3g req/s, %.1f standard deviations %s the nominal %s (its noise over %.3g s is ±%.2g req/s): the figures are for the rate offered; a longer duration, or trials, bring it closer",
		o.Offered, o.SDs, dir, nominal, o.Seconds, o.NoisePerSec)
}
