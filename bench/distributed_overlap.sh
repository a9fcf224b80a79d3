#!/usr/bin/env bash
# Data-parallel training step time with and without overlapping the gradient all-reduce with
# backward, on this machine: N ranks of `mixseq bench train` over Gloo (or NCCL on GPUs),
# started with torchrun's variables. Prints one JSON line per setting (rank 0's figures).
#   bench/distributed_overlap.sh [ranks] [mixseq bench train options...]
#   bench/distributed_overlap.sh 2 --model gnmt --hidden 256 --layers 4 --threads-per-rank 1
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
mixseq=${MIXSEQ:-$here/build/bin/mixseq}
ranks=${1:-2}
shift $(( $# > 0 ? 1 : 0 ))
threads=${THREADS_PER_RANK:-1}
shape=("$@")
[ ${#shape[@]} -gt 0 ] || shape=(--model gnmt --vocab 2000 --hidden 256 --layers 4 --batch 32 --seq-len 30)

for overlap in "" --no-overlap; do
  for bucket_mb in 25 1; do
    port=$((20000 + RANDOM % 20000))
    pids=()
    for ((rank = 0; rank < ranks; ++rank)); do
      RANK=$rank WORLD_SIZE=$ranks LOCAL_RANK=$rank MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
        "$mixseq" --threads "$threads" bench train "${shape[@]}" --steps 20 --warmup-steps 3 \
        --bucket-mb "$bucket_mb" $overlap &
      pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid"; done
  done
done
