package hostapi

import (
	"context"
	"fmt"

	"github.com/dsh-go/dsh/engine"
)

// Elicit asks through engine.Elicit and returns its answer, or ctx's cause
// as soon as ctx ends, even if the function asking does not watch ctx (it
// is left to return on its own goroutine). A panic of that function is an
// error.
func Elicit(ctx context.Context, q engine.Elicitation) (engine.ElicitResult, error) {
	type answer struct {
		r   engine.ElicitResult
		err error
	}
	if ctx.Err() != nil {
		return engine.ElicitResult{}, context.Cause(ctx)
	}
	ch := make(chan answer, 1)
	go func() {
		var a answer
		defer func() {
			if x := recover(); x != nil {
				a = answer{err: fmt.Errorf("asking the user panicked: %v", x)}
			}
			ch <- a
		}()
		a.r, a.err = engine.Elicit(ctx, q)
	}()
	select {
	case a := <-ch:
		return a.r, a.err
	case <-ctx.Done():
		return engine.ElicitResult{}, context.Cause(ctx)
	}
}
