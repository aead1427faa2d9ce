package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Speculative is speculative decoding on a profile derived from cards.
// Each engine step with decodes costs
//
//	draft: one forward of the draft over the step's batch, then K-1 more
//	       over one token per decoding sequence (K sequential small steps)
//	verify: one target forward over K+1 tokens per decoding sequence
//	        (weights streamed once, K+1 times the FLOPs and attention)
//
// and each decoding sequence then emits 1 to K+1 tokens, drawn from the
// truncated geometric distribution of a chain draft whose tokens are each
// accepted with probability Acceptance: P(n) = a^(n-1) (1-a) for n <= K,
// P(K+1) = a^K, mean (1 - a^(K+1)) / (1 - a). At a small batch the
// verify step costs about what one decode step does, so the emitted
// tokens are almost free; at a large batch it is compute-bound and K+1
// times dearer, and the speed-up shrinks or turns into a slow-down.
type Speculative struct {
	// Method is "draft" (a smaller model of the same tokenizer) or
	// "eagle" (EAGLE-style heads: one decoder layer of the target's shapes,
	// a fusion projection and an output projection over DraftVocab rows).
	Method string `json:"method"`
	// Draft is the draft model's card (method draft).
	Draft *ModelCard `json:"draft,omitempty"`
	// DraftTP is the draft's tensor-parallel degree (default: the target's).
	DraftTP int `json:"draft_tp,omitempty"`
	// tpDefaulted is set when DraftTP was the target's by default, so a
	// decode pool of another degree defaults it again to its own.
	tpDefaulted bool
	// DraftVocab is the rows of an EAGLE head's output projection
	// (EAGLE-3 drafts over a reduced vocabulary, 32000 for Llama 3);
	// default: the target's vocabulary.
	DraftVocab int `json:"draft_vocab,omitempty"`
	// K is the draft tokens proposed per step (vLLM num_speculative_tokens).
	K int `json:"k"`
	// Acceptance is the probability that each draft token is accepted,
	// given the ones before it were.
	Acceptance float64 `json:"acceptance"`
	// DraftOverhead is the fixed cost of one draft forward (a CUDA graph's
	// launch and the draft token's sampling), in place of the engine's
	// StepOverhead, which the draft does not pay again.
	DraftOverhead time.Duration `json:"draft_overhead,omitempty"`
	// Seed seeds the acceptance draws: a virtual replay is the same every time.
	Seed uint64 `json:"seed,omitempty"`

	draft roofline // the draft's cost model, set by WithSpeculative
}

// DefaultDraftOverhead is a draft forward's fixed cost when none is set:
// an assumption (a captured CUDA graph's launch and an argmax), not a fit.
const DefaultDraftOverhead = 150 * time.Microsecond

// MeanAccepted is the expected tokens a decoding sequence emits per step.
func (sp Speculative) MeanAccepted() float64 {
	a, k := sp.Acceptance, float64(sp.K)
	if a >= 1 {
		return k + 1
	}
	return (1 - math.Pow(a, k+1)) / (1 - a)
}

// eagleCard is the draft an EAGLE head amounts to: one decoder layer of
// the target's shapes, the fusion projection of three of its hidden states
// (EAGLE-3), and an output projection of vocab rows. Params counts the
// output projection twice, as the cards do (embedding and head), so that
// the roofline streams it once and looks the embedding up.
func eagleCard(m ModelCard, vocab int) ModelCard {
	h := float64(m.Hidden)
	attn := h*float64(m.Heads*m.HeadDim)*2 + h*float64(m.KVHeads*m.HeadDim)*2
	mlp := 3 * h * float64(m.Intermediate)
	fusion := 3 * h * h
	return ModelCard{
		Name: m.Name + "-eagle", Params: attn + mlp + fusion + 2*float64(vocab)*h,
		Layers: 1, Hidden: m.Hidden, Heads: m.Heads, KVHeads: m.KVHeads, HeadDim: m.HeadDim,
		Intermediate: m.Intermediate, Vocab: vocab, ContextLen: m.ContextLen,
		Source: "EAGLE head of " + m.Name + ": one decoder layer, a 3 x hidden fusion projection, an output projection",
	}
}

