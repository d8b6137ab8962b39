// Package process runs run_code programs in child processes:
// the "process" isolation mode, for programs that must not be able to take
// the host down. [Runtime] is a [ptc.Runtime] whose runs go to a pool of
// warm child dsh processes, each running one program at a time on an
// in-process language runtime; [Serve] is the child's side. The child
// command (cmd/dsh's hidden "ptc-child") builds the language runtime, so
// that this package, like ptc, imports no language package.
//
// It is the recommended runtime, and the dsh command's default
// (--ptc-isolation process): only a process boundary contains a program
// that exhausts memory, or does work no interrupt reaches (a native
// builtin allocating gigabytes at once, a parser overflowing the Go
// stack). A child is this program (os.Executable) started with
// [ChildCommand]: a program embedding dsh runs [Serve] when it is started
// that way, or sets Options.Path and Options.Args to a dsh binary.
//
// The protocol is framed JSON over the child's standard input and output
// (see wire.go). Every message from a child is hostile input: size-capped,
// shape-checked, values revalidated as lossless JSON, each call id answered
// once, log entries charged to this side's own ledger. A child that breaks
// the protocol is killed and its run fails as worker-exit ("runtime
// crashed: the worker broke the protocol: …").
//
// Failure kinds of a child's death (worker-exit): "worker exited with code <n>
// before completing", "worker killed by signal <sig>", and "worker exceeded
// its memory limit (<n> MiB)" when it passed its memory cap (the RSS
// watchdog here, or the Go runtime running out of memory under the OS
// limit). The next run gets a fresh child.
//
// A child runs in a process group of its own, killed whole, gets SIGKILL
// when its parent dies (Linux), and is started through internal/reaper's
// record of dsh's own children, so that the sweeps after a dsh/process
// call never take it for an orphan.
//
// Departures, on purpose: contract-misuse errors start with "process: "
// whatever the language (the language runtime's own name is the child's);
// a binding call whose JSON text passes [MaxCallBytes] fails in the child
// with its own message, since it cannot cross.
package process
