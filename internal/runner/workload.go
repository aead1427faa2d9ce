package runner

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/loadgen"
	"github.com/benchci/benchci/internal/structured"
	"github.com/benchci/benchci/internal/target"
	"github.com/benchci/benchci/internal/workload"
)

// prepared is the suite's workload, ready to draw from: data files read
// and prompts calibrated against the target. Every point draws the same
// request sequence from it, from its start.
type prepared struct {
	w    suite.Workload
	srcs workload.Sources
	cl   *client.Client
	// calFailed says why the prompt calibration failed ("": it did not).
	calFailed string
}

// prepare reads the workload's data files and calibrates synthetic prompts
// on the session's server, recording the fit in f. The generator is built
// once here so that a dataset or calibration problem fails the run before
// any point starts.
func prepare(ctx context.Context, s *suite.Suite, sess *session, f *result.File, shared *SharedCalibration, drawn string) (*prepared, error) {
	w := s.Workload
	srcs, err := loadSources(s)
	if err != nil {
		return nil, err
	}
	srcs.Salt = PromptSalt(w.Prompts.Salt, drawn, s.Name)
	f.PromptSalt = srcs.Salt
	var calFailed string
	if cal, from, ok := shared.get(); ok && w.Prompts.Calibrate && w.Prompts.Kind.Synthetic() {
		// Measured on another variant: every variant is sent the same
		// prompts, whatever its own tokenizer would make of them.
		cal.Note = "measured on " + from + " and used for every variant, so that all are sent the same prompts"
		f.Calibration = &cal
		srcs.Calibration = workload.Calibration{Overhead: cal.Overhead, TokensPerWord: cal.TokensPerWord}
	} else if w.Prompts.Calibrate && w.Prompts.Kind.Synthetic() {
		cal, err := calibrate(ctx, sess.cl, calibrationRetry(s))
		if errors.Is(err, errCalibrationFailed) {
			// Said with the figures, not only in the results file: every
			// prompt of the run is sized by the fallback, so its lengths
			// miss the suite's by the server's template tokens or more.
			fallback := "prompts are sized at one token per word with no chat template tokens, so each may miss its length by the template's tokens and the tokenizer's difference from one per word"
			if sess.tokName != "words" {
				fallback = "prompts are sized with tokenizer " + sess.tokName + ", which cannot see the chat template, so each is longer than asked by the template's tokens"
			}
			calFailed = err.Error()
			f.Notes = append(f.Notes, calFailed+": "+fallback)
		}
		if err != nil && sess.tokName != "words" {
			// No usage from the server: size prompts with the suite's
			// tokenizer instead, which cannot see the chat template.
			cal = calibrateOffline(sess.tok)
			cal.Note = err.Error() + "; sized with tokenizer " + sess.tokName + " instead (chat template tokens not included)"
			err = nil
		}
		f.Calibration = &cal
		if err != nil {
			f.Calibration.Note = err.Error()
		} else {
			srcs.Calibration = workload.Calibration{Overhead: cal.Overhead, TokensPerWord: cal.TokensPerWord}
		}
		shared.set(cal, s.RunName(), err == nil)
	}
	if c := f.Calibration; c != nil && c.MinPromptTokens > 0 {
		if note, err := floorNote(s, c.MinPromptTokens); err != nil {
			return nil, err
		} else if note != "" {
			f.Notes = append(f.Notes, note)
		}
	}
	if _, err := workload.NewGenerator(w, srcs); err != nil {
		return nil, err
	}
	return &prepared{w: w, srcs: srcs, cl: sess.cl, calFailed: calFailed}, nil
}

// PromptSalt is the salt a run draws its prompts' text with: the suite's
// fixed one, or for "run" one made from the salt drawn for this command
// and the suite's name (its variants share it), so two suites of one
// command that draw alike (one seed, one length distribution) still send
// different text; DrawSalt when the caller drew none.
func PromptSalt(suiteSalt, drawn, suiteName string) string {
	if suiteSalt != suite.SaltPerRun {
		return suiteSalt
	}
	if drawn == "" {
		return DrawSalt()
	}
	sum := sha256.Sum256([]byte(drawn + "\x00" + suiteName))
	return hex.EncodeToString(sum[:8])
}

