package runner

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/engine"
	"github.com/benchci/benchci/internal/target"
	"github.com/benchci/benchci/internal/tokenizer"
	"github.com/benchci/benchci/internal/workload"
)

// session is an opened target with a client that speaks to it: opened,
// preflighted, recognized and warmed up, and relaunched when the suite
// asks for a fresh server per point. close always stops it.
type session struct {
	st   suite.Target
	topt target.Options
	tg   *target.Target
	cl   *client.Client
	// tok counts tokens offline; tokName names it.
	tok     client.Counter
	tokName string
	// metrics says whether the server serves Prometheus /metrics;
	// waitingBlind what its waiting gauge does not count (engine.Profile).
	metrics      bool
	waitingBlind string
	// listener is the process serving a local url target (0: none found,
	// or the target is not one); see findListener.
	listener int
}

func openSession(ctx context.Context, s *suite.Suite, serverLog string, f *result.File) (*session, error) {
	sess := &session{st: s.Target, topt: target.Options{ServerLog: serverLog}, tokName: s.Tokenizer}
	if sess.tokName == "" {
		sess.tokName = "words"
	}
	tok, err := tokenizer.Get(sess.tokName)
	if err != nil {
		return nil, err
	}
	sess.tok = tok
	if sess.tg, err = target.Open(ctx, s.Target, sess.topt); err != nil {
		return nil, err
	}
	f.Target = sess.tg.Info
	if s.Target.Kind == suite.TargetURL {
		var note string
		sess.listener, note = findListener(sess.tg.Info.URL)
		if note != "" {
			f.Notes = append(f.Notes, note)
		}
	}
	copts := client.Options{
		KeepText:  s.Workload.Structured != nil,
		Counter:   tok,
		BaseURL:   sess.tg.Info.URL,
		API:       client.API(s.API),
		Model:     sess.tg.Info.Model,
		APIKey:    sess.tg.APIKey,
		IgnoreEOS: s.Request.IgnoreEOS,
		Extra:     s.Request.Extra,
		Timeout:   s.Request.Timeout.D(),
	}
	if to := s.Request.Timeouts; to != nil {
		copts.ConnectTimeout, copts.FirstTokenTimeout, copts.IdleTimeout = to.Connect.D(), to.FirstToken.D(), to.Idle.D()
	}
	sess.cl, err = client.New(copts)
	if err != nil {
		sess.tg.Close()
		return nil, err
	}
	if err := preflight(ctx, sess.cl); err != nil {
		sess.close(f)
		return nil, fmt.Errorf("target %s: %w", sess.tg.Info.URL, err)
	}
	eng := engine.Detect(ctx, sess.tg.Info.URL)
	f.Engine = &result.Engine{Name: eng.Name, Version: eng.Version, Metrics: eng.Metrics, Quirks: eng.Quirks}
	sess.metrics = eng.Metrics
	prof, known := engine.Lookup(eng.Name)
	sess.waitingBlind = prof.WaitingBlind
	sess.cl.SetContinuousUsage(known && prof.ContinuousUsage)
	sess.cl.SetUntextedTokens(prof.UntextedTokens)
	sent := &result.Sent{IgnoreEOS: s.Request.IgnoreEOS, ContinuousUsage: known && prof.ContinuousUsage}
	if known && s.Request.IgnoreEOS && !prof.IgnoreEOS {
		// The engine does not take ignore_eos: sending it risks a 400 from
		// strict servers, and lengths may now vary; the result says so.
		sess.cl.SetIgnoreEOS(false)
		sent.IgnoreEOS = false
		f.Notes = append(f.Notes, eng.Name+" does not support ignore_eos: output lengths may fall short of the request")
	}
	f.Sent = sent
	if eng.Placeholder != "" {
		f.Notes = append(f.Notes, fmt.Sprintf("%s reported version %q, a placeholder (a build without version information): recorded as unknown", eng.Name, eng.Placeholder))
	}
	if err := sess.warm(ctx); err != nil {
		sess.close(f)
		return nil, err
	}
	return sess, nil
}

// perPoint reports whether every point gets a fresh server.
func (sess *session) perPoint() bool {
	return sess.st.Launch != nil && sess.st.Launch.Per == "point"
}

