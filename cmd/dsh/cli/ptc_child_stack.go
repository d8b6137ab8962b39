package cli

// childMaxStack is the Go stack limit of a run_code child (debug.SetMaxStack
// in openChildRuntime), against Go's default of 1 GB. A child is its own
// guard (js.ProgramOptions.ContainedByProcess): a Go stack overflow there
// is fatal to the child alone and its run fails as worker-exit ("worker
// exited with code 2 before completing"). At 1 GB such an overflow would
// first grow the stack past the child's memory cap (the parent then reports
// a memory failure, after the copying of a stack of hundreds of MiB); at
// 128 MiB it is a quick crash. The deepest stack a correct program needs is
// the parser's on source nested to the limit tsbuild.CheckNesting lets
// through: 9,999 levels of brackets or parentheses, in the program or
// given to eval, took more than 16 and at most 32 MiB (measured); 128 MiB
// leaves four times that.
const childMaxStack = 128 << 20
