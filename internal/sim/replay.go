package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// Replay is the simulator's engine on a simulated clock, driven request
// by request: the load generator's virtual-time mode hands it the request
// bodies a client would send, and steps it. Requests are admitted as the
// HTTP handler admits them (Server.plan: the chat template's tokens, the
// prompt's block hashes for the prefix cache, max_tokens, refusals), and
// the scheduler, KV cache, prefix cache and step costs are the engine's
// own code. Nothing sleeps and no socket is opened: a step is its cost
// added to the clock the caller keeps. One goroutine drives it.
type Replay struct {
	srv *Server
	e   *engine
	// live finds a sequence by the caller's id until it ends: ids are
	// consecutive, live[i] is id liveBase+i's (nil once it ended), and
	// the ended ones are taken off its front.
	live     []*seq
	liveBase int
	// stepping holds the sequences of the step started and not yet ended;
	// idle is set when that step is a wait for a delayed arrival.
	stepping []*seq
	idle     bool
	// delayed are requests sent and still on the request path (the
	// profile's RequestOverhead), in arrival order; rng draws each one's
	// delay, seeded, so a replay is the same every run.
	delayed []*seq
	rng     *rand.Rand
	before  []int64 // the stepping sequences' tokens before the step
	nextID  int
}

// NewReplay returns a replay of the profile's engine, empty and idle. It
// steps one engine, so it refuses a disaggregated profile (its pools and
// transfers). A request reaches the engine its request path's delay after
// it was sent (Profile.RequestOverhead, spread as requestDelay draws it).
func NewReplay(p Profile) (*Replay, error) {
	if p.Disagg != nil {
		return nil, errors.New("the virtual replay steps one engine, and this profile is disaggregated (prefill and decode pools): run it without --virtual")
	}
	srv := New(p)
	e := srv.cl.prefill[0]
	e.lazyCancel = true
	return &Replay{srv: srv, e: e, liveBase: 1, rng: rand.New(rand.NewPCG(3, 4))}, nil
}

// Profile returns the replayed profile.
func (r *Replay) Profile() Profile { return r.srv.p }

// Admission is what the engine made of a submitted request.
type Admission struct {
	// ID names the request in Step's reports and in Cancel.
	ID int
	// Prompt and Output are its prompt's tokens (chat template included)
	// and the tokens it will produce.
	Prompt, Output int
}

// ErrEmbeddings refuses an embeddings body: the replay streams
// completions.
var ErrEmbeddings = errors.New("sim: the virtual-time replay serves chat and completions requests, not embeddings")

// Submit admits a request body (chat completions when it has messages,
// completions otherwise) arriving at at. An error is the refusal the
// server would answer with a 400 (its message is the server's).
func (r *Replay) Submit(body []byte, at time.Time) (Admission, error) {
	var req request
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		return Admission{}, fmt.Errorf("bad JSON body: %w", err)
	}
	if req.Prompt == nil && req.Messages == nil && bytes.Contains(body, []byte(`"input"`)) {
		return Admission{}, ErrEmbeddings
	}
	a, err := r.srv.plan(&req, req.Messages != nil)
	if err != nil {
		return Admission{}, err
	}
	return r.admit(a, at), nil
}

// Request is a text request as Submit reads its body: a chat's messages
// (Roles and Texts, one each) or a completion's prompt (Texts, one), and
// max_tokens. A caller that built the request hands it over as it is,
// instead of encoding JSON for Submit to decode: in a replay of millions
// of requests that round trip was most of the time. What it cannot say
// (images, tools, response formats, other fields) goes as a body.
type Request struct {
	Chat         bool
	Roles, Texts []string
	MaxTokens    int
}

// SubmitRequest admits q arriving at at, as Submit admits the body that
// says the same.
func (r *Replay) SubmitRequest(q Request, at time.Time) (Admission, error) {
	a, err := r.srv.planText(q)
	if err != nil {
		return Admission{}, err
	}
	return r.admit(a, at), nil
}

