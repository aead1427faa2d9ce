package result

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchci/benchci/framework/metric"
)

// Measured is what the recorder measured at one load point.
type Measured struct {
	Requests   Requests   `json:"requests"`
	Window     Window     `json:"window"`
	Throughput Throughput `json:"throughput"`
	// Latency summarizes each latency histogram, in milliseconds, by the
	// metric catalogue's names (ttft, tpot, itl, ...).
	Latency map[string]Summary `json:"latency_ms"`
	Tokens  Tokens             `json:"tokens"`
	// ServerTimings are the server's own per-request times, where it
	// reports them with each answer (llama.cpp's "timings").
	ServerTimings *ServerTimings `json:"server_timings,omitempty"`
	// Histograms holds every histogram, encoded (EncodeHistogram), so points
	// can be merged and compared again later without re-running. Latencies
	// are recorded in microseconds, token counts in tokens.
	Histograms map[string]string `json:"histograms"`
	// Slices are the point's figures over time, warm-up included.
	Slices *Slices `json:"slices,omitempty"`
	// Models are the figures of each model of a mix (workload.models),
	// over the same window.
	Models map[string]*Measured `json:"models,omitempty"`
	// Batch summarizes the inputs per request of an embeddings workload.
	Batch *Summary `json:"batch,omitempty"`
	// Structured counts the structured answers checked and those correct.
	Structured *Structured `json:"structured,omitempty"`
}

// Slices cut a point into intervals of WidthS seconds from its start.
type Slices struct {
	WidthS float64 `json:"width_s"`
	// WindowStartS is where the measured window begins, in seconds from
	// the point's start.
	WindowStartS float64 `json:"window_start_s"`
	Slices       []Slice `json:"slices"`
}

// Slice is one interval of a point. Requests are counted as sent by their
// send time and as finished, completed (answered) or failed by their end;
// output tokens by the time their chunk came; TTFT over the requests sent
// in the slice. InFlight is the number sent and not yet finished at the
// slice's end.
type Slice struct {
	Sent        int     `json:"sent"`
	Finished    int     `json:"finished"`
	Completed   int     `json:"completed"`
	Failed      int     `json:"failed"`
	InFlight    int     `json:"in_flight"`
	OutputTokPS float64 `json:"output_tok_s"`
	TTFTP50Ms   float64 `json:"ttft_p50_ms,omitempty"`
	TTFTP99Ms   float64 `json:"ttft_p99_ms,omitempty"`
}

// Requests counts requests. Errors count every failure by kind; the error
// rate's denominator is every measured request sent.
type Requests struct {
	Sent      int               `json:"sent"`
	Completed int               `json:"completed"`
	Failed    int               `json:"failed"`
	ErrorRate float64           `json:"error_rate"`
	Errors    map[string]int    `json:"errors,omitempty"`
	LastError map[string]string `json:"last_error,omitempty"`
	Warmup    int               `json:"warmup"`
	// Good counts measured requests that met every per-request SLO (when
	// the suite sets goodput criteria).
	Good int `json:"good,omitempty"`
	// Canceled counts requests cut short by stopping the run.
	Canceled int `json:"canceled,omitempty"`
	// ClientLimited counts requests this machine could not send (out of
	// descriptors, ports or buffers), and ClientLimitError is the last
	// such error. Like Canceled they are not in Sent nor the error rate:
	// the server never saw them.
	ClientLimited    int    `json:"client_limited,omitempty"`
	ClientLimitError string `json:"client_limit_error,omitempty"`
	// Abandoned counts streams the workload's users closed on purpose
	// (workload.cancel); not in Sent nor the error rate.
	Abandoned int `json:"abandoned,omitempty"`
	// Attempts counts every attempt of the measured requests when the
	// suite retries (0 when it does not): Attempts / Sent is the retry
	// amplification. GaveUp counts requests that failed with a retryable
	// error but were not retried again: out of attempts, or of budget.
	Attempts int `json:"attempts,omitempty"`
	GaveUp   int `json:"gave_up,omitempty"`
}

// Window is the measured interval.
type Window struct {
	Start   time.Time `json:"start"`
	Seconds float64   `json:"seconds"`
}

