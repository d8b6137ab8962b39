package testtime

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"time"
)

// EnvVar is the environment variable that scales the tests' budgets.
const EnvVar = "DSH_TEST_TIMESCALE"

// RaceScale is the scale when [EnvVar] is unset and the race detector is on.
const RaceScale = 2

// Scale returns the factor every scaled budget is multiplied by: [EnvVar]
// when it is set, else [RaceScale] under the race detector, else 1. It
// panics when [EnvVar] is set to something other than a positive number,
// so that a mistyped knob is never silently ignored.
func Scale() float64 {
	v, set := os.LookupEnv(EnvVar)
	if !set || v == "" {
		if raceDetector {
			return RaceScale
		}
		return 1
	}
	s, err := Parse(v)
	if err != nil {
		panic(err)
	}
	return s
}

// ScaleWithoutRace is [Scale] for the budgets of a program built without
// the race detector (the dsh binary that end-to-end tests build and run):
// [EnvVar] when it is set, else 1, as the detector does not slow that
// program down.
func ScaleWithoutRace() float64 {
	if v, set := os.LookupEnv(EnvVar); set && v != "" {
		return Scale()
	}
	return 1
}

// Parse reads a scale: a finite number greater than zero.
func Parse(v string) (float64, error) {
	s, err := strconv.ParseFloat(v, 64)
	if err != nil || s <= 0 || math.IsInf(s, 0) || math.IsNaN(s) {
		return 0, fmt.Errorf("%s=%q: the scale must be a positive number", EnvVar, v)
	}
	return s, nil
}

// D returns d multiplied by [Scale], rounded to the millisecond (budgets
// show in messages as whole milliseconds), and never less than 1ms.
func D(d time.Duration) time.Duration {
	return time.Duration(Ms(d.Milliseconds())) * time.Millisecond
}

// Ms returns a budget of ms milliseconds multiplied by [Scale], rounded to
// the nearest millisecond and never less than 1: the form of a budget in a
// script's timeoutMs, a --ptc-compute-ms flag or a message.
func Ms(ms int64) int64 {
	return max(1, int64(math.Round(float64(ms)*Scale())))
}
