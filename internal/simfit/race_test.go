//go:build race

package simfit

// raceEnabled: the race detector slows the fits' replays about tenfold,
// so TestRecover fits one hidden profile (the quickest) instead of four.
const raceEnabled = true
