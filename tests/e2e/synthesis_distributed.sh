#!/usr/bin/env bash
# Speech synthesis in data parallel and in bf16, on a tiny Tacotron 2 (configs/tacotron2_tiny.yaml)
# and one espeak-ng voice:
#   - 2 ranks over Gloo (one batch each per update) log the same loss at every update as one
#     process with update_freq 2 on the same batches (dropouts off: each rank draws its own masks).
#     Validation is not compared: batch norm's running statistics are each rank's own, as
#     PyTorch's DistributedDataParallel keeps them without SyncBatchNorm;
#   - bf16 autocast from the same initial weights and batch: the first update's loss within 2% of
#     fp32's, and the loss falls over the run as fp32's does.
#   synthesis_distributed.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
command -v espeak-ng >/dev/null || { echo "SKIP: espeak-ng is not installed (scripts/setup.sh installs it)"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
python3 "$here/tools/spoken_numbers.py" "$work/digits" --train 40 --valid 4 --seed 4 --voice en-us
"$mixseq" prepare --task speech --train "$work/digits/train.tsv" --valid "$work/digits/valid.tsv" -o "$work/data" \
  --sample-rate 22050 >/dev/null
train=("$mixseq" --threads 1 train -c "$here/../../configs/tacotron2_tiny.yaml" --data.dir "$work/data"
       --synthesis.max_frames 400 --train.max_epochs 0 --train.log_interval 1 --train.validate_interval 1000
       --model.tacotron2.p_attention_dropout 0 --model.tacotron2.p_decoder_dropout 0
       --model.tacotron2.prenet_dropout 0 --model.tacotron2.conv_dropout 0)
source "$here/two_ranks.sh"

# 1. Two ranks against one process with update_freq 2.
start_rank 0 pair --train.run_dir "$work/pair" --train.max_steps 8 --train.precision fp32
start_rank 1 pair --train.run_dir "$work/pair" --train.max_steps 8 --train.precision fp32
wait %1 || fail "rank 0 failed: $(tail -3 "$work/pair.rank0.log")"
wait %2 || fail "rank 1 failed: $(tail -3 "$work/pair.rank1.log")"
"${train[@]}" --train.run_dir "$work/alone" --train.max_steps 8 --train.update_freq 2 --train.precision fp32 \
  2>"$work/alone.log"
losses "$work/pair/metrics.jsonl" >"$work/pair.losses"
losses "$work/alone/metrics.jsonl" >"$work/alone.losses"
[ "$(wc -l <"$work/pair.losses")" -eq 8 ] || fail "expected 8 logged updates from rank 0"
same_numbers "$work/pair.losses" "$work/alone.losses" ||
  fail "2 ranks and 1 process with update_freq 2 logged different losses:" \
    "$(paste "$work/pair.losses" "$work/alone.losses" | head -4)"
echo "2 ranks = 1 process with update_freq 2, 8 updates (step, loss): $(head -1 "$work/pair.losses") ..." \
  "$(tail -1 "$work/pair.losses")"

# 2. bf16 autocast against fp32, 30 updates each from the same seed.
"${train[@]}" --train.run_dir "$work/fp32" --train.max_steps 30 --train.precision fp32 2>"$work/fp32.log"
"${train[@]}" --train.run_dir "$work/bf16" --train.max_steps 30 --train.precision bf16 2>"$work/bf16.log"
grep -q "precision bf16" "$work/bf16.log" || fail "the bf16 run does not say bf16: $(head -3 "$work/bf16.log")"
losses "$work/fp32/metrics.jsonl" >"$work/fp32.losses"
losses "$work/bf16/metrics.jsonl" >"$work/bf16.losses"
python3 - "$work/fp32.losses" "$work/bf16.losses" <<'PY' || fail "bf16 training differs from fp32's"
import math, sys
fp32, bf16 = ([float(line.split()[1]) for line in open(path)] for path in sys.argv[1:3])
assert len(fp32) == len(bf16) == 30, (len(fp32), len(bf16))
assert all(math.isfinite(x) for x in bf16), bf16
first = abs(bf16[0] - fp32[0]) / fp32[0]
print(f"update 1 loss: fp32 {fp32[0]:.4f}, bf16 {bf16[0]:.4f} ({100 * first:.2f}% apart)")
print(f"mean of the last 5: fp32 {sum(fp32[-5:]) / 5:.4f}, bf16 {sum(bf16[-5:]) / 5:.4f}")
assert first < 0.02, "the first update's loss is more than 2% from fp32's"
assert sum(bf16[-5:]) / 5 < 0.7 * bf16[0], "the bf16 loss did not fall"
assert sum(bf16[-5:]) / 5 < 1.25 * sum(fp32[-5:]) / 5, "bf16 ends far above fp32"
PY
echo "PASS: data-parallel and bf16 synthesis training"
