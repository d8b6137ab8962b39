#!/usr/bin/env bash
# runcode.sh: the run_code figures of issues 14, 15 and 16 (BENCHMARKS.md, "run_code in
# TypeScript", "run_code in Lua" and "run_code under process isolation"), each
# benchmark run ROUNDS times, rounds interleaved so that the machine's noise falls on all.
#
# Usage: tests/bench/runcode.sh [ROUNDS]   (default 3; run it on a quiet machine)
# It builds the test binaries once (the tests' binary builds a dsh for its children) and prints each
# benchmark's lines per round.
set -euo pipefail
rounds=${1:-3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/runcode.XXXXXX)
(cd "$repo" && go test -c -o "$dir/js.test" ./scripting/js/ && go test -c -o "$dir/ptc.test" ./ptc/ &&
	go test -c -o "$dir/lua.test" ./scripting/lua/ && go test -c -o "$dir/tests.test" ./tests/)
js() { (cd "$repo/scripting/js" && "$dir/js.test" -test.run '^$' -test.benchmem "$@" | grep '^Benchmark'); }
proc() { (cd "$repo/tests" && "$dir/tests.test" -test.run '^$' -test.benchmem "$@" | grep '^Benchmark'); }
for ((k = 1; k <= rounds; k++)); do
	echo "# round $k"
	js -test.bench 'RunCodeTrivial$|RunCodeTrivialSpaced|ProgramTrivialWarm/pool' -test.benchtime 200x
	js -test.bench 'RunCodeSubCalls' -test.benchtime 30x
	(cd "$repo/ptc" && "$dir/ptc.test" -test.run '^$' -test.bench 'SubCall' -test.benchtime 20000x -test.benchmem | grep '^Benchmark')
	js -test.bench 'RunCodeScale$' -test.benchtime 5x
	js -test.bench 'RunCodeScaleMemory' -test.benchtime 20x
	js -test.bench 'ComputeOvershoot' -test.benchtime 100x
	js -test.bench 'RunCodeParallel' -test.benchtime 15x
	(cd "$repo/scripting/lua" && "$dir/lua.test" -test.run '^$' -test.benchmem -test.bench 'LuaRunCode|ProgramFreshState|ProgramTrivialRun|ProgramSubCalls' -test.benchtime 100x | grep '^Benchmark')
	proc -test.bench 'ProcessTrivial/.*/.*/.*/(back_to_back|spaced)$' -test.benchtime 200x
	proc -test.bench 'ProcessTrivial/.*/process/runtime/(fresh|cold)$' -test.benchtime 30x
	proc -test.bench 'ProcessSubCall' -test.benchtime 10x
	proc -test.bench 'ProcessParallel' -test.benchtime 20x
	proc -test.bench 'ProcessCrash' -test.benchtime 10x
done
rm -rf "$dir"