// admit queues a planned request.
func (r *Replay) admit(a admission, at time.Time) Admission {
	s := newVirtualSeq(a.prompt, a.maxTokens)
	s.hashes, s.arrived = a.hashes, at
	r.nextID++
	s.tag = r.nextID
	if len(r.live) == 0 {
		r.live, r.liveBase = r.live[:0], s.tag
	}
	r.live = append(r.live, s)
	if r.srv.p.RequestOverhead > 0 {
		s.arrived = at.Add(r.srv.p.requestDelay(r.rng.Float64()))
		r.delayed = insertByArrival(r.delayed, s)
	} else {
		r.e.waiting = append(r.e.waiting, s)
	}
	return Admission{ID: s.tag, Prompt: a.prompt, Output: a.maxTokens}
}

// Cancel drops a request, as a client closing its stream does: the
// engine frees its KV cache at its next step.
func (r *Replay) Cancel(id int) {
	if s := r.lookup(id); s != nil {
		s.abandoned = true
		r.ended(id)
		// One still on its way never reaches the engine.
		if i := slices.Index(r.delayed, s); i >= 0 {
			r.delayed = slices.Delete(r.delayed, i, i+1)
		}
	}
}

// lookup returns the live sequence of the id, or nil.
func (r *Replay) lookup(id int) *seq {
	if i := id - r.liveBase; i >= 0 && i < len(r.live) {
		return r.live[i]
	}
	return nil
}

// ended forgets the id's sequence, and the ended ones off live's front.
func (r *Replay) ended(id int) {
	r.live[id-r.liveBase] = nil
	n := 0
	for n < len(r.live) && r.live[n] == nil {
		n++
	}
	r.liveBase += n
	r.live = r.live[n:]
	if cap(r.live) > 4*len(r.live)+1024 {
		r.live = append([]*seq(nil), r.live...)
	}
}

// ResetPrefixCache empties the prefix cache, as POST /reset_prefix_cache
// does.
func (r *Replay) ResetPrefixCache() { r.e.kv.reset() }

// Waiting reports whether the step Start began is only a wait for a
// request on its request path: the caller may end it early (End reports
// nothing) when another request is submitted or one canceled, and start
// again, so a request sent later with a shorter way is not held back.
func (r *Replay) Waiting() bool { return r.idle }

// Busy reports whether requests are on their way, wait or run.
func (r *Replay) Busy() bool {
	return len(r.delayed) > 0 || len(r.e.waiting) > 0 || len(r.e.running) > 0
}

// Start schedules the engine's next step at now and returns its cost:
// the step's tokens come when the caller's clock reaches now + cost, and
// End delivers them. ok is false when nothing can run (idle, or what
// waits does not fit the KV cache): only an arrival or a cancel changes
// that. When nothing can run and a request is still on its request path,
// the step is a wait until it arrives (End reports nothing).
func (r *Replay) Start(now time.Time) (cost time.Duration, ok bool) {
	n := 0
	for n < len(r.delayed) && !r.delayed[n].arrived.After(now) {
		n++
	}
	r.e.waiting = append(r.e.waiting, r.delayed[:n]...)
	r.delayed = slices.Delete(r.delayed, 0, n)
	b := r.e.schedule(now)
	if b.seqs == 0 {
		if len(r.delayed) > 0 {
			r.idle = true
			return r.delayed[0].arrived.Sub(now), true
		}
		return 0, false
	}
	r.stepping = append(r.stepping[:0], r.e.running...)
	return r.e.cost(b), true
}

// End ends the step Start began: each sequence of it that produced
// tokens is reported with its total so far and whether it finished.
// Canceled requests are not reported.
func (r *Replay) End(report func(id, produced int, finished bool)) {
	if r.idle {
		r.idle = false
		return
	}
	before := r.before[:0]
	for _, s := range r.stepping {
		before = append(before, s.produced)
	}
	r.before = before
	r.e.emit()
	for i, s := range r.stepping {
		n := s.produced
		if n == before[i] || s.abandoned {
			continue
		}
		done := s.finished
		if done {
			r.ended(s.tag)
		}
		report(s.tag, int(n), done)
	}
	clear(r.stepping)
	r.stepping = r.stepping[:0]
}

// Stuck lists the requests still live: after the last arrival, with
// Start refusing, they are ones the engine can never admit.
func (r *Replay) Stuck() []int {
	var ids []int
	for _, s := range r.live {
		if s != nil {
			ids = append(ids, s.tag) // submission order: the same every run
		}
	}
	return ids
}

// Preemptions counts the engine's preemptions so far.
func (r *Replay) Preemptions() int64 { return r.e.preemptions.Load() }