// DrawSalt returns a fresh salt: 64 random bits in hex, which a suite can
// name as its fixed salt to send a run's text again.
func DrawSalt() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// loadSources reads the workload's data files: its trace and dataset.
func loadSources(s *suite.Suite) (workload.Sources, error) {
	w := s.Workload
	srcs := workload.Sources{NoOutput: s.API == suite.APIEmbeddings}
	var err error
	if w.Arrival.Kind == suite.ArrivalTrace {
		if srcs.Trace, err = workload.LoadTrace(w.Arrival.Path); err != nil {
			return srcs, err
		}
	}
	if w.Prompts.Kind.Dataset() {
		if srcs.Dataset, err = workload.LoadDataset(w.Prompts.Kind, w.Prompts.Path); err != nil {
			return srcs, err
		}
	}
	return srcs, nil
}

// source returns the request sequence from its start, for the point-th
// point of the run (trials counted). asText hands over text requests as
// loadgen.Text rather than bodies, for a virtual server.
func (wl *prepared) source(point int, asText bool) (loadgen.Source, error) {
	srcs := wl.srcs
	srcs.Point = point
	gen, err := workload.NewGenerator(wl.w, srcs)
	if err != nil {
		return nil, err
	}
	return func() (loadgen.Item, error) { return item(wl.cl, gen.Next(), wl.w.Structured, asText) }, nil
}

// item builds the bodies of a request and of its session's later turns.
func item(cl *client.Client, r workload.Request, st *suite.Structured, asText bool) (loadgen.Item, error) {
	var msgs []client.Message
	if r.System != "" {
		msgs = append(msgs, client.Message{Role: "system", Content: r.System})
	}
	msgs = append(msgs, r.History...)
	msgs = append(msgs, client.Message{Role: "user", Content: r.Prompt, Images: r.Images})
	if asText {
		if t := text(cl, msgs, r); t != nil {
			it := loadgen.Item{Text: t, WantInput: r.InputTokens, WantOutput: r.OutputTokens, Think: r.Think, AbandonAfter: r.AbandonAfter, AbandonAt: r.AbandonAt, Model: r.Model}
			return withFollowUps(it, cl, r, st, asText)
		}
	}
	if cl.API() == client.Embeddings {
		inputs := append([]string{strings.TrimSpace(r.System + " " + r.Prompt)}, r.Inputs...)
		body, err := cl.BodyEmbeddings(r.Model, inputs)
		if err != nil {
			return loadgen.Item{}, err
		}
		return loadgen.Item{Body: body, WantInput: r.InputTokens, Model: r.Model, Inputs: len(inputs)}, nil
	}
	body, err := cl.BodyModel(r.Model, msgs, r.OutputTokens)
	if err != nil {
		return loadgen.Item{}, err
	}
	want := r.OutputTokens
	if r.Structured {
		if body, err = withStructured(body, st); err != nil {
			return loadgen.Item{}, err
		}
		want = 0 // a structured answer ends when it is complete
	}
	images := len(r.Images) // in the request and in the history it resends
	for _, m := range r.History {
		images += len(m.Images)
	}
	it := loadgen.Item{Body: body, WantInput: r.InputTokens, WantOutput: want, Think: r.Think, AbandonAfter: r.AbandonAfter, AbandonAt: r.AbandonAt, Model: r.Model, Images: images,
		Structured: r.Structured}
	return withFollowUps(it, cl, r, st, asText)
}

func withFollowUps(it loadgen.Item, cl *client.Client, r workload.Request, st *suite.Structured, asText bool) (loadgen.Item, error) {
	for _, f := range r.FollowUps {
		next, err := item(cl, f, st, asText)
		if err != nil {
			return loadgen.Item{}, err
		}
		it.FollowUps = append(it.FollowUps, next)
	}
	return it, nil
}