// Throughput is per second over the window.
type Throughput struct {
	Requests     float64 `json:"requests"`
	OutputTokens float64 `json:"output_tokens"`
	TotalTokens  float64 `json:"total_tokens"`
	// Goodput is measured requests that met every per-request SLO and
	// ended inside the window, per second (DistServe's definition).
	// Nil when the suite sets no per-request SLOs.
	Goodput *float64 `json:"goodput,omitempty"`
	// Embeddings is vectors answered per second (the embeddings API).
	Embeddings float64 `json:"embeddings,omitempty"`
}

// Structured counts checked structured answers (workload.structured).
type Structured struct {
	Checked int `json:"checked"`
	Correct int `json:"correct"`
	// Rate is Correct over Checked.
	Rate float64 `json:"rate"`
}

// Tokens describes token counts and where they came from.
type Tokens struct {
	Prompt Summary `json:"prompt"`
	Output Summary `json:"output"`
	// PromptAsked summarizes the prompt lengths the same answers asked
	// for (the suite's distribution as drawn), where Prompt is what the
	// server counted it was sent; absent in files before it.
	PromptAsked *Summary `json:"prompt_asked,omitempty"`
	// Source counts requests by where their output count came from.
	Source map[string]int `json:"source"`
	// OutputMismatch counts requests whose output length differs from the
	// one requested; PromptMismatch those whose server-side prompt count
	// differs from the requested input by more than 5% (chat templates add
	// tokens).
	OutputMismatch int `json:"output_mismatch"`
	PromptMismatch int `json:"prompt_mismatch"`
	// PerChunk is output tokens per content chunk: above 1 means chunks
	// carry several tokens (speculative decoding, server-side batching).
	PerChunk  float64 `json:"per_chunk"`
	Reasoning int     `json:"reasoning"`
	// OutOfRange counts values the histograms could not hold.
	OutOfRange int `json:"out_of_range,omitempty"`
	// EmptyAnswers counts requests that ended normally with no content:
	// successes with no first token, so in E2E but in neither TTFT nor
	// TPOT (files before EmptyKinds timed their TTFT to the finish).
	EmptyAnswers int `json:"empty_answers,omitempty"`
	// EmptyKinds counts the empty answers by why they ended, Finish all
	// answers, and MismatchKinds the answers of another output length
	// than asked (OutputMismatch) by the same: keys are FinishKinds.
	// Absent in files before them.
	EmptyKinds    map[string]int `json:"empty_kinds,omitempty"`
	Finish        map[string]int `json:"finish,omitempty"`
	MismatchKinds map[string]int `json:"output_mismatch_kinds,omitempty"`
	// UsageRejected counts answers whose usage claimed more tokens than
	// the bytes exchanged allow; their text was counted instead.
	UsageRejected int `json:"usage_rejected,omitempty"`
	// ChunkGaps counts the gaps between content chunks of answers;
	// CoalescedGaps those of them kept out of the ITL histogram because
	// their chunks came in one socket read and share its time stamp (the
	// client fell behind the stream, or the server wrote them at once).
	// Since SpreadGaps exists, only the gaps inside an answer's first read
	// are kept out; earlier results kept out every such gap.
	ChunkGaps     int `json:"chunk_gaps,omitempty"`
	CoalescedGaps int `json:"coalesced_gaps,omitempty"`
	// SpreadGaps counts the ITL samples that are an equal share of a
	// read's span (the time from the previous read's last chunk to this
	// read's last) over the read's several chunks: client.Result.ChunkGaps.
	SpreadGaps int `json:"spread_gaps,omitempty"`
	// CoalescedFirst counts answers whose first content chunk came in one
	// read with the next: the client read it late, so its stamp is the
	// later chunk's, and its TTFT is kept out of the TTFT figures. (Where
	// most first chunks come so, the server sends them together, and
	// they are kept and not counted here.)
	CoalescedFirst int `json:"coalesced_first,omitempty"`
	// OneRead counts answers of several tokens that all arrived in one
	// read: the time between their tokens was not seen, so they give no
	// TPOT sample (a pace of 0 would be the read's, not the server's).
	OneRead int `json:"one_read,omitempty"`
}

// FinishKinds are why an answer ended, by what its stream showed (the
// client's kinds): the model's end token; a stop sequence the request
// asked for; "stop" where the request had stop sequences and the server
// does not say whether one of them or the end token ended it; max_tokens;
// the content filter; a tool call; and no or an unknown finish_reason.
var FinishKinds = []string{"end_token", "stop_sequence", "stop", "length", "content_filter", "tool_calls", "unknown"}

