package workload

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/words"
)

// Request is one planned request.
type Request struct {
	// Index is the request's position in the sequence, the same in every
	// run of the suite whatever the rate.
	Index int
	// InputTokens is the intended prompt length (for datasets, the
	// prompt's length in words, an estimate).
	InputTokens  int
	OutputTokens int
	// System, when set, is sent as a system message (chat) or before the
	// prompt (completions).
	System string
	Prompt string
	// History holds a session's earlier turns, oldest first: user and
	// assistant messages in turn.
	History []client.Message
	// FollowUps are the session's later turns, each sent Think after the
	// previous one's reply.
	FollowUps []Request
	Think     time.Duration
	// AbandonAfter, when above 0, is the output tokens after which the
	// user closes the stream; AbandonAt the time after the send.
	AbandonAfter int
	AbandonAt    time.Duration
	// Model, when the workload mixes models, is this request's ("": the
	// client's).
	Model string
	// Inputs are an embeddings request's further inputs (workload.batch),
	// after Prompt; InputTokens counts them all.
	Inputs []string
	// Images are data URLs sent with the prompt (workload.images); their
	// tokens are the server's to count and are not in InputTokens.
	Images []string
	// Structured marks a request that carries workload.structured.
	Structured bool
}

// Calibration maps a token target to the number of synthetic words that
// reach it on a given server: tokens = Overhead + TokensPerWord x words.
// The zero value (and Identity) assumes one token per word, no overhead.
type Calibration struct {
	Overhead      float64 `json:"overhead"`
	TokensPerWord float64 `json:"tokens_per_word"`
}

// Words returns how many words make tokens tokens of prompt text; with
// overhead, the template's own tokens are left out.
func (c Calibration) Words(tokens int, overhead bool) int {
	tpw := c.TokensPerWord
	if tpw <= 0 {
		tpw = 1
	}
	t := float64(tokens)
	if overhead {
		t -= c.Overhead
	}
	return max(1, int(t/tpw+0.5))
}

// Generator yields the suite's request sequence. Lengths, prompts and
// arrivals draw from separate seeded streams, so request i is the same in
// every run and at every rate: baseline and candidate send identical work.
type Generator struct {
	w        suite.Workload
	in, out  Length // nil when a dataset supplies them
	prompts  *rand.Rand
	trace    *Trace
	data     *Dataset
	order    []int // dataset order, shuffled by the seed
	prefixes []string
	pick     *rand.Rand
	cancel   *rand.Rand // whether a request is abandoned
	after    Length     // and after how many tokens, or milliseconds
	afterMs  bool       // after is in milliseconds
	cal      Calibration
	salt     uint64 // the point's, for prompt text
	models   *rand.Rand
	modelCDF []float64  // cumulative weights of w.Models, normalized
	batch    Length     // inputs per embeddings request; nil: one
	extra    Length     // the lengths of a batch's further inputs
	extraTxt *rand.Rand // and their text
	images   *imagePool
	structRN *rand.Rand // which requests carry workload.structured
	next     int
}

// Stream numbers of the seeded PCG generators.
const (
	streamInput = iota + 1
	streamOutput
	streamPrompt
	streamArrival
	streamPrefix
	streamDataset
	streamCancel
	streamBlock
	streamModel
	streamBatch
	streamImage
	streamStructured
)

// Sources are the optional inputs of a generator beyond the suite.
type Sources struct {
	// Trace supplies recorded lengths; the distributions fill in the rest.
	Trace *Trace
	// Dataset supplies prompts (and maybe output lengths).
	Dataset *Dataset
	// Calibration sizes synthetic prompts for the target's tokenizer.
	Calibration Calibration
	// NoOutput is set for requests that generate nothing (embeddings):
	// output lengths are then not needed.
	NoOutput bool
	// Point numbers the load point (trials counted) the sequence is for.
	// Synthetic prompt text is drawn afresh for each point, the same in
	// every run: a server's prefix cache must not serve one point from
	// the prompts of the last, as it would if every point re-sent them.
	Point int
	// Salt, when set, changes every synthetic prompt's text (lengths,
	// arrivals and the choice of shared prefix are kept): runs with
	// different salts send different text, so one run's cache cannot
	// serve the next (workload.prompts.salt).
	Salt string
}

