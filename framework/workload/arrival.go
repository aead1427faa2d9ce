package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/benchci/benchci/framework/suite"
)

// Process draws successive arrival times, in seconds from the start of a
// point. Next returns +Inf when the process has no more arrivals.
type Process interface {
	Next() float64
}

// NewProcess returns the arrival process a describes at mean rate per
// second. trace is required for trace arrivals and ignored otherwise.
func NewProcess(a suite.Arrival, rate float64, src rand.Source, trace *Trace) (Process, error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, fmt.Errorf("rate must be positive, got %v", rate)
	}
	r := rand.New(src)
	switch a.Kind {
	case suite.ArrivalConstant:
		return &constant{rate: rate}, nil
	case suite.ArrivalPoisson:
		return &renewal{gap: func() float64 { return r.ExpFloat64() / rate }}, nil
	case suite.ArrivalGamma:
		// Shape k and rate k*rate keep the mean gap at 1/rate; the gaps'
		// coefficient of variation is 1/sqrt(k).
		g := distuv.Gamma{Alpha: a.Burstiness, Beta: a.Burstiness * rate, Src: src}
		return &renewal{gap: g.Rand}, nil
	case suite.ArrivalBursts:
		return &bursts{r: r, base: rate, factor: a.Factor, on: a.On.D().Seconds(), period: a.Period.D().Seconds()}, nil
	case suite.ArrivalTrace:
		if trace == nil || len(trace.Entries) == 0 {
			return nil, fmt.Errorf("trace arrivals need a non-empty trace")
		}
		return &replay{t: trace, scale: trace.Rate() / rate}, nil
	}
	return nil, fmt.Errorf("unknown arrival process %q", a.Kind)
}

// constant spaces arrivals exactly 1/rate apart; i/rate rather than a
// running sum, so rounding cannot add an arrival.
type constant struct {
	rate float64
	i    int
}

func (c *constant) Next() float64 {
	t := float64(c.i) / c.rate
	c.i++
	return t
}

// renewal draws independent gaps; the first arrival is at 0 so a point
// starts loading at once.
type renewal struct {
	gap     func() float64
	t       float64
	started bool
}

func (p *renewal) Next() float64 {
	if p.started {
		p.t += p.gap()
	}
	p.started = true
	return p.t
}

// bursts is a Poisson process whose rate is piecewise constant: base, and
// base*factor in [k*period + period - on, (k+1)*period). At a change of
// rate the pending gap is redrawn at the new rate, which is exact for a
// Poisson process (memoryless).
type bursts struct {
	r            *rand.Rand
	base, factor float64
	on, period   float64
	t            float64
	started      bool
}

func (b *bursts) Next() float64 {
	if !b.started {
		b.started = true
		return 0
	}
	for {
		k := math.Floor(b.t / b.period)
		spikeStart := k*b.period + b.period - b.on
		rate, segEnd := b.base, spikeStart
		if b.t >= spikeStart {
			rate, segEnd = b.base*b.factor, (k+1)*b.period
		}
		gap := b.r.ExpFloat64() / rate
		if b.t+gap < segEnd {
			b.t += gap
			return b.t
		}
		b.t = segEnd
	}
}

// replay plays a trace, its times scaled so its mean rate is the point's.
type replay struct {
	t     *Trace
	scale float64
	i     int
}

func (p *replay) Next() float64 {
	if p.i >= len(p.t.Entries) {
		return math.Inf(1)
	}
	at := (p.t.Entries[p.i].At - p.t.Entries[0].At) * p.scale
	p.i++
	return at
}

// Timeline returns the intended send offsets, from the start of a point, of
// the process's arrivals before end (0: no end), stopping once limit of
// them (0: no limit) fall at or after skip: a warm-up of length skip plus
// limit measured requests. End or limit must be set. Precomputing the
// schedule keeps the dispatcher's hot loop to "sleep until, then send", and
// makes the schedule reproducible and inspectable.
func Timeline(p Process, end, skip time.Duration, limit int) []time.Duration {
	out := make([]time.Duration, 0, 64)
	counted := 0
	for limit == 0 || counted < limit {
		t := p.Next()
		if math.IsInf(t, 1) {
			break
		}
		at := time.Duration(t * float64(time.Second))
		if end > 0 && at >= end {
			break
		}
		out = append(out, at)
		if at >= skip {
			counted++
		}
	}
	return out
}
