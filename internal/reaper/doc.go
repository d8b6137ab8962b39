// Package reaper keeps dsh's own account of the processes it starts, so
// that what they leave behind can be killed without trusting anything a
// process can set about itself.
//
// Every child dsh starts on purpose and keeps (a dsh/process program while
// its call runs, an imported stdio MCP server, a process-isolation worker)
// is started through [Start], which records its pid and its start time
// (from /proc/<pid>/stat) until [Forget] drops it once it is reaped. The
// record is process-wide, as the subreaper attribute it serves is: with
// [BecomeSubreaper] on, a program's descendant orphaned by its parent's exit
// (a setsid child, a double-forked daemon) is reparented to dsh, and a live
// child of dsh's that is not in the record (same pid and same start time)
// is such an orphan. Nothing in a process's environment, name or image
// makes it one of dsh's own.
//
// [Kill] sweeps /proc once a program or a server has ended: it kills a
// process group, the processes carrying a call's mark (a hint that also
// reaches an escapee reparented to PID 1 when dsh is not a subreaper), and
// every orphan with the whole tree below it, except an orphan whose
// environment carries the mark of another call still running (that call's
// own sweep kills it when it ends: a mark only defers, never protects, and a
// mark that names no running call defers nothing). It reaps dsh's zombie
// children that are not in the record. [KillDescendants], run as dsh exits,
// kills every process below dsh, recorded or not.
//
// Every kill goes through a pidfd opened after the process was seen and
// checked again (same start time) before the signal, so a pid reused
// meanwhile is never hit. Start holds the record's lock through the fork, so
// a sweep never sees a child of dsh's that is started but not yet recorded.
//
// Limits: without the subreaper, an escapee that also dropped the mark from
// its environment is adopted by PID 1 and found by nothing. When dsh is
// killed with SIGKILL, only the children started with a parent-death signal
// die with it; what they started does not. A cgroup would close both; it is
// not used because it needs a writable cgroup v2 hierarchy delegated to the
// user, which dsh cannot count on (the machines dsh was tested on had none).
// An embedder that turns the subreaper on must start its own children
// through Start, or a sweep takes them for orphans. Elsewhere than Linux,
// Start only starts the command and the sweeps do nothing.
package reaper
