package ptc

import (
	"errors"
	"math"
	"testing"
)

func TestFailureConstructorsGiveTheSpecMessages(t *testing.T) {
	tests := []struct {
		name string
		got  *Failure
		want Failure
	}{
		{"a thrown error keeps its message", ExceptionFailure("Error: kaboom"), Failure{KindException, "Error: kaboom"}},
		{"an unrenderable throw has the fixed message", UnrenderableThrowFailure(), Failure{KindException, "program threw an unrenderable value"}},
		{"the compute budget names its milliseconds", ComputeBudgetFailure(300), Failure{KindTimeout, "compute budget exhausted (300ms busy)"}},
		{"a fractional compute budget is written as String(n)", ComputeBudgetFailure(0.5), Failure{KindTimeout, "compute budget exhausted (0.5ms busy)"}},
		{"the wall ceiling names its milliseconds", WallCeilingFailure(400), Failure{KindTimeout, "wall-clock ceiling reached (400ms)"}},
		{"an abort carries its reason", AbortFailure("user-cancel"), Failure{KindAbort, "user-cancel"}},
		{"disposal is an abort", DisposedFailure(), Failure{KindAbort, "runtime disposed"}},
		{"a recovered panic is a crash", CrashFailure("nil map"), Failure{KindWorkerExit, "runtime crashed: nil map"}},
		{"a child's exit names its code", WorkerExitFailure(2), Failure{KindWorkerExit, "worker exited with code 2 before completing"}},
		{"a child's kill names its signal", WorkerSignalFailure("SIGKILL"), Failure{KindWorkerExit, "worker killed by signal SIGKILL"}},
		{"a child's memory death names the cap", MemoryLimitFailure(512), Failure{KindWorkerExit, "worker exceeded its memory limit (512 MiB)"}},
		{"a lossy completion is invalid output", InvalidOutputFailure(), Failure{KindInvalidOutput, "program completion must be lossless JSON"}},
		{"the output limit names the cap", OutputLimitFailure(67_108_864), Failure{KindOutputLimit, "outer output exceeded 67108864 bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if *tt.got != tt.want {
				t.Fatalf("got %+v, want %+v", *tt.got, tt.want)
			}
		})
	}
}

func TestRunAfterDisposalIsPrefixedAndWrapsTheSentinel(t *testing.T) {
	err := RunAfterDisposal("goja")
	if err.Error() != "goja: run() after disposal" {
		t.Fatalf("message %q", err.Error())
	}
	if !errors.Is(err, ErrRunAfterDisposal) {
		t.Fatal("errors.Is(err, ErrRunAfterDisposal) is false")
	}
	if got := RunAfterDisposal("").Error(); got != "run() after disposal" {
		t.Fatalf("without a backend: %q", got)
	}
}

func TestJSNumberIsJavaScriptString(t *testing.T) {
	tests := []struct {
		x    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {-1, "-1"}, {0.1, "0.1"}, {1.5, "1.5"}, {-0.5, "-0.5"},
		{1e21, "1e+21"}, {1e20, "100000000000000000000"}, {1e-7, "1e-7"}, {0.000001, "0.000001"},
		{9007199254740993, "9007199254740992"}, {123456789012345680000, "123456789012345680000"},
		{math.NaN(), "NaN"}, {math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"},
		{math.MaxFloat64, "1.7976931348623157e+308"}, {5e-324, "5e-324"},
	}
	for _, tt := range tests {
		if got := jsNumber(tt.x); got != tt.want {
			t.Errorf("jsNumber(%v) = %q, want %q", tt.x, got, tt.want)
		}
	}
}
