//go:build race

package tests

// raceEnabled reports whether the tests run with the race detector.
const raceEnabled = true
