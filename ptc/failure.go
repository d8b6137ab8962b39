package ptc

import (
	"errors"
	"math"
	"strconv"

	"github.com/dsh-go/dsh/dsl"
)

// The fixed failure messages of §3.1.
const (
	msgUnrenderableThrow = "program threw an unrenderable value"
	msgRuntimeDisposed   = "runtime disposed"
	msgInvalidOutput     = "program completion must be lossless JSON"
)

// ErrRunAfterDisposal is the contract misuse of running a closed runtime;
// [RunAfterDisposal] wraps it with the backend's name.
var ErrRunAfterDisposal = errors.New("run() after disposal")

// RunAfterDisposal is the error Run returns once the runtime is closed:
// "<backend>: run() after disposal". It wraps [ErrRunAfterDisposal].
func RunAfterDisposal(backend string) error {
	if backend == "" {
		return ErrRunAfterDisposal
	}
	return &prefixedError{prefix: backend, err: ErrRunAfterDisposal}
}

// prefixedError is err's message under a backend's name.
type prefixedError struct {
	prefix string
	err    error
}

func (e *prefixedError) Error() string { return e.prefix + ": " + e.err.Error() }
func (e *prefixedError) Unwrap() error { return e.err }

// ExceptionFailure is a program that threw (or failed to parse): message is
// the thrown Error's stack or message, or String(v) for a non-Error.
func ExceptionFailure(message string) *Failure {
	return &Failure{Kind: KindException, Message: message}
}

// UnrenderableThrowFailure is a program that threw a value String() cannot
// render: "program threw an unrenderable value".
func UnrenderableThrowFailure() *Failure {
	return &Failure{Kind: KindException, Message: msgUnrenderableThrow}
}

// ComputeBudgetFailure is the busy-time budget's expiry:
// "compute budget exhausted (<computeMs>ms busy)".
func ComputeBudgetFailure(computeMs float64) *Failure {
	return &Failure{Kind: KindTimeout, Message: "compute budget exhausted (" + jsNumber(computeMs) + "ms busy)"}
}

// WallCeilingFailure is the wall-clock ceiling's expiry:
// "wall-clock ceiling reached (<maxWallMs>ms)".
func WallCeilingFailure(maxWallMs float64) *Failure {
	return &Failure{Kind: KindTimeout, Message: "wall-clock ceiling reached (" + jsNumber(maxWallMs) + "ms)"}
}

// AbortFailure is a run whose context ended: reason is String(signal.reason),
// the cause the caller gave (context.Cause's message).
func AbortFailure(reason string) *Failure {
	return &Failure{Kind: KindAbort, Message: reason}
}

// DisposedFailure is a run in flight when its runtime was closed:
// "runtime disposed".
func DisposedFailure() *Failure {
	return &Failure{Kind: KindAbort, Message: msgRuntimeDisposed}
}

// CrashFailure is an interpreter panic recovered in-process:
// "runtime crashed: <msg>".
func CrashFailure(msg string) *Failure {
	return &Failure{Kind: KindWorkerExit, Message: "runtime crashed: " + msg}
}

// WorkerExitFailure is a child process that exited before settling:
// "worker exited with code <code> before completing".
func WorkerExitFailure(code int) *Failure {
	return &Failure{Kind: KindWorkerExit, Message: "worker exited with code " + strconv.Itoa(code) + " before completing"}
}

// WorkerSignalFailure is a child process killed by a signal:
// "worker killed by signal <sig>".
func WorkerSignalFailure(sig string) *Failure {
	return &Failure{Kind: KindWorkerExit, Message: "worker killed by signal " + sig}
}

// MemoryLimitFailure is a child process that passed its memory cap:
// "worker exceeded its memory limit (<mib> MiB)".
func MemoryLimitFailure(mib float64) *Failure {
	return &Failure{Kind: KindWorkerExit, Message: "worker exceeded its memory limit (" + jsNumber(mib) + " MiB)"}
}

// InvalidOutputFailure is a completion that is not lossless JSON:
// "program completion must be lossless JSON".
func InvalidOutputFailure() *Failure {
	return &Failure{Kind: KindInvalidOutput, Message: msgInvalidOutput}
}

// OutputLimitFailure is the combined output over its cap:
// "outer output exceeded <limit> bytes". It is whole at every cap: [Ledger]
// keeps only the logs that fit beside it.
func OutputLimitFailure(limit int64) *Failure {
	return &Failure{Kind: KindOutputLimit, Message: outputLimitMessage(limit)}
}

func outputLimitMessage(limit int64) string {
	return "outer output exceeded " + strconv.FormatInt(limit, 10) + " bytes"
}

// jsNumber is JavaScript's String(x).
func jsNumber(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	case x == 0: // -0 included
		return "0"
	}
	var buf [32]byte
	return string(appendJSNumber(buf[:0], x))
}

// appendJSNumber appends String(x) for a finite x other than -0.
func appendJSNumber(b []byte, x float64) []byte {
	if x == math.Trunc(x) && math.Abs(x) <= maxSafeInteger {
		return strconv.AppendInt(b, int64(x), 10)
	}
	out, err := dsl.AppendJSON(b, x) // dsl writes numbers as Number::toString does
	if err != nil {                  // unreachable for a finite x other than -0
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	}
	return out
}
