package client

import "time"

// ErrorKind classifies a failed request. Every kind is counted on its own and
// stays in the denominator of error rates, except those that are not the
// server's doing: ErrCanceled, ErrClientLimit and ErrAbandoned.
type ErrorKind string

// Error kinds.
const (
	ErrNone        ErrorKind = ""
	ErrConnect     ErrorKind = "connect"              // dial or write failed before a response
	ErrTimeout     ErrorKind = "timeout"              // the per-request timeout ran out
	ErrHTTP        ErrorKind = "http"                 // non-2xx status; see Result.Status
	ErrStreamCut   ErrorKind = "stream_cut"           // the stream ended before [DONE]
	ErrMalformed   ErrorKind = "malformed"            // a chunk that is not the JSON we expect, or a line over the limit
	ErrServer      ErrorKind = "server_error"         // an error object inside the stream
	ErrEmpty       ErrorKind = "empty"                // the stream finished without content
	ErrStreamLimit ErrorKind = "stream_limit"         // the stream exceeded the byte limit
	ErrCanceled    ErrorKind = "canceled"             // the run was stopped (Ctrl-C, deadline)
	ErrEncoding    ErrorKind = "unsupported_encoding" // a compressed stream, though identity was asked for
	ErrNotStreamed ErrorKind = "not_streamed"         // a whole JSON answer to a stream request
	// ErrClientLimit is this machine running out of descriptors, ports or
	// buffers: the client's failure, not the server's, so it is counted
	// apart and kept out of error rates and SLOs.
	ErrClientLimit ErrorKind = "client_limit"
	// ErrAbandoned is a stream the user closed on purpose (the workload's
	// cancel): its own kind, not a failure of anyone's.
	ErrAbandoned ErrorKind = "abandoned"
)

// TokenSource says where an output token count came from.
type TokenSource string

// Token sources.
const (
	TokensFromUsage   TokenSource = "usage"   // the server's usage.completion_tokens
	TokensFromCounter TokenSource = "counted" // the client's tokenizer over the streamed text
)

// FinishKind is why an answer ended, by what its stream showed: the
// finish_reason, refined by what the server said of stop sequences and by
// what the request asked.
type FinishKind string

// Finish kinds.
const (
	// FinishEndToken: the model chose its end token (finish_reason stop
	// with no stop sequence asked or matched).
	FinishEndToken FinishKind = "end_token"
	// FinishStopSequence: a stop sequence the request asked for matched
	// (the server named it, or the request had stop sequences while
	// ignore_eos kept the end token from ending it).
	FinishStopSequence FinishKind = "stop_sequence"
	// FinishStop: finish_reason stop where the request had stop sequences
	// and the server does not say whether one of them or the end token
	// ended the answer.
	FinishStop FinishKind = "stop"
	// FinishLength: cut at max_tokens.
	FinishLength FinishKind = "length"
	// FinishContentFilter: withheld by the server's content filter.
	FinishContentFilter FinishKind = "content_filter"
	// FinishToolCalls: ended after a tool call.
	FinishToolCalls FinishKind = "tool_calls"
	// FinishUnknown: no finish_reason, or one benchci does not know.
	FinishUnknown FinishKind = "unknown"
)

// FinishKinds lists every kind, in report order.
var FinishKinds = []FinishKind{FinishEndToken, FinishStopSequence, FinishStop, FinishLength, FinishContentFilter, FinishToolCalls, FinishUnknown}

// Result is what one request measured. Times are offsets from Sent, taken
// from the monotonic clock, so wall-clock steps cannot distort them.
type Result struct {
	// ID is the X-Request-Id the client sent.
	ID string
	// Sent is when the request was handed to the HTTP client.
	Sent time.Time
	// FirstToken is the offset of the first chunk carrying output of any kind
	// (answer or reasoning); 0 if none came.
	FirstToken time.Duration
	// FirstAnswer is the offset of the first chunk carrying answer content,
	// which trails FirstToken on reasoning models.
	FirstAnswer time.Duration
	// End is the offset of the last byte of the stream.
	End time.Duration
	// ChunkAt holds the offset of every chunk that carried output, and
	// ChunkTokens how many tokens each carried (by usage deltas where the
	// server streams them, else by the client's count).
	ChunkAt     []time.Duration
	ChunkTokens []int32
	// ChunkRead numbers the socket read that delivered each chunk (from an
	// arbitrary start). Chunks with one number came in one read and share
	// its stamp: only the last of them has its own arrival time, so the
	// gaps that touch the others were not measured. A client that fell
	// behind its sockets shows here; a nil slice claims nothing.
	ChunkRead []uint32

	PromptTokens int
	OutputTokens int
	// Embeddings is how many vectors an embeddings answer carried (0 for
	// completions).
	Embeddings  int
	TokenSource TokenSource
	// FirstToolCall is when the first tool-call delta came (0: none);
	// ToolName and ToolArgs are the call's function and arguments, and
	// Text the answer's text, kept when the client is asked to
	// (Options.KeepText), for checking structured answers.
	FirstToolCall time.Duration
	ToolName      string
	ToolArgs      []byte
	Text          []byte
	// ReasoningTokens counts output tokens that arrived as reasoning content.
	ReasoningTokens int
	// Finish is why a streamed answer ended ("" for failures and
	// embeddings).
	Finish FinishKind

	// UsageImplausible is set when the server's usage claimed more tokens
	// than the bytes exchanged allow; its counts were not used.
	UsageImplausible bool

	// ServerPrompt and ServerPredict are the server's own times for the
	// prompt and for generating ServerPredicted tokens, where it reports
	// them (llama.cpp's "timings" on the finish chunk); zero otherwise.
	ServerPrompt, ServerPredict time.Duration
	ServerPredicted             int

	Status int
	// RetryAfter is the server's Retry-After on a refused request (0: none).
	RetryAfter time.Duration
	Err        ErrorKind
	// Detail is a short, truncated description of the error.
	Detail string
}