// saltBits turns a salt into the offset added to the text streams' seeds:
// 0 for none, so unsalted runs send what they always sent.
func saltBits(salt string) uint64 {
	if salt == "" {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(salt))
	return h.Sum64() | 1
}

// NewGenerator returns the generator for w.
func NewGenerator(w suite.Workload, src Sources) (*Generator, error) {
	return newGenerator(w, src, false)
}

// newGenerator returns the generator for w. With check, it is built only
// to find what would fail: files of lengths are read through and not
// kept, shared prefixes are not written, and a dataset (read through by
// CheckDataset) need not be given.
func newGenerator(w suite.Workload, src Sources, check bool) (*Generator, error) {
	seed := uint64(w.Seed)
	run := saltBits(src.Salt)
	salt := uint64(src.Point)<<40 + run
	g := &Generator{w: w, prompts: rand.New(rand.NewPCG(seed+salt, streamPrompt)), trace: src.Trace, data: src.Dataset, cal: src.Calibration, salt: salt}
	length := func(d suite.Dist, s rand.Source) (Length, error) { return newLength(d, s, suite.MaxTokens, check) }
	var err error
	if w.InputTokens.Kind != "" {
		if g.in, err = length(w.InputTokens, rand.NewPCG(seed, streamInput)); err != nil {
			return nil, fmt.Errorf("workload.input_tokens: %w", err)
		}
	}
	if w.OutputTokens.Kind != "" {
		if g.out, err = length(w.OutputTokens, rand.NewPCG(seed, streamOutput)); err != nil {
			return nil, fmt.Errorf("workload.output_tokens: %w", err)
		}
	}
	if c := w.Cancel; c != nil {
		g.cancel = rand.New(rand.NewPCG(seed, streamCancel))
		d, field := c.AfterTokens, "after_tokens"
		if c.AfterMs.Kind != "" {
			d, field, g.afterMs = c.AfterMs, "after_ms", true
		}
		if g.after, err = length(d, rand.NewPCG(seed, streamCancel+100)); err != nil {
			return nil, fmt.Errorf("workload.cancel.%s: %w", field, err)
		}
	}
	if w.Batch != nil {
		if g.batch, err = newLength(*w.Batch, rand.NewPCG(seed, streamBatch), suite.MaxBatch, check); err != nil {
			return nil, fmt.Errorf("workload.batch: %w", err)
		}
		g.extraTxt = rand.New(rand.NewPCG(seed+salt, streamBatch+200))
		if w.InputTokens.Kind != "" {
			if g.extra, err = length(w.InputTokens, rand.NewPCG(seed, streamBatch+100)); err != nil {
				return nil, fmt.Errorf("workload.input_tokens: %w", err)
			}
		}
	}
	if w.Images != nil {
		if g.images, err = newImagePool(*w.Images, w, seed, run); err != nil {
			return nil, err
		}
	}
	if w.Structured != nil {
		g.structRN = rand.New(rand.NewPCG(seed, streamStructured))
	}
	if len(w.Models) > 0 {
		// The model stream is its own, so adding a mix leaves every
		// request's lengths and prompt as they were.
		g.models = rand.New(rand.NewPCG(seed, streamModel))
		if g.modelCDF, err = modelCDF(w.Models); err != nil {
			return nil, err
		}
	}
	switch w.Prompts.Kind {
	case suite.PromptShareGPT, suite.PromptJSONL:
		if check {
			break
		}
		if g.data == nil || len(g.data.Entries) == 0 {
			return nil, fmt.Errorf("workload.prompts: %s prompts need a dataset", w.Prompts.Kind)
		}
		g.order = rand.New(rand.NewPCG(seed, streamDataset)).Perm(len(g.data.Entries))
		if g.out == nil {
			for i, e := range g.data.Entries {
				if e.OutputTokens == 0 {
					return nil, fmt.Errorf("workload: dataset entry %d records no output length; set workload.output_tokens", i+1)
				}
			}
		}
	case suite.PromptSharedPrefix:
		if check {
			break
		}
		// Salted by the run only: every point shares the prefixes, as the
		// system prompts of one deployment would.
		r := rand.New(rand.NewPCG(seed+run, streamPrefix))
		for range w.Prompts.Prefixes {
			g.prefixes = append(g.prefixes, Prompt(g.cal.Words(w.Prompts.PrefixTokens, false), r))
		}
		g.pick = rand.New(rand.NewPCG(seed, streamPrefix+100))
	}
	dataset := g.data != nil || (check && w.Prompts.Kind.Dataset())
	if g.in == nil && !dataset {
		return nil, fmt.Errorf("workload.input_tokens: required for %s prompts", w.Prompts.Kind)
	}
	if g.out == nil && !dataset && !src.NoOutput {
		return nil, fmt.Errorf("workload.output_tokens: required")
	}
	return g, nil
}