// MaxCoalescedShare is the share of chunk gaps that may be kept out of
// ITL before a point's ITL is flagged: beyond it, the gaps measured are a
// biased sample (the ones the client was keeping up with). Spread gaps
// are in ITL, by their stated method, and do not count.
const MaxCoalescedShare = 0.01

// CoalescedShare is the share of chunk gaps kept out of ITL.
func (t Tokens) CoalescedShare() float64 {
	if t.ChunkGaps == 0 {
		return 0
	}
	return float64(t.CoalescedGaps) / float64(t.ChunkGaps)
}

// SpreadShare is the share of chunk gaps timed as a share of their read's
// span.
func (t Tokens) SpreadShare() float64 {
	if t.ChunkGaps == 0 {
		return 0
	}
	return float64(t.SpreadGaps) / float64(t.ChunkGaps)
}

// ServerTimings averages what the server said each successful request
// took it, beside the client's view of the same requests: the client's
// TTFT minus the server's prompt time is queueing, network and client.
type ServerTimings struct {
	Requests int `json:"requests"`
	// PromptMsMean is the mean time the server spent on a prompt.
	PromptMsMean float64 `json:"prompt_ms_mean"`
	// TPOTMsMean is the server's generation time per token, over all
	// requests' tokens.
	TPOTMsMean float64 `json:"tpot_ms_mean"`
}

// Schedule reports how well the client kept to the plan.
type Schedule struct {
	// TargetRate is the configured rate; ScheduledRate the rate of the
	// drawn timeline inside the window; SendRate the rate actually sent.
	TargetRate    float64 `json:"target_rate,omitempty"`
	ScheduledRate float64 `json:"scheduled_rate,omitempty"`
	SendRate      float64 `json:"send_rate"`
	// CapWaits counts sends delayed by MaxConcurrency.
	CapWaits int `json:"cap_waits,omitempty"`
	// ClientSaturated is set when the client, not the server, limited the
	// load; Reason says why.
	ClientSaturated bool   `json:"client_saturated"`
	Reason          string `json:"reason,omitempty"`
	// Saturation, when set, says why the point was stopped early: the
	// server's queue grew without bound. Its SLOs fail by definition.
	Saturation string `json:"saturation,omitempty"`
	// StartSkewMs is how late the point started after the wall-clock time
	// it was aligned to (a shard run with --start-at), in milliseconds.
	StartSkewMs float64 `json:"start_skew_ms,omitempty"`
	// Virtual is set when the point was replayed in virtual time on the
	// embedded simulator (run --virtual) rather than measured: its client
	// was perfect (no send lag, no stalls), and its times are the
	// simulated clock's.
	Virtual bool `json:"virtual,omitempty"`
}

