package workload

import (
	"fmt"
	"math/rand/v2"

	"github.com/benchci/benchci/framework/suite"
)

// Request is one planned request.
type Request struct {
	// Index is the request's position in the sequence, the same in every
	// run of the suite whatever the rate.
	Index        int
	InputTokens  int
	OutputTokens int
	Prompt       string
}

// Generator yields the suite's request sequence. Lengths, prompts and
// arrivals draw from separate seeded streams, so request i is the same in
// every run and at every rate: baseline and candidate send identical work.
type Generator struct {
	in, out Length
	prompts *rand.Rand
	trace   *Trace
	next    int
}

// Stream numbers of the seeded PCG generators.
const (
	streamInput = iota + 1
	streamOutput
	streamPrompt
	streamArrival
)

// NewGenerator returns the generator for w. A trace, when given, supplies
// the lengths it recorded; the distributions fill in the others.
func NewGenerator(w suite.Workload, trace *Trace) (*Generator, error) {
	seed := uint64(w.Seed)
	in, err := NewLength(w.InputTokens, rand.NewPCG(seed, streamInput))
	if err != nil {
		return nil, fmt.Errorf("workload.input_tokens: %w", err)
	}
	out, err := NewLength(w.OutputTokens, rand.NewPCG(seed, streamOutput))
	if err != nil {
		return nil, fmt.Errorf("workload.output_tokens: %w", err)
	}
	return &Generator{in: in, out: out, prompts: rand.New(rand.NewPCG(seed, streamPrompt)), trace: trace}, nil
}

// Next returns the next request of the sequence.
func (g *Generator) Next() Request {
	// Draw from the distributions always, so request i is the same whether
	// or not a trace overrides some lengths.
	r := Request{Index: g.next, InputTokens: g.in.Sample(), OutputTokens: g.out.Sample()}
	if g.trace != nil && g.next < len(g.trace.Entries) {
		if e := g.trace.Entries[g.next]; e.InputTokens > 0 {
			r.InputTokens = e.InputTokens
		}
		if e := g.trace.Entries[g.next]; e.OutputTokens > 0 {
			r.OutputTokens = e.OutputTokens
		}
	}
	r.Prompt = Prompt(r.InputTokens, g.prompts)
	g.next++
	return r
}

// ArrivalSource returns the seeded source for a point's arrival timeline.
// Each point gets its own stream so points are independent of one another.
func ArrivalSource(seed int64, point int) rand.Source {
	return rand.NewPCG(uint64(seed)^uint64(point+1)<<32, streamArrival)
}
