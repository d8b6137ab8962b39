#!/usr/bin/env bash
# sidebyside.sh: times the TypeScript reference engine and dsh's JS host side by side, in one
# sitting, runs interleaved (issue 13: JS greet with 2 pre + 1 post async pass-through JS listeners
# ≥ 6× faster than the TypeScript engine with the same listeners).
#
# Usage: tests/tsref/sidebyside.sh [ROUNDS]   (ROUNDS: default $ROUNDS or 3)
# Each round runs the TypeScript benchmark (scenario a = greet, no listeners; b = greet with 2 pre +
# 1 post async pass-through listeners; BENCH_N calls per rep, default 3000, BENCH_REPS reps, default
# 3), then dsh's Go benchmarks JSGreet, JSPolicyNone and JSPolicyTwoPreOnePostAsync in
# scripting/js (-benchtime GO_BENCHTIME, default 3000x, -count GO_COUNT, default 3), again with
# GOGC=400 (what the dsh command sets), and engine's CallGreet and CallGreetListeners (Go tool and
# Go listeners); the test binaries are built once, before the first round. At the end it prints a markdown table: per scenario the
# median and min–max over all reps of all rounds (µs per call), the ratios TS a / dsh JSPolicyNone
# and TS b / dsh JSPolicyTwoPreOnePostAsync, the machine and the date. Raw output is kept in a
# directory under $TMPDIR (default /tmp) whose path it prints.
#
# Needs: bash, awk, sort, go, and the TypeScript reference's benchmark harness, which is not part
# of this repository: DSH_TSREF names its folder. The folder holds an executable run.sh that runs
# the TypeScript engine (deepseek-ai/deepseek-harness, the release dsh reimplements) under vitest
# and prints, among other lines, one JSON line per repeat and scenario, value in µs per call:
#   {"side":"ts","runner":"vitest","round":1,"scenario":"a","rep":0,"value":185.2,"unit":"us/call","node":"v24.11.1"}
# honouring BENCH_N (calls per repeat), BENCH_REPS (repeats), BENCH_ROUND (the round, for its own
# records) and BENCH_WHICH=ab (scenario a: greet through the engine's tool execution, no listeners;
# b: the same with 2 pre-execute and 1 post-execute async pass-through listeners). Without
# DSH_TSREF, or with no executable run.sh there, it says so and exits 2.
set -euo pipefail

rounds=${1:-${ROUNDS:-3}}
bench_n=${BENCH_N:-3000}
bench_reps=${BENCH_REPS:-3}
go_benchtime=${GO_BENCHTIME:-3000x}
go_count=${GO_COUNT:-3}
go_bench='^Benchmark(JSGreet|JSPolicyNone|JSPolicyTwoPreOnePostAsync)$'

case $rounds in '' | *[!0-9]* | 0)
	echo "sidebyside.sh: ROUNDS must be a positive integer, got '$rounds'" >&2
	exit 1
	;;
esac

repo=$(cd "$(dirname "$0")/../.." && pwd)
tsref=${DSH_TSREF:-}
if [ -z "$tsref" ] || [ ! -x "$tsref/run.sh" ]; then
	if [ -z "$tsref" ]; then
		echo "sidebyside.sh: DSH_TSREF is not set." >&2
	else
		echo "sidebyside.sh: DSH_TSREF=$tsref holds no executable run.sh." >&2
	fi
	cat >&2 <<'EOF'
Set DSH_TSREF to the folder of the TypeScript reference's benchmark harness: its run.sh runs the
TypeScript engine's greet benchmarks and prints {"side":"ts","scenario":"a"|"b","value":...} lines
(see this script's header).
EOF
	exit 2
fi
tsref=$(cd "$tsref" && pwd)

out=$(mktemp -d "${TMPDIR:-/tmp}/sidebyside.XXXXXX")
echo "sidebyside.sh: raw output in $out" >&2

echo "sidebyside.sh: building the scripting/js and engine test binaries" >&2
(cd "$repo" && go test -c -o "$out/js.test" ./scripting/js/ && go test -c -o "$out/engine.test" ./engine/)

for ((r = 1; r <= rounds; r++)); do
	echo "sidebyside.sh: round $r/$rounds: TypeScript (N=$bench_n, reps=$bench_reps)" >&2
	BENCH_N=$bench_n BENCH_REPS=$bench_reps BENCH_ROUND=$r BENCH_WHICH=ab "$tsref/run.sh" >"$out/ts.$r.jsonl"
	grep -q '"scenario":"b"' "$out/ts.$r.jsonl" || {
		echo "sidebyside.sh: the TypeScript run printed no scenario b; see $out/ts.$r.jsonl" >&2
		exit 1
	}
	echo "sidebyside.sh: round $r/$rounds: dsh (benchtime=$go_benchtime, count=$go_count)" >&2
	(cd "$repo/scripting/js" && "$out/js.test" -test.run '^$' -test.bench "$go_bench" \
		-test.benchtime "$go_benchtime" -test.count "$go_count" -test.benchmem \
		-test.timeout 30m) >"$out/go.$r.txt"
	# The dsh command runs with GOGC=400 (cmd/dsh/main.go); a library embedding dsh has Go's 100.
	(cd "$repo/scripting/js" && GOGC=400 "$out/js.test" -test.run '^$' -test.bench "$go_bench" \
		-test.benchtime "$go_benchtime" -test.count "$go_count" -test.benchmem \
		-test.timeout 30m) | sed 's/^\(Benchmark[^ \t]*\)-\([0-9]*\)/\1@gogc400-\2/' >>"$out/go.$r.txt"
	(cd "$repo/engine" && "$out/engine.test" -test.run '^$' -test.bench '^Benchmark(CallGreet|CallGreetListeners)$' \
		-test.benchtime 200000x -test.count "$go_count" -test.timeout 30m) >>"$out/go.$r.txt"
done

# samples: one "side scenario round µs" line per rep.
{
	for ((r = 1; r <= rounds; r++)); do
		awk -v r="$r" '/^\{"side":"ts"/ {
			s = $0; sub(/.*"scenario":"/, "", s); sub(/".*/, "", s)
			v = $0; sub(/.*"value":/, "", v); sub(/[,}].*/, "", v)
			print "ts", s, r, v
		}' "$out/ts.$r.jsonl"
		awk -v r="$r" '/^Benchmark[^ \t]+[ \t]+[0-9]+[ \t]+[0-9.]+ ns\/op/ {
			name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
			print "dsh", name, r, $3 / 1000
		}' "$out/go.$r.txt"
	done
} >"$out/samples.txt"