// modelCDF returns the cumulative shares of a mix's weights: finite and
// not negative, not all zero. Each is divided by the largest before they
// are added, so weights of 1e308 (whose sum overflows) share as 1 and 1
// do; the share of the last model that has one ends at exactly 1, so a
// draw never falls on a model of weight 0 after it.
func modelCDF(models []suite.ModelShare) ([]float64, error) {
	top := 0.0
	for i, m := range models {
		if !(m.Weight >= 0) || math.IsInf(m.Weight, 0) {
			return nil, fmt.Errorf("workload.models[%d].weight: must be a non-negative number, got %v", i, m.Weight)
		}
		top = max(top, m.Weight)
	}
	if top == 0 {
		return nil, fmt.Errorf("workload.models: the weights sum to zero")
	}
	sum := 0.0
	for _, m := range models {
		sum += m.Weight / top // at most len(models): no overflow
	}
	cdf := make([]float64, len(models))
	acc, last := 0.0, 0
	for i, m := range models {
		acc += m.Weight / top / sum
		cdf[i] = acc
		if m.Weight > 0 {
			last = i
		}
	}
	for i := last; i < len(cdf); i++ {
		cdf[i] = 1
	}
	return cdf, nil
}

// Next returns the next request of the sequence.
func (g *Generator) Next() Request {
	// Draw from every stream always, so request i is the same whichever
	// overrides apply.
	r := Request{Index: g.next}
	if g.in != nil {
		r.InputTokens = g.in.Sample()
	}
	if g.out != nil {
		r.OutputTokens = g.out.Sample()
	}
	if t := g.trace; t != nil && g.next < t.Len() {
		if in := t.in[g.next]; in > 0 {
			r.InputTokens = int(in)
		}
		if out := t.out[g.next]; out > 0 {
			r.OutputTokens = int(out)
		}
	}
	if g.models != nil {
		u := g.models.Float64()
		i, _ := slices.BinarySearch(g.modelCDF, u)
		r.Model = g.w.Models[min(i, len(g.w.Models)-1)].Name
	}
	if g.cancel != nil {
		abandon, after := g.cancel.Float64() < g.w.Cancel.Share, g.after.Sample()
		switch {
		case abandon && g.afterMs:
			r.AbandonAt = time.Duration(after) * time.Millisecond
		case abandon:
			r.AbandonAfter = after
		}
	}
	if g.images != nil {
		// Drawn before the prompt so a session's first turn carries them
		// (the pool has its own stream: nothing else moves).
		r.Images = g.images.next()
	}
	switch {
	case g.data != nil:
		e := g.data.Entries[g.order[g.next%len(g.order)]]
		r.System, r.Prompt = e.System, e.Prompt
		r.InputTokens = words.Count(e.System) + words.Count(e.Prompt)
		if e.OutputTokens > 0 {
			r.OutputTokens = e.OutputTokens
		}
	case g.prefixes != nil:
		r.System = g.prefixes[g.pick.IntN(len(g.prefixes))]
		r.Prompt = Prompt(g.cal.Words(r.InputTokens, true), g.prompts)
		r.InputTokens += g.w.Prompts.PrefixTokens
	case g.w.Prompts.Kind == suite.PromptMultiTurn:
		r = g.session(r)
	case g.trace != nil && g.next < g.trace.Len() && len(g.trace.hashIDs(g.next)) > 0:
		r.Prompt = g.blockPrompt(g.trace.hashIDs(g.next), r.InputTokens)
	default:
		r.Prompt = Prompt(g.cal.Words(r.InputTokens, true), g.prompts)
	}
	if g.structRN != nil {
		share := g.w.Structured.Share
		if share == 0 {
			share = 1
		}
		r.Structured = g.structRN.Float64() < share
	}
	if g.batch != nil {
		// A batch's further inputs, from their own streams: the first
		// input of request i is the same whatever the batch sizes.
		for range g.batch.Sample() - 1 {
			if g.data != nil {
				e := g.data.Entries[g.extraTxt.IntN(len(g.data.Entries))]
				r.Inputs = append(r.Inputs, e.Prompt)
				r.InputTokens += words.Count(e.Prompt)
				continue
			}
			n := g.extra.Sample()
			r.Inputs = append(r.Inputs, Prompt(g.cal.Words(n, true), g.extraTxt))
			r.InputTokens += n
		}
	}
	g.next++
	return r
}

