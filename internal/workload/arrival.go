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
		if trace == nil || trace.Len() == 0 {
			return nil, fmt.Errorf("trace arrivals need a non-empty trace")
		}
		return &replay{t: trace, scale: trace.Rate() / rate}, nil
	}
	return nil, fmt.Errorf("unknown arrival process %q", a.Kind)
}

// AllAtOnce is the process of a throughput test: every arrival at 0.
type AllAtOnce struct{}

// Next returns 0: now.
func (AllAtOnce) Next() float64 { return 0 }

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
	if p.i >= p.t.Len() {
		return math.Inf(1)
	}
	at := (p.t.at[p.i] - p.t.at[0]) * p.scale
	p.i++
	return at
}

// Arrivals makes a point's arrival process. Every call returns a fresh
// process that draws the same times, so a point can be counted in one pass
// and sent in another without keeping its times: a plan of millions of
// arrivals costs no memory.
type Arrivals func() Process

// NewArrivals is NewProcess as a factory: each call reseeds from seed and
// point, so every process it makes draws the same times.
func NewArrivals(a suite.Arrival, rate float64, seed int64, point int, trace *Trace) (Arrivals, error) {
	if _, err := NewProcess(a, rate, ArrivalSource(seed, point), trace); err != nil {
		return nil, err
	}
	return func() Process {
		p, _ := NewProcess(a, rate, ArrivalSource(seed, point), trace) // checked above
		return p
	}, nil
}

// Schedule yields a point's intended send offsets, from the start of the
// point, one at a time: the process's arrivals before end (0: no end),
// stopping once limit of them (0: no limit) fall at or after skip, i.e. a
// warm-up of length skip plus limit measured requests. End or limit must
// be set. Drawing lazily keeps memory flat whatever the plan's size, and
// the dispatcher's loop stays "draw, sleep until, send".
type Schedule struct {
	p       Process
	end     time.Duration
	skip    time.Duration
	limit   int
	counted int
	done    bool
}

// NewSchedule returns the schedule of p's arrivals; see Schedule.
func NewSchedule(p Process, end, skip time.Duration, limit int) *Schedule {
	return &Schedule{p: p, end: end, skip: skip, limit: limit}
}

// maxOffset is the last offset a time.Duration holds, in seconds; a
// process drawing past it has ended (292 years).
const maxOffset = float64(math.MaxInt64) / float64(time.Second)

// Next returns the next offset, or false once the schedule has ended.
func (s *Schedule) Next() (time.Duration, bool) {
	if s.done || (s.limit > 0 && s.counted >= s.limit) {
		s.done = true
		return 0, false
	}
	t := s.p.Next()
	if !(t < maxOffset) { // +Inf, NaN, or beyond what a Duration holds
		s.done = true
		return 0, false
	}
	at := time.Duration(t * float64(time.Second))
	if s.end > 0 && at >= s.end {
		s.done = true
		return 0, false
	}
	if at >= s.skip {
		s.counted++
	}
	return at, true
}

// Measured reports how many offsets so far fell at or after skip.
func (s *Schedule) Measured() int { return s.counted }

// Ramped returns arrivals whose rate rises from r.From to rate over r.Over
// from the point's start, then stays at rate. The base process, drawn at
// rate, keeps its shape: its times are mapped through the inverse of the
// ramp's cumulative rate (time rescaling), so constant arrivals stay
// evenly spaced in load and Poisson ones become the non-homogeneous
// Poisson process of the ramp.
func Ramped(base Arrivals, rate float64, r suite.Ramp) Arrivals {
	return func() Process {
		return &ramped{base: base(), rate: rate, from: r.From, over: r.Over.D().Seconds(), kind: r.Kind}
	}
}

type ramped struct {
	base             Process
	rate, from, over float64
	kind             suite.RampKind
}

func (p *ramped) Next() float64 {
	s := p.base.Next()
	if math.IsInf(s, 1) || math.IsNaN(s) {
		return s
	}
	return p.at(p.rate * s) // the time by which the ramp has offered that many arrivals
}

// cum1 is the arrivals the ramp offers over its whole rise (its rate's
// integral up to over).
func (p *ramped) cum1() float64 {
	if p.kind == suite.RampExponential {
		k := math.Log(p.rate / p.from)
		if k == 0 {
			return p.from * p.over
		}
		return p.from * p.over / k * (p.rate/p.from - 1)
	}
	return (p.from + p.rate) * p.over / 2
}

// at inverts the ramp's cumulative rate: the time by which n arrivals have
// been offered.
func (p *ramped) at(n float64) float64 {
	if c := p.cum1(); n >= c {
		return p.over + (n-c)/p.rate
	}
	if p.kind == suite.RampExponential {
		k := math.Log(p.rate / p.from)
		if k == 0 {
			return n / p.from
		}
		return p.over / k * math.Log1p(n*k/(p.from*p.over))
	}
	a := (p.rate - p.from) / (2 * p.over) // a t^2 + from t - n = 0
	if a == 0 {
		return n / p.from
	}
	return (-p.from + math.Sqrt(p.from*p.from+4*a*n)) / (2 * a)
}
