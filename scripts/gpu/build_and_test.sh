#!/usr/bin/env bash
# Builds mixseq with CUDA against the PyTorch 2.x LibTorch of a GPU machine and runs the tests.
# The machine has no package registry: run scripts/gpu/collect_debs.sh where there is one and
# carry .gpu-debs/ along; its packages are unpacked under /tmp, never over /.
#   scripts/gpu/build_and_test.sh [ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/../.."
deps=/tmp/mixseq-deps
rm -rf "$deps" && mkdir -p "$deps"
for deb in .gpu-debs/*.deb; do dpkg-deb -x "$deb" "$deps"; done
arch_libs="$deps/usr/lib/x86_64-linux-gnu"

torch_cmake=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
torch_libs=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'

# The unpacked .pc files say prefix=/usr: the sysroot moves their paths under $deps.
export PKG_CONFIG_PATH="$arch_libs/pkgconfig:$deps/usr/share/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$deps"
export LD_LIBRARY_PATH="$arch_libs:$torch_libs:${LD_LIBRARY_PATH:-}"
export TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}"

build_dir="${BUILD_DIR:-build-gpu}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$torch_cmake;$deps/usr" \
  -DCMAKE_LIBRARY_PATH="$arch_libs"
cmake --build "$build_dir" -j "$(nproc)"
ctest --test-dir "$build_dir" --output-on-failure -j 4 "$@"

# The NCCL path on this GPU: a one-rank job (world size 1) through c10d, with and without overlap.
for overlap in "" --no-overlap; do
  RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29511 \
    "$build_dir/bin/mixseq" bench train --device cuda --precision bf16 --model transformer --vocab 32000 \
    --d-model 512 --ffn 2048 --heads 8 --layers 6 --batch 128 --seq-len 30 --steps 20 $overlap
done
