package engine

import (
	"context"
	"math"

	"github.com/dsh-go/dsh/internal/textcap"
)

// MaxProgressMessage bounds, in bytes, the message of a progress report and
// of a question put to the user ([Elicit]): a longer one is cut between
// characters and ends with "… (truncated)". It is the bound of a log
// message an MCP client is sent, 16 KiB.
const MaxProgressMessage = 16 << 10

// Progress is one progress report of a running call: how far it is
// (Progress, increasing), out of Total when known (0: unknown), with an
// optional human-readable Message.
type Progress struct {
	Progress float64
	Total    float64
	Message  string
}

// ProgressFunc receives a call's progress reports. It is called on the
// reporting goroutine and must not block.
type ProgressFunc func(Progress)

type progressKey struct{}

// WithProgress returns a context whose calls report their progress to fn:
// a caller that can show progress (an MCP client, a UI) sets it on the
// context it executes a batch with, and tool bodies report with
// [ReportProgress] on the context they were given. A nil fn removes it.
func WithProgress(ctx context.Context, fn ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ReportProgress reports p to the function ctx carries (see
// [WithProgress]) and reports whether one heard it. A report whose
// Progress or Total is not a finite number, or whose Total is negative, is
// dropped; a Message longer than [MaxProgressMessage] is cut, marked.
func ReportProgress(ctx context.Context, p Progress) bool {
	fn, _ := ctx.Value(progressKey{}).(ProgressFunc)
	if fn == nil || !finite(p.Progress) || !finite(p.Total) || p.Total < 0 {
		return false
	}
	p.Message = textcap.String(p.Message, MaxProgressMessage)
	fn(p)
	return true
}

// HasProgress reports whether ctx carries a progress function (see
// [WithProgress]): a tool that relays progress from elsewhere asks for it
// only when someone listens.
func HasProgress(ctx context.Context) bool {
	fn, _ := ctx.Value(progressKey{}).(ProgressFunc)
	return fn != nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
