package testtime

import (
	"os"
	"testing"
	"time"
)

func TestScale(t *testing.T) {
	unset := 1.0
	if raceDetector {
		unset = RaceScale
	}
	tests := []struct {
		name  string
		env   string
		set   bool
		scale float64
		d     time.Duration // D(250ms)
		ms    int64         // Ms(50)
		bare  float64       // ScaleWithoutRace()
	}{
		{name: "unset, the scale is 1 (RaceScale under the race detector, not for a program built without it)", scale: unset, d: time.Duration(250*unset) * time.Millisecond, ms: int64(50 * unset), bare: 1},
		{name: "empty counts as unset", set: true, scale: unset, d: time.Duration(250*unset) * time.Millisecond, ms: int64(50 * unset), bare: 1},
		{name: "3 triples every budget", env: "3", set: true, scale: 3, d: 750 * time.Millisecond, ms: 150, bare: 3},
		{name: "a fraction shortens them", env: "0.5", set: true, scale: 0.5, d: 125 * time.Millisecond, ms: 25, bare: 0.5},
		{name: "a scaled budget is rounded to the millisecond", env: "1.337", set: true, scale: 1.337, d: 334 * time.Millisecond, ms: 67, bare: 1.337},
		{name: "a budget never scales below 1ms", env: "0.001", set: true, scale: 0.001, d: time.Millisecond, ms: 1, bare: 0.001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.set {
				t.Setenv(EnvVar, tt.env)
			} else {
				t.Setenv(EnvVar, "") // so that it is restored after the test
				if err := os.Unsetenv(EnvVar); err != nil {
					t.Fatal(err)
				}
			}
			if got := Scale(); got != tt.scale {
				t.Errorf("Scale() = %v, want %v", got, tt.scale)
			}
			if got := D(250 * time.Millisecond); got != tt.d {
				t.Errorf("D(250ms) = %v, want %v", got, tt.d)
			}
			if got := Ms(50); got != tt.ms {
				t.Errorf("Ms(50) = %v, want %v", got, tt.ms)
			}
			if got := ScaleWithoutRace(); got != tt.bare {
				t.Errorf("ScaleWithoutRace() = %v, want %v", got, tt.bare)
			}
		})
	}
}

func TestParseRefusesWhatIsNotAPositiveNumber(t *testing.T) {
	for _, v := range []string{"0", "-1", "fast", "Inf", "NaN", "2x"} {
		t.Run(v, func(t *testing.T) {
			_, err := Parse(v)
			want := `DSH_TEST_TIMESCALE="` + v + `": the scale must be a positive number`
			if err == nil || err.Error() != want {
				t.Errorf("Parse(%q) = %v, want %s", v, err, want)
			}
		})
	}
}

func TestScalePanicsOnAMistypedKnob(t *testing.T) {
	t.Setenv(EnvVar, "two")
	defer func() {
		want := `DSH_TEST_TIMESCALE="two": the scale must be a positive number`
		r := recover()
		if err, ok := r.(error); !ok || err.Error() != want {
			t.Errorf("Scale() panicked with %v, want %s", r, want)
		}
	}()
	Scale()
	t.Error("Scale() returned")
}
