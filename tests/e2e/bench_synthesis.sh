#!/usr/bin/env bash
# `mixseq bench train/synthesize -c` for speech synthesizers: configs/bench/tacotron2.yaml (the peer
# harness's shape, 7,267,713 parameters) and the small preset at a tiny shape give one JSON line with
# params and mel_frames_per_s / decoder_steps_per_s; synthesize runs exactly --mel-len decoder steps.
#   bench_synthesis.sh <mixseq> <work dir> <source dir>
set -euo pipefail
mixseq=$1
work=$2
src=$3
rm -rf "$work" && mkdir -p "$work"
cd "$work"

source "$(dirname "$0")/expect_error.sh"

"$mixseq" --threads 1 bench train -c "$src/configs/bench/tacotron2.yaml" --batch 2 --text-len 8 --mel-len 6 \
  --steps 1 --warmup-steps 1 --precision fp32 >train.json
"$mixseq" --threads 1 bench synthesize -c "$src/configs/bench/tacotron2.yaml" --batch 1 --text-len 8 --mel-len 7 \
  --batches 2 --warmup-batches 0 --precision fp32 >synthesize.json
"$mixseq" --threads 1 bench synthesize -c "$src/configs/tacotron2_small.yaml" --batch 2 --text-len 5 --mel-len 4 \
  --batches 1 --warmup-batches 0 >small.json
python3 - <<'PY'
import json
train = json.loads(open("train.json").readline())
synth = json.loads(open("synthesize.json").readline())
small = json.loads(open("small.json").readline())
for record in (train, synth):
    assert record["model"] == "tacotron2" and record["params"] == 7267713, record
assert train["bench"] == "train" and train["mel_frames_per_s"] > 0 and train["optimizer"] == "adam", train
assert train["clip"] == 1.0, train
assert synth["bench"] == "synthesize" and synth["decoder_steps_per_s"] > 0, synth
# 2 calls of exactly 7 steps at batch 1: steps/s and frames/s agree, and match ms_per_batch.
assert abs(synth["decoder_steps_per_s"] - 7 * 1000 / synth["ms_per_batch"]) < 1e-6 * synth["decoder_steps_per_s"], synth
assert abs(small["mel_frames_per_s"] - 2 * small["decoder_steps_per_s"]) < 1e-6 * small["mel_frames_per_s"], small
assert small["params"] < train["params"] / 2, small
PY
expect "bench synthesize: -c CONFIG names the speech synthesizer's config" bench synthesize --batches 1
expect "bench train: -c CONFIG names the speech synthesizer's training config" bench train --model tacotron2 --steps 1
[ "$failures" -eq 0 ] || exit 1
echo "PASS: bench train/synthesize -c print their JSON lines at the bench and small presets"
