package loadgen

import (
	"fmt"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/stall"
)

// What makes a point's measurement invalid: the figures then describe
// this machine, not the server. Each limit is loose enough that a busy
// 2-core runner with neighbours stays under it, and tight enough that a
// stall that moves a tail percentile is over it.
const (
	// MinValidSendRatio: a client that sent less than this share of its
	// schedule offered the server another load than the point's.
	MinValidSendRatio = 0.95
	// MinLagLimit and LagShare: a send later than a quarter of the typical
	// time between sends (1/rate open loop; the median E2E closed loop,
	// where a worker sends as its last answer ends), or 25 ms, reshapes
	// the arrivals the server sees; less hardly changes them.
	MinLagLimit = 25 * time.Millisecond
	LagShare    = 0.25
	// MaxStallShare and MinStallLimit: the process stood still for more
	// than this share of the point, and more than 50 ms in all (the
	// canary's late wake-ups): every request in flight then took the
	// stall into its latency, and with the embedded simulator the server
	// stood still too. The floor keeps one scheduling hiccup from voiding
	// a short point.
	MaxStallShare = 0.01
	MinStallLimit = 50 * time.Millisecond
	// MinSendsJudged: the send ratio is judged over at least this many
	// scheduled sends, so that one send slipping past the window's end
	// is not 5%.
	MinSendsJudged = 20
	// MaxStealShare: a virtual machine whose hypervisor took more than this
	// share of its CPU ran the client (and any local server) at another speed.
	MaxStealShare = 0.05
	// MaxCoalescedFirstShare: more first tokens than this share were read
	// late, together with the next chunk, while the client shows it fell
	// behind (a stall, or a send lag over 10 ms); their TTFTs are left out,
	// and leaving out more would bias the rest. Without such evidence the
	// chunks came together (a server's or a proxy's framing): not the
	// client's doing.
	MaxCoalescedFirstShare = 0.05
	behindLag              = 10 * time.Millisecond
)

// judgeValidity lists the evidence that a point did not measure the
// server; none: it did. lagP99 is the send lag judged, in ms (the caller's:
// 0 where sends wait by design); gap is the typical time between sends; fdCapped,
// that sends waited for the cap derived from this machine's descriptor
// limit; suiteCapped, that sends waited for the suite's own
// max_concurrency, so that a send rate short of the schedule is the
// server's slowness, not the client's (their waits are not in the lag).
func judgeValidity(m result.Measured, s result.Schedule, lagP99 float64, gap time.Duration, fdCapped, suiteCapped bool, r stall.Reading) result.Validity {
	v := result.Validity{StallMs: ms(r.Stalled), MaxStallMs: ms(r.Longest)}
	if r.Steal > 0 {
		v.StealShare = r.Steal
	}
	// A client that fell behind says what held it, where this machine
	// tells: the process standing still (reported below), else its CPU.
	stalled := r.Span > 0 && r.Stalled > max(MinStallLimit, time.Duration(MaxStallShare*float64(r.Span)))
	lacked := func(what string) string {
		if stalled {
			return what + ": the process stood still"
		}
		if cpu := r.CPUShort(); cpu != "" {
			return what + ": " + cpu
		}
		return what
	}
	if s.ScheduledRate*m.Window.Seconds >= MinSendsJudged && !suiteCapped && s.SendRate < MinValidSendRatio*s.ScheduledRate {
		v.Invalid = append(v.Invalid, lacked(fmt.Sprintf("sent %.1f of %.1f req/s scheduled", s.SendRate, s.ScheduledRate)))
	}
	limit := max(MinLagLimit, time.Duration(LagShare*float64(gap)))
	if lagP99 > ms(limit) {
		v.Invalid = append(v.Invalid, lacked(fmt.Sprintf("send lag P99 %s (limit %s)", fmtMs(lagP99), fmtMs(ms(limit)))))
	}
	if m.Requests.ClientLimited > 0 {
		v.Invalid = append(v.Invalid, fmt.Sprintf("%d requests failed on this machine's own limits (%s)", m.Requests.ClientLimited, m.Requests.ClientLimitError))
	}
	if fdCapped {
		v.Invalid = append(v.Invalid, fmt.Sprintf("%d sends waited for the cap on requests in flight that this machine's descriptor limit set", s.CapWaits))
	}
	if stalled {
		v.Invalid = append(v.Invalid, fmt.Sprintf("the machine stalled %s in %d pauses (longest %s) over %s",
			fmtMs(ms(r.Stalled)), r.Count, fmtMs(ms(r.Longest)), r.Span.Round(100*time.Millisecond)))
	}
	if r.Steal > MaxStealShare {
		v.Invalid = append(v.Invalid, fmt.Sprintf("the hypervisor took %.0f%% of this machine's CPU (steal)", 100*r.Steal))
	}
	behind := r.Count > 0 || lagP99 > ms(behindLag)
	if n, all := m.Tokens.CoalescedFirst, m.Tokens.CoalescedFirst+int(m.Latency[metric.TTFT].Count); behind && n > 0 && float64(n) > MaxCoalescedFirstShare*float64(all) {
		v.Invalid = append(v.Invalid, fmt.Sprintf("%d of %d first tokens were read late, in one read with the next chunk (send lag P99 %s, longest stall %s)",
			n, all, fmtMs(lagP99), fmtMs(ms(r.Longest))))
	}
	return v
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fmtMs prints milliseconds as a person reads them: "3.44 s", "26.6 ms".
func fmtMs(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2f s", v/1000)
	}
	return fmt.Sprintf("%.1f ms", v)
}
