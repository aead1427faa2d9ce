// Package target resolves where a suite's requests go: the embedded
// simulator, started in-process on loopback, or a running server's URL.
package target

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/didyoumean"
	"github.com/benchci/benchci/internal/faultproxy"
	"github.com/benchci/benchci/internal/httpsafe"
	"github.com/benchci/benchci/internal/redact"
	"github.com/benchci/benchci/internal/sim"
	"github.com/benchci/benchci/internal/simfit"
	"github.com/benchci/benchci/internal/untrusted"
)

// Target is an opened target. Close releases it.
type Target struct {
	// Info describes the target as results record it.
	Info   result.Target
	APIKey string
	// Process is the launched server for launch targets, nil otherwise.
	Process *Process
	close   func()
}

// Options configure Open.
type Options struct {
	// ServerLog is where a launched server's output goes ("": nowhere, but
	// its last lines are still kept for errors).
	ServerLog string
}

// Close stops what Open started.
func (t *Target) Close() {
	if t.close != nil {
		t.close()
	}
}

// Open starts or checks the target.
func Open(ctx context.Context, st suite.Target, opts Options) (*Target, error) {
	switch st.Kind {
	case suite.TargetSim:
		return openSim(ctx, st)
	case suite.TargetURL, suite.TargetLaunch:
		// A password in the URL is as secret as a key, in any encoding a
		// server echoes it in.
		redact.AddURL(st.URL)
		t := &Target{Info: result.Target{Kind: string(st.Kind), URL: strings.TrimRight(st.URL, "/"), Model: st.Model}}
		if st.APIKeyEnv != "" {
			t.APIKey = os.Getenv(st.APIKeyEnv)
			redact.Add(t.APIKey) // servers echo keys in their 401 bodies
			if t.APIKey == "" {
				return nil, fmt.Errorf("target: environment variable %s (api_key_env) is empty", st.APIKeyEnv)
			}
		}
		if st.Kind == suite.TargetLaunch {
			p, err := Launch(ctx, *st.Launch, t.Info.URL, opts.ServerLog)
			if err != nil {
				return nil, fmt.Errorf("target: %w", err)
			}
			t.Process, t.close = p, p.Stop
		}
		if f := st.Proxy; f != nil {
			if err := t.startProxy(ctx, *f); err != nil {
				t.Close()
				return nil, err
			}
		}
		if t.Info.Model == "" {
			m, err := FirstModel(ctx, t.Info.URL, t.APIKey)
			if err != nil {
				t.Close()
				return nil, err
			}
			t.Info.Model = m
		}
		return t, nil
	}
	return nil, fmt.Errorf("target: unknown kind %q", st.Kind)
}

// startProxy puts the fault proxy in front of the server: requests go to
// the proxy, and the results name both.
func (t *Target) startProxy(ctx context.Context, f suite.ProxyFaults) error {
	p, err := faultproxy.New(t.Info.URL, faultproxy.Faults{
		Latency: f.Latency.D(), Rate429: f.Rate429, Rate503: f.Rate503, RetryAfter: f.RetryAfter.D(),
		ResetRate: f.ResetRate, StallRate: f.StallRate, Stall: f.Stall.D(), SlowFirstByte: f.SlowFirstByte.D(), Seed: uint64(f.Seed),
	})
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	u, err := p.Listen(pctx, "127.0.0.1:0")
	if err != nil {
		cancel()
		return fmt.Errorf("target: %w", err)
	}
	t.Info.Upstream, t.Info.URL = t.Info.URL, u
	stop := t.close
	t.close = func() {
		cancel()
		if stop != nil {
			stop()
		}
	}
	return nil
}

