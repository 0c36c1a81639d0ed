#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make bench-native: natively, compute on CPU 0 and the copy path on CPU 1.
#  1. bench_native: the shmem copy engines against memcpy, 4 KiB..256 MiB,
#     the per-transfer overhead, and the limit (bandwidth and CPU share
#     with compute and copies both running);
#  2. the demo (tools/demo/demo-run.sh) at its default size and at a size
#     whose compute per step is >= 1 ms: peak and wall time of the planned
#     run against the all-resident one, medians of 3 interleaved pairs,
#     and predicted against measured stall (demo-report).
# JSON under $O/bench/native-*.json.  Exit status 1 if any line says
# "not ok".  BENCH_PART=2 runs part 2 only.  BENCH_QUICK=1 shortens part 1; BENCH_PIN=0 runs part 2 with
# libhyper's default engine unpinned (for a host whose CPUs are shared).
set -u
O=${O:-build}
bin=$O/bin
# hyper-plan -m of the build tree reads the sources' configs (it has no
# path compiled in; installed, it reads share/hyper-plan/configs).
: "${HYPER_PLAN_CONFIGS:=$PWD/tools/hyper-plan/configs}"
export HYPER_PLAN_CONFIGS
out=$O/bench
mkdir -p "$out"
status=0
log=$out/native.log
: > "$log"

say() { echo "$*" | tee -a "$log"; }

say "# host load before: $(cut -d' ' -f1-3 /proc/loadavg) (the machine may be shared; see the CPU shares)"
if [ "${BENCH_PART:-}" != 2 ]; then
	say "== bench-native part 1: the copy path ($(nproc) CPUs; compute on CPU 0, copies on CPU 1)"
	"$O/bench-bin/libhyper/bench_native" ${BENCH_QUICK:+--quick} \
		--json "$out/native-copy.json" | tee -a "$log" || status=1
fi

# hyper-run as the demo runs it, but pinned: executor and SGEMM on CPU 0,
# one copy worker on CPU 1.
wrap=$out/hyper-run-pinned
pinning="--compute-cpu 0 --copy worker --copy-workers 1 --copy-cpus 1"
# The profile is measured on the same copy path, with compute running.
measure="--compute-cpu 0 --copy worker --copy-cpu 1"
where="compute on CPU 0, copy worker on CPU 1"
if [ "${BENCH_PIN:-1}" = 0 ]; then
	pinning=""
	measure=""
	where="the default copy engine, nothing pinned (BENCH_PIN=0)"
fi
cat > "$wrap" <<SH
#!/bin/sh
exec "$PWD/$bin/hyper-run" $pinning "\$@"
SH
chmod +x "$wrap"

for size in full long; do
	dir=$out/native-demo-$size
	say ""
	say "== bench-native part 2: make demo BACKEND=shmem, size $size ($where)"
	if ! HYPER_PLAN=$bin/hyper-plan HYPER_RUN=$wrap HYPER_DEMO_MEASURE=$measure \
	     tools/demo/demo-run.sh "$dir" "$size" shmem 2> "$dir.log"; then
		say "not ok - demo $size: $(tail -n 1 "$dir.log")"
		status=1
		continue
	fi
	grep '^demo: planning\|median\|^this-machine' "$dir.log" | tee -a "$log"
	steps=$(sed -n 's/.*"steps": *\([0-9]*\).*/\1/p' "$dir/planned-run.json" | head -n 1)
	comp=$(sed -n 's/.*"compute_ns": *\([0-9]*\).*/\1/p' "$dir/planned-run.json" | head -n 1)
	say "# compute per step: $((comp / steps / 1000)) us ($steps steps, $((comp / 1000000)) ms of SGEMM)"
	"$bin/demo-report" --timing-targets --max-wall 2 --json "$out/native-demo-$size.json" \
		"$dir/baseline-run.json" "$dir/planned-run.json" > "$dir.report" 2>&1
	tee -a "$log" < "$dir.report"
	grep -q '^not ok' "$dir.report" && status=1
done
say ""
say "figures: $out/native-copy.json $out/native-demo-full.json $out/native-demo-long.json"
exit $status
