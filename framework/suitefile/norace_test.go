//go:build !race

package suitefile

const raceEnabled = false
