//go:build !race

package simfit

const (
	raceEnabled   = false
	synthRequests = 1500
)
