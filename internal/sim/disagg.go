package sim

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// Disaggregation serves prefill and decode on separate pools of engine
// instances, as DistServe, Splitwise, Mooncake, NVIDIA Dynamo and vLLM's
// disaggregated prefill do. A request's prompt is computed on a prefill
// instance, which samples the first token; its KV cache then crosses a
// link to a decode instance,
//
//	KV bytes per token (the model's, all layers and KV heads) x prompt tokens
//	/ LinkGBs + LinkLatency
//
// in the order the prefill instance finished them (one link per prefill
// instance: transfers queue behind each other), and the decode instance
// admits it straight into decoding. Decode steps then never carry prefill
// chunks, so the time between tokens no longer jumps when prompts arrive;
// the first token still comes from the prefill instance, and the second
// pays the transfer. Each pool is derived from the profile's model and
// its own GPU card and TP. The prefill instance frees a sequence's KV
// blocks when its transfer starts: the model does not hold them for the
// transfer's duration.
type Disaggregation struct {
	Prefill Pool `json:"prefill"`
	Decode  Pool `json:"decode"`
	// LinkGBs is a prefill instance's bandwidth to the decode instances
	// (GB/s, 10^9 bytes: RDMA NICs, NVLink, PCIe), LinkLatency the fixed
	// cost of one transfer (connection, handshake, the first layer's wait).
	LinkGBs     float64       `json:"link_gbs"`
	LinkLatency time.Duration `json:"link_latency,omitempty"`

	prefill, decode Profile // the pools' derived profiles
	kvBytesPerToken float64
}

// Pool is one side of a disaggregated deployment: Instances engines,
// each on TP GPUs of the card.
type Pool struct {
	GPU       GPUCard `json:"gpu"`
	TP        int     `json:"tp"`
	Instances int     `json:"instances"`
}

// WithDisaggregation splits a profile derived from cards into a prefill
// and a decode pool. A pool's GPU card left empty is the profile's, TP 0
// the profile's, Instances 0 one. The decode pool takes the profile's
// speculative decoding, if any; the engine knobs are the profile's.
func WithDisaggregation(p Profile, d Disaggregation) (Profile, error) {
	if p.Spec == nil {
		return p, fmt.Errorf("disaggregation needs a profile derived from cards (model@gpu or simSpec): the pools are derived from the model on each pool's GPUs")
	}
	if p.Disagg != nil {
		return p, fmt.Errorf("the profile is disaggregated already")
	}
	if !(d.LinkGBs > 0) || d.LinkGBs > 1e5 {
		return p, fmt.Errorf("disaggregated link_gbs %g: want the KV link's bandwidth in GB/s, above 0", d.LinkGBs)
	}
	if d.LinkLatency < 0 || d.LinkLatency > time.Minute {
		return p, fmt.Errorf("disaggregated link_latency %v: want 0 to a minute", d.LinkLatency)
	}
	s := p.Spec.withDefaults()
	k := p.Knobs()
	pool := func(name string, pl *Pool) (Profile, error) {
		if pl.GPU.Name == "" && pl.GPU.MemoryGiB == 0 {
			pl.GPU = s.GPU
		}
		if pl.TP == 0 {
			pl.TP = s.TP
		}
		if pl.Instances == 0 {
			pl.Instances = 1
		}
		if pl.Instances < 1 || pl.Instances > 64 {
			return Profile{}, fmt.Errorf("disaggregated %s.instances %d: want 1 to 64", name, pl.Instances)
		}
		ps := s
		ps.GPU, ps.TP = pl.GPU, pl.TP
		pp, err := Derive(ps, k)
		if err != nil {
			return Profile{}, fmt.Errorf("disaggregated %s pool: %w", name, err)
		}
		pp.TokensPerStep, pp.ChatTemplateTokens, pp.PrefixCaching = p.TokensPerStep, p.ChatTemplateTokens, p.PrefixCaching
		return pp, nil
	}
	var err error
	if d.prefill, err = pool("prefill", &d.Prefill); err != nil {
		return p, err
	}
	if d.decode, err = pool("decode", &d.Decode); err != nil {
		return p, err
	}
	if sp := p.Speculative; sp != nil {
		if d.decode, err = WithSpeculative(d.decode, *sp); err != nil {
			return p, fmt.Errorf("disaggregated decode pool: %w", err)
		}
	}
	m := s.Model
	kb, _ := dtypeBytes(s.KVCache)
	d.kvBytesPerToken = 2 * float64(m.Layers*m.KVHeads*m.HeadDim) * kb
	dd := d
	p.Disagg = &dd
	p.Name += fmt.Sprintf("+disagg-%dx%s-tp%d-%dx%s-tp%d", d.Prefill.Instances, d.Prefill.GPU.Name, d.Prefill.TP, d.Decode.Instances, d.Decode.GPU.Name, d.Decode.TP)
	p.Source += fmt.Sprintf("; disaggregated: prefill %d x %s TP %d, decode %d x %s TP %d, KV over %g GB/s + %v (%.0f KiB per token)",
		d.Prefill.Instances, d.Prefill.GPU.Name, d.Prefill.TP, d.Decode.Instances, d.Decode.GPU.Name, d.Decode.TP, d.LinkGBs, d.LinkLatency, d.kvBytesPerToken/1024)
	return p, nil
}

