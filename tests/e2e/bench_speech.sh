#!/usr/bin/env bash
# `mixseq bench train/transcribe -c` for speech recognizers: configs/bench/jasper.yaml and ds2.yaml
# (the peer harness's architectures, 8,923,677 and 3,266,592 parameters) at a tiny shape give one
# JSON line with params, frames_per_s and audio_sec_per_s, which agree with the timed work; --profile
# adds one line per operator.
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
[ "$failures" -eq 0 ] || exit 1
echo "PASS: bench train/transcribe -c print their JSON lines for Jasper and DeepSpeech2, with --profile"
