#!/usr/bin/env bash
# vs-c.sh: kvsimd against the hand-written C intrinsics yardstick, in the same run.
#
#   bench/vs-c.sh [rounds]                  # default 3 rounds
#   COUNT=21 BENCHTIME=1s bench/vs-c.sh 5  # Go runs per round (default 11 of 100ms each)
#   CREF=/path/to/cref/run bench/vs-c.sh
#   FAMILIES=sx bench/vs-c.sh               # only some families: s Scores, x Softmax,
#                                           # d dots, v ToFloat32, t TopK (default all)
#
# Each round runs the Go benchmarks of the kernels the C reference also has (Scores,
# Softmax, the dots at n = 128 and 1024, ToFloat32, TopK; -cpu 1, every SIMD variant,
# the median of COUNT short runs, as C keeps the median of 11 reps of 2 ms or more)
# and the C reference (../shared/tools/cref/run beside the checkout), back to back,
# family by family, so that both see the same machine state. The table gives, per
# kernel and size, the median time over the rounds and × = kvsimd time ÷ C time: the
# median of the per-round ratios with their range (min–max) as the round-to-round
# spread, and "× best", the ratio of the best times over all rounds (noise only ever
# slows a run down). The machine is shared and noisy: quote ratios, not times.
#
# Scores also gets its fraction of the FMA peak, measured by the benchmark process
# (bench/peak.go) in the same round, for kvsimd and C alike. C has no rows for n a
# power of two plus 16 nor for dim 64: the S+16 rows compare against C's time at S
# scaled by the number of scores, and dim 64 is reported as its GFLOP/s over dim 128's.
# The C reference has no DotF32F16 and no AVX2 fp32 dot: bench/cdots/dots.c, built with
# the C reference's flags when gcc is present, adds them, and one more row: the C
# reference's AVX-512 fp32 dot called through a frame in memory, the way Go calls
# assembly (ABI0), which shows what that calling convention alone costs a short dot
# (rows "C in a Go ABI0 frame"; DotF32F16 gets the same from its C twin, and on AVX2
# all three dots, DotF16's with the C reference's fp16 loop).
set -euo pipefail

rounds=${1:-3}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cref=${CREF:-$(dirname "$root")/shared/tools/cref/run}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ -x $cref ]]; then
	echo "C reference: $cref"
else
	echo "C reference NOT FOUND at $cref (set CREF=...): running the Go side only, no ratios."
	cref=
fi
grep -o 'avx512[a-z]*' /proc/cpuinfo 2>/dev/null | sort -u | tr '\n' ' ' | sed 's/^/CPU AVX-512 features: /;s/$/\n/' || true

(cd "$root" && go test -c -o "$work/bench.test" ./bench)
cdots=
if [[ -n $cref ]] && command -v gcc >/dev/null; then
	gcc -O3 -mavx2 -mfma -mf16c -mbmi2 -o "$work/cdots" "$here/cdots/dots.c" && cdots=$work/cdots
else
	echo "bench/cdots not built (no C reference or no gcc): no C rows for DotF32F16 and AVX2 DotF32."
fi

# Each family's Go benchmarks, then the C reference's matching section (its letter),
# so that the two compared runs are seconds apart rather than minutes.
families=(
	's ^BenchmarkScores$/^dim=(64|128)$/^(avx2|avx512)$/'
	'x ^BenchmarkSoftmax$/^(avx2|avx512)$/^n=(4096|32768|131072)$'
	'd ^BenchmarkDot(F16|F32F16|F32)$/^(avx2|avx512)$/^n=(128|1024)$'
	'v ^BenchmarkToFloat32$/^(avx2|avx512)$/^n=32768$'
	't ^BenchmarkTopK$/^(avx2|avx512)$/'
)
for r in $(seq "$rounds"); do
	echo "round $r of $rounds" >&2
	for fam in "${families[@]}"; do
		[[ ${FAMILIES:-sxdvt} == *"${fam%% *}"* ]] || continue
		(cd "$here" && "$work/bench.test" -test.run '^$' -test.bench "${fam#* }" -test.cpu 1 \
			-test.count "${COUNT:-11}" -test.benchtime "${BENCHTIME:-100ms}") >>"$work/go.$r"
		if [[ -n $cref ]]; then
			"$cref" "${fam%% *}" >>"$work/c.$r"
		fi
		if [[ -n $cdots && ${fam%% *} == d ]]; then
			"$cdots" >>"$work/c.$r"
		fi
	done
done

for r in $(seq "$rounds"); do
	sed "s/^/$r go /" "$work/go.$r"
	[[ -f $work/c.$r ]] && sed "s/^/$r c /" "$work/c.$r"