// TransferTime is how long the KV cache of n tokens takes over an idle link.
func (d Disaggregation) TransferTime(tokens int) time.Duration {
	return time.Duration(d.kvBytesPerToken*float64(tokens)/(d.LinkGBs*1e9)*1e9) + d.LinkLatency
}

// admitDecode schedules a sequence that arrived with its KV cache as a
// decode in the step it is admitted (the engine allocated its blocks).
//
//go:norace
func (e *engine) admitDecode(s *seq, b *batch) {
	s.scheduled, s.prefilling = 1, false
	b.seqs++
	b.decodes++
	b.decodeCtx += int64(s.computed)
}

// cluster is what serves a profile: one engine (colocated), or the
// prefill and decode instances of a disaggregated one. The virtual
// replays and the server drive it alike.
type cluster struct {
	prefill []*engine // colocated: the one engine
	decode  []*engine // nil when colocated
	all     []*engine
	d       *Disaggregation
	// linkFree is when each prefill instance's link is next idle; each is
	// its prefill engine's own (its goroutine, in real time).
	linkFree []time.Time
	// inTransit counts the transfers on their way to each decode
	// instance, for routing.
	inTransit []atomic.Int64

	// Virtual time: now is the replay's clock while engines emit (hand-offs
	// read it), transit the transfers in flight, by arrival; steps the
	// step in progress on each engine of all.
	virtual bool
	now     time.Time
	transit []transfer
	steps   []vstep
	// Real time: ctx ends the delivery of transfers.
	ctx context.Context
}

type transfer struct {
	s  *seq
	at time.Time
	to *engine
}

type vstep struct {
	on   bool
	end  time.Time
	cost time.Duration
	snap []*seq
}

func newCluster(p Profile, virtual bool) *cluster {
	c := &cluster{d: p.Disagg, virtual: virtual}
	if p.Disagg == nil {
		c.prefill = []*engine{newEngine(p)}
	} else {
		for range p.Disagg.Prefill.Instances {
			c.prefill = append(c.prefill, newEngine(p.Disagg.prefill))
		}
		for range p.Disagg.Decode.Instances {
			c.decode = append(c.decode, newEngine(p.Disagg.decode))
		}
		c.linkFree = make([]time.Time, len(c.prefill))
		c.inTransit = make([]atomic.Int64, len(c.decode))
		for i, e := range c.prefill {
			e.handoff = func(s *seq) { c.send(i, s) }
		}
	}
	c.all = append(append([]*engine(nil), c.prefill...), c.decode...)
	c.steps = make([]vstep, len(c.all))
	// Routing reads a disaggregated replay's gauges; a colocated one's
	// nothing reads.
	c.all[0].quiet = virtual && len(c.all) == 1
	return c
}

// least is the instance with the fewest sequences, counting those on
// their way to it.
func (c *cluster) least(es []*engine, extra func(i int) int64) int {
	best, load := 0, int64(-1)
	for i, e := range es {
		n := e.numRunning.Load() + e.numWaiting.Load() + extra(i)
		if load < 0 || n < load {
			best, load = i, n
		}
	}
	return best
}

// entry is the prefill instance (or the one engine) a new request goes to.
func (c *cluster) entry() *engine {
	if len(c.prefill) == 1 {
		return c.prefill[0]
	}
	return c.prefill[c.least(c.prefill, func(int) int64 { return 0 })]
}

// add hands a new request over in virtual time.
func (c *cluster) add(s *seq) {
	e := c.entry()
	e.waiting = append(e.waiting, s)
	if !e.quiet {
		e.numWaiting.Store(int64(len(e.waiting)))
	}
}

// submit hands a new request over in real time.
func (c *cluster) submit(ctx context.Context, s *seq) error { return c.entry().submit(ctx, s) }

// send starts the transfer of a sequence whose prefill instance i has
// sampled its first token, to the least loaded decode instance.
func (c *cluster) send(i int, s *seq) {
	now := c.now
	if !c.virtual {
		now = time.Now()
	}
	start := later(now, c.linkFree[i])
	done := start.Add(c.d.TransferTime(s.computed) - c.d.LinkLatency)
	c.linkFree[i] = done
	at := done.Add(c.d.LinkLatency)
	j := c.least(c.decode, func(j int) int64 { return c.inTransit[j].Load() })
	c.inTransit[j].Add(1)
	to := c.decode[j]
	// The decode instance knows nothing of the prompt's blocks.
	s.hashes, s.cached = nil, 0
	if c.virtual {
		tr := transfer{s: s, at: at, to: to}
		k := len(c.transit)
		for k > 0 && c.transit[k-1].at.After(at) {
			k--
		}
		c.transit = append(c.transit, transfer{})
		copy(c.transit[k+1:], c.transit[k:])
		c.transit[k] = tr
		return
	}
	time.AfterFunc(at.Sub(now), func() {
		defer c.inTransit[j].Add(-1)
		to.pending.Add(1) // the loop counts it out when it takes it in
		select {
		case to.arrivals <- s:
		case <-c.ctx.Done():
			to.pending.Add(-1)
		}
	})
}

