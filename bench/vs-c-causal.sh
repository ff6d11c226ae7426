#!/usr/bin/env bash
# vs-c-causal.sh: the fused causal (prefill) attention (kernels.AttendCausal, fp16)
# against its C yardstick (bench/ccausal/causal.c, the same tiling and flash loop in
# AVX2 + FMA + F16C intrinsics, AVX-512 where -march=native has it), in the same
# minutes. Needs gcc.
#
#   bench/vs-c-causal.sh [rounds]        # default 5
#   BENCHTIME=2s bench/vs-c-causal.sh    # the Go side's -benchtime (default 1s)
#
# Each round runs
#   go test -run '^$' -bench 'BenchmarkPrefillAttention/fp16/n=(1024|4096)/fused|BenchmarkPrefillAttention/chunk/m=512/n=4096/fused' -cpu 1 ./bench
# (from a test binary built once, so that every round times the same code while the
# tree changes) and then the C yardstick at the same shapes, m = n = 1024 and 4096 and
# m = 512, n = 4096 (one KV head, G = 4 rows, dim 128). Each side reports its GFLOP/s
# (FLOPs 4·dim·rows·Σ visible keys) and its share of an FMA peak it times in its own
# process (12 independent FMA chains of the widest vector, best of 20 runs); the table
# gives the median over the rounds. Go's time is the mean of its b.N calls, C's the
# median of its calls. The machine is shared: quote ratios, not times.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=${1:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O3 -march=native -o "$work/causal" "$here/ccausal/causal.c" -lm
"$work/causal" >&2 # its correctness check (exits non-zero on a wrong kernel)
(cd "$here/.." && go test -c -o "$work/bench.test" ./bench)
pattern='BenchmarkPrefillAttention/fp16/n=(1024|4096)/fused|BenchmarkPrefillAttention/chunk/m=512/n=4096/fused'
for r in $(seq "$rounds"); do
	echo "round $r of $rounds" >&2
	# Go: "go <m> <n> <ms> <GFLOP/s> <%peak>" per benchmark line.
	(cd "$here" && "$work/bench.test" -test.run '^$' -test.bench "$pattern" -test.benchtime "${BENCHTIME:-1s}" -test.cpu 1) |
		tee -a "$work/go.log" |
		awk '/^BenchmarkPrefillAttention\// {
			name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkPrefillAttention\//, "", name)
			if (name ~ /^fp16\/n=[0-9]+\/fused$/) { n = name; sub(/^fp16\/n=/, "", n); sub(/\/.*/, "", n); m = n }
			else if (name ~ /^chunk\/m=[0-9]+\/n=[0-9]+\/fused$/) { split(name, p, "/"); m = substr(p[2], 3); n = substr(p[3], 3) }
			else next
			t = g = pk = "nan"
			for (i = 3; i <= NF; i++) {
				if ($i == "ns/op") t = $(i - 1) / 1e6
				if ($i == "GFLOP/s") g = $(i - 1)
				if ($i == "%peak") pk = $(i - 1)
			}
			print "go", m, n, t, g, pk
		}' >>"$work/times"
	# C: reps so that each shape takes about a second.
	for shape in "1024 1024 40" "4096 4096 4" "512 4096 15"; do
		# shellcheck disable=SC2086
		"$work/causal" $shape | tee -a "$work/c.log" |
			awk '/^C causal/ {
				t = g = pk = "nan"
				for (i = 1; i <= NF; i++) {
					if ($i ~ /^m=/) m = substr($i, 3)
					if ($i ~ /^n=/) n = substr($i, 3)
					if ($i == "ns/call") t = $(i - 1) / 1e6
					if ($i == "GFLOP/s," && g == "nan") g = $(i - 1)
					if ($i == "%peak,") pk = $(i - 1)
					if ($i == "err") err = $(i + 1)
				}
				print "c", m, n, t, g, pk
				print "err", m, n, err, err, err
			}' >>"$work/times"
	done
done
got=$(awk '$1 == "go"' "$work/times" | wc -l)
if [ "$got" -ne $((3 * rounds)) ]; then
	echo "vs-c-causal.sh: parsed $got Go results, want $((3 * rounds)); the Go output was:" >&2
	cat "$work/go.log" >&2
	exit 1
fi
# One line per (side, shape, column, value), sorted by value, then medians.
awk '{ for (c = 4; c <= 6; c++) print $1, $2, $3, c, $c }' "$work/times" | sort -k1,4 -k5,5g | awk '
	{ k = $1 " " $2 " " $3 " " $4; v[k, ++cnt[k]] = $5 }
	END {
		for (k in cnt) med[k] = cnt[k] % 2 ? v[k, (cnt[k] + 1) / 2] : (v[k, cnt[k] / 2] + v[k, cnt[k] / 2 + 1]) / 2
		printf "%-17s | %10s %10s %6s | %9s %9s | %7s %7s | %9s\n", "shape", "Go", "C", "Go÷C", "Go GFLOP/s", "C GFLOP/s", "Go %pk", "C %pk", "C rel.err"
		split("1024 1024,4096 4096,512 4096", shapes, ",")
		for (s = 1; s <= 3; s++) {
			split(shapes[s], mn, " "); sh = mn[1] " " mn[2]
			gt = med["go " sh " 4"]; ct = med["c " sh " 4"]
			printf "m=%-5s n=%-7s | %7.2f ms %7.2f ms %6.2f | %10.1f %9.1f | %7.1f %7.1f | %9.1e\n", mn[1], mn[2], gt, ct, gt / ct,
				med["go " sh " 5"], med["c " sh " 5"], med["go " sh " 6"], med["c " sh " 6"], med["err " sh " 4"]
		}
	}'
