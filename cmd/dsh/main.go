package main

import (
	"github.com/dsh-go/dsh/cmd/dsh/cli"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/capability"
)

// gcPercent is dsh's default GOGC. Script interpreters allocate a small
// value per arithmetic result (goja boxes numbers), while the live heap
// stays small, so the default of 100 collects very often: with two
// CPU-bound instances on two cores the collector took a third of the time.
// 400 trades some memory (the heap grows to five times what is live
// instead of twice) for that throughput. Measured again for issue 29
// (BENCHMARKS.md, "Lever 3 and the targets"; GOGC 100/200/400/800, CPU per
// call, 2 rounds): the example policy set 508-603/370-420/330-342/332-358
// µs with a peak of 51/58-67/79-81/135-142 MB, `dsh run` with it
// 518-563/440-458/433-680/453-580 µs and 67-70/79-83/118-131/180-190 MB;
// 4,000 calls of the set took 80-87/36-37/16-18/9 collections. 800 buys
// no policy time and costs half again the memory; 400 stays. A GOGC in
// the environment wins.
const gcPercent = 400

func main() {
	// The same call an embedder makes (a GOGC in the environment wins); the
	// soft memory limit follows --memory-limit once the flags are read.
	scripting.TuneGC(gcPercent, 0)
	// On Linux, what a dsh/process program orphans (a setsid child, a
	// double-forked daemon) is reparented to dsh, which kills and reaps it
	// when its call ends. Elsewhere this fails and changes nothing.
	_ = capability.BecomeSubreaper()
	cli.Main()
}
