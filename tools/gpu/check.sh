#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make check-gpu: the CUDA device on a machine with a GPU, in at most 8
# minutes.  TAP; exit 1 when a line is "not ok".
#   1. the bundle (make gpu-bundle, built on the Debian host and carried
#      over: libhyper, libhyperplan, liburing, json-c, libnuma, cuda_test)
#      loads: every library it needs resolves;
#   2. cuda_test against the real libcudart (HYPER_TEST_REAL_CUDA=1):
#      transfers of 4 KiB to 1 GiB checked, stream and event ordering, the
#      pinned pool, bad input;
#   3. the Python CUDA tests (python/tests/test_cuda.py) under pytest;
#   4. the benchmark, python/bench_gpu.py: JSON and the Markdown table
#      under $OUT (or build/gpu-out), its targets as ok / not ok lines.
#   The Python zoo of the capture tests runs on CUDA in step 3 too
#   (test_zoo_cuda: outputs and state equal eager on the same GPU).
# --self-test (make check, no GPU): steps 1 and 2 against the fake CUDA
# runtime the bundle carries; 3 and 4 are left out.
# GPU_CHECK_STEPS chooses steps (default "unit python zoo bench"; the
# bundle is always checked), BENCH_GPU_ARGS adds bench_gpu.py options.
# usage: [GPU_BUNDLE=dir] [OUT=dir] tools/gpu/check.sh [--self-test]
set -u
cd "$(dirname "$0")/../.." || exit 1
. selftests/lib/tap.sh
self_test=0
[ "${1:-}" = --self-test ] && self_test=1
b=${GPU_BUNDLE:-build/gpu-bundle}
odir=${OUT:-build/gpu-out}
mkdir -p "$odir"
py=${PYTHON:-python3}
steps=" ${GPU_CHECK_STEPS:-unit python zoo bench} "
want() { case "$steps" in *" $1 "*) return 0 ;; esac; return 1; }

# No bundle here: build one if this machine can (it has make and a compiler).
if [ ! -x "$b/bin/cuda_test" ] && command -v make > /dev/null && command -v cc > /dev/null; then
	make -s gpu-bundle > "$odir/bundle.log" 2>&1 || tail -n 20 "$odir/bundle.log"
fi
LD_LIBRARY_PATH=$(cd "$b" 2> /dev/null && pwd)/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH

bundle_resolves() {
	[ -x "$b/bin/cuda_test" ] || { echo "$b/bin/cuda_test missing: make gpu-bundle on the build host and carry $b"; return 1; }
	lib=$(cd "$b/lib" && pwd)
	for f in "$b/bin/cuda_test" "$b"/lib/libhyper*.so.1; do
		if ldd "$f" | grep 'not found'; then
			echo "$f: a library is missing from $b/lib"
			return 1
		fi
		# What the GPU machine may lack comes from the bundle, not the system.
		if ldd "$f" | awk -v lib="$lib/" '$1 ~ /^lib(uring|json-c|numa|hyper|hyperplan)\.so/ &&
				index($3, lib) != 1 { print; bad = 1 } END { exit !bad }'; then
			echo "$f: the libraries above are not the bundle's"
			return 1
		fi
	done
}
check "bundle: cuda_test and libhyper resolve every library from $b/lib" bundle_resolves

# The real runtime: on the loader's path, in the toolkit, or in torch's wheels.
find_cudart() {
	for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/lib/x86_64-linux-gnu; do
		for v in 13 12; do
			[ -e "$d/libcudart.so.$v" ] && { echo "$d/libcudart.so.$v"; return; }
		done
	done
	"$py" - 2> /dev/null <<'EOF'
import glob, os, site, sys
dirs = site.getsitepackages() + [site.getusersitepackages()]
for d in dirs:
    for v in ("13", "12"):
        for p in sorted(glob.glob(os.path.join(d, "nvidia", "**", "libcudart.so.%s" % v),
                                  recursive=True)):
            print(p)
            sys.exit(0)
EOF
}

if [ $self_test = 1 ]; then
	check "cuda_test against the fake CUDA runtime (the bundle's own build)" \
		env HYPER_CUDART="$b/lib/test/libfake_cudart.so" FAKE_CUDART_NB_DELAY_US=20000 \
		timeout 300 "$b/bin/cuda_test"
	finish
	exit
fi

if [ -z "${HYPER_CUDART:-}" ]; then
	HYPER_CUDART=$(find_cudart)
	export HYPER_CUDART
fi
echo "# CUDA runtime: ${HYPER_CUDART:-none found}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/# /'
want unit && check "cuda_test on the GPU: 4 KiB to 1 GiB, ordering, pinned pool, bad input" \
	env HYPER_TEST_REAL_CUDA=1 timeout 90 "$b/bin/cuda_test"

export PYTHONPATH=$PWD/python HYPEROFFLOAD_LIBHYPER=$PWD/$b/lib/libhyper.so.1 \
	HYPEROFFLOAD_LIBHYPERPLAN=$PWD/$b/lib/libhyperplan.so.1
pytest_cuda() {
	timeout "$1" "$py" -m pytest -q -p no:cacheprovider -k "$2" python/tests/test_cuda.py \
		> "$odir/pytest-$3.log" 2>&1
	rc=$?
	tail -n 30 "$odir/pytest-$3.log" | sed 's/^/# /'
	return $rc
}
if ! "$py" -c 'import pytest' 2> /dev/null; then
	check "Python on CUDA: pytest is installed" false
else
	if want python; then
		check "Python on CUDA: python/tests/test_cuda.py" pytest_cuda 90 "not zoo" python
		tail -n 1 "$odir/pytest-python.log" | sed 's/^/# /'
	fi
	if want zoo; then
		check "Python on CUDA: the capture zoo, equal to eager on the GPU" \
			pytest_cuda 150 zoo zoo
		tail -n 1 "$odir/pytest-zoo.log" | sed 's/^/# /'
	fi
fi
want bench || { finish; exit; }

# shellcheck disable=SC2086
"$py" python/bench_gpu.py ${BENCH_GPU_ARGS:-} --json "$odir/bench-gpu.json" --table "$odir/bench-gpu.md" \
	> "$odir/bench-targets.tap" 2> "$odir/bench.log" &
pid=$!
( sleep "${BENCH_GPU_TIMEOUT:-270}"; kill "$pid" 2> /dev/null ) &
watchdog=$!
wait "$pid"
rc=$?
kill "$watchdog" 2> /dev/null
sed 's/^/# /' "$odir/bench.log" | tail -n 40
# The benchmark's targets, numbered after the checks above.
while read -r st rest; do
	case "$st $rest" in
	"ok "*) tap_n=$((tap_n + 1)); tap_pass=$((tap_pass + 1)); echo "ok $tap_n bench: ${rest#* }" ;;
	"not ok "*) tap_n=$((tap_n + 1)); tap_fail=$((tap_fail + 1)); r=${rest#ok }; echo "not ok $tap_n bench: ${r#* }" ;;
	esac
done < "$odir/bench-targets.tap"
[ $rc -eq 0 ] || [ -s "$odir/bench-targets.tap" ] || check "bench: python/bench_gpu.py ran (status $rc)" false
finish
