#!/usr/bin/env bash
# Builds mixseq with CUDA against the PyTorch 2.x LibTorch of a GPU machine, checks it on the GPU
# and runs the unit tests. The machine has no package registry: run scripts/gpu/collect_debs.sh
# where there is one and carry .gpu-debs/ along; its packages are unpacked under /tmp, never over /.
#   scripts/gpu/build_and_test.sh [ctest arguments]
#
# Device time is scarce (minutes per session), so the steps run in the order of what they are
# worth, each logged, timed and allowed to fail without stopping the ones after it:
#   1. configure, then build the command with `ninja -k 0` (every compile error in one run);
#   2. GPU checks (gpu_checks.log): `mixseq bench` per model family on cuda in fp32, tf32, bf16
#      and fp16, a one-rank NCCL job through c10d with and without overlap, and, when
#      .gpu-carry/demo_data (a `mixseq demo` dataset) and .gpu-carry/demo.yaml are carried along,
#      a real training run with validation BLEU on the GPU;
#   3. build the tests (beside step 2, on all cores but two, at the lowest priority) and run the
#      unit suites (ctest -L unit unless arguments say otherwise), stopped at the deadline.
# Logs go to $OUT when it is set (the device tool's folder), else to the build folder; summary.txt
# lists every step with its exit status and seconds.
#   MIXSEQ_GPU_DEADLINE  seconds from the start after which no new step starts and ctest is
#                        stopped (default 3000)
#   MIXSEQ_GPU_SKIP_TESTS=1  steps 1 and 2 only
#   MIXSEQ_GPU_TARGETS="t1 t2 ..."  a short rerun: build only these targets, skip step 2's checks,
#                        then run ctest with the arguments given (say -R 'test_text|test_optim')
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
deadline=$((start + ${MIXSEQ_GPU_DEADLINE:-3000}))
build_dir="${BUILD_DIR:-build-gpu}"
logs="${OUT:-$build_dir}"
mkdir -p "$logs" "$build_dir"
summary="$logs/summary.txt"
: > "$summary"

# step NAME LOG SECONDS COMMAND...: runs COMMAND under `timeout SECONDS` (cut to the deadline),
# appending its output to LOG, and records its status in the summary.
step() {
  local name=$1 log=$2 limit=$3; shift 3
  local now left t0 rc
  now=$(date +%s); left=$((deadline - now))
  if ((left < 5)); then echo "$name: skipped (deadline)" | tee -a "$summary"; return 1; fi
  ((limit > left)) && limit=$left
  echo "=== $name ($(date -u +%T), limit ${limit}s): $*" >> "$log"
  t0=$(date +%s)
  timeout --kill-after=5 "$limit" "$@" >> "$log" 2>&1
  rc=$?
  echo "$name: rc $rc, $(($(date +%s) - t0)) s" | tee -a "$summary"
  echo "=== $name: rc $rc" >> "$log"
  return $rc
}