// WithSpeculative turns speculative decoding on for a profile derived
// from cards: it prices its steps as drafting plus verification, takes
// the draft's weights and KV cache out of the KV cache's memory, and
// makes each decode emit a drawn number of tokens.
func WithSpeculative(p Profile, sp Speculative) (Profile, error) {
	if p.Spec == nil {
		return p, fmt.Errorf("speculative decoding needs a profile derived from cards (model@gpu or simSpec), whose step costs can price a draft and a verification; a constant profile models it only as tokens_per_step")
	}
	if p.TokensPerStep > 1 {
		return p, fmt.Errorf("speculative decoding and tokens_per_step %d both set: tokens_per_step is the constant stand-in for speculation; set one", p.TokensPerStep)
	}
	if p.Disagg != nil {
		return p, fmt.Errorf("set speculative decoding before disaggregation: the decode pool takes it from the profile")
	}
	if sp.K < 1 || sp.K > 16 {
		return p, fmt.Errorf("speculative k %d: want 1 to 16 draft tokens per step", sp.K)
	}
	if !(sp.Acceptance >= 0 && sp.Acceptance <= 1) {
		return p, fmt.Errorf("speculative acceptance %g: want a probability, 0 to 1", sp.Acceptance)
	}
	if sp.DraftOverhead < 0 || sp.DraftOverhead > time.Second {
		return p, fmt.Errorf("speculative draft_overhead %v: want 0 (the default, %v) to 1s", sp.DraftOverhead, DefaultDraftOverhead)
	}
	if sp.DraftOverhead == 0 {
		sp.DraftOverhead = DefaultDraftOverhead
	}
	target := p.Spec.withDefaults()
	if sp.DraftTP == 0 || sp.tpDefaulted {
		sp.DraftTP, sp.tpDefaulted = target.TP, true
	}
	if sp.DraftTP < 1 || sp.DraftTP > target.TP {
		return p, fmt.Errorf("speculative draft_tp %d: want 1 to the target's tp %d (the draft runs on the target's GPUs)", sp.DraftTP, target.TP)
	}
	var card ModelCard
	switch sp.Method {
	case "draft":
		if sp.Draft == nil {
			return p, fmt.Errorf("speculative method draft needs a draft model")
		}
		if sp.DraftVocab != 0 {
			return p, fmt.Errorf("speculative draft_vocab is for method eagle; a draft model's vocabulary is its card's")
		}
		card = *sp.Draft
		if err := card.Check(); err != nil {
			return p, fmt.Errorf("speculative draft model: %w", err)
		}
		if card.Vocab != target.Model.Vocab {
			return p, fmt.Errorf("speculative draft model %s has a vocabulary of %d, the target %s one of %d: a draft must share the target's tokenizer", card.Name, card.Vocab, target.Model.Name, target.Model.Vocab)
		}
	case "eagle":
		if sp.Draft != nil {
			return p, fmt.Errorf("speculative method eagle drafts with heads of the target's shapes; draft_model is for method draft")
		}
		if sp.DraftVocab == 0 {
			sp.DraftVocab = target.Model.Vocab
		}
		if sp.DraftVocab < 1 || sp.DraftVocab > target.Model.Vocab {
			return p, fmt.Errorf("speculative draft_vocab %d: want 1 to the target's vocabulary of %d", sp.DraftVocab, target.Model.Vocab)
		}
		card = eagleCard(target.Model, sp.DraftVocab)
	default:
		return p, fmt.Errorf("speculative method %q: want draft or eagle", sp.Method)
	}
	if card.Heads%sp.DraftTP != 0 {
		return p, fmt.Errorf("speculative draft_tp %d does not divide the draft's %d attention heads", sp.DraftTP, card.Heads)
	}
	ds := target
	ds.Model, ds.TP = card, sp.DraftTP
	if sp.Method == "eagle" {
		ds.Weights = "bf16" // EAGLE heads ship in BF16 whatever the target
	}
	ds.StepOverhead = sp.DraftOverhead
	sp.draft = newRoofline(ds)

	// The draft's weights and its KV cache come out of the memory the
	// target's KV cache had; the GPU holding the most of the draft binds.
	r := newRoofline(target)
	free := float64(p.KVTokens())*r.kvBytesPerToken - sp.draft.weightBytesPerGPU
	tokens := int64(math.Max(0, free) / (r.kvBytesPerToken + sp.draft.kvBytesPerToken))
	blocks := tokens / int64(p.blockSize())
	if blocks*int64(p.blockSize()) < int64(p.MaxModelLen) {
		return p, fmt.Errorf("speculative decoding with %s on %d x %s: with the draft's weights and KV cache, the KV cache holds %d tokens, less than one request of max_model_len %d",
			card.Name, target.TP, target.GPU.Name, max(0, blocks*int64(p.blockSize())), p.MaxModelLen)
	}
	p.KVBlocks = int(blocks)
	s := sp
	p.Speculative = &s
	p.Name += fmt.Sprintf("+%s-k%d-a%g", sp.Method, sp.K, sp.Acceptance)
	p.Source += fmt.Sprintf("; speculative decoding: %s (%s), k %d, acceptance %g per token (%.2f tokens per step expected)",
		sp.Method, card.Name, sp.K, sp.Acceptance, sp.MeanAccepted())
	return p, nil
}