// blockPrompt builds a prompt of tokens tokens whose leading blocks are a
// trace's: block id k's text is drawn from a stream seeded by the suite's
// seed and k alone, so it is the same in every request that names it, and
// requests whose hash_ids begin alike begin with the same tokens (a block
// cut short by the prompt's end is a prefix of the whole one). What the
// blocks do not cover is drawn as any prompt. The template's overhead is
// taken from that tail, so the blocks keep one size wherever they stand.
func (g *Generator) blockPrompt(ids []int, tokens int) string {
	total := g.cal.Words(tokens, true)
	size := g.w.Arrival.BlockTokens
	if size == 0 {
		size = suite.DefaultBlockTokens
	}
	per := g.cal.Words(size, false)
	var b strings.Builder
	used := 0
	for _, id := range ids {
		n := min(per, total-used)
		if n <= 0 {
			break
		}
		if used > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(Prompt(n, rand.New(rand.NewPCG(uint64(g.w.Seed)+streamBlock<<56+g.salt, uint64(id)))))
		used += n
	}
	if rest := total - used; rest > 0 {
		if used > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(Prompt(rest, g.prompts))
	}
	return b.String()
}

// session builds a multi-turn chat from its first turn's lengths: every
// turn adds a user message of its own input length, and the reply to it
// is represented in later turns' history by synthetic text of the reply's
// length, as a client replaying a conversation would send. InputTokens of
// a turn is the whole history's. A turn's images (the first turn's, or
// every turn's with images.turns 'every') stay in the history of every
// later turn, as a chat client resends them.
func (g *Generator) session(first Request) Request {
	turns := make([]Request, g.w.Prompts.Turns)
	var history []client.Message
	total := 0
	for k := range turns {
		t := first
		if k > 0 {
			t = Request{Index: first.Index, InputTokens: g.in.Sample(), OutputTokens: g.out.Sample(), Model: first.Model}
			if g.images != nil && g.w.Images.Turns == suite.ImagesEveryTurn {
				t.Images = g.images.next()
			}
		}
		user := Prompt(g.cal.Words(t.InputTokens, k == 0), g.prompts)
		total += t.InputTokens
		t.InputTokens = total
		t.Prompt = user
		t.History = slices.Clone(history)
		history = append(history, client.Message{Role: "user", Content: user, Images: t.Images},
			client.Message{Role: "assistant", Content: Prompt(g.cal.Words(t.OutputTokens, false), g.prompts)})
		total += t.OutputTokens
		turns[k] = t
	}
	head := turns[0]
	head.FollowUps = turns[1:]
	head.Think = g.w.Prompts.ThinkTime.D()
	return head
}

// ArrivalSource returns the seeded source for a point's arrival timeline.
// Each point gets its own stream so points are independent of one another.
func ArrivalSource(seed int64, point int) rand.Source {
	return rand.NewPCG(uint64(seed)^uint64(point+1)<<32, streamArrival)
}
