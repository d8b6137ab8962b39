package tests

import "testing"

func TestNoExitSleepTurnsTheRaceRuntimesSleepAtExitOff(t *testing.T) {
	for _, tt := range []struct{ name, gorace, want string }{
		{"without GORACE the sleep is off", "", "atexit_sleep_ms=0"},
		{"other options are kept", "halt_on_error=1 log_path=race.log", "atexit_sleep_ms=0 halt_on_error=1 log_path=race.log"},
		{"a sleep the user set wins", "atexit_sleep_ms=500", "atexit_sleep_ms=500"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := noExitSleep(tt.gorace); got != tt.want {
				t.Errorf("noExitSleep(%q) = %q, want %q", tt.gorace, got, tt.want)
			}
		})
	}
}
