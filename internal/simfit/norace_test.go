//go:build !race

package simfit

const raceEnabled = false
