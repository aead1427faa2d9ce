package sim

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Faults make the simulator misbehave like real servers do, so that a
// client's error handling and a suite's error-rate SLOs can be tested.
// Rates are per-request probabilities, drawn from a seeded generator.
type Faults struct {
	// ErrorRate answers HTTP 503 with an OpenAI error body.
	ErrorRate float64 `json:"error_rate,omitempty"`
	// ResetRate cuts the connection after the first token.
	ResetRate float64 `json:"reset_rate,omitempty"`
	// StallRate pauses the stream for Stall after the first token.
	StallRate float64       `json:"stall_rate,omitempty"`
	Stall     time.Duration `json:"stall,omitempty"`
	// SlowFirstByte delays every response's headers.
	SlowFirstByte time.Duration `json:"slow_first_byte,omitempty"`
	// MalformedRate sends one chunk of broken JSON after the first token.
	MalformedRate float64 `json:"malformed_rate,omitempty"`
	// WrongUsageRate reports half the real completion_tokens in usage.
	WrongUsageRate float64 `json:"wrong_usage_rate,omitempty"`
	// WrongStructuredRate cuts a structured answer (a tool call's
	// arguments, a JSON answer) one character short, drawn apart from the
	// other faults: the answer streams normally but is no longer JSON.
	WrongStructuredRate float64 `json:"wrong_structured_rate,omitempty"`
	Seed                uint64  `json:"seed,omitempty"`
}

// fault is what happens to one request.
type fault int

const (
	faultNone fault = iota
	faultError
	faultReset
	faultStall
	faultMalformed
	faultWrongUsage
)

// dice draws faults; one per request, in a fixed order of kinds.
type dice struct {
	mu sync.Mutex
	r  *rand.Rand
	f  Faults
}

func newDice(f Faults) *dice {
	return &dice{r: rand.New(rand.NewPCG(f.Seed, 0xfa17)), f: f}
}

// wrongStructured draws whether a structured answer is spoiled.
func (d *dice) wrongStructured() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.r.Float64() < d.f.WrongStructuredRate
}

func (d *dice) roll() fault {
	d.mu.Lock()
	x := d.r.Float64()
	d.mu.Unlock()
	for _, k := range []struct {
		rate float64
		f    fault
	}{{d.f.ErrorRate, faultError}, {d.f.ResetRate, faultReset}, {d.f.StallRate, faultStall}, {d.f.MalformedRate, faultMalformed}, {d.f.WrongUsageRate, faultWrongUsage}} {
		if x < k.rate {
			return k.f
		}
		x -= k.rate
	}
	return faultNone
}
