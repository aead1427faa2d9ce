package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/benchci/benchci/framework/client"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/workload"
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
// prompts of known word counts (see fit). Servers that report no usage
// cannot be calibrated.
func calibrate(ctx context.Context, cl *client.Client) (result.Calibration, error) {
	return fit(func(prompt string) (int, error) {
		body, err := cl.Body("", prompt, 1)
		if err != nil {
			return 0, err
		}
		var res client.Result
		cl.Do(ctx, body, "benchci-calibrate", &res)
		if !res.OK() && res.Err != client.ErrEmpty {
			return 0, fmt.Errorf("prompt calibration: request failed (%s): %s", res.Err, res.Detail)
		}
		if res.PromptTokens == 0 {
			return 0, errors.New("prompt calibration: the server reports no usage.prompt_tokens; prompts are sized at one token per word")
		}
		return res.PromptTokens, nil
	})
}

// fit counts the tokens of synthetic prompts of calibrateWords words and
// fits tokens = overhead + tokens_per_word x words. The overhead is the chat
// template's (or BOS) tokens; the slope is the tokenizer's view of our
// vocabulary. Three probes check the counts are linear: a server that
// truncates prompts fails the check instead of skewing every prompt.
func fit(count func(prompt string) (int, error)) (result.Calibration, error) {
	r := rand.New(rand.NewPCG(0xca11b, 1))
	var counts [3]int
	for i, n := range calibrateWords {
		c, err := count(workload.Prompt(n, r))
		if err != nil {
			return oneTokenPerWord, err
		}
		counts[i] = c
	}
	w := calibrateWords
	slope := func(i, j int) float64 { return float64(counts[j]-counts[i]) / float64(w[j]-w[i]) }
	tpw, check := slope(0, 2), slope(0, 1)
	if tpw <= 0 || math.Abs(check/tpw-1) > 0.1 {
		return oneTokenPerWord, fmt.Errorf("prompt calibration: %v words counted %v tokens, not a straight line (does the server truncate prompts?)", w, counts)
	}
	return result.Calibration{Overhead: float64(counts[0]) - tpw*float64(w[0]), TokensPerWord: tpw}, nil
}
