#!/usr/bin/env bash
# `mixseq bench train/eval --model transformer_xl` on a tiny shape, and the LSTM language model's
# preset at its bench shape: one JSON line each, with the
# parameter count of the reference's model at that shape and target tokens counted; a language
# model where a translation model is needed (and the reverse) is an error that says so.
#   bench_language_model.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
cd "$work"

source "$(dirname "$0")/expect_error.sh"

shape=(--model transformer_xl --vocab 50 --n-layer 2 --d-model 16 --n-head 2 --d-head 8 --d-inner 32 --tgt-len 6
       --batch 3)
"$mixseq" --threads 1 bench train "${shape[@]}" --mem-len 4 --cutoffs 20,35 --steps 2 --warmup-steps 1 >train.json
"$mixseq" --threads 1 bench eval "${shape[@]}" --eval-tgt-len 5 --mem-len 8 --clamp-len 3 --same-length \
  --steps 2 --warmup-steps 1 --profile 3 >eval.json
python3 - <<'PY'
import json
train = json.loads(open("train.json").readline())
lines = [json.loads(line) for line in open("eval.json")]
evaluation, profile = lines[0], lines[1:]
# Layers 2 x (qkv 768 + o 256 + r 256 + LayerNorms 64 + FFN 1,072) + embedding 800 + bias 50 + u, v 32
expected_params = 2 * (768 + 256 + 256 + 64 + 32 * 16 + 32 + 32 * 16 + 16) + 50 * 16 + 50 + 2 * 2 * 8
# The adaptive softmax of the training run adds cluster_weight [2, 16] and cluster_bias [2].
for record, bench, extra in ((train, "train", 2 * 16 + 2), (evaluation, "eval", 0)):
    assert record["bench"] == bench and record["model"] == "transformer_xl", record
    assert record["params"] == expected_params + extra, (record["params"], expected_params + extra)
    assert record["tok_per_s"] > 0 and record["tok_per_s_counts"].startswith("target tokens"), record
assert train["tgt_len"] == 6 and train["mem_len"] == 4 and train["steps"] == 2 and train["cutoffs"] == [20, 35], train
assert evaluation["eval_tgt_len"] == 5 and evaluation["mem_len"] == 8, evaluation
assert evaluation["clamp_len"] == 3 and evaluation["same_length"] is True, evaluation
assert 3.0 < evaluation["loss"] < 5.0, evaluation  # about log(50) = 3.9 for an untrained model
assert len(profile) == 3 and all(p["bench"] == "profile" for p in profile), profile
# Each timed segment's time, in order; together no more than the whole timed span.
segments = evaluation["segment_ms"]
assert len(segments) == evaluation["steps"] and min(segments) > 0, evaluation
assert sum(segments) <= evaluation["ms_per_segment"] * evaluation["steps"] * 1.001, evaluation
assert evaluation["segment_ms_median"] in segments, evaluation
PY

# Any key of the training config's model section sets the shape, after the bench's own flags: a
# Transformer's feed-forward width by --model.transformer.ffn_dim is the --ffn one; --model.arch
# names the architecture as --model does; keys outside the model section are refused.
small=(--threads 1 bench train --model transformer --vocab 50 --d-model 16 --heads 2 --layers 1 --batch 2 --seq-len 4
       --steps 1 --warmup-steps 0)
"$mixseq" "${small[@]}" --ffn 48 >flag.json
"$mixseq" "${small[@]}" --ffn 32 --model.transformer.ffn_dim 48 >key.json
"$mixseq" "${small[@]}" --model.transformer.ffn_dim 32 --model.transformer.normalize_before true >pre.json
"$mixseq" --threads 1 bench eval "${shape[@]/transformer_xl/gnmt}" --model.arch transformer_xl --steps 1 \
  --warmup-steps 0 >arch.json