done | awk -v rounds="$rounds" '
function median(v, n,   i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] > v[j]; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
	return n % 2 ? v[(n+1)/2] : (v[n/2] + v[n/2+1]) / 2
}
function fmt_ns(ns) {
	if (ns == "") return "–"
	if (ns >= 1e6) return sprintf("%.2f ms", ns / 1e6)
	if (ns >= 1e3) return sprintf("%.1f µs", ns / 1e3)
	return sprintf("%.1f ns", ns)
}
# stat(key): median of the per-round values of key, "" when no round has it.
function stat(key,   r, n, v) {
	n = 0
	for (r = 1; r <= rounds; r++) if ((key, r) in val) v[++n] = val[key, r]
	return n ? median(v, n) : ""
}
# best(key): the smallest per-round value of key: a shared machine only ever slows a run.
function best(key,   r, b) {
	b = ""
	for (r = 1; r <= rounds; r++) if (((key, r) in val) && (b == "" || val[key, r] < b)) b = val[key, r]
	return b
}
# ratio(a, b, scale): "median (min–max) best" of the per-round a/(b·scale), then the
# ratio of the best times.
function ratio(a, b, scale,   r, n, v, lo, hi) {
	n = 0
	for (r = 1; r <= rounds; r++)
		if (((a, r) in val) && ((b, r) in val)) v[++n] = val[a, r] / (val[b, r] * scale)
	if (!n) return "– | –"
	lo = hi = v[1]
	for (r = 2; r <= n; r++) { if (v[r] < lo) lo = v[r]; if (v[r] > hi) hi = v[r] }
	return sprintf("%.2f (%.2f–%.2f) | %.2f", median(v, n), lo, hi, best(a) / (best(b) * scale))
}
# A round runs each Go benchmark COUNT times: keep the median run, as C keeps the
# median of its reps. gflops·ns and %peak·ns are the same in every run of a benchmark.
$2 == "go" && $3 ~ /^Benchmark/ {
	name = $3; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
	ns = gflops = peak = ""
	for (i = 5; i < NF; i++) {
		if ($(i+1) == "ns/op") ns = $i
		if ($(i+1) == "GFLOP/s") gflops = $i
		if ($(i+1) == "%peak") peak = $i
	}
	if (ns == "") next
	names[name] = 1
	runs[name, $1, ++nruns[name, $1]] = ns
	if (gflops != "") flopsns[name, $1] = gflops * ns
	if (peak != "") peakns[name, $1] = peak * ns
	# Each family runs in a process of its own, which measures its own peak: the C Scores
	# rows are held to the peak of the process that ran the Go Scores rows.
	if (peak > 0 && name ~ /^Scores\//) val["peakgflops", $1] = gflops * 100 / peak
}

$2 == "c" && $3 == "--" {
	section = $4 == "score" ? "score" : $4 == "fp16->fp32" ? "cvt" : $4
	for (i = 4; i <= NF; i++) if ($i ~ /^(n|S)=/) { size = $i; sub(/^[nS]=/, "", size) }
}
$2 == "c" && / ns\/call/ {
	label = $0; sub(/^[0-9]+ c /, "", label); sub(/ +[0-9.]+ ns\/call.*/, "", label)
	for (i = 1; i < NF; i++) if ($(i+1) == "ns/call") val["c " section " " size " " label, $1] = $i
	for (i = 1; i < NF; i++) if ($(i+1) == "GFLOP/s") val["cgflops " section " " size " " label, $1] = $i
}
END {
	for (name in names) for (r = 1; r <= rounds; r++) {
		if (!((name, r) in nruns)) continue
		delete v
		for (i = 1; i <= nruns[name, r]; i++) v[i] = runs[name, r, i]
		ns = median(v, nruns[name, r])
		val["go " name, r] = ns
		if ((name, r) in flopsns) val["gflops " name, r] = flopsns[name, r] / ns
		if ((name, r) in peakns) val["peak " name, r] = peakns[name, r] / ns
	}
	# kernel | size | Go name (VAR for the variant) | C section | C size | C AVX-512 label | C AVX2 label
	# (a label "section::label" is looked up in that section instead)
	n = 0
	row[++n] = "Scores 32×128·S|4096|Scores/dim=128/VAR/n=4096|score|4096|score_gemm_avx512 12x32(C)|score_gemm_avx2 6x16(C)"
	row[++n] = "Scores 32×128·S|4112|Scores/dim=128/VAR/n=4112|score|4096|score_gemm_avx512 12x32(C)|score_gemm_avx2 6x16(C)"
	row[++n] = "Scores 32×128·S|16384|Scores/dim=128/VAR/n=16384|score|16384|score_gemm_avx512 12x32(C)|score_gemm_avx2 6x16(C)"
	row[++n] = "Scores 32×128·S|16400|Scores/dim=128/VAR/n=16400|score|16384|score_gemm_avx512 12x32(C)|score_gemm_avx2 6x16(C)"
	row[++n] = "Scores 32×128·S|131072|Scores/dim=128/VAR/n=131072|score|131072|score_gemm_avx512 12x32(C)|score_gemm_avx2 6x16(C)"
	split("4096 32768 131072", sm, " ")
	for (i = 1; i <= 3; i++)
		row[++n] = "Softmax|" sm[i] "|Softmax/VAR/n=" sm[i] "|softmax|" sm[i] "|softmax_avx512(C)|softmax_avx2(C)"
	for (s = 128; s <= 1024; s *= 8) {
		row[++n] = "DotF16|" s "|DotF16/VAR/n=" s "|fp16|" s "|dot_avx512(C)|dot_avx2_f16c_fma(C)"
		row[++n] = "DotF32F16|" s "|DotF32F16/VAR/n=" s "|cdots|" s "|dot_f32f16_avx512(C)|dot_f32f16_avx2(C)"
		row[++n] = "DotF32|" s "|DotF32/VAR/n=" s "|fp16|" s "|dot_f32_avx512(C, fp32 inputs)|cdots::dot_f32_avx2(C)"
		row[++n] = "DotF16 (C in a Go ABI0 frame)|" s "|DotF16/VAR/n=" s "|cdots|" s "||dot_f16_avx2(C, Go ABI0 frame)"
		row[++n] = "DotF32F16 (C in a Go ABI0 frame)|" s "|DotF32F16/VAR/n=" s "|cdots|" s "|dot_f32f16_avx512(C, Go ABI0 frame)|dot_f32f16_avx2(C, Go ABI0 frame)"
		row[++n] = "DotF32 (C in a Go ABI0 frame)|" s "|DotF32/VAR/n=" s "|cdots|" s "|dot_f32_avx512(C, Go ABI0 frame)|dot_f32_avx2(C, Go ABI0 frame)"
	}
	row[++n] = "ToFloat32|32768|ToFloat32/VAR/n=32768|cvt|32768|cvt_avx512(C)|cvt_avx2_f16c(C)"
	row[++n] = "TopK 512 of|16384|TopK/VAR/n=16384|top-k|16384|C++ sample+AVX512 compress+nth_element|"
	row[++n] = "TopK 2048 of|131072|TopK/VAR/n=131072|top-k|131072|C++ sample+AVX512 compress+nth_element|"

	printf "| kernel | size | C AVX-512 | kvsimd avx512 | × (spread) | × best | C AVX2 | kvsimd avx2 | × (spread) | × best |\n"
	printf "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
	for (i = 1; i <= n; i++) {
		split(row[i], f, "|")
		scale = f[2] / f[5]
		line = "| " f[1] " | " f[2]
		measured = 0 # a family left out by FAMILIES has no row
		split("avx512 avx2", vs, " ")
		for (k = 1; k <= 2; k++) {
			g = f[3]; sub(/VAR/, vs[k], g)
			c = f[5+k] == "" ? "" : f[5+k] ~ /::/ ? "c " f[5+k] : "c " f[4] " " f[5] " " f[5+k]
			sub(/::/, " " f[5] " ", c)
			ct = c == "" ? "" : stat(c)
			if (ct != "" || stat("go " g) != "") measured = 1
			line = line " | " (ct == "" ? "–" : fmt_ns(ct * scale)) " | " fmt_ns(stat("go " g)) " | " (c == "" ? "– | –" : ratio("go " g, c, scale))
		}
		if (measured) print line " |"
	}

	if (stat("peakgflops") == "") exit
	printf "\nScores, fraction of the FMA peak measured by the Go benchmark process in the same round (%.0f GFLOP/s median):\n\n", stat("peakgflops")
	printf "| S | kvsimd avx512 | C AVX-512 | kvsimd avx2 | C AVX2 | dim 64 ÷ dim 128 GFLOP/s, avx512 / avx2 |\n| --- | --- | --- | --- | --- | --- |\n"
	split("4096 4112 16384 16400 131072", sizes, " ")
	for (i = 1; i <= 5; i++) {
		s = sizes[i]; cs = s == 4112 ? 4096 : s == 16400 ? 16384 : s
		line = "| " s
		split("avx512 avx2", vs, " ")
		split("score_gemm_avx512 12x32(C)|score_gemm_avx2 6x16(C)", cl, "|")
		dims = ""
		for (k = 1; k <= 2; k++) {
			p = stat("peak Scores/dim=128/" vs[k] "/n=" s)
			cg = stat("cgflops score " cs " " cl[k])
			line = line " | " (p == "" ? "–" : sprintf("%.0f %%", p)) " | " (cg == "" ? "–" : sprintf("%.0f %%", 100 * cg / stat("peakgflops")))
			d64 = stat("gflops Scores/dim=64/" vs[k] "/n=" s); d128 = stat("gflops Scores/dim=128/" vs[k] "/n=" s)
			dims = dims (k > 1 ? " / " : "") (d64 == "" || d128 == "" ? "–" : sprintf("%.2f", d64 / d128))
		}
		print line " | " dims " |"
	}
}'