# stats SIDE SCENARIO [ROUND]: "median min max n" over the matching samples, or "- - - 0".
stats() {
	awk -v side="$1" -v sc="$2" -v rd="${3:-}" '$1 == side && $2 == sc && (rd == "" || $3 == rd) { print $4 }' \
		"$out/samples.txt" | sort -g | awk '
		{ v[NR] = $1 }
		END {
			if (NR == 0) { print "- - - 0"; exit }
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.4g %.4g %.4g %d\n", m, v[1], v[NR], NR
		}'
}

# ratio TS_SCENARIO DSH_SCENARIO: median of TS over median of dsh over all rounds, and the range
# of the same ratio taken round by round (each round's TS and dsh ran back to back).
ratio() {
	local all per="" r ts dsh
	read -r ts _ _ _ < <(stats ts "$1")
	read -r dsh _ _ _ < <(stats dsh "$2")
	all=$(awk -v a="$ts" -v b="$dsh" 'BEGIN { if (b + 0 > 0 && a != "-") printf "%.1f", a / b; else print "-" }')
	for ((r = 1; r <= rounds; r++)); do
		read -r ts _ _ _ < <(stats ts "$1" "$r")
		read -r dsh _ _ _ < <(stats dsh "$2" "$r")
		per+=$(awk -v a="$ts" -v b="$dsh" 'BEGIN { if (b + 0 > 0 && a != "-") printf "%.1f\n", a / b }')$'\n'
	done
	per=$(printf '%s' "$per" | sort -g | awk 'NF { v[++n] = $1 } END { if (n) printf "%s–%s", v[1], v[n]; else print "-" }')
	printf '%s× (per round %s)' "$all" "$per"
}

row() {
	local m lo hi n
	read -r m lo hi n < <(stats "$2" "$3")
	printf '| %s | %s | %s | %s | %s–%s |\n' "$1" "$2" "$n" "$m" "$lo" "$hi"
}

node_version=$(awk -F'"node":"' 'NF > 1 { sub(/".*/, "", $2); print $2; exit }' "$out"/ts.1.jsonl)
echo
echo "Side by side, $rounds rounds interleaved (TS then dsh each round); µs per call, over all reps."
echo
echo "| scenario | engine | reps | median | min–max |"
echo "|---|---|---|---|---|"
row "greet, no listeners (a)" ts a
row "greet, 2 pre + 1 post async listeners (b)" ts b
row "JS greet (JSGreet)" dsh JSGreet
row "JS greet, fresh inputs (JSPolicyNone)" dsh JSPolicyNone
row "JS greet + 2 pre + 1 post async JS listeners (JSPolicyTwoPreOnePostAsync)" dsh JSPolicyTwoPreOnePostAsync
row "the same, GOGC=400 as the dsh command runs" dsh JSPolicyTwoPreOnePostAsync@gogc400
row "JS greet, GOGC=400 (JSPolicyNone)" dsh JSPolicyNone@gogc400
row "Go greet (engine CallGreet)" dsh CallGreet
row "Go greet + 2 pre + 1 post Go listeners (engine CallGreetListeners)" dsh CallGreetListeners
echo
echo "- TS a / dsh JSPolicyNone: $(ratio a JSPolicyNone); GOGC=400: $(ratio a JSPolicyNone@gogc400)"
echo "- TS b / dsh JSPolicyTwoPreOnePostAsync: $(ratio b JSPolicyTwoPreOnePostAsync) (issue 13 target ≥ 6×);" \
	"GOGC=400: $(ratio b JSPolicyTwoPreOnePostAsync@gogc400)"
echo "- TS a / dsh CallGreet (a Go tool): $(ratio a CallGreet); TS b / CallGreetListeners: $(ratio b CallGreetListeners)"
echo "- TS: vitest, node ${node_version:-?}, BENCH_N=$bench_n, BENCH_REPS=$bench_reps per round;" \
	"dsh: $(go env GOVERSION), -benchtime $go_benchtime -count $go_count per round"
echo "- machine: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- raw output: $out"
