#!/usr/bin/env bash
# vs-c-attend.sh: the fused decode attention (kernels.Attend, fp16) against its C
# yardstick (bench/cattend/attend.c, the same loop in AVX-512 intrinsics), in the same
# minutes. Needs gcc, and AVX-512 for the C side.
#
#   bench/vs-c-attend.sh [rounds]      # default 5
#   BLOCK=128 bench/vs-c-attend.sh     # the C side's block (default 256, kernels.attendBlock)
#
# Each round runs BenchmarkDecodeAttention's fp16 and read rows (-cpu 1, 200 ms each)
# and then the C yardstick at every n, head- and token-major, each of which times its
# own read limit (a dot product of K with V) alternating with its kernel. The table
# gives per case the median over the rounds: Go's and C's time, Go ÷ C, each side ÷
# its own read limit, and the fused kernel ÷ the Go loop (the README's composition).
# The machine is shared and its memory bandwidth wanders: quote ratios, not times.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=${1:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O3 -mavx2 -mfma -mf16c -o "$work/attend" "$here/cattend/attend.c" -lm
(cd "$here/.." && go test -c -o "$work/bench.test" ./bench)
for r in $(seq "$rounds"); do
	echo "round $r of $rounds" >&2
	(cd "$here" && "$work/bench.test" -test.run '^$' -test.bench 'DecodeAttention/^(read|fp16)$' \
		-test.benchtime 200ms -test.cpu 1) |
		awk '/^Benchmark/ { split($1, p, "/"); sub(/-[0-9]+$/, "", $1); n = $1; sub(/.*n=/, "", n); sub(/\/.*/, "", n)
			if (p[2] == "read") { print "go read head " n, $3 / 1e6; print "go read token " n, $3 / 1e6 }
			else print "go " p[5] " " p[3] " " n, $3 / 1e6 }' >>"$work/times"
	for layout in head token; do
		for n in 2048 16384 65536; do
			"$work/attend" "$n" "${BLOCK:-256}" "$layout" |
				sed -E 's/^C fp16 ([a-z]+) .* n=([0-9]+) .*read ([0-9.]+) ms.*fused ([0-9.]+) ms.*/c read \1 \2 \3\nc fused \1 \2 \4/' >>"$work/times"
		done
	done
done
sort -k1,4 -k5,5g "$work/times" | awk '
	{ k = $1 " " $2 " " $3 " " $4; v[k, ++c[k]] = $5 }
	END {
		for (k in c) m[k] = c[k] % 2 ? v[k, (c[k] + 1) / 2] : (v[k, c[k] / 2] + v[k, c[k] / 2 + 1]) / 2
		printf "%-6s %6s | %9s %9s %6s | %7s %7s | %12s\n", "layout", "n", "Go fused", "C fused", "Go÷C", "Go÷read", "C÷read", "Go fused÷loop"
		for (li = 1; li <= 2; li++) for (ni = 1; ni <= 3; ni++) {
			l = li == 1 ? "head" : "token"; n = ni == 1 ? 2048 : ni == 2 ? 16384 : 65536
			g = m["go fused " l " " n]; cf = m["c fused " l " " n]
			printf "%-6s %6d | %6.3f ms %6.3f ms %6.2f | %7.2f %7.2f | %12.2f\n", l, n, g, cf, g / cf,
				g / m["go read " l " " n], cf / m["c read " l " " n], g / m["go loop " l " " n]
		}
	}'
