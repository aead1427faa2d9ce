//go:build race

package simfit

// raceEnabled: the race detector slows the fits' replays about tenfold,
// so TestRecover fits one hidden profile (the quickest) instead of four,
// on synthetic points of 500 requests, not 1,500 (593 s was 1,500's
// under -race on 2 cores; 34 s without the detector).
const (
	raceEnabled   = true
	synthRequests = 500
)
