package scripting

import "errors"

// ErrDisposed is the error of an effect made by a plugin after its disposal,
// and of a call into a disposed plugin, whichever host runs it.
var ErrDisposed = errors.New("the plugin has been disposed")
