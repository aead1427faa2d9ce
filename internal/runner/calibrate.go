package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/loadgen"
	"github.com/benchci/benchci/internal/redact"
	"github.com/benchci/benchci/internal/workload"
)

// calibrateOffline fits the same line as calibrate with a local tokenizer.
func calibrateOffline(tok client.Counter) result.Calibration {
	cal, err := fit(func(prompt string) (int, error) { return tok.Count(prompt), nil })
	if err != nil {
		cal.Note = err.Error()
	}
	return cal
}

// oneTokenPerWord is the calibration assumed when none could be measured.
var oneTokenPerWord = result.Calibration{TokensPerWord: 1}

// Calibration probe sizes, in words: small enough to fit any context
// window (Ollama truncates prompts to 2048 tokens by default, silently).
var calibrateWords = [3]int{16, 64, 128}

// calibrate asks the target how many prompt tokens it counts for synthetic
// prompts of known word counts (see fit), each request retried under
// retry. Servers that report no usage cannot be calibrated.
func calibrate(ctx context.Context, cl *client.Client, retry loadgen.RetryPolicy) (result.Calibration, error) {
	count := func(prompt string) (int, error) {
		body, err := cl.Body("", prompt, 1)
		if err != nil {
			return 0, err
		}
		var res client.Result
		n := loadgen.Retry(ctx, cl, retry, body, "benchci-calibrate", &res)
		if !res.OK() && res.Err != client.ErrEmpty {
			return 0, fmt.Errorf("%w: its request failed (%s: %s) after %d attempt(s)", errCalibrationFailed, res.Err, redact.Cut(res.Detail, 200), n)
		}
		if res.PromptTokens == 0 {
			return 0, errors.New("prompt calibration: the server reports no usage.prompt_tokens; prompts are sized at one token per word")
		}
		return res.PromptTokens, nil
	}
	counted := true
	cal, err := fit(func(prompt string) (int, error) {
		n, err := count(prompt)
		counted = counted && err == nil
		return n, err
	})
	if counted {
		// The shortest prompt the server can be sent: one word in its
		// template (a prompt has a word at least; see workload.Words).
		// A chat template's own tokens are most of it (46 on a small
		// Llama chat model): a request for fewer cannot be honoured.
		// Its own draw (ShortestPrompt), so the fit's probes stay those of
		// every run.
		if n, ferr := count(ShortestPrompt()); ferr == nil {
			cal.MinPromptTokens = n
		}
	}
	return cal, err
}

// ShortestPrompt is the prompt of one word whose token count, measured
// at calibration, is the shortest prompt a server takes
// (result.Calibration.MinPromptTokens): its own draw, the same in every
// run.
func ShortestPrompt() string { return workload.Prompt(1, rand.New(rand.NewPCG(0xf1002, 1))) }

// errCalibrationFailed marks a calibration whose request the server did
// not answer: unlike a server without usage counts, which is what it is,
// that is a warning with the figures.
var errCalibrationFailed = errors.New("prompt calibration failed")

// calibrationRetry is the policy the calibration's requests are retried
// under: the suite's, or, where it sets none, a few waits on a 429 or
// 503 (their Retry-After honoured), within the request's timeout. A
// server shedding load refuses a share of requests; one refusal of the
// calibration's would size every prompt of the run by a guess.
func calibrationRetry(s *suite.Suite) loadgen.RetryPolicy {
	if p := retryPolicy(s); p != nil {
		return *p
	}
	return loadgen.RetryPolicy{
		Retryable: func(res *client.Result) bool {
			return res.Err == client.ErrHTTP && (res.Status == 429 || res.Status == 503)
		},
		MaxAttempts: 4, Initial: 250 * time.Millisecond, Max: 4 * time.Second, Multiplier: 2,
		RespectRetryAfter: true, Total: s.Request.Timeout.D(),
	}
}

// maxResidual is how far (relative) a probe's count may be from the fitted
// line before the fit is refused: prompts sized by a worse fit would miss
// their targets by as much.
const maxResidual = 0.05

// fit counts the tokens of synthetic prompts of calibrateWords words and
// fits tokens = overhead + tokens_per_word x words by least squares. The
// overhead is the chat template's (or BOS) tokens; the slope is the
// tokenizer's view of our vocabulary. The fit records every probe and its
// residual. It is refused when a probe is more than maxResidual off the
// line (a server that truncates prompts, or a tokenizer far from linear
// on our words); a negative overhead, which no server has (BOS alone adds
// one), is refitted through zero, with a note.
func fit(count func(prompt string) (int, error)) (result.Calibration, error) {
	r := rand.New(rand.NewPCG(0xca11b, 1))
	cal := result.Calibration{ProbeWords: calibrateWords[:], ProbeTokens: make([]int, len(calibrateWords))}
	for i, n := range calibrateWords {
		c, err := count(workload.Prompt(n, r))
		if err != nil {
			return oneTokenPerWord, err
		}
		cal.ProbeTokens[i] = c
	}
	var sx, sy, sxx, sxy float64
	n := float64(len(calibrateWords))
	for i, w := range calibrateWords {
		x, y := float64(w), float64(cal.ProbeTokens[i])
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	cal.TokensPerWord = (n*sxy - sx*sy) / (n*sxx - sx*sx)
	cal.Overhead = (sy - cal.TokensPerWord*sx) / n
	if cal.Overhead < 0 {
		cal.Note = fmt.Sprintf("the fitted overhead was %.1f tokens, which cannot be (a BOS token alone adds one): fitted through zero instead", cal.Overhead)
		cal.Overhead, cal.TokensPerWord = 0, sxy/sxx
	}
	worst := 0.0
	for i, w := range calibrateWords {
		res := float64(cal.ProbeTokens[i]) - (cal.Overhead + cal.TokensPerWord*float64(w))
		cal.Residuals = append(cal.Residuals, math.Round(res*100)/100)
		worst = max(worst, math.Abs(res)/max(float64(cal.ProbeTokens[i]), 1))
	}
	if !(cal.TokensPerWord > 0) || worst > maxResidual {
		refused := oneTokenPerWord
		refused.ProbeWords, refused.ProbeTokens, refused.Residuals = cal.ProbeWords, cal.ProbeTokens, cal.Residuals
		why := "does the server truncate prompts?"
		if cal.Note != "" {
			why = cal.Note
		}
		return refused, fmt.Errorf("prompt calibration refused: %v words counted %v tokens, not a straight line (a probe is %.0f%% off the fit; %s); prompts are sized at one token per word", calibrateWords, cal.ProbeTokens, 100*worst, why)
	}
	return cal, nil
}
