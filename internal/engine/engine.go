// Package engine recognizes the serving engine behind a URL (vLLM, SGLang,
// TGI, llama.cpp, Ollama, the simulator) and reads its Prometheus metrics,
// so results carry the server's own view beside the client's: queue time,
// batch occupancy, KV-cache usage, preemptions.
package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/internal/httpsafe"
	"github.com/benchci/benchci/internal/inputfile"
	"github.com/benchci/benchci/internal/untrusted"
)

// Info names an engine.
type Info struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Metrics is set when the server serves Prometheus /metrics.
	Metrics bool `json:"metrics"`
	// Quirks are the known deviations of this engine (see Profiles).
	Quirks []string `json:"quirks,omitempty"`
	// Placeholder is the version the server reported when it was a
	// placeholder (a build without version information); Version is then
	// empty: unknown.
	Placeholder string `json:"-"`
}

// placeholders are versions servers report when built without version
// information (llama.cpp's "b0-unknown", a source build's "0.0.0").
var placeholders = []string{"0.0.0", "b0-unknown", "unknown"}

// probes are tried in order; the first that answers names the engine.
var probes = []struct {
	path, name, field string
}{
	{"/api/version", "ollama", "version"},     // Ollama
	{"/get_server_info", "sglang", "version"}, // SGLang
	{"/info", "tgi", "version"},               // Text Generation Inference
	{"/props", "llama.cpp", "build_info"},     // llama.cpp server
	{"/version", "vllm", "version"},           // vLLM
}

// Detect identifies the engine at baseURL. Servers that answer none of
// the probes are "unknown", or named by /v1/models' owned_by.
func Detect(ctx context.Context, baseURL string) Info {
	c := httpsafe.Client(5 * time.Second)
	get := func(path string) (map[string]any, bool) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+path, nil)
		if err != nil {
			return nil, false
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, false
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, false
		}
		var m map[string]any
		if json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&m) != nil {
			return nil, false
		}
		return m, true
	}
	info := Info{Name: "unknown"}
	for _, p := range probes {
		if m, ok := get(p.path); ok {
			info.Name = p.name
			if v, ok := m[p.field]; ok {
				// A server's words, shown in every report: neutralized
				// and bounded.
				info.Version = untrusted.Text(fmt.Sprint(v))
				info.Version = info.Version[:min(len(info.Version), 120)]
			}
			if slices.Contains(placeholders, strings.ToLower(info.Version)) {
				info.Placeholder, info.Version = info.Version, ""
			}
			break
		}
	}
	if info.Name == "unknown" {
		if m, ok := get("/v1/models"); ok {
			if data, _ := m["data"].([]any); len(data) > 0 {
				if d, _ := data[0].(map[string]any); d != nil {
					if o, _ := d["owned_by"].(string); o != "" {
						info.Name = untrusted.Text(o[:min(len(o), 120)])
					}
				}
			}
		}
	}
	_, err := Scrape(ctx, baseURL)
	info.Metrics = err == nil
	if p, ok := Profiles[info.Name]; ok {
		info.Quirks = p.Quirks
	}
	return info
}

// Snapshot is a flattened /metrics: counters and gauges summed over their
// label sets; histograms and summaries as NAME_sum and NAME_count.
type Snapshot map[string]float64

// Scrape reads baseURL/metrics.
func Scrape(ctx context.Context, baseURL string) (Snapshot, error) {
	var s Snapshot
	err := Fetch(ctx, baseURL+"/metrics", func(r io.Reader) (err error) {
		s, err = Parse(r)
		return err
	})
	return s, err
}

// Fetch GETs a Prometheus endpoint within 5 s and hands its body (at most
// 16 MiB) to read.
func Fetch(ctx context.Context, url string, read func(io.Reader) error) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := httpsafe.Client(0).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", url, resp.StatusCode)
	}
	return read(inputfile.LimitReader(resp.Body, maxMetricsBytes, fmt.Errorf("%s: more than %d MiB of metrics", url, maxMetricsBytes>>20)))
}

