//go:build race

package suitefile

// raceEnabled: the race detector multiplies a process's memory (its
// shadow memory), so memory bounds measured in tests are scaled by it.
const raceEnabled = true