// relaunch stops the server and starts a fresh one, warmed up again.
func (sess *session) relaunch(ctx context.Context) error {
	sess.tg.Close()
	tg, err := target.Open(ctx, sess.st, sess.topt)
	if err != nil {
		sess.tg = &target.Target{}
		return fmt.Errorf("relaunch: %w", err)
	}
	sess.tg = tg
	return sess.warm(ctx)
}

// warm sends a launched server's warm-up requests.
func (sess *session) warm(ctx context.Context) error {
	if sess.st.Launch == nil {
		return nil
	}
	return warmup(ctx, sess.cl, sess.st.Launch.WarmupRequests)
}

// close stops the target and records what the run learned about it: where
// chunk times came from, and a dead server's last words. It returns an
// error when a launched server had died before it was stopped.
func (sess *session) close(f *result.File) error {
	sess.cl.CloseIdle()
	timing(f, sess.cl.Timing())
	if sess.cl.ClosesAfterResponse() {
		f.Notes = append(f.Notes, "the server closed every connection after its response (while announcing keep-alive), so benchci stopped reusing connections: each request's TTFT includes a TCP connect, as it would for any client of this server")
	}
	var died error
	if p := sess.tg.Process; p != nil && p.Exited() {
		f.ServerLog = p.Tail(30)
		died = errors.New("the launched server exited during the run; its last lines are in the results (server_log)")
	}
	sess.tg.Close()
	return died
}

// warmup sends n short requests, unmeasured, to a freshly started server.
func warmup(ctx context.Context, cl *client.Client, n int) error {
	body, err := cl.Body("", workload.Prompt(64, rand.New(rand.NewPCG(1, 1))), 16)
	if err != nil {
		return err
	}
	var res client.Result
	for i := range n {
		cl.Do(ctx, body, "benchci-warmup", &res)
		if !res.OK() {
			return fmt.Errorf("warm-up request %d of %d failed (%s): %s", i+1, n, res.Err, res.Detail)
		}
	}
	return nil
}

// PreflightTimeout bounds the preflight's three tries together: time for
// a cold server's first answer of two tokens.
var PreflightTimeout = 2 * time.Minute

var errPreflightTimeout = errors.New("preflight timed out")

// preflight sends one short request so that a wrong URL, model or key fails
// the run at once with the server's own words, not as 100% errors later.
// It tries three times: one failure of a flaky server is the benchmark's
// to measure, not a reason to refuse it.
func preflight(ctx context.Context, cl *client.Client) error {
	body, err := cl.Body("", "Say hello.", 2)
	if err != nil {
		return err
	}
	// A server that never finishes (streams forever, or holds the
	// connection) fails the preflight within its deadline, not after
	// three request timeouts.
	ctx, cancel := context.WithTimeoutCause(ctx, PreflightTimeout, errPreflightTimeout)
	defer cancel()
	var res client.Result
	for range 3 {
		cl.Do(ctx, body, "benchci-preflight", &res)
		if errors.Is(context.Cause(ctx), errPreflightTimeout) {
			return fmt.Errorf("preflight: no answer of 2 tokens within %v (%s: %s); is the server up and streaming?", PreflightTimeout, res.Err, res.Detail)
		}
		if res.OK() {
			return nil
		}
		if res.Err == client.ErrCanceled {
			return errors.New("stopped")
		}
	}
	return fmt.Errorf("preflight request failed (%s): %s", res.Err, res.Detail)
}

// timing records where the run's chunk times came from, with a note when
// many were read times, which include the client's own delays.
func timing(f *result.File, t client.Timing) {
	total := t.Kernel + t.Read
	switch {
	case total == 0:
		return
	case t.Read == 0:
		f.Tool.Timing = "kernel receive stamps"
		return
	case t.Kernel == 0:
		f.Tool.Timing = "read times"
	default:
		f.Tool.Timing = fmt.Sprintf("kernel receive stamps for %.1f%% of chunks, read times for the rest", 100*float64(t.Kernel)/float64(total))
	}
	// The first packets on a machine can miss their stamp; a few are no
	// cause for a caveat.
	if float64(t.Read) > 0.01*float64(total) {
		f.Notes = append(f.Notes, "chunk times are the times reads returned, not kernel receive stamps (not Linux, or stamps unavailable): under heavy client load, TTFT and ITL include the client's own delay")
	}
}
