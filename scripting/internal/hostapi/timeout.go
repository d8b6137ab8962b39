package hostapi

import (
	"fmt"
	"time"

	"github.com/dsh-go/dsh/dsl"
)

// TimedOut reports a script call cut by its own deadline.
type TimedOut struct {
	What string        // names the call, as "a tools/result observer"
	D    time.Duration // the deadline
}

func (e *TimedOut) Error() string {
	ms, _ := dsl.Marshal(float64(e.D) / float64(time.Millisecond))
	return fmt.Sprintf("%s timed out after %sms", e.What, ms)
}