python3 - <<'PY'
import json
flag, key, pre, arch = (json.loads(open(f).readline()) for f in ("flag.json", "key.json", "pre.json", "arch.json"))
assert flag["params"] == key["params"], (flag, key)
# ffn 48 against 32: per layer (one encoder, one decoder) 16 more rows of fc1 (16 x 16 + 16) and
# columns of fc2 (16 x 16); pre-norm adds a final LayerNorm (16 + 16) to the encoder and the decoder.
assert flag["params"] - pre["params"] == 2 * (16 * 16 + 16 + 16 * 16) - 2 * (16 + 16), (flag["params"], pre["params"])
assert arch["model"] == "transformer_xl" and arch["bench"] == "eval", arch
PY
# -c PRESET: the model section of a training config replaces the shape flags (a bench preset, as
# configs/bench/*.yaml); --model.<key> still applies after it; other sections are read but unused.
cat >preset.yaml <<'YAML'
model:
  arch: transformer
  transformer: {embed_dim: 16, ffn_dim: 32, heads: 2, encoder_layers: 1, decoder_layers: 1}
optim: {name: adam, lr: 1.0e-3}
YAML
preset=(--threads 1 bench train -c preset.yaml --vocab 50 --batch 2 --seq-len 4 --steps 1 --warmup-steps 0)
"$mixseq" "${preset[@]}" --d-model 64 --model.transformer.ffn_dim 48 >preset.json
"$mixseq" --threads 1 bench translate -c preset.yaml --vocab 50 --batch 2 --batches 1 --max-len 3 >preset_translate.json
python3 - <<'PY'
import json
flag, preset, search = (json.loads(open(f).readline()) for f in ("flag.json", "preset.json", "preset_translate.json"))
assert preset["params"] == flag["params"] and preset["config"] == "preset.yaml", (preset, flag)
assert "d_model" not in preset and preset["tok_per_s_counts"].startswith("target tokens"), preset
assert search["bench"] == "translate" and search["model"] == "transformer" and search["sent_per_s"] > 0, search
assert search["params"] == flag["params"] - 2 * (16 * 16 + 16 + 16 * 16), (search, flag)  # ffn 32, not 48
PY
# The LSTM language model's preset (configs/bench/lstm_lm.yaml): word_language_model at its bench
# shape, 4,653,200 parameters at vocabulary 10000, trained with the harness's plain SGD (lr 20,
# clip 0.25) that the preset's optim and clipping sections give; its evaluation.
lstm_preset=$(dirname "$0")/../../configs/bench/lstm_lm.yaml
"$mixseq" --threads 1 bench train -c "$lstm_preset" --vocab 10000 --batch 4 --tgt-len 5 --steps 2 --warmup-steps 1 \
  --precision fp32 >lstm_train.json
"$mixseq" --threads 1 bench eval -c "$lstm_preset" --vocab 10000 --batch 4 --tgt-len 5 --steps 2 --warmup-steps 1 \
  --precision fp32 >lstm_eval.json
python3 - <<'PY'
import json
train, evaluation = (json.loads(open(f).readline()) for f in ("lstm_train.json", "lstm_eval.json"))
for record in (train, evaluation):
    assert record["model"] == "lstm_lm" and record["params"] == 4653200, record
    assert record["tok_per_s"] > 0 and record["tok_per_s_counts"].startswith("target tokens"), record
assert train["optimizer"] == "sgd" and train["lr"] == 20.0 and train["max_norm"] == 0.25, train
assert 8.5 < evaluation["loss"] < 10.0, evaluation  # about log(10000) = 9.2 untrained
PY
printf 'model: {arch: transformer, transformer: {embed_dim: 16, heads: 3}}\n' >bad_heads.yaml
expect "embed_dim" bench train -c bad_heads.yaml --vocab 50 --steps 1
expect "unknown option --model.transformer.ffn" "${small[@]}" --model.transformer.ffn 48
expect "unknown option --train.seed" "${small[@]}" --train.seed 3

expect "bench eval measures a language model's evaluation, and --model gnmt is a sequence-to-sequence (translation) model; use bench translate, or --model lstm_lm" \
  bench eval --model gnmt --vocab 10 --steps 1
expect "model.arch 'transformer_xl' is a language model, but a sequence-to-sequence (translation) model is needed here" \
  bench translate --model transformer_xl --vocab 10 --batches 1
expect "unknown model.arch 'gpt'; known: deepspeech2, fconv, gnmt, jasper, lm_classifier, lstm_lm, tacotron2, transformer, transformer_xl, wave2letter_plus" bench train --model gpt --vocab 10 --steps 1
expect "--mem-len: -1 is out of range; it must be at least 0" bench eval --model transformer_xl --mem-len -1
[ "$failures" -eq 0 ] || exit 1
echo "PASS: bench train/eval --model transformer_xl print their JSON lines; the families are told apart"
