#!/usr/bin/env bash
# dshrun.sh: the marginal cost of one word_count call in `dsh run`, end to end, with and without
# the JS example policies, for one or more dsh binaries, runs interleaved (issue 13's measure:
# a calls file of 2,000 calls against one of a single call, best of ROUNDS).
#
# Usage: tests/bench/dshrun.sh ROUNDS DSH-BINARY...
#   e.g. go build -o /tmp/dsh-new ./cmd/dsh && tests/bench/dshrun.sh 5 /tmp/dsh-old /tmp/dsh-new
# Prints, per binary and set ("tool": word_count alone; "js": behind the six JS example
# policies), the best total time of the 2,000-call run and (best 2,000 - best 1) / 1,999.
set -euo pipefail
rounds=${1:?usage: dshrun.sh ROUNDS DSH-BINARY...}
shift
[ $# -gt 0 ] || { echo "usage: dshrun.sh ROUNDS DSH-BINARY..." >&2; exit 2; }
repo=$(cd "$(dirname "$0")/../.." && pwd)
ex=$repo/scripts/examples/plugins
dir=$(mktemp -d /tmp/dshrun.XXXXXX)
mkdir -p "$dir/tool" "$dir/js" "$dir/ws"
cp "$ex/word_count.ts" "$ex/tsconfig.json" "$dir/tool/"
cp -r "$ex/word_count.ts" "$ex/tsconfig.json" "$ex/lib" "$ex/deny_shell.js" "$ex/protect_secrets.js" \
	"$ex/ask_before_write.js" "$ex/audit_log.js" "$ex/redact_tokens.ts" "$ex/repeat_reminder.js" "$dir/js/"
for n in 1 2000; do
	awk -v n="$n" 'BEGIN { printf "["; for (i = 0; i < n; i++) printf "%s{\"id\":\"c%d\",\"name\":\"word_count\",\"arguments\":{\"text\":\"the quick brown fox jumps over the lazy dog %d\"}}", (i ? ",\n" : ""), i, i; print "]" }' >"$dir/calls$n.json"
done
for ((k = 1; k <= rounds; k++)); do
	for b in "$@"; do
		for set in tool js; do
			for n in 1 2000; do
				s=$(date +%s%N)
				"$b" --scripts "$dir/$set" --workspace "$dir/ws" --approve allow run "$dir/calls$n.json" >/dev/null
				e=$(date +%s%N)
				echo "$(basename "$b") $set $n $(((e - s) / 1000))" >>"$dir/times.txt"
			done
		done
	done
done
awk '{ k = $1 " " $2 " " $3; if (!(k in m) || $4 < m[k]) m[k] = $4 }
	END { for (k in m) { split(k, a, " "); if (a[3] == 2000) printf "%-16s %-5s best %8.1f ms, %6.1f µs/call marginal\n", a[1], a[2], m[k] / 1000, (m[k] - m[a[1] " " a[2] " 1"]) / 1999 } }' \
	"$dir/times.txt" | sort
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores; raw times in $dir/times.txt"
