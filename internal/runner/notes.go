package runner

import (
	"fmt"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/offered"
)

// pointNotes are the caveats a reader of one point's figures needs: where
// the figures describe something other than what the row's label says.
// shards is how many machines share the point's load (1: this one alone).
func pointNotes(s *suite.Suite, p *result.Point, shards int) []string {
	var notes []string
	secs := p.Window.Seconds
	if e2e := p.Latency[metric.E2E].P50 / 1000; secs > 0 && e2e > secs && p.Requests.Completed > 0 {
		notes = append(notes, fmt.Sprintf("the median request took %.3g s, longer than the %.3g s window: request throughput counts answers that ended inside the window, so it undercounts this point (sent %.3g req/s, completed %.3g req/s in the window)",
			e2e, secs, p.Schedule.SendRate, p.Throughput.Requests))
	}
	if sh := p.Tokens.SpreadShare(); sh > result.MaxCoalescedShare {
		notes = append(notes, fmt.Sprintf("%.1f%% of chunk gaps came several to a socket read (the client fell behind the streams, or the server wrote several chunks at once): ITL gives each of a read's gaps an equal share of its time since the read before, which keeps every gap and the streams' pace (the mean is vLLM's) but not how unevenly that time divided",
			100*sh))
	}
	if sh := p.Tokens.CoalescedShare(); sh > result.MaxCoalescedShare {
		notes = append(notes, fmt.Sprintf("%.1f%% of chunk gaps came inside an answer's first socket read, with no earlier arrival to time them from (the client read the first chunks late, or the server wrote them at once): they are kept out of ITL, which describes the other %.1f%%",
			100*sh, 100*(1-sh)))
	}
	if n := offered.Note(s, p, shards); n != "" {
		notes = append(notes, n)
	}
	return notes
}

// serverOverhead is the client's mean TTFT minus the server's own, where
// the server reports it: the network, any gateway and the client. A
// saturated point's answers are the early ones, while the server's mean
// covers its whole queue: no overhead can be read from the two. Nor from
// a difference below zero, which no request can have (the client's clock
// starts before the server's and stops after it): the two means then
// differ in what they cover (the server's includes the warm-up requests)
// or in how they are stamped, by more than the overhead itself, and the
// note says so instead of printing a negative overhead.
func serverOverhead(p *result.Point) (*result.Overhead, string) {
	st, ok := p.Server["server_ttft_mean_s"]
	ttft := p.Latency[metric.TTFT]
	if !ok || ttft.Count == 0 || p.Schedule.Saturation != "" {
		return nil, ""
	}
	d := ttft.Mean - st*1000
	if d < 0 && -d <= max(1, 0.05*ttft.Mean) {
		// Within the two means' own noise (they count different
		// requests' first tokens at different instants): nothing to read,
		// and nothing worth a reader's alarm.
		return nil, ""
	}
	if d < 0 {
		return nil, fmt.Sprintf("the client's TTFT mean (%.2f ms) is %.2f ms below the server's own (%.2f ms), which no request can be: the two differ in what they cover (the server's mean may include requests outside the window, and its own queue accounting) or in their clocks, so the network, gateway and client overhead cannot be read from them",
			ttft.Mean, -d, st*1000)
	}
	return &result.Overhead{TTFTMeanMs: d}, ""
}
