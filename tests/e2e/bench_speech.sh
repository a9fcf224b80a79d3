#!/usr/bin/env bash
# `mixseq bench` for speech models (-c CONFIG): recognizers' train/transcribe at
# configs/bench/jasper.yaml and ds2.yaml (the peer harness's architectures, 8,923,677 and 3,266,592
# parameters) and synthesizers' train/synthesize at configs/bench/tacotron2.yaml (7,267,713) and the
# small preset, each at a tiny shape: one JSON line with params and the throughput figures, which
# agree with the timed work; --profile adds one line per operator; synthesize runs exactly --mel-len
# decoder steps.
#   bench_speech.sh <mixseq> <work dir> <source dir>
set -euo pipefail
mixseq=$1
work=$2
src=$3
rm -rf "$work" && mkdir -p "$work"
cd "$work"

source "$(dirname "$0")/expect_error.sh"

for preset in jasper ds2; do
  "$mixseq" --threads 1 bench train -c "$src/configs/bench/$preset.yaml" --batch 2 --frames 100 --steps 2 \
    --warmup-steps 1 --precision fp32 >"$preset.train.json"
  "$mixseq" --threads 1 bench transcribe -c "$src/configs/bench/$preset.yaml" --batch 2 --frames 100 --batches 2 \
    --warmup-batches 0 --precision fp32 --profile 4 >"$preset.transcribe.json"
done
python3 - <<'PY'
import json
expected = {"jasper": ("jasper", 8923677, "novograd"), "ds2": ("deepspeech2", 3266592, "sgd")}
for preset, (model, params, optimizer) in expected.items():
    train = json.loads(open(f"{preset}.train.json").readline())
    lines = [json.loads(line) for line in open(f"{preset}.transcribe.json")]
    transcribe, profile = lines[0], lines[1:]
    for record, bench in ((train, "train"), (transcribe, "transcribe")):
        assert record["bench"] == bench and record["model"] == model and record["params"] == params, record
        assert record["batch"] == 2 and record["frames"] == 100 and record["precision"] == "fp32", record
        # 2 timed steps (batches) of 2 x 100 frames; 10 ms frames: audio seconds are frames / 100.
        per_step = record.get("ms_per_step", record.get("ms_per_batch"))
        assert abs(record["frames_per_s"] - 200 * 1000 / per_step) < 1e-6 * record["frames_per_s"], record
        assert abs(record["audio_sec_per_s"] - record["frames_per_s"] / 100) < 1e-6 * record["frames_per_s"], record
    assert train["optimizer"] == optimizer and train["steps"] == 2 and train["loss"] > 0, train
    assert abs(transcribe["real_time_factor"] * transcribe["audio_sec_per_s"] - 1) < 1e-6, transcribe
    assert len(profile) == 4 and all(p["bench"] == "profile" and p["op"].startswith("aten::") for p in profile), profile
    shares = [p["share_of_wall_time"] for p in profile]
    assert shares == sorted(shares, reverse=True) and 0 < sum(shares) <= 1.0 + 1e-6, shares
PY
expect "bench transcribe: -c CONFIG names the speech recognizer's config" bench transcribe --batches 1

# Speech synthesizers.
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
echo "PASS: bench train/transcribe/synthesize -c print their JSON lines for Jasper, DeepSpeech2 and Tacotron 2"