// start runs every engine's loop until ctx ends (real time).
func (c *cluster) start(ctx context.Context) {
	c.ctx = ctx
	for _, e := range c.all {
		go e.loop(ctx)
	}
}

// reset empties every instance's prefix cache.
func (c *cluster) reset(ctx context.Context) error {
	for _, e := range c.all {
		if err := e.reset(ctx); err != nil {
			return err
		}
	}
	return nil
}

// sum adds a counter over the instances.
func (c *cluster) sum(f func(e *engine) int64) int64 {
	var n int64
	for _, e := range c.all {
		n += f(e)
	}
	return n
}

// kvBlocks is the blocks of all instances' KV caches.
func (c *cluster) kvBlocks() int {
	n := 0
	for _, e := range c.all {
		n += e.p.KVBlocks
	}
	return n
}

// busy reports work waiting, running or in transit (virtual time).
func (c *cluster) busy() bool {
	if len(c.transit) > 0 {
		return true
	}
	for _, e := range c.all {
		if len(e.waiting) > 0 || len(e.running) > 0 {
			return true
		}
	}
	return false
}

// idleRequest is a lone request's time on an idle cluster, transfer aside.
func (c *cluster) idleRequest(in, out int) time.Duration {
	dec := c.prefill[0]
	if len(c.decode) > 0 {
		dec = c.decode[0]
	}
	return c.prefill[0].cost(batch{seqs: 1, prefill: in, prefillAttn: int64(in) * int64(in+1) / 2}) +
		time.Duration(out-1)*dec.cost(batch{seqs: 1, decodes: 1, decodeCtx: int64(in + out/2)})
}

// advance runs the cluster in virtual time from t until the next step
// ends, and returns that time, the sequences of the steps that ended
// (before they emitted), the tokens they emitted and how many steps ended.
// Until, when set, is the next arrival: a disaggregated cluster stops
// there with nothing ended, so the arrival reaches an idle instance on
// time. ok is false when nothing can run.
//
//go:norace
func (c *cluster) advance(t, until time.Time) (now time.Time, stepped []*seq, generated int64, steps int, ok bool) {
	if len(c.all) == 1 {
		// Colocated: the engine steps from t; arrivals wait for the step.
		e := c.all[0]
		b := e.schedule(t)
		if b.seqs == 0 {
			return t, nil, 0, 0, false
		}
		t = t.Add(e.cost(b))
		st := &c.steps[0]
		st.snap = append(st.snap[:0], e.running...)
		return t, st.snap, e.emit(), 1, true
	}
	for {
		c.now = t
		for len(c.transit) > 0 && !c.transit[0].at.After(t) {
			tr := c.transit[0]
			c.transit = c.transit[1:]
			tr.to.waiting = append(tr.to.waiting, tr.s)
			tr.to.numWaiting.Store(int64(len(tr.to.waiting)))
			c.inTransit[indexOf(c.decode, tr.to)].Add(-1)
		}
		for i, e := range c.all {
			st := &c.steps[i]
			if st.on || len(e.waiting)+len(e.running) == 0 {
				continue
			}
			if b := e.schedule(t); b.seqs > 0 {
				st.on, st.cost = true, e.cost(b)
				st.end = t.Add(st.cost)
				st.snap = append(st.snap[:0], e.running...)
			}
		}
		var next time.Time
		for i := range c.all {
			if st := &c.steps[i]; st.on && (next.IsZero() || st.end.Before(next)) {
				next = st.end
			}
		}
		stepEnds := next
		if len(c.transit) > 0 && (next.IsZero() || c.transit[0].at.Before(next)) {
			next = c.transit[0].at
		}
		if next.IsZero() {
			return t, nil, 0, 0, false
		}
		if !until.IsZero() && until.Before(next) {
			return until, nil, 0, 0, true
		}
		if !next.Equal(stepEnds) {
			t = next // a transfer lands first
			continue
		}
		c.now = next
		for i, e := range c.all {
			st := &c.steps[i]
			if !st.on || !st.end.Equal(next) {
				continue
			}
			stepped = append(stepped, st.snap...)
			generated += e.emit()
			st.on = false
			steps++
		}
		return next, stepped, generated, steps, true
	}
}

func indexOf(es []*engine, e *engine) int {
	for i, x := range es {
		if x == e {
			return i
		}
	}
	return -1
}
