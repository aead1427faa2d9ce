// Package result is the results file format: one JSON file per suite run,
// versioned, holding the evaluated suite, the target, per-point summaries
// and the encoded histograms behind them.
//
// It is a leaf: its types are its own, with units in their names where a
// number alone would be ambiguous, so compare, report and baseline read
// results without the simulator, workload, target or Jsonnet packages, and
// a change to any of those cannot change what an old file means.
package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/benchci/benchci/internal/inputfile"
	"github.com/benchci/benchci/internal/redact"
	"github.com/benchci/benchci/internal/safefile"
)

// Schema names this file format. Parse also reads SchemaV1 files,
// migrating them (see migrate.go); it refuses other versions.
const Schema = "benchci.result/v2"

// Figures is the version of the figures' definitions this build
// measures by; FiguresChanges says what each version changed.
const Figures = 3

// FiguresChanges lists, by version, how the figures' definitions changed
// from the version before.
var FiguresChanges = map[int]string{
	2: "ITL spreads chunks read together over their gaps, answers with no content are out of TTFT and TPOT, server counters cover the measured window, each trial draws its own arrivals, and a wait for a place under max_concurrency is not send lag",
	// 12fd88f changed TPOT without a new number; builds from it to this
	// one wrote 2 under the new definition, so a baseline of version 2 may
	// be either, and the note says "may".
	3: "TPOT leaves out an answer whose tokens all came in one read (it read 0 ms; tokens.one_read counts them)",
}

// CountingRule is how this version counts throughput.
const CountingRule = "throughput counts the answers, and their tokens, that ended inside the measured window, whoever sent them (warm-up requests included, and a request still streaming at the window's end counts its tokens up to it); failed requests count in the error rate, never in throughput; goodput counts the answers throughput counts that met every per-request SLO; the send rate counts requests sent inside the window, so a point whose requests outlast the window shows a send rate above its request throughput"

