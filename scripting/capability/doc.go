// Package capability implements the host capability modules plugins import:
// dsh/fs, dsh/process, dsh/http and dsh/path, written once in Go behind
// [scripting.Module] and bound by each language host (async in JavaScript,
// blocking in Lua).
//
// Every function takes and returns lossless JSON values in package dsl's Go
// form, validates its arguments strictly, honours its context and fails
// with an [*Error] carrying a Node-style code (ENOENT, EOUTSIDE, ETOOBIG…).
//
// The confinement rules:
//   - dsh/fs works through an [os.Root] opened on the workspace for each
//     call, so every path is resolved relative to the root at open time: a
//     path that leaves it, by "..", by being absolute elsewhere or through a
//     symlink (also one swapped in during the call), is refused with EOUTSIDE.
//   - dsh/process runs argv (never a shell) with its working directory
//     inside the workspace, in its own process group, which is killed
//     (TERM, then KILL after a grace) on cancellation or timeout and when
//     the program exits, so nothing it started outlives the call. See
//     "Processes" below for what left the group, and for dsh's own death.
//   - dsh/http fetches only from the operator's allow-list (loopback by
//     default), checked on the URL of every request and redirect and on
//     every address actually dialed, without proxies.
//   - Reads, writes, process output, response bodies, directory listings and
//     glob results are capped.
//
// Choices where the spec is silent:
//   - Paths are lexically cleaned first ("a/../b" is "b"; a ".." that climbs
//     above the workspace is EOUTSIDE even if a symlink would bring it back).
//     Symlinks inside the workspace are followed when they point inside it
//     with a relative target; absolute symlink targets are refused (EOUTSIDE),
//     as os.Root refuses them. An absolute path may name the workspace as
//     configured or with its symlinks resolved.
//   - Arguments: a null options object, or a null option, counts as absent;
//     unknown option keys are EINVAL. limit options above MaxGlob are
//     clamped to it. stat takes an (empty) options object for its signal.
//   - readFile's utf8 content is the exact bytes of the selected lines (line
//     ends kept); lines end at "\n"; truncated says lines were left after the
//     selection; size is the file's. A selection bigger than MaxReadBytes is
//     ETOOBIG. FIFOs and devices are refused (EINVAL), without blocking.
//   - writeFile's size is the number of bytes the call wrote.
//   - remove of a missing path resolves with removed: false (no ENOENT).
//   - readDir lists at most options.limit entries (default MaxGlob); sizes
//     are reported for files only (0 for others).
//   - glob matches dot files too; "**" matches zero segments too ("src/**"
//     matches "src"); a pattern ending in "/" matches directories only; ".."
//     segments in a pattern are EINVAL; the walk stops after visiting
//     1,000,000 entries or counting 100,000 matches (truncated, and total is
//     then a lower bound). Names that are not UTF-8 are reported with U+FFFD.
//   - process.run kills what the program left in its process group when it
//     exits (and what left the group: see "Processes"), and stops waiting for pipes held open by a process that left
//     the group after KillGrace. Its result also has stdoutBytes and
//     stderrBytes, the full counts of each stream. A null env value unsets
//     the variable; a bare program name is looked up in the child's PATH.
//   - http.fetch uses a fresh transport per call, without keep-alive or
//     proxies; an allow-list entry without a port allows every port,
//     "*.example.com" allows subdomains only, CIDR ranges are accepted, and a
//     name allowed as "localhost" (the default) must dial a loopback address.
//   - dsh/path's relative resolves relative paths against the workspace.
//
// # Processes
//
// On Linux, beyond the process group:
//   - The program gets SIGKILL when dsh dies (a parent-death signal). The
//     signal fires when the OS thread that started the child exits, so the
//     child is started and waited for on a goroutine locked to its thread
//     for the child's whole life. It reaches the program only, not what
//     the program started (see below).
//   - The program is started through dsh's record of its own children
//     (package internal/reaper): its pid and start time, kept until it is
//     reaped. [BecomeSubreaper] (the dsh command calls it at start; it is
//     not done at package init) makes orphans reparent to dsh instead of
//     PID 1; a live child of dsh's that is not in the record is then an
//     orphan some program left (through setsid, setpgid or a double fork),
//     whatever its environment, name or image says.
//   - When the program has exited and its group was killed, /proc is
//     swept until nothing is found: every process still in the group,
//     every orphan with the whole tree below it, and every process whose
//     environment carries the call's token are killed with SIGKILL, through
//     a pidfd checked against the start time seen, so that a reused pid is
//     never hit; dsh's zombie children that are not in the record are
//     reaped. This holds on a normal exit, a timeout and a cancellation.
//   - Every program gets DSH_CALL_TOKEN=<random> as the last variable of its
//     environment (replacing any the script set). The token is a hint, never
//     a protection: it reaches an escapee that PID 1 adopted (without the
//     subreaper), and an orphan carrying the token of another call still
//     running is left to that call's own sweep. A token that names no
//     running call (forged, or of a call that ended) defers nothing.
//   - When the dsh command exits (normally, or on SIGINT or SIGTERM), it
//     kills every process still below it.
//
// What this does not catch: without the subreaper, a descendant that both
// left the group and dropped the token is adopted by PID 1 and survives.
// An embedder that turns the subreaper on and starts children of its own
// must start them through the record (as dsh's MCP client and process
// isolation do), or they are taken for orphans. When dsh itself is killed
// with SIGKILL, the programs' own children are not signalled. A cgroup
// would close these; it is not used because it needs a writable cgroup v2
// hierarchy delegated to the user, which dsh cannot count on. Elsewhere than
// Linux only the process group is killed.
package capability
