//go:build race

package simfit

// raceEnabled: the race detector slows the fits' replays about tenfold,
// so TestRecover fits one hidden profile of each kind instead of two.
const raceEnabled = true