// File is one suite run.
type File struct {
	Schema string `json:"schema"`
	Tool   Tool   `json:"tool"`
	Suite  Suite  `json:"suite"`
	Target Target `json:"target"`
	// Engine is the serving engine recognized behind the target.
	Engine *Engine `json:"engine,omitempty"`
	// Sent records what the requests asked for beyond the suite, as the
	// engine's profile decided: two runs of one suite on different engines
	// can differ here.
	Sent *Sent `json:"sent,omitempty"`
	// Counting states how the throughput figures count (CountingRule when
	// written by this version), so the file explains itself.
	Counting string `json:"counting,omitempty"`
	// Figures is the version of the figures' definitions the file was
	// measured under (Figures when written by this version; 0 before
	// they were numbered): a comparison across versions says which
	// figures may have moved by definition rather than by the server.
	Figures int `json:"figures,omitempty"`
	// Notes are caveats a reader of the figures should know.
	Notes    []string  `json:"notes,omitempty"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Incomplete is set when the run was stopped or failed part-way; the
	// points it holds are what was measured until then.
	Incomplete bool   `json:"incomplete,omitempty"`
	Error      string `json:"error,omitempty"`
	// ServerLog holds the last lines of a launched server that exited
	// during the run.
	ServerLog string  `json:"server_log,omitempty"`
	Points    []Point `json:"points"`
	SLOs      []SLO   `json:"slos,omitempty"`
	// Calibration is how the target counted prompt tokens, when measured.
	Calibration *Calibration `json:"calibration,omitempty"`
	// PromptSalt is the salt the prompts' text was drawn with
	// (workload.prompts.salt; a drawn one when the suite asked for a fresh
	// salt each run): set it as the suite's salt to send the same text.
	PromptSalt string `json:"prompt_salt,omitempty"`
	// Knee is where throughput stopped rising along the sweep.
	Knee *Knee `json:"knee,omitempty"`
	// Capacity is the result of a capacity search.
	Capacity *Capacity `json:"capacity,omitempty"`
	// Shard is set on the results of one shard of a load split over
	// machines (run --shard); MergedFrom on the result merged from such
	// shards (benchci merge), naming each.
	Shard      *Shard  `json:"shard,omitempty"`
	MergedFrom []Shard `json:"merged_from,omitempty"`
	// Virtual is set on a run replayed in virtual time on the embedded
	// simulator (run --virtual): its figures are the simulated clock's,
	// not measured. Comparisons never mix virtual and measured files.
	Virtual bool `json:"virtual,omitempty"`

	// verified: Verify passed on the file as read (VerifyHistograms then
	// checks only what merging adds).
	verified bool
}

// Shard is one part of a load split over N machines: arrival k of every
// point's timeline (and closed-loop request k) goes to shard k mod N.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// Host ran the shard; StartAt is the wall-clock time its first point
	// was to start (run --start-at), when the shards were aligned.
	Host    string     `json:"host,omitempty"`
	StartAt *time.Time `json:"start_at,omitempty"`
	// Started and Finished bound the shard's run.
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
}

// StartSkewMs is the latest any point started after the wall-clock time
// it was aligned to (Schedule.StartSkewMs), in milliseconds.
func (f *File) StartSkewMs() float64 {
	var skew float64
	for _, p := range f.Points {
		skew = max(skew, p.Schedule.StartSkewMs)
	}
	return skew
}

// Calibration is the fit tokens = Overhead + TokensPerWord x words of the
// target's prompt-token counts, as the workload uses it; Note says why it
// is missing when it is.
type Calibration struct {
	Overhead      float64 `json:"overhead"`
	TokensPerWord float64 `json:"tokens_per_word"`
	Note          string  `json:"note,omitempty"`
	// ProbeWords and ProbeTokens are the probes sent and what the server
	// counted; Residuals are the counts minus the fitted line, in tokens.
	ProbeWords  []int     `json:"probe_words,omitempty"`
	ProbeTokens []int     `json:"probe_tokens,omitempty"`
	Residuals   []float64 `json:"residuals,omitempty"`
	// MinPromptTokens is what the server counted for a prompt of one
	// word: the shortest prompt it can be sent, its chat template's
	// tokens included (0: not measured). A requested length below it
	// cannot be honoured.
	MinPromptTokens int `json:"min_prompt_tokens,omitempty"`
}

// Target describes where the requests went.
type Target struct {
	Kind  string `json:"kind"`
	URL   string `json:"url"`
	Model string `json:"model"`
	// Upstream is the server behind benchci's fault proxy, when the suite
	// put one in front of it (URL is then the proxy's).
	Upstream string `json:"upstream,omitempty"`
	// Sim is the simulator's configuration, for sim targets: the figures
	// are only meaningful together with it.
	Sim *SimProfile `json:"sim_profile,omitempty"`
}

// SimProfile records the simulator's constants as they were for the run.
type SimProfile struct {
	Name             string `json:"name"`
	Model            string `json:"model"`
	MaxNumSeqs       int    `json:"max_num_seqs"`
	MaxBatchedTokens int    `json:"max_batched_tokens"`
	// MaxPrefillChunk caps one sequence's prefill in a step (absent: none
	// below MaxBatchedTokens).
	MaxPrefillChunk   int     `json:"max_prefill_chunk,omitempty"`
	StepBaseMs        float64 `json:"step_base_ms"`
	DecodePerSeqMs    float64 `json:"decode_per_seq_ms"`
	PrefillPerTokenMs float64 `json:"prefill_per_token_ms"`
	// AttendNsPerPair and UnifiedKV price a constant profile's attention
	// (sim.Profile's): absent where it has none.
	AttendNsPerPair float64 `json:"attend_ns_per_pair,omitempty"`
	UnifiedKV       bool    `json:"unified_kv,omitempty"`
	TokensPerStep   int     `json:"tokens_per_step"`
	// RequestOverheadMs is the server's request path before the
	// scheduler (TensorRT-LLM's derived profiles have one), and
	// NoChunkedPrefill that a prompt is prefilled whole: absent where the
	// profile has neither (and in files written before they were recorded).
	RequestOverheadMs float64 `json:"request_overhead_ms,omitempty"`
	NoChunkedPrefill  bool    `json:"no_chunked_prefill,omitempty"`
	// ChatTemplateTokens is what the chat template adds per message.
	ChatTemplateTokens int    `json:"chat_template_tokens"`
	MaxModelLen        int    `json:"max_model_len"`
	PrefixCaching      bool   `json:"prefix_caching,omitempty"`
	Source             string `json:"source"`
	// KVCacheTokens is the derived KV cache's capacity (profiles derived
	// from cards; absent: unlimited).
	KVCacheTokens int `json:"kv_cache_tokens,omitempty"`
	// Interval is how far a real server's figures fall from this
	// profile's, where it is known (profiles derived from cards): the
	// figures here are simulated, not measured.
	Interval *SimInterval `json:"interval,omitempty"`
}

// SimInterval is a simulated figure's interval, as ratios of what a real
// server measured to what the simulator gave: in Level of the published
// cases a latency lay within Latency[0] to Latency[1] times the
// simulated one, a throughput within Throughput[0] to Throughput[1].
type SimInterval struct {
	Level      float64    `json:"level"`
	Latency    [2]float64 `json:"latency"`
	Throughput [2]float64 `json:"throughput"`
	// Basis says where the bounds come from.
	Basis string `json:"basis"`
}

// Engine is the serving engine recognized behind the target.
type Engine struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Metrics is set when the server serves Prometheus /metrics.
	Metrics bool `json:"metrics"`
	// Quirks are the engine's known deviations that shaped the figures.
	Quirks []string `json:"quirks,omitempty"`
}

// Sent is what every request asked for beyond the suite's workload.
type Sent struct {
	// IgnoreEOS: ignore_eos/min_tokens were sent, so outputs hold their
	// requested length; false where the engine does not take them.
	IgnoreEOS bool `json:"ignore_eos"`
	// ContinuousUsage: usage was asked on every chunk (vLLM).
	ContinuousUsage bool `json:"continuous_usage"`
}

// Cost is the price of a point's throughput.
type Cost struct {
	USDPerHour float64 `json:"usd_per_hour"`
	// PerMOutput is $ per 1M output tokens; PerMTotal per 1M prompt+output tokens.
	PerMOutput float64 `json:"usd_per_m_output_tokens"`
	PerMTotal  float64 `json:"usd_per_m_total_tokens"`
	// Energy says which power priced the energy term: "measured: ..." from
	// telemetry, "fixed: ..." from the suite's watts; empty without one.
	Energy string `json:"energy,omitempty"`
}

// Knee names the last point before throughput stopped rising with load.
type Knee struct {
	Point string `json:"point"`
	// Rule states how the knee was found.
	Rule string `json:"rule"`
}

// Capacity is the highest rate at which every SLO held.
type Capacity struct {
	// Rate is the highest passing rate probed (0 when even the lowest failed).
	Rate float64 `json:"rate"`
	// Failing is the lowest failing rate probed (0 when even the highest passed).
	Failing float64 `json:"failing,omitempty"`
	// Bound says how to read Rate: "bracketed" (between Rate and Failing,
	// within the precision), "below-min", "at-least-max", or
	// CapacityInconclusive (a probe did not measure the server; Why says so).
	Bound  string `json:"bound"`
	Why    string `json:"why,omitempty"`
	Probes int    `json:"probes"`
	// Offered is set when the passing probe at Rate drew arrivals that
	// offered less than Rate beyond their noise: the rate the server was
	// really shown, and the most the capacity can claim.
	Offered float64 `json:"offered,omitempty"`
	// OutputThroughput at Rate (tokens/s) and the cost there.
	OutputThroughput float64 `json:"output_throughput,omitempty"`
	Cost             *Cost   `json:"cost,omitempty"`
}

// CapacityInconclusive is the bound of a search one of whose probes did
// not measure the server, even after its reruns: no capacity is known.
const CapacityInconclusive = "inconclusive"

// Tool identifies the benchci build.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Timing says where chunk times came from: the kernel's receive
	// stamps, or the time each read returned.
	Timing string `json:"timing,omitempty"`
}

// Suite identifies the suite; Definition is the evaluated suite as JSON.
type Suite struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Hash string `json:"hash"`
	// WorkloadHash identifies the requests sent; see suite.WorkloadHash.
	WorkloadHash string          `json:"workload_hash"`
	Definition   json.RawMessage `json:"definition"`
	// Variant is set for a run of one variant of a suite with variants;
	// Name is then "<suite>/<variant>". Order is how the variants shared
	// the machine (sequential or interleaved).
	Variant string `json:"variant,omitempty"`
	Order   string `json:"order,omitempty"`
}

// Tolerance is the tolerance bands the evaluated suite declared (its
// "tolerance" field: key to band, as written), which the gate judges this
// file with when it is the candidate. Only that field is decoded: the
// results file carries the suite, not its checks.
func (s Suite) Tolerance() (map[string]string, error) {
	if len(s.Definition) == 0 {
		return nil, nil
	}
	var d struct {
		Tolerance map[string]string `json:"tolerance"`
	}
	if err := json.Unmarshal(s.Definition, &d); err != nil {
		return nil, fmt.Errorf("the tolerances of suite %s: %w", s.Name, err)
	}
	return d.Tolerance, nil
}

// A point's modes (Point.Mode): open loop at a rate, or closed loop at a
// concurrency.
const (
	ModeRate        = "rate"
	ModeConcurrency = "concurrency"
)

// PromptsKind is the kind of prompts the evaluated suite sent
// (workload.prompts.kind: "synthetic" when it says none, as the suite's
// default), read from the stored definition alone.
func (s Suite) PromptsKind() string {
	var d struct {
		Workload struct {
			Prompts struct {
				Kind string `json:"kind"`
			} `json:"prompts"`
		} `json:"workload"`
	}
	if json.Unmarshal(s.Definition, &d) != nil || d.Workload.Prompts.Kind == "" {
		return "synthetic"
	}
	return d.Workload.Prompts.Kind
}

// Point is one load point of one trial.
type Point struct {
	// Label names the point, e.g. "rate=4" or "concurrency=16".
	Label       string  `json:"label"`
	Mode        string  `json:"mode"`
	Rate        float64 `json:"rate,omitempty"`
	Concurrency int     `json:"concurrency,omitempty"`
	Trial       int     `json:"trial"`
	Measured
	Schedule Schedule `json:"schedule"`
	// Server holds the engine's own figures over the point, from its
	// Prometheus metrics (queue_time_mean_s, running_peak, ...).
	Server map[string]float64 `json:"server,omitempty"`
	// ServerFrom says where Server's counters start: "window", at the
	// measured window's start; "point", at the point's start, the
	// warm-up's requests included (the server could not be read when the
	// window started). Absent in files before it, whose counters started
	// with the point.
	ServerFrom string `json:"server_from,omitempty"`
	// Overhead is the client's view minus the server's own, where the
	// server reports its TTFT: the network, any gateway and the client.
	Overhead *Overhead `json:"overhead,omitempty"`
	// Queue is the server's queue as derived from what can see it, beside
	// the engine's waiting gauge (Server["waiting_peak"]).
	Queue *Queue `json:"queue,omitempty"`
	// Cost is set when the suite declares cost inputs.
	Cost *Cost `json:"cost,omitempty"`
	// Telemetry holds the hardware exporters' figures over the point, by
	// endpoint and figure ("dcgm.power_mean_w"; see package telemetry).
	Telemetry map[string]float64 `json:"telemetry,omitempty"`
	// EnergyPerOutputToken is joules per output token, from the power
	// the telemetry measured (0: none measured).
	EnergyPerOutputToken float64 `json:"energy_per_output_token,omitempty"`
	// PrefixCacheReset says how the server's prefix cache was emptied
	// before the point (sweep.reset_prefix_cache), or why it was not.
	PrefixCacheReset string `json:"prefix_cache_reset,omitempty"`
	Incomplete       bool   `json:"incomplete,omitempty"`
	// Validity says whether the trial measured the server rather than
	// this machine; absent (files before it): taken as valid.
	Validity *Validity `json:"validity,omitempty"`
}

// Validity is the evidence that a trial measured the server and not the
// machine it ran on: a client that fell behind its schedule, a process
// that stalled, first tokens stamped late, a virtual machine's stolen
// CPU. A trial with any Invalid reason gives no verdict: its figures can
// make neither a regression nor an improvement, nor pass or fail an SLO.
type Validity struct {
	// Invalid lists why this trial did not measure the server; empty:
	// it did.
	Invalid []string `json:"invalid,omitempty"`
	// Reruns lists, for each earlier attempt of this trial that was
	// measured and discarded, why: it was invalid, or (a capacity probe)
	// its arrivals strayed from its rate in its verdict's favour.
	Reruns []string `json:"reruns,omitempty"`
	// StallMs is how long the process stood still over the point, by a
	// canary timer's late wake-ups (each later than StallMinMs counted
	// whole); MaxStallMs the longest one.
	StallMs    float64 `json:"stall_ms"`
	MaxStallMs float64 `json:"max_stall_ms"`
	// StealShare is the share of this machine's CPU time the hypervisor
	// gave to others over the point (Linux's steal), where it is reported.
	StealShare float64 `json:"steal_share,omitempty"`
	// Server is what was seen of the server's own processes, where they
	// run on this machine (a launched server); nil where they could not
	// be seen.
	Server *ServerProcess `json:"server,omitempty"`
}

// ServerProcess is how the server's processes ran over a point: stopped
// (a SIGSTOP, a freezer, a debugger) and waiting for a CPU, by the
// kernel's accounting (/proc/PID/stat and schedstat).
type ServerProcess struct {
	PID       int `json:"pid"`
	Processes int `json:"processes"`
	// StoppedMs sums the time some process was stopped, in Stops stops.
	StoppedMs float64 `json:"stopped_ms"`
	Stops     int     `json:"stops,omitempty"`
	// StarvedMs sums the stretches in which the server wanted a CPU and
	// got none (no thread ran, its threads waited), in Starves stretches.
	StarvedMs float64 `json:"starved_ms,omitempty"`
	Starves   int     `json:"starves,omitempty"`
	// CPUMs and WaitMs sum the threads' time on a CPU and runnable but
	// waiting for one; absent where the kernel does not report them.
	CPUMs  float64 `json:"cpu_ms,omitempty"`
	WaitMs float64 `json:"wait_ms,omitempty"`
}

// Valid reports whether the trial measured the server: no evidence
// against it was found, or none was recorded (files before validity).
func (p *Point) Valid() bool { return p.Validity == nil || len(p.Validity.Invalid) == 0 }

// Overhead compares the client's figures with the server's over a point.
// Means, not percentiles: servers export histograms whose buckets are too
// coarse for a difference of milliseconds, and their sums are exact.
type Overhead struct {
	// TTFTMeanMs is the client's mean TTFT minus the server's, in
	// milliseconds. The server's mean covers the point's warm-up requests
	// too; the client's only the measured ones.
	TTFTMeanMs float64 `json:"ttft_mean_ms"`
}

// Queue is the server's queue derived from the client's side, for
// engines whose waiting gauge cannot see all of it (llama.cpp's counts no
// request still waiting for an HTTP thread).
type Queue struct {
	// GaugeBlind says which waiting requests the engine's waiting gauge
	// does not count ("": none known).
	GaugeBlind string `json:"gauge_blind,omitempty"`
	// HeldPeak is the most of this client's requests the server held
	// without running them at one metrics scrape: requests in flight
	// minus the engine's running gauge, over Scrapes scrapes (0: not
	// derived; HeldPeak means nothing).
	HeldPeak float64 `json:"held_peak"`
	Scrapes  int     `json:"scrapes"`
	// WaitMsMean is the client's TTFT mean minus the server's own prompt
	// time mean (ServerTimings), where the server reports it: the time
	// before the server began a prompt, queued or in transit (0: not
	// derived).
	WaitMsMean float64 `json:"wait_ms_mean,omitempty"`
}

// SLO is one assertion's verdict at one point.
type SLO struct {
	// Name reads like the assertion, e.g. "ttft p99 < 500ms @ rate=8".
	Name  string `json:"name"`
	Point string `json:"point"`
	// Trial is the point's trial the verdict is of, when the suite runs
	// several (each trial is judged on its own); 0 in files of earlier
	// versions.
	Trial    int     `json:"trial,omitempty"`
	Measured float64 `json:"measured"`
	Limit    float64 `json:"limit"`
	Unit     string  `json:"unit"`
	Pass     bool    `json:"pass"`
	// Inconclusive: the point's trials did not measure the server (see
	// Validity), so the SLO neither passed nor failed; Note says why.
	Inconclusive bool `json:"inconclusive,omitempty"`
	// Note explains a verdict that is not a plain comparison, such as a
	// point without samples.
	Note string `json:"note,omitempty"`
}

// Write writes f to path atomically: to a temporary file in the same
// directory, synced, then renamed, so a crash or a full disk never leaves a
// half-written results file where a good one was.
func Write(path string, f *File) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	data = append(data, '\n')
	// Servers echo what they were sent; no known secret reaches the file.
	return WriteFileAtomic(path, redact.Bytes(data))
}

// WriteFileAtomic writes data to path through a temporary file and rename.
// A symbolic link at path is refused, not written through.
func WriteFileAtomic(path string, data []byte) error {
	return WriteFileAtomicIn(filepath.Dir(path), path, data)
}

// WriteFileAtomicIn is WriteFileAtomic for a path inside dir (joined from
// it): no symbolic link below dir, at path or on the way to it, is
// followed; one there is refused with its path.
func WriteFileAtomicIn(dir, path string, data []byte) error {
	return writeAtomic(dir, path, data, func(f *os.File, b []byte) error {
		_, err := f.Write(b)
		return err
	})
}

// WriteIn is Write for a path inside dir, as WriteFileAtomicIn.
func WriteIn(dir, path string, f *File) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	data = append(data, '\n')
	return WriteFileAtomicIn(dir, path, redact.Bytes(data))
}

// writeAtomic takes the write step as a function so tests can make it fail
// part-way, as a full disk does.
func writeAtomic(dir, path string, data []byte, write func(*os.File, []byte) error) error {
	rel, err := safefile.In(dir, path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	d, err := safefile.Open(dir)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer d.Close()
	if err := d.WriteAtomic(rel, func(f *os.File) error { return write(f, data) }); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Read reads and checks a results file.
func Read(path string) (*File, error) {
	data, err := inputfile.ReadFile(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("read results %s: %w", path, err)
	}
	return f, nil
}

// Parse decodes and checks a results file's contents.
func Parse(data []byte) (*File, error) { return ParseWith(data, VerifyOptions{}) }

// ParseWith is Parse checking the contents as o says (VerifyWith).
func ParseWith(data []byte, o VerifyOptions) (*File, error) {
	if err := CheckShape(data); err != nil {
		return nil, err
	}
	// A file of this version that decodes is decoded in one pass; any
	// other (an older version to migrate, or one that does not decode)
	// goes the long way, whose errors say what is wrong with it.
	if f, ok := decodeCurrent(data); ok {
		if err := f.VerifyWith(o); err != nil {
			return nil, err
		}
		return f, nil
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte{'\n'})
			return nil, fmt.Errorf("not valid JSON at line %d (truncated or corrupt?): %w", line, err)
		}
		return nil, fmt.Errorf("not a results file: %w", err)
	}
	// The suite definition as written: migration re-encodes a v1 file
	// (keys sorted, escapes changed), and its hash covers these bytes.
	var written struct {
		Suite struct {
			Definition json.RawMessage `json:"definition"`
		} `json:"suite"`
	}
	switch head.Schema {
	case Schema:
	case SchemaV1:
		if err := json.Unmarshal(data, &written); err != nil {
			return nil, fmt.Errorf("not a results file: %w", err)
		}
		var err error
		if data, err = migrateV1(data); err != nil {
			return nil, fmt.Errorf("migrate %s: %w", SchemaV1, err)
		}
	default:
		return nil, fmt.Errorf("schema %q, want %q (or %q)", head.Schema, Schema, SchemaV1)
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if len(written.Suite.Definition) > 0 {
		f.Suite.Definition = written.Suite.Definition
	}
	if err := f.VerifyWith(o); err != nil {
		return nil, err
	}
	return &f, nil
}

// decodeCurrent decodes data as Parse decodes a file of this version,
// strictly and nothing after it; false if it is not one or does not
// decode.
func decodeCurrent(data []byte) (*File, bool) {
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil || f.Schema != Schema || len(bytes.TrimSpace(data[dec.InputOffset():])) > 0 {
		return nil, false
	}
	return &f, true
}

// Where names the point (and trial, when the suite ran several) an SLO
// verdict is of: "rate=4", "rate=4 trial 2".
func (s SLO) Where(trials bool) string {
	if trials && s.Trial > 0 {
		return fmt.Sprintf("%s trial %d", s.Point, s.Trial)
	}
	return s.Point
}

// SeveralTrials says whether any verdict is of a trial after the first:
// then each names its trial.
func SeveralTrials(slos []SLO) bool {
	for _, s := range slos {
		if s.Trial > 1 {
			return true
		}
	}
	return false
}