// cost prices a step of the target r with speculation: the draft's K
// forwards and the verification of K+1 tokens per decoding sequence,
// which the target computes as a chunk over the sequence's context.
func (sp *Speculative) cost(r roofline) func(batch) time.Duration {
	k := sp.K
	return func(b batch) time.Duration {
		if b.seqs == 0 {
			return 0
		}
		d := int64(b.decodes)
		v := b
		v.decodes, v.decodeCtx = 0, 0
		v.prefill += (k + 1) * b.decodes
		v.prefillCtx += b.decodeCtx
		v.prefillAttn += int64(k+1)*b.decodeCtx + d*int64(k+1)*int64(k+2)/2
		// Verification samples every position it checks: k+1 a decode.
		v.sampled = b.seqs + k*b.decodes
		// The draft's first forward takes what the target's step takes
		// (prompt chunks, whose KV it needs too, and one token per decode);
		// the other K-1 only the decodes, a token further each time.
		cost := r.step(v) + sp.draft.step(b)
		if d > 0 {
			for i := int64(1); i < int64(k); i++ {
				cost += sp.draft.step(batch{seqs: b.decodes, decodes: b.decodes, decodeCtx: b.decodeCtx + i*d})
			}
		}
		return cost
	}
}

// acceptor draws each verified sequence's emitted tokens. It belongs to
// the engine goroutine.
type acceptor struct {
	k     int
	alpha float64
	rng   *rand.Rand
}

func newAcceptor(sp Speculative) *acceptor {
	return &acceptor{k: sp.K, alpha: sp.Acceptance, rng: rand.New(rand.NewPCG(sp.Seed, 0x5bec))}
}

// draw returns 1 + the draft tokens accepted before the first rejection.
func (a *acceptor) draw() int {
	n := 1
	for n <= a.k && a.rng.Float64() < a.alpha {
		n++
	}
	return n
}

// lookahead is the KV slots a decode needs in a step: one, the constant
// profile's TokensPerStep, or speculation's K+1.
func (e *engine) lookahead() int {
	if e.accept != nil {
		return e.accept.k + 1
	}
	return e.p.TokensPerStep
}

// decodeBudget is what one decode takes of the step's token budget: the
// k+1 positions verification computes, as vLLM counts speculative tokens
// against max_num_batched_tokens (a constant profile's TokensPerStep
// stands for tokens emitted, not computed: 1).
func (e *engine) decodeBudget() int {
	if e.accept != nil {
		return e.accept.k + 1
	}
	return 1
}

// decodeTokens is what one decode step emits for a sequence.
func (e *engine) decodeTokens() int {
	if e.accept != nil {
		return e.accept.draw()
	}
	return e.p.TokensPerStep
}