// MeasuredGap reports whether the gap before chunk i (i >= 1) was
// measured: chunk i came alone in its read, so both its stamp and the one
// before it (the last of an earlier read) are arrival times.
func (r *Result) MeasuredGap(i int) bool {
	if len(r.ChunkRead) != len(r.ChunkAt) {
		return true
	}
	if r.ChunkRead[i] == r.ChunkRead[i-1] {
		return false
	}
	return i+1 == len(r.ChunkRead) || r.ChunkRead[i+1] != r.ChunkRead[i]
}

// ChunkGaps calls f with the time of every gap between consecutive
// content chunks that can be timed, and returns how many cannot.
//
// A read that delivered k chunks (k > 1) stamps them all with its own
// arrival time, which is the last one's: the k gaps from the chunk before
// the read to its last chunk span that read's time since the previous
// read, and each is given an equal share of it (spread true). The sum of
// a stream's gaps, their count, and so their mean are those of every chunk
// timed on its own (vLLM's bench serve definition: one sample per chunk
// gap); what a spread gap cannot show is how unevenly the span divided.
// Recording the read's gap once and k-1 zeros instead would put an
// invented zero in the ITL percentiles for every chunk the client was late
// for, and leaving those gaps out would keep only the gaps the client kept
// up with, the longer ones. Gaps inside the stream's first read have no
// earlier arrival to measure from: they are not timed.
func (r *Result) ChunkGaps(f func(gap time.Duration, spread bool)) (untimed int) {
	n := len(r.ChunkAt)
	if len(r.ChunkRead) != n {
		for i := 1; i < n; i++ {
			f(r.ChunkAt[i]-r.ChunkAt[i-1], false)
		}
		return 0
	}
	end := func(s int) int { // the last chunk of the read that delivered chunk s
		e := s
		for e+1 < n && r.ChunkRead[e+1] == r.ChunkRead[s] {
			e++
		}
		return e
	}
	if n == 0 {
		return 0
	}
	untimed = end(0)
	for s := untimed + 1; s < n; {
		e := end(s)
		k := time.Duration(e - s + 1)
		gap := (r.ChunkAt[e] - r.ChunkAt[s-1]) / k
		for range k {
			f(gap, k > 1)
		}
		s = e + 1
	}
	return untimed
}

// FirstCoalesced reports whether the first content chunk came in one read
// with the next, so that its stamp is the read's and not its own arrival:
// the client read the socket late (or the server sent them together).
func (r *Result) FirstCoalesced() bool {
	return len(r.ChunkAt) >= 2 && len(r.ChunkRead) == len(r.ChunkAt) && r.ChunkRead[0] == r.ChunkRead[1] && r.FirstToken == r.ChunkAt[0]
}

// OneRead reports whether every content chunk of the answer came in one
// read (or there was one chunk): the time between its tokens was not
// seen.
func (r *Result) OneRead() bool {
	return len(r.ChunkAt) > 0 && r.ChunkAt[len(r.ChunkAt)-1] == r.ChunkAt[0]
}

// NoContent reports whether a streamed answer carried no output at all
// (no text, reasoning or tool call): it has no first token, so no TTFT
// and no TPOT; only its end was measured.
func (r *Result) NoContent() bool { return len(r.ChunkAt) == 0 && r.Embeddings == 0 }

// Reset clears r for reuse, keeping its slices' memory.
func (r *Result) Reset() {
	*r = Result{ChunkAt: r.ChunkAt[:0], ChunkTokens: r.ChunkTokens[:0], ChunkRead: r.ChunkRead[:0], ToolArgs: r.ToolArgs[:0], Text: r.Text[:0]}
}

// OK reports whether the request succeeded.
func (r *Result) OK() bool { return r.Err == ErrNone }