// FirstModel asks the server's /v1/models for the first model it serves.
func FirstModel(ctx context.Context, baseURL, apiKey string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/v1/models", nil)
	if err != nil {
		return "", fmt.Errorf("target: %w", err)
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := httpsafe.Client(0).Do(req) // the key goes to the target only
	if err != nil {
		return "", fmt.Errorf("target: ask %s/v1/models for the model name: %w", baseURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("target: read /v1/models: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("target: /v1/models answered HTTP %d; set the model in the suite: b.target.url(url, model='...')", resp.StatusCode)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil || len(list.Data) == 0 || list.Data[0].ID == "" {
		return "", fmt.Errorf("target: /v1/models lists no model; set the model in the suite: b.target.url(url, model='...')")
	}
	id := list.Data[0].ID
	// The id is sent back with every request, so it cannot be cleaned:
	// one that could disguise itself in a report is refused.
	if len(id) > 512 || !untrusted.Safe(id) {
		return "", fmt.Errorf("target: /v1/models names the model %q, with control or bidirectional characters (or over 512 bytes); set the model in the suite: b.target.url(url, model='...')", untrusted.Text(id[:min(len(id), 80)]))
	}
	return id, nil
}

// openSim serves a sim target's profile on a loopback port, in this
// process, with its faults.
func openSim(ctx context.Context, st suite.Target) (*Target, error) {
	p, interval, field, err := simProfile(&st)
	if err != nil {
		return nil, fmt.Errorf("target: %s: %w", field, err)
	}
	srv := sim.New(p)
	if f := st.Faults; f != nil {
		srv.SetFaults(sim.Faults{ErrorRate: f.ErrorRate, ResetRate: f.ResetRate, StallRate: f.StallRate, Stall: f.Stall.D(),
			SlowFirstByte: f.SlowFirstByte.D(), MalformedRate: f.MalformedRate, WrongUsageRate: f.WrongUsageRate,
			WrongStructuredRate: f.WrongStructuredRate})
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	u, err := srv.Listen(ctx, "127.0.0.1:0")
	if err != nil {
		cancel()
		return nil, err
	}
	model := p.Model
	if st.Model != "" {
		model = st.Model
	}
	rec := recordProfile(p)
	rec.Interval = interval
	return &Target{Info: result.Target{Kind: string(suite.TargetSim), URL: u, Model: model, Sim: rec}, close: cancel}, nil
}

// SimProfile builds a sim target's profile: a constant profile with its
// overrides, or one derived from cards (named, or a spec written out)
// with the overrides as engine knobs. On error, field names what is wrong.
func SimProfile(t *suite.Target) (p sim.Profile, field string, err error) {
	if path, ok := strings.CutPrefix(t.Profile, suite.ProfileFilePrefix); ok && t.Spec == nil {
		return fileProfile(path, t.Sim)
	}
	if p, ok := sim.Lookup(t.Profile); ok && t.Spec == nil {
		if o := t.Sim; o != nil {
			p = override(p, *o)
		}
		return p, "", nil
	}
	var s sim.Spec
	var k sim.Knobs
	if t.Spec == nil {
		if s, err = sim.ParseSpecName(t.Profile); err != nil {
			return p, "profile", err
		}
	} else {
		var fitChunked *bool
		if s, fitChunked, field, err = simSpec(*t.Spec); err != nil {
			return p, "spec." + field, err
		}
		k.MaxModelLen = t.Spec.MaxModelLen
		k.ChunkedPrefill = t.Spec.ChunkedPrefill
		if k.ChunkedPrefill == nil {
			k.ChunkedPrefill = fitChunked
		}
	}
	if o := t.Sim; o != nil {
		if o.StepBase != 0 || o.DecodePerSeq != 0 || o.PrefillPerToken != 0 {
			return p, "sim", fmt.Errorf("a profile derived from cards prices its steps from them: set the spec's memory_efficiency, compute_efficiency or step_overhead instead of step_base, decode_per_seq or prefill_per_token")
		}
		k.MaxNumSeqs, k.MaxBatchedTokens = o.MaxNumSeqs, o.MaxBatchedTokens
	}
	if p, err = sim.Derive(s, k); err != nil {
		if t.Spec == nil {
			return p, "profile", err
		}
		return p, "spec", err
	}
	if o := t.Sim; o != nil && o.TokensPerStep > 0 {
		p.TokensPerStep = o.TokensPerStep
	}
	if t.Spec != nil {
		if p, field, err = simServing(p, *t.Spec); err != nil {
			return p, "spec." + field, err
		}
	}
	return p, "", nil
}

// simServing applies a spec's speculative decoding, then its
// disaggregation (whose decode pool takes the speculation).
func simServing(p sim.Profile, ss suite.SimSpec) (sim.Profile, string, error) {
	if sp := ss.Speculative; sp != nil {
		s := sim.Speculative{Method: sp.Method, DraftTP: sp.DraftTP, DraftVocab: sp.DraftVocab, K: sp.K, Acceptance: sp.Acceptance,
			DraftOverhead: sp.DraftOverhead.D(), Seed: sp.Seed}
		if sp.DraftModel != nil {
			m, err := card(sp.DraftModel, sim.LookupModel, sim.ModelNames())
			if err != nil {
				return p, "speculative.draft_model", err
			}
			s.Draft = &m
		}
		var err error
		if p, err = sim.WithSpeculative(p, s); err != nil {
			return p, "speculative", err
		}
	}
	if d := ss.Disaggregated; d != nil {
		dd := sim.Disaggregation{LinkGBs: d.LinkGBs, LinkLatency: d.LinkLatency.D()}
		for _, pl := range []struct {
			name string
			in   suite.SimPool
			out  *sim.Pool
		}{{"prefill", d.Prefill, &dd.Prefill}, {"decode", d.Decode, &dd.Decode}} {
			pl.out.TP, pl.out.Instances = pl.in.TP, pl.in.Instances
			if pl.in.GPU != nil {
				g, err := card(pl.in.GPU, sim.LookupGPU, sim.GPUNames())
				if err != nil {
					return p, "disaggregated." + pl.name + ".gpu", err
				}
				if err := g.Check(); err != nil {
					return p, "disaggregated." + pl.name + ".gpu", err
				}
				pl.out.GPU = g
			}
		}
		var err error
		if p, err = sim.WithDisaggregation(p, dd); err != nil {
			return p, "disaggregated", err
		}
	}
	return p, "", nil
}

// simProfile is SimProfile with the profile's interval (simInterval,
// fileInterval), reading a profile file once for both.
func simProfile(t *suite.Target) (sim.Profile, *result.SimInterval, string, error) {
	if path, ok := strings.CutPrefix(t.Profile, suite.ProfileFilePrefix); ok && t.Spec == nil {
		f, err := simfit.ReadFile(path)
		if err != nil {
			return sim.Profile{}, nil, "profile", err
		}
		p, field, err := fileOverrides(f.Profile, path, t.Sim)
		return p, fileInterval(f, t.Sim), field, err
	}
	p, field, err := SimProfile(t)
	return p, simInterval(t, p), field, err
}

// fileProfile reads a profile file (benchci sim fit's) and applies a
// suite's overrides (fileOverrides).
func fileProfile(path string, o *suite.SimOverrides) (sim.Profile, string, error) {
	p, err := simfit.ReadProfile(path)
	if err != nil {
		return p, "profile", err
	}
	return fileOverrides(p, path, o)
}

// fileOverrides applies a suite's overrides to the profile of the file at
// path as to the profile it was fitted from: a constant one's constants,
// a derived one's engine knobs.
func fileOverrides(p sim.Profile, path string, o *suite.SimOverrides) (sim.Profile, string, error) {
	if o == nil {
		return p, "", nil
	}
	if p.Spec == nil {
		return override(p, *o), "", nil
	}
	if o.StepBase != 0 || o.DecodePerSeq != 0 || o.PrefillPerToken != 0 {
		return p, "sim", fmt.Errorf("%s was fitted from cards and prices its steps from them: name it in b.target.simSpec(..., fitted=...) with other efficiencies instead of step_base, decode_per_seq or prefill_per_token", path)
	}
	if o.MaxNumSeqs > 0 || o.MaxBatchedTokens > 0 {
		// The knobs change the memory left to the KV cache.
		k := p.Knobs()
		if o.MaxNumSeqs > 0 {
			k.MaxNumSeqs = o.MaxNumSeqs
		}
		if o.MaxBatchedTokens > 0 {
			k.MaxBatchedTokens = o.MaxBatchedTokens
		}
		d, err := sim.Derive(*p.Spec, k)
		if err != nil {
			return p, "sim", err
		}
		d.Name, d.Model, d.Source = p.Name+"+overrides", p.Model, p.Source
		d.TokensPerStep, d.ChatTemplateTokens, d.PrefixCaching, d.MaxPrefillChunk = p.TokensPerStep, p.ChatTemplateTokens, p.PrefixCaching, p.MaxPrefillChunk
		p = d
	}
	if o.TokensPerStep > 0 {
		p.TokensPerStep = o.TokensPerStep
	}
	return p, "", nil
}

// simSpec turns a suite's spec into the simulator's, reading cards
// written out strictly: an unknown field is an error, not a default. A
// fitted file's engine carries its prefill mode (chunked, as the fit
// replayed) unless the suite names another engine.
func simSpec(ss suite.SimSpec) (s sim.Spec, fitChunked *bool, field string, err error) {
	if s.Model, err = card(ss.Model, sim.LookupModel, sim.ModelNames()); err != nil {
		return s, nil, "model", err
	}
	if err = s.Model.Check(); err != nil {
		return s, nil, "model", err
	}
	if s.GPU, err = card(ss.GPU, sim.LookupGPU, sim.GPUNames()); err != nil {
		return s, nil, "gpu", err
	}
	if err = s.GPU.Check(); err != nil {
		return s, nil, "gpu", err
	}
	s.TP, s.Weights, s.KVCache = ss.TP, ss.Weights, ss.KVCache
	s.GPUMemoryUtilization, s.BlockSize, s.Engine = ss.GPUMemoryUtilization, ss.BlockSize, ss.Engine
	if _, ok := sim.LookupEngine(s.Engine); !ok {
		return s, nil, "engine", fmt.Errorf("unknown engine %q%s (known: %s)", ss.Engine, didyoumean.Hint(ss.Engine, sim.EngineNames()), strings.Join(sim.EngineNames(), ", "))
	}
	if ss.Fitted != "" {
		fp, err := simfit.ReadProfile(ss.Fitted)
		if err != nil {
			return s, nil, "fitted", err
		}
		if fp.Spec == nil {
			return s, nil, "fitted", fmt.Errorf("%s was fitted from a constant profile (%s): its step costs are of that server, with no efficiencies of a card to carry to these; fit from the cards it ran on (benchci sim fit --profile model@gpu)", ss.Fitted, fp.Name)
		}
		// What the fit measured of the engine, on these cards, under the
		// step-cost model it was fitted with (its efficiencies mean nothing
		// under another), and of the engine it modelled unless named.
		s.Roofline, s.PCIeAllReduce = fp.Spec.Roofline, fp.Spec.PCIeAllReduce
		s.Efficiency = sim.CarryEfficiency(fp.Spec.Efficiency, *fp.Spec, s)
		if s.Engine == "" {
			s.Engine = fp.Spec.Engine
		}
		fitted, _ := sim.LookupEngine(fp.Spec.Engine)
		if named, _ := sim.LookupEngine(s.Engine); named.Name != fitted.Name {
			// The request path is the named engine's (it is not fitted),
			// and so is its prefill mode.
			s.RequestOverhead = named.RequestOverhead
		} else {
			chunked := !fp.NoChunkedPrefill
			fitChunked = &chunked
		}
	}
	if ss.MemoryEfficiency != 0 {
		s.MemoryEfficiency = ss.MemoryEfficiency
	}
	if ss.ComputeEfficiency != 0 {
		s.ComputeEfficiency = ss.ComputeEfficiency
	}
	if ss.StepOverhead != 0 {
		s.StepOverhead = ss.StepOverhead.D()
	}
	return s, fitChunked, "", nil
}

// card reads a built-in card's name or a card written out.
func card[T any](v any, lookup func(string) (T, bool), known []string) (T, error) {
	var c T
	switch v := v.(type) {
	case nil:
		return c, fmt.Errorf("required: a built-in card's name (%s) or a card", strings.Join(known, ", "))
	case string:
		c, ok := lookup(v)
		if !ok {
			return c, fmt.Errorf("unknown card %q%s (known: %s)", v, didyoumean.Hint(v, known), strings.Join(known, ", "))
		}
		return c, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return c, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("card: %w", err)
	}
	return c, nil
}

// override applies a suite's simulator overrides to a profile.
func override(p sim.Profile, o suite.SimOverrides) sim.Profile {
	set := func(dst *int, v int) {
		if v > 0 {
			*dst = v
		}
	}
	setD := func(dst *time.Duration, v suite.Duration) {
		if v > 0 {
			*dst = v.D()
		}
	}
	set(&p.MaxNumSeqs, o.MaxNumSeqs)
	set(&p.MaxBatchedTokens, o.MaxBatchedTokens)
	set(&p.TokensPerStep, o.TokensPerStep)
	setD(&p.StepBase, o.StepBase)
	setD(&p.DecodePerSeq, o.DecodePerSeq)
	setD(&p.PrefillPerToken, o.PrefillPerToken)
	p.Name += "+overrides"
	return p
}

// fileInterval is a fitted profile file's own interval, from its
// held-out points (when the fit had enough); nil where the suite's
// overrides make it another engine than the one fitted.
func fileInterval(f *simfit.File, o *suite.SimOverrides) *result.SimInterval {
	if f.Fit == nil || o != nil && *o != (suite.SimOverrides{}) {
		return nil
	}
	return f.Fit.Interval
}

// simInterval is the interval of a profile derived from the built-in
// cards with an engine's own efficiencies: the one sim check's published
// rows calibrate (sim.DerivedInterval). nil for what they do not cover: a
// constant profile (made up or of one server), cards or efficiencies
// written out in the suite, an engine no row ran, a fit's efficiencies
// carried to other cards, and speculative or disaggregated serving, whose
// few rows are checked apart.
func simInterval(t *suite.Target, p sim.Profile) *result.SimInterval {
	if p.Spec == nil || strings.HasPrefix(t.Profile, suite.ProfileFilePrefix) {
		return nil
	}
	if ss := t.Spec; ss != nil {
		_, modelNamed := ss.Model.(string)
		_, gpuNamed := ss.GPU.(string)
		if ss.Fitted != "" || ss.Speculative != nil || ss.Disaggregated != nil || !modelNamed || !gpuNamed ||
			ss.MemoryEfficiency != 0 || ss.ComputeEfficiency != 0 || ss.StepOverhead != 0 || !sim.CalibratedEngine(ss.Engine) {
			return nil
		}
	}
	d := sim.DerivedInterval
	return &result.SimInterval{Level: d.Level, Latency: d.Latency, Throughput: d.Throughput,
		Basis: fmt.Sprintf("benchci sim check: %d of %d published figures fell inside it, each source's rows bounded by the other sources'", d.Covered, d.Figures)}
}

// recordProfile is p as results record it, durations in milliseconds.
func recordProfile(p sim.Profile) *result.SimProfile {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return &result.SimProfile{
		Name: p.Name, Model: p.Model, MaxNumSeqs: p.MaxNumSeqs, MaxBatchedTokens: p.MaxBatchedTokens,
		StepBaseMs: ms(p.StepBase), DecodePerSeqMs: ms(p.DecodePerSeq), PrefillPerTokenMs: ms(p.PrefillPerToken),
		AttendNsPerPair: p.AttendNsPerPair, UnifiedKV: p.UnifiedKV, MaxPrefillChunk: p.MaxPrefillChunk,
		TokensPerStep: p.TokensPerStep, ChatTemplateTokens: p.ChatTemplateTokens, MaxModelLen: p.MaxModelLen,
		RequestOverheadMs: ms(p.RequestOverhead), NoChunkedPrefill: p.NoChunkedPrefill,
		PrefixCaching: p.PrefixCaching, Source: p.Source, KVCacheTokens: p.KVTokens(),
	}
}
