// Package textcap cuts text that crosses into dsh from a script (an error's
// message, a progress message, a value written to the session log) to a
// bound, marking the cut, so that one giant string is not copied again and
// again on its way to the model, a client or a file.
//
// [Cut] keeps the longest prefix of at most n bytes that ends between UTF-8
// characters and appends [Marker]; text within the bound is returned as it
// is. It reads no more of its input than the bound (plus one character), so
// its cost does not depend on the input's length.
package textcap
