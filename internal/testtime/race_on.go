//go:build race

package testtime

// raceDetector reports whether the race detector is on.
const raceDetector = true