// Summary describes a distribution. Latencies are in milliseconds, token
// counts in tokens.
type Summary struct {
	Count  int64   `json:"count"`
	Min    float64 `json:"min"`
	Mean   float64 `json:"mean"`
	Stddev float64 `json:"stddev"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	P999   float64 `json:"p99.9"`
	Max    float64 `json:"max"`
}

// Stat returns the named statistic (metric.Stats, and stddev).
func (s Summary) Stat(name string) (float64, bool) {
	switch name {
	case "min":
		return s.Min, true
	case "mean":
		return s.Mean, true
	case "stddev":
		return s.Stddev, true
	case "p50":
		return s.P50, true
	case "p90":
		return s.P90, true
	case "p95":
		return s.P95, true
	case "p99":
		return s.P99, true
	case "p99.9":
		return s.P999, true
	case "max":
		return s.Max, true
	}
	return 0, false
}

// DecodeHistogram reverses EncodeHistogram. It reads the histogram's
// layout first and refuses one benchci never records: decoding allocates
// the buckets the layout asks for, and a forged 1..2^62 at 5 digits asks
// for ~50 MB and a second of CPU per histogram.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	if err := checkLayout(raw); err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}

// Histogram layouts benchci records: values from 1 up to an hour of
// microseconds (latencies) or 10M (token counts), to at most 3
// significant digits (a model of a mix keeps 2).
const (
	maxHistogramValue  = int64(time.Hour / time.Microsecond)
	maxHistogramDigits = 3
)

// checkLayout reads the layout from a V2 compressed histogram's header
// (8 bytes of cookie and length, then, deflated, 40 bytes: cookie,
// payload length, normalizing offset, digits, lowest, highest,
// conversion ratio) without inflating the counts.
func checkLayout(raw []byte) error {
	if len(raw) < 8 {
		return errors.New("too short")
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8:]))
	if err != nil {
		return err
	}
	defer z.Close()
	var head [40]byte
	if _, err := io.ReadFull(z, head[:]); err != nil {
		return fmt.Errorf("header: %w", err)
	}
	digits := int32(binary.BigEndian.Uint32(head[12:16]))
	lowest := int64(binary.BigEndian.Uint64(head[16:24]))
	highest := int64(binary.BigEndian.Uint64(head[24:32]))
	if lowest != 1 || highest < 2 || highest > maxHistogramValue || digits < 1 || digits > maxHistogramDigits {
		return fmt.Errorf("a layout of %d..%d at %d digits, which benchci never records (1..%d, at most %d digits)", lowest, highest, digits, maxHistogramValue, maxHistogramDigits)
	}
	return nil
}

// MergeHistograms merges the histogram called name of every point that
// has one, bucket for bucket; nil when none has it. Histograms merge
// exactly, so the result is the one a single recording of all their
// values would have made.
func MergeHistograms(name string, ps []*Point) (*hdrhistogram.Histogram, error) {
	var h *hdrhistogram.Histogram
	for _, p := range ps {
		enc, ok := p.Histograms[name]
		if !ok {
			continue
		}
		x, err := DecodeHistogram(enc)
		if err != nil {
			return nil, fmt.Errorf("histogram %s: %w", name, err)
		}
		if h == nil {
			h = x
		} else if dropped := h.Merge(x); dropped > 0 {
			return nil, fmt.Errorf("histogram %s: %d values out of range", name, dropped)
		}
	}
	return h, nil
}

// Value reads the figure k names from the point. The string is empty when
// the figure was measured, and otherwise says why it is missing, so an SLO
// or the gate can explain itself instead of judging a zero.
func (p *Point) Value(k metric.Key) (float64, string) {
	d, ok := metric.Lookup(k.Metric)
	if !ok {
		return 0, "unknown metric " + k.Metric
	}
	if d.Kind == metric.Latency {
		s, ok := p.Latency[k.Metric]
		if !ok || s.Count == 0 {
			return 0, "no successful requests to measure"
		}
		v, ok := s.Stat(k.Stat)
		if !ok {
			return 0, "unknown statistic " + k.Stat
		}
		return v, ""
	}
	read, ok := pointFigures[k.Metric]
	if !ok {
		return 0, "metric " + k.Metric + " is not read from points"
	}
	if p.Requests.Sent == 0 {
		return 0, "no requests measured"
	}
	return read(p)
}

// ServerErrorKinds are the failures only the server (or what stands
// between it and the client) can cause: an error status, a refused or
// cut connection, a stream that is not what the API says. A client that
// stalled cannot make them, so they count against the server even in a
// trial that measured this machine. Timeouts are not among them: a
// stalled client times requests out too.
var ServerErrorKinds = []string{"http", "connect", "stream_cut", "malformed", "server_error", "empty", "stream_limit", "unsupported_encoding", "not_streamed"}

// ServerFailed counts the failures of ServerErrorKinds (an HTTP status
// is counted by code: "http_500").
func (r Requests) ServerFailed() int {
	n := 0
	for k, c := range r.Errors {
		if IsServerError(k) {
			n += c
		}
	}
	return n
}

// IsServerError reports whether an error kind, as Errors keys it, is
// one of ServerErrorKinds.
func IsServerError(kind string) bool {
	if strings.HasPrefix(kind, "http_") {
		kind = "http"
	}
	return slices.Contains(ServerErrorKinds, kind)
}

// ServerErrorRate is ServerFailed over the requests sent (0 when none).
func (r Requests) ServerErrorRate() float64 {
	if r.Sent == 0 {
		return 0
	}
	return float64(min(r.ServerFailed(), r.Sent)) / float64(r.Sent)
}