// maxMetricsBytes bounds a /metrics body: a body cut there would end
// mid-line, and a cut line can read as another number, so a longer body
// is an error, never read in part.
const maxMetricsBytes = 16 << 20

// Parse reads the Prometheus text format.
func Parse(r io.Reader) (Snapshot, error) {
	s := Snapshot{}
	err := Samples(r, func(name string, v float64) {
		if sum := s[name] + v; !math.IsInf(sum, 0) {
			s[name] = sum
		}
	})
	if err != nil {
		return nil, fmt.Errorf("/metrics: %w", err)
	}
	return s, nil
}

// Samples calls f with every sample of a Prometheus text exposition:
// counters, gauges and untyped values under their names, histograms and
// summaries as NAME_sum and NAME_count. A server may write NaN or ±Inf (a
// counter that was never set, a division by zero); no value from a server
// may cost the run, so such samples are left out, as if the server had
// not sent them.
func Samples(r io.Reader, f func(name string, v float64)) error {
	p := expfmt.NewTextParser(model.LegacyValidation) // engine names use ':'
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return err
	}
	add := func(name string, v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			f(name, v)
		}
	}
	for name, fam := range fams {
		for _, m := range fam.GetMetric() {
			switch fam.GetType() {
			case dto.MetricType_COUNTER:
				add(name, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add(name, m.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				add(name, m.GetUntyped().GetValue())
			case dto.MetricType_HISTOGRAM:
				add(name+"_sum", m.GetHistogram().GetSampleSum())
				add(name+"_count", float64(m.GetHistogram().GetSampleCount()))
			case dto.MetricType_SUMMARY:
				add(name+"_sum", m.GetSummary().GetSampleSum())
				add(name+"_count", float64(m.GetSummary().GetSampleCount()))
			}
		}
	}
	return nil
}

// reading is how a figure is read from a point's snapshots.
type reading string

const (
	readMean  reading = "mean"  // of a histogram over the point
	readPeak  reading = "peak"  // a gauge's highest
	readLast  reading = "last"  // a gauge at the end
	readDelta reading = "delta" // a counter's increase
	readRate  reading = "rate"  // the delta of names[0] over the delta of per[0]
)

// figure is one server-side figure and the metric names engines give it.
type figure struct {
	key  string
	kind reading
	// names are the engines' names for the figure; per, for a rate, the
	// names of its denominator, in the same order.
	names, per []string
}

// figures maps engines' metric names to benchci's server-side figures.
// Sources: vLLM's and SGLang's metrics modules, TGI's router metrics,
// llama.cpp's server (--metrics) documentation.
var figures = []figure{
	{key: "queue_time_mean_s", kind: readMean, names: []string{"vllm:request_queue_time_seconds", "sglang:queue_time_seconds", "tgi_request_queue_duration"}},
	{key: "server_ttft_mean_s", kind: readMean, names: []string{"vllm:time_to_first_token_seconds", "sglang:time_to_first_token_seconds"}},
	{key: "running_peak", kind: readPeak, names: []string{"vllm:num_requests_running", "sglang:num_running_reqs", "tgi_batch_current_size", "llamacpp:requests_processing"}},
	{key: "waiting_peak", kind: readPeak, names: []string{"benchci_sim:num_requests_waiting_peak", "vllm:num_requests_waiting", "sglang:num_queue_reqs", "tgi_queue_size", "llamacpp:requests_deferred"}},
	{key: "kv_cache_usage_peak", kind: readPeak, names: []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage", "llamacpp:kv_cache_usage_ratio"}},
	{key: "kv_cache_tokens_peak", kind: readPeak, names: []string{"llamacpp:kv_cache_tokens"}},
	{key: "preemptions", kind: readDelta, names: []string{"vllm:num_preemptions_total", "vllm:num_preemptions"}},
	{key: "prompt_tokens", kind: readDelta, names: []string{"vllm:prompt_tokens_total", "sglang:prompt_tokens_total", "llamacpp:prompt_tokens_total"}},
	{key: "generation_tokens", kind: readDelta, names: []string{"vllm:generation_tokens_total", "sglang:generation_tokens_total", "llamacpp:tokens_predicted_total"}},
	// The share of prompt tokens the prefix cache held, over the point:
	// vLLM V1 counts tokens looked up and found (V0 named them gpu_...).
	{key: metric.ServerPrefixCacheHitRate, kind: readRate, names: []string{"vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"},
		per: []string{"vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"}},
	// SGLang serves its radix cache's hit rate as a gauge over recent
	// requests: its value at the point's end.
	{key: metric.ServerPrefixCacheHitRate, kind: readLast, names: []string{"sglang:cache_hit_rate"}},
	// llama.cpp counts the seconds it spent on prompts and on generation:
	// its own throughput while busy, beside the client's over the window.
	{key: "server_prompt_tok_per_s", kind: readRate, names: []string{"llamacpp:prompt_tokens_total"}, per: []string{"llamacpp:prompt_seconds_total"}},
	{key: "server_decode_tok_per_s", kind: readRate, names: []string{"llamacpp:tokens_predicted_total"}, per: []string{"llamacpp:tokens_predicted_seconds_total"}},
}

// Known reports whether a snapshot holds any metric benchci reads, so a
// server whose metrics are all unknown can be named as such.
func Known(s Snapshot) bool {
	for _, f := range figures {
		for _, n := range append(slices.Clone(f.names), f.per...) {
			for _, suffix := range []string{"", "_count"} {
				if _, ok := s[n+suffix]; ok {
					return true
				}
			}
		}
	}
	return false
}

// Figures reads the server-side figures of a point from snapshots taken
// through it (first before, last after): histogram means and counter
// deltas between the two ends, gauges at their peak.
func Figures(snaps []Snapshot) map[string]float64 {
	if len(snaps) < 2 {
		return nil
	}
	first, last := snaps[0], snaps[len(snaps)-1]
	out := map[string]float64{}
	for _, f := range figures {
		for _, name := range f.names {
			switch f.kind {
			case readMean:
				n := last[name+"_count"] - first[name+"_count"]
				if _, ok := last[name+"_count"]; ok && n > 0 {
					if v := (last[name+"_sum"] - first[name+"_sum"]) / n; !math.IsInf(v, 0) && !math.IsNaN(v) {
						out[f.key] = v
					}
				}
			case readPeak:
				for _, s := range snaps {
					if v, ok := s[name]; ok && v >= out[f.key] {
						out[f.key] = v
					}
				}
			case readLast:
				if _, done := out[f.key]; !done {
					if v, ok := last[name]; ok {
						out[f.key] = v
					}
				}
			case readDelta:
				if v, ok := last[name]; ok && !math.IsInf(v-first[name], 0) {
					out[f.key] = v - first[name]
				}
			case readRate:
				den := f.per[slices.Index(f.names, name)]
				n, d := last[name]-first[name], last[den]-first[den]
				if _, ok := last[den]; ok && d > 0 && !math.IsInf(n/d, 0) {
					out[f.key] = n / d
				}
			}
			if _, ok := out[f.key]; ok {
				break
			}
		}
	}
	return out
}

// Sampler scrapes /metrics every interval until stopped. Told where the
// measured window starts (From), it reads the counters there too and
// takes the point's figures from that reading, so that requests of the
// warm-up do not count in them.
type Sampler struct {
	snaps []Snapshot
	// inFlight holds, for each snapshot, the client's requests in flight
	// around its scrape (the fewer of before and after); nil without a
	// count to read.
	inFlight []int64
	// from is the index of the snapshot taken at the window's start; -1
	// until one is.
	from int
	mark chan time.Time
	stop chan struct{}
	done chan struct{}
}

// Sample starts scraping baseURL now and every interval. inFlight, when
// not nil, counts the client's requests in flight: read around each
// scrape, it gives the queue the engine's gauges may not see (Held).
func Sample(ctx context.Context, baseURL string, interval time.Duration, inFlight func() int64) *Sampler {
	s := &Sampler{from: -1, mark: make(chan time.Time, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		var at <-chan time.Time // fires at the window's start
		take := func() bool {
			var before int64
			if inFlight != nil {
				before = inFlight()
			}
			snap, err := Scrape(ctx, baseURL)
			if err != nil {
				return false
			}
			s.snaps = append(s.snaps, snap)
			if inFlight != nil {
				// The fewer: a request that ended during the scrape may
				// have left the server's gauge already, and is not held.
				s.inFlight = append(s.inFlight, min(before, inFlight()))
			}
			return true
		}
		take()
		for {
			select {
			case <-t.C:
				take()
			case w := <-s.mark:
				at = time.After(time.Until(w))
			case <-at:
				at = nil
				if take() {
					s.from = len(s.snaps) - 1
				}
			case <-s.stop:
				take()
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return s
}

// From says the measured window starts at start (now or later): the
// counters are read then, and the point's figures run from there.
func (s *Sampler) From(start time.Time) {
	select {
	case s.mark <- start:
	default: // told already
	}
}

// Stop ends sampling and returns the point's figures: from the window's
// start where the counters were read there (FromWindow), else from the
// point's start, warm-up included.
func (s *Sampler) Stop() map[string]float64 {
	close(s.stop)
	<-s.done
	if s.from >= 0 {
		return Figures(s.snaps[s.from:])
	}
	return Figures(s.snaps)
}

// Held reads, call after Stop, the most of the client's requests the
// server held without running them at one scrape: the client's requests
// in flight minus the engine's running gauge, over the scrapes that read
// both (n; 0: none, and no figure). Unlike the engine's waiting gauge it
// counts requests wherever they wait, an HTTP server's queue included
// (and requests in transit, a few at most); requests of other clients
// that the server runs make it smaller, never larger.
func (s *Sampler) Held() (peak float64, n int) {
	if s.from >= 0 && s.from < len(s.inFlight) {
		return Held(s.snaps[s.from:], s.inFlight[s.from:]) // as the gauges' peaks
	}
	return Held(s.snaps, s.inFlight)
}

// Held is Sampler.Held over snapshots and the requests in flight at each.
func Held(snaps []Snapshot, inFlight []int64) (peak float64, n int) {
	var running []string
	for _, f := range figures {
		if f.key == "running_peak" {
			running = f.names
		}
	}
	for i, snap := range snaps {
		if i >= len(inFlight) {
			break
		}
		for _, name := range running {
			if v, ok := snap[name]; ok {
				peak = max(peak, float64(inFlight[i])-v)
				n++
				break
			}
		}
	}
	return peak, n
}

// FromWindow reports whether the figures Stop returned start at the
// measured window's start; call after Stop.
func (s *Sampler) FromWindow() bool { return s.from >= 0 }

// Unknown returns a few of the metric names the server served when none of
// them is one benchci reads (nil otherwise, or when nothing was scraped);
// call after Stop.
func (s *Sampler) Unknown() []string {
	if len(s.snaps) == 0 || Known(s.snaps[len(s.snaps)-1]) {
		return nil
	}
	names := slices.Sorted(maps.Keys(s.snaps[len(s.snaps)-1]))
	return names[:min(len(names), 5)]
}

// ResetPrefixCache empties the server's prefix cache through the first of
// the engines' endpoints it has (vLLM's POST /reset_prefix_cache, SGLang's
// POST /flush_cache) and says which answered, or why none did.
func ResetPrefixCache(ctx context.Context, baseURL string) string {
	var tried []string
	for _, path := range []string{"/reset_prefix_cache", "/flush_cache"} {
		code, status, err := post(ctx, strings.TrimSuffix(baseURL, "/")+path)
		switch {
		case err != nil:
			tried = append(tried, path+": "+err.Error())
		case code/100 == 2:
			return "reset by POST " + path
		default:
			tried = append(tried, path+": "+status)
		}
	}
	return "not reset: the server has no prefix-cache reset endpoint (" + strings.Join(tried, "; ") + ")"
}

// post sends an empty POST and returns the answer's status.
func post(ctx context.Context, url string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := httpsafe.Client(0).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, resp.Status, nil
}