// text is the request of msgs (the turn's, its own last), as the body
// BodyModel builds would say it, or nil where a body says more than a
// Text can: images, a structured answer, embeddings, or the suite's
// extra fields.
func text(cl *client.Client, msgs []client.Message, r workload.Request) *loadgen.Text {
	if cl.API() == client.Embeddings || cl.HasExtra() || r.Structured {
		return nil
	}
	t := &loadgen.Text{Chat: cl.API() == client.Chat, MaxTokens: r.OutputTokens}
	if !t.Chat {
		t.Texts = []string{client.Joined(msgs)}
	}
	for _, m := range msgs {
		if len(m.Images) > 0 {
			return nil
		}
		if t.Chat {
			t.Roles, t.Texts = append(t.Roles, m.Role), append(t.Texts, m.Content)
		}
	}
	return t
}

// withStructured adds a tool with a forced call, or a JSON response
// format, to a chat body (off the timed path).
func withStructured(body []byte, st *suite.Structured) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	switch st.Kind {
	case structured.ToolCall:
		m["tools"] = []any{map[string]any{"type": "function", "function": map[string]any{
			"name": st.Name, "description": "Answer by calling " + st.Name + ".", "parameters": st.Schema}}}
		m["tool_choice"] = map[string]any{"type": "function", "function": map[string]any{"name": st.Name}}
	case structured.JSONSchema:
		m["response_format"] = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": st.Name, "schema": st.Schema, "strict": true}}
	}
	// A structured answer ends when it is complete, not at max_tokens.
	delete(m, "ignore_eos")
	delete(m, "min_tokens")
	return json.Marshal(m)
}

// PromptFloorWarning is what validate can say of prompt lengths below
// the shortest prompt a suite's target takes, before any run: for the
// simulator, whose chat template is known. Elsewhere the template is the
// model's, which only the run measures (calibration), and says the same
// there; "" when nothing is known or nothing is below.
func PromptFloorWarning(s *suite.Suite) (string, error) {
	if s.Target.Kind != suite.TargetSim || s.API != suite.APIChat {
		return "", nil
	}
	p, _, err := target.SimProfile(&s.Target)
	if err != nil {
		return "", err
	}
	floor := p.MinChatPromptTokens()
	n := floorDraws
	if s.Sweep.Requests > 0 {
		n = s.Sweep.Requests
	}
	share, ok, err := workload.ShareBelow(s.Workload, floor, n)
	if err != nil || !ok || share == 0 {
		return "", err
	}
	return fmt.Sprintf("%s of requests ask for fewer prompt tokens than the shortest chat prompt the simulator takes (%d: one word in its %d-token chat template and the assistant header): they will be sent %d tokens or more, longer than workload.input_tokens states",
		percent(share), floor, p.ChatTemplateTokens, floor), nil
}

// floorDraws is how many requests' lengths floorNote judges when the
// sweep does not say how many it sends: enough for a share to 1%.
const floorDraws = 10000

// floorNote says what share of the suite's requests ask for fewer prompt
// tokens than floor, the shortest prompt the server takes ("": none).
// Those are sent floor tokens or more, and the prompts delivered sit
// above the suite's distribution; only the generic "N% of prompts more
// than 5% off" note hinted at it before.
func floorNote(s *suite.Suite, floor int) (string, error) {
	n := floorDraws
	if s.Sweep.Requests > 0 {
		n = s.Sweep.Requests // every point sends these same lengths
	}
	share, ok, err := workload.ShareBelow(s.Workload, floor, n)
	if err != nil || !ok || share == 0 {
		return "", err
	}
	return fmt.Sprintf("%s of requests ask for fewer prompt tokens than the shortest prompt this server takes (%d tokens: one word in its chat template, measured at calibration): they are sent %d tokens or more, so the prompts delivered (tokens.prompt) are longer than workload.input_tokens states",
		percent(share), floor, floor), nil
}

// percent prints a share as a percentage, to one decimal below 10%.
func percent(share float64) string {
	if share < 0.1 {
		return fmt.Sprintf("%.1f%%", 100*share)
	}
	return fmt.Sprintf("%.0f%%", 100*share)
}
