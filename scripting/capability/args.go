package capability

import (
	"context"
	"errors"
	"math"

	"github.com/dsh-go/dsh/dsl"
)

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER.
const maxSafeInteger = 1<<53 - 1

// maxTimeoutMs bounds timeoutMs options, as setTimeout does.
const maxTimeoutMs = math.MaxInt32

// arity checks that op got at most max arguments.
func arity(op string, args []any, max int) error {
	if len(args) > max {
		noun := "arguments"
		if max == 1 {
			noun = "argument"
		}
		return invalid(op, "expected at most %d %s, got %d", max, noun, len(args))
	}
	return nil
}

// arg returns args[i], or nil when it is missing.
func arg(args []any, i int) any {
	if i < len(args) {
		return args[i]
	}
	return nil
}

// stringArg returns args[i] as a string.
func stringArg(op, name string, args []any, i int) (string, error) {
	s, ok := arg(args, i).(string)
	if !ok {
		return "", invalid(op, "%s must be a string", name)
	}
	return s, nil
}

// options is a validated options object; null members count as absent.
type options struct {
	op  string
	obj *dsl.Object
}

// optionsArg returns args[i] as an options object whose keys are among
// allowed. A missing or null argument is an empty object.
func optionsArg(op string, args []any, i int, allowed ...string) (*options, error) {
	o := &options{op: op}
	switch v := arg(args, i).(type) {
	case nil:
		return o, nil
	case *dsl.Object:
		o.obj = v
	default:
		return nil, invalid(op, "options must be an object")
	}
	for k := range o.obj.All() {
		if k == "signal" {
			return nil, invalid(op, "options.signal must be an AbortSignal")
		}
		known := false
		for _, a := range allowed {
			if k == a {
				known = true
				break
			}
		}
		if !known {
			return nil, invalid(op, "unknown option options.%s", k)
		}
	}
	return o, nil
}

func (o *options) get(key string) (any, bool) {
	v, ok := o.obj.Get(key)
	if !ok || v == nil {
		return nil, false
	}
	return v, true
}

// str returns a string option, def when absent.
func (o *options) str(key, def string) (string, error) {
	v, ok := o.get(key)
	if !ok {
		return def, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", invalid(o.op, "options.%s must be a string", key)
	}
	return s, nil
}

// boolean returns a boolean option, false when absent.
func (o *options) boolean(key string) (bool, error) {
	v, ok := o.get(key)
	if !ok {
		return false, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, invalid(o.op, "options.%s must be a boolean", key)
	}
	return b, nil
}

// count returns a non-negative integer option and whether it was given.
func (o *options) count(key string) (int64, bool, error) {
	v, ok := o.get(key)
	if !ok {
		return 0, false, nil
	}
	f, isNum := v.(float64)
	if !isNum || f < 0 || f > maxSafeInteger || f != math.Trunc(f) {
		return 0, false, invalid(o.op, "options.%s must be a non-negative integer", key)
	}
	return int64(f), true, nil
}

// timeoutMs returns the timeoutMs option (0 when absent).
func (o *options) timeoutMs() (int64, error) {
	v, ok := o.get("timeoutMs")
	if !ok {
		return 0, nil
	}
	f, isNum := v.(float64)
	if !isNum || f < 1 || f > maxTimeoutMs || f != math.Trunc(f) {
		return 0, invalid(o.op, "options.timeoutMs must be a positive integer of at most %d", maxTimeoutMs)
	}
	return int64(f), nil
}

// stringMap returns an object option whose values are strings (or null,
// when allowNull), in order.
func (o *options) stringMap(key string, allowNull bool) ([]dsl.Member, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	obj, isObj := v.(*dsl.Object)
	if !isObj {
		return nil, invalid(o.op, "options.%s must be an object", key)
	}
	members := obj.Members()
	for _, m := range members {
		if _, isStr := m.Value.(string); isStr || (allowNull && m.Value == nil) {
			continue
		}
		if allowNull {
			return nil, invalid(o.op, "options.%s[%q] must be a string or null", key, m.Key)
		}
		return nil, invalid(o.op, "options.%s[%q] must be a string", key, m.Key)
	}
	return members, nil
}

// cancelled returns ECANCELED when ctx is done.
func cancelled(ctx context.Context, op, subject string) error {
	if ctx.Err() != nil {
		return canceledError(ctx, op, subject)
	}
	return nil
}

// canceledError is the ECANCELED error for op on subject.
func canceledError(ctx context.Context, op, subject string) *Error {
	cause := context.Cause(ctx)
	if cause == nil {
		cause = context.Canceled
	}
	return wrapError(cause, ECANCELED, "%s was cancelled: %s", op, subject)
}

// isContextErr reports whether err is a context's error.
func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
