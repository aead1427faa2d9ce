package workload

import (
	"fmt"
	"math/rand/v2"

	"github.com/benchci/benchci/framework/suite"
)

// ShareBelow is the share of the first n requests whose prompt asks for
// fewer than floor tokens, input_tokens drawn as the generator draws them
// (the same lengths at every point): where floor is the shortest prompt
// the server takes (one word in its chat template), requests no prompt can
// honour. A shared prefix counts in the length asked, though its own
// message adds template tokens too: the share is then a lower bound. ok
// is false where input_tokens does not set the prompts' lengths (datasets,
// a trace's lengths).
func ShareBelow(w suite.Workload, floor, n int) (share float64, ok bool, err error) {
	synthetic := w.Prompts.Kind.Synthetic() || w.Prompts.Kind == suite.PromptMultiTurn
	if w.InputTokens.Kind == "" || w.Arrival.Kind == suite.ArrivalTrace || !synthetic || n <= 0 || floor <= 1 {
		return 0, false, nil
	}
	in, err := NewLength(w.InputTokens, rand.NewPCG(uint64(w.Seed), streamInput))
	if err != nil {
		return 0, false, fmt.Errorf("workload.input_tokens: %w", err)
	}
	below := 0
	for range n {
		if in.Sample()+w.Prompts.PrefixTokens < floor {
			below++
		}
	}
	return float64(below) / float64(n), true, nil
}