# run_tests [ctest arguments]: the unit suites, or the tests the arguments name, stopped at the
# deadline; their tally and the total time go to the summary.
run_tests() {
  if (($# == 0)); then set -- -L unit; fi
  step ctest "$logs/test.log" 1800 ctest --test-dir "$build_dir" --output-on-failure -j 8 "$@"
  grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|Not Run" "$logs/test.log" >> "$summary" 2>/dev/null
  echo "total: $(($(date +%s) - start)) s" >> "$summary"
}

deps=/tmp/mixseq-deps
rm -rf "$deps" && mkdir -p "$deps"
for deb in .gpu-debs/*.deb; do dpkg-deb -x "$deb" "$deps"; done
# Links that name an absolute path (Debian's libz.so -> /lib/x86_64-linux-gnu/libz.so.1.2.13) would
# reach the machine's own files, or nothing, and the linker would take the static libz.a instead.
while IFS= read -r link; do
  ln -sfn "$deps$(readlink "$link")" "$link"
done < <(find "$deps" -type l -lname '/*')
arch_libs="$deps/usr/lib/x86_64-linux-gnu"

{
  echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  g++ --version | head -1; cmake --version | head -1; ninja --version
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'
} > "$logs/machine.txt" 2>&1
cat "$logs/machine.txt" >> "$summary"
torch_cmake=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
torch_libs=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')

# The unpacked .pc files say prefix=/usr: the sysroot moves their paths under $deps.
export PKG_CONFIG_PATH="$arch_libs/pkgconfig:$deps/usr/share/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$deps"
export LD_LIBRARY_PATH="$arch_libs:$torch_libs:${LD_LIBRARY_PATH:-}"
export TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}"

build_log="$logs/build.log"
# The compiler must link libstdc++.so.6, not the static libstdc++.a: with the archive every program
# and libmixseq.so carry their own copy of libstdc++ (its own std::cerr, which the SentencePiece
# module refuses, and its own std::filesystem). On the 2026-11-28 machine CMake's compiler,
# /opt/gcc/bin/g++, did just that (test_text and libmixseq.so defined std::cerr and
# std::filesystem::remove_all, no program needed libstdc++.so.6). A one-line program shows which
# one the compiler takes; where it is the archive, every link names the system's libstdc++.so.6
# ahead of everything else (a folder searched first holds a link to it): its definitions then
# leave nothing for the archive to supply, whether the compiler's libstdc++.so was missing or its
# specs said -static-libstdc++.
cxx=${CXX:-$(command -v g++)}
probe=/tmp/mixseq-stdcxx
mkdir -p "$probe"
printf '#include <iostream>\nint main() { std::cerr << ""; }\n' > "$probe/probe.cpp"
linker_flags=()
{
  echo "compiler: $cxx ($(readlink -f "$cxx")); its libstdc++.so: $("$cxx" -print-file-name=libstdc++.so)"
  ls -la "$(dirname "$("$cxx" -print-libgcc-file-name)")" | grep -E 'libstdc|libgomp' || true
  "$cxx" -o "$probe/probe" "$probe/probe.cpp" && readelf -d "$probe/probe" | grep NEEDED
  if ! readelf -d "$probe/probe" | grep -q 'libstdc++\.so'; then
    system_stdcxx=$(ldconfig -p | awk '/libstdc\+\+\.so\.6 .*x86-64/ {print $NF; exit}')
    echo "the compiler links libstdc++ statically; pointing the linker at $system_stdcxx"
    ln -sfn "$system_stdcxx" "$probe/libstdc++.so"
    flags="-L$probe -Wl,--push-state,--no-as-needed,-lstdc++,--pop-state"
    linker_flags=(-DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags"
                  -DCMAKE_MODULE_LINKER_FLAGS="$flags")
    # shellcheck disable=SC2086  # the flags are split on purpose
    "$cxx" $flags -o "$probe/probe" "$probe/probe.cpp" && readelf -d "$probe/probe" | grep NEEDED
    echo "the probe defines $(nm --defined-only "$probe/probe" | grep -c ' T _ZNS') libstdc++ functions itself"
  fi
} > "$logs/toolchain.txt" 2>&1
cat "$logs/toolchain.txt" >> "$summary"
# The Python module needs Debian's python3 and pybind11-dev, which the machine lacks.
step configure "$build_log" 300 cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" "${linker_flags[@]}" \
  -DMIXSEQ_BUILD_PYTHON=OFF -DCMAKE_PREFIX_PATH="$torch_cmake;$deps/usr" -DCMAKE_LIBRARY_PATH="$arch_libs" \
  || { grep -E "Error|error" "$build_log" | head -40 >> "$summary"; exit 1; }
if [[ -n ${MIXSEQ_GPU_TARGETS:-} ]]; then
  # shellcheck disable=SC2086  # the list is split into targets on purpose
  step build_targets "$build_log" 1800 cmake --build "$build_dir" --target $MIXSEQ_GPU_TARGETS -- -k 0 -j "$(nproc)"
  grep -E "error:|undefined reference|FAILED" "$build_log" | head -60 >> "$summary"
  run_tests "$@"
  exit 0
fi
step build_command "$build_log" 1800 cmake --build "$build_dir" --target mixseq -- -k 0 -j "$(nproc)"
built=$?
if ((built != 0)); then
  echo "--- compile errors (first 60 lines; all in build.log):" >> "$summary"
  grep -E "error:|undefined reference|FAILED" "$build_log" | head -60 >> "$summary"
fi

mixseq="$build_dir/bin/mixseq"
checks="$logs/gpu_checks.log"
if ((built == 0)); then
  # The tests build meanwhile on all cores but two, at the lowest priority: the checks' host
  # threads (kernel launches) keep a core of their own.
  if [[ -z ${MIXSEQ_GPU_SKIP_TESTS:-} ]]; then
    step build_tests "$build_log" 1800 nice -n 19 cmake --build "$build_dir" -- -k 0 -j "$(($(nproc) - 2))" &
    tests_build=$!
  fi
  step version "$checks" 30 "$mixseq" --version
  # The Scaling-NMT Transformer base shape, every precision; the NCCL path on this GPU: a one-rank
  # job (world size 1) through c10d, with and without overlap. Most telling first: the deadline
  # may cut the list short.
  transformer=(--model transformer --vocab 32000 --d-model 512 --ffn 2048 --heads 8 --layers 6)
  step bench_train_transformer_bf16 "$checks" 60 "$mixseq" bench train --device cuda --precision bf16 \
    "${transformer[@]}" --batch 128 --seq-len 30 --steps 20
  step bench_train_transformer_fp32 "$checks" 60 "$mixseq" bench train --device cuda --precision fp32 \
    "${transformer[@]}" --batch 128 --seq-len 30 --steps 20
  for overlap in "" --no-overlap; do
    step "nccl_one_rank${overlap}" "$checks" 60 env RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 \
      MASTER_PORT=29511 "$mixseq" bench train --device cuda --precision bf16 "${transformer[@]}" --batch 128 \
      --seq-len 30 --steps 20 $overlap
  done
  step bench_translate_transformer_bf16 "$checks" 60 "$mixseq" bench translate --device cuda --precision bf16 \
    "${transformer[@]}" --beam 5 --batch 64 --batches 2 --max-len 30
  for precision in fp16 tf32; do
    step "bench_train_transformer_$precision" "$checks" 60 "$mixseq" bench train --device cuda --precision $precision \
      "${transformer[@]}" --batch 128 --seq-len 30 --steps 20
  done
  step bench_train_gnmt_bf16 "$checks" 60 "$mixseq" bench train --device cuda --precision bf16 --model gnmt \
    --vocab 32000 --hidden 1024 --layers 4 --batch 128 --seq-len 30 --steps 10
  step bench_train_transformer_xl_bf16 "$checks" 60 "$mixseq" bench train --device cuda --precision bf16 \
    --model transformer_xl --vocab 32000 --n-layer 16 --n-head 8 --d-head 64 --d-inner 2048 --d-model 512 \
    --batch 32 --tgt-len 128 --mem-len 128 --steps 10
  for preset in jasper ds2 convs2s lstm_lm tacotron2; do
    step "bench_train_${preset}_bf16" "$checks" 60 "$mixseq" bench train --device cuda --precision bf16 \
      -c "configs/bench/$preset.yaml" --steps 10
  done
  if [[ -d .gpu-carry/demo_data && -f .gpu-carry/demo.yaml ]]; then
    step train_demo_cuda_bf16 "$checks" 180 "$mixseq" train -c .gpu-carry/demo.yaml --overwrite \
      --train.run_dir /tmp/gpu-demo-run --train.device cuda --train.precision bf16 --train.max_epochs 3 \
      --train.log_interval 100
  fi
  grep -h '^{' "$checks" > "$logs/bench.jsonl" 2>/dev/null
  [[ -n ${tests_build:-} ]] && wait $tests_build
  # Which std::cerr the programs use (the SentencePiece module refuses a program holding its own;
  # on the 2026-11-27 machine test_text did, with no copy relocation: libstdc++ bound its cerr to
  # the program's), how g++ links libstdc++ there, and the order of the needed libraries
  # (libstdc++ must precede LibTorch: src/CMakeLists.txt).
  step libstdcxx "$checks" 60 bash -c "for p in '$mixseq' '$build_dir/bin/test_text'; do echo \"-- \$p\"; \
    readelf -rW \"\$p\" | grep -E 'COPY' || echo 'no copy relocations'; \
    nm -D --defined-only \"\$p\" | grep -E '_ZSt4cerr|_ZSt4cout' || echo 'defines no std::cerr'; \
    nm --defined-only \"\$p\" | grep -c ' T _ZNS' ; readelf -d \"\$p\" | grep NEEDED; done; \
    f=\$(g++ -print-file-name=libstdc++.so); ls -la \"\$f\"; file -L \"\$f\" 2>/dev/null | head -1; \
    head -c 300 \"\$f\" | grep -a INPUT || true; \
    LD_DEBUG=bindings '$build_dir/bin/test_text' --gtest_filter='SentencePieceTrain.BadOptions*' 2>&1 | grep _ZSt4cerr | head -8"
elif [[ -z ${MIXSEQ_GPU_SKIP_TESTS:-} ]]; then
  step build_tests "$build_log" 1800 cmake --build "$build_dir" -- -k 0 -j "$(nproc)"
fi
[[ -n ${MIXSEQ_GPU_SKIP_TESTS:-} ]] && { echo "tests: skipped (MIXSEQ_GPU_SKIP_TESTS)" >> "$summary"; exit 0; }

run_tests "$@"
