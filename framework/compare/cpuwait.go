package compare

import (
	"fmt"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
)

// A launched server that shares the runner waits for a CPU whenever the
// runner's other work holds it, and a wait on a request's own path adds
// to its latency. Per trial that is no reason to discard it (a server
// beside two CPU hogs waits most of the time it wants a CPU and its
// figures still hold: see runner/serverproc.go), but against a baseline
// recorded on a quieter machine a small latency move can be the runner's
// doing: beside two hogs TTFT P50 rose 5.3% in every trial of an
// unchanged run, past a 5% band, while its TPOT did not move.
//
// So a regression of a latency figure is held against the server's extra
// wait for a CPU, where both sides recorded it: the candidate's wait per
// request (per output token, for TPOT and ITL) over the baseline's. When
// the figure, less that excess, is back inside its band, the move is of
// the size the machine alone could cause, and the verdict is
// inconclusive, not a regression. Measured with the gate suite launched
// beside two hogs: an unchanged candidate waited 7-15 ms per request more
// than its quiet baseline (TTFT moved 0-8 ms), 0.1-0.2 ms per output
// token (TPOT moved by 0); a 10% slower step moved TPOT 2.2 ms, which no
// such excess explains, so it is still caught.

// cpuWait is the server's wait for a CPU on both sides of a point, per
// request it served, in milliseconds, and the candidate's mean output
// tokens per answer; nil where either side did not record it (a server
// not on this machine, a file before it), or where the candidate's
// server used far more CPU per request than the baseline's: a change
// that makes the server hungrier for CPU waits for it more by its own
// doing, and its slowdown is the change's.
type cpuWait struct {
	base, cand float64
	tokens     float64
}

// HungrierCPU is how much more CPU per request the candidate's server
// may use than the baseline's and still have its extra wait put on the
// runner. Beside two hogs the launched simulator used 0.70 to 1.01 times
// its quiet baseline's CPU per request (four trials each, five runs).
const HungrierCPU = 1.5

// cpuWaits reads a point's trials; a model of a mix is judged by its
// point's whole wait, which all its models shared.
func cpuWaits(base, cand []*result.Point) *cpuWait {
	bw, bc, bOK := serverWait(base)
	cw, cc, cOK := serverWait(cand)
	if !bOK || !cOK || cc > HungrierCPU*bc {
		return nil
	}
	return &cpuWait{base: bw, cand: cw, tokens: meanOutputTokens(cand)}
}

// explains says why a latency regression of m may be the runner's CPU
// rather than the change ("" when it cannot be).
func (w *cpuWait) explains(m Metric, row Row, bands map[string]metric.Band) string {
	if w == nil || row.Verdict != Regression || w.cand <= w.base {
		return ""
	}
	if m.def.Kind != metric.Latency || m.Unit != "ms" || m.key.Metric == metric.Lag {
		return "" // the client's own lateness is judged by the client's canary
	}
	unit, bw, cw := "request", w.base, w.cand
	if m.key.Metric == metric.TPOT || m.key.Metric == metric.ITL {
		// A token's gap is delayed by its share of a wait, not by the
		// whole request's.
		if w.tokens <= 0 {
			return ""
		}
		unit, bw, cw = "output token", bw/w.tokens, cw/w.tokens
	}
	excess := cw - bw
	b, _ := band(m, bands)
	if left := row.Cand - excess; left > row.Base && !withinBand(b, m.Unit, row.Base, left) {
		return ""
	}
	return fmt.Sprintf("but the server's processes waited for a CPU %s ms per %s here against %s ms in the baseline: "+
		"the %s ms more covers this figure's move past its band, so the runner's other work, not the change, may have moved it; rerun on a quieter runner",
		plain(cw), unit, plain(bw), plain(excess))
}

// serverWait is the server's wait for a CPU and its CPU time per
// request it served over the trials; false where a trial did not record
// them.
func serverWait(ps []*result.Point) (wait, cpu float64, ok bool) {
	var served int
	for _, p := range ps {
		if p.Validity == nil || p.Validity.Server == nil || p.Validity.Server.CPUMs <= 0 {
			return 0, 0, false
		}
		wait += max(0, p.Validity.Server.WaitMs)
		cpu += p.Validity.Server.CPUMs
		// The watch spans the point's warm-up too, and so do these.
		served += p.Requests.Sent + p.Requests.Warmup
	}
	if served == 0 {
		return 0, 0, false
	}
	return wait / float64(served), cpu / float64(served), true
}

// meanOutputTokens is the trials' mean output tokens per answer.
func meanOutputTokens(ps []*result.Point) float64 {
	var sum float64
	var n int64
	for _, p := range ps {
		sum += p.Tokens.Output.Mean * float64(p.Tokens.Output.Count)
		n += p.Tokens.Output.Count
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// judged is row, made inconclusive where the server's extra wait for a
// CPU explains its regression.
func (w *cpuWait) judged(m Metric, row Row, bands map[string]metric.Band) Row {
	if why := w.explains(m, row, bands); why != "" {
		row.Verdict = Inconclusive
		row.Test += "; " + why
	}
	return row
}
