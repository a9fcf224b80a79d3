#!/usr/bin/env bash
# ConvS2S (model.arch fconv) through everything a translation model has: a tiny one trains on the
# built-in task with fairseq's recipe (NAG, lr 0.25, momentum 0.99, clip 0.1; loss must fall),
# validates with beam search, translates alone, as an ensemble and averaged, scores, trains in bf16, and
# quantizes to int8 (every convolution and linear layer), which translates. Then the bench preset
# configs/bench/convs2s.yaml: fairseq's parameter count and the JSON keys the issue's checks read.
#   fconv.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
source "$(dirname "$0")/small_task.sh"
make_small_task "$mixseq" "$work"
tiny_fconv_train_command "$mixseq" "$work"
"${train[@]}" --train.max_steps 150 --train.log_interval 1 --train.validate_interval 150 --train.validate_bleu true \
  --train.run_dir "$work/run" 2>"$work/train.log" || { tail -20 "$work/train.log"; exit 1; }

sed -n 's/.*"kind":"train".*"loss":\([^,}]*\).*/\1/p' "$work/run/metrics.jsonl" >"$work/losses"
[ "$(wc -l <"$work/losses")" -eq 150 ] || { echo "FAIL: expected 150 logged updates"; exit 1; }
first=$(head -10 "$work/losses" | awk '{ s += $1 } END { print s / NR }')
last=$(tail -10 "$work/losses" | awk '{ s += $1 } END { print s / NR }')
awk -v f="$first" -v l="$last" 'BEGIN { exit !(l < 0.75 * f) }' ||
  { echo "FAIL: loss did not fall: first 10 updates $first, last 10 $last"; exit 1; }
grep -q '"bleu"' "$work/run/metrics.jsonl" || { echo "FAIL: no validation BLEU logged"; exit 1; }
grep -q "fconv with 172240 parameters" "$work/train.log" || { echo "FAIL: parameter count:"; grep "parameters" "$work/train.log"; exit 1; }

ckpt=$work/run/checkpoint_last.pt
"$mixseq" --threads 1 translate -c "$ckpt" -i "$work/raw/test.en" -o "$work/test.hyp" --device cpu \
  2>"$work/translate.log" || { tail -20 "$work/translate.log"; exit 1; }
[ "$(wc -l <"$work/test.hyp")" -eq "$(wc -l <"$work/raw/test.en")" ] ||
  { echo "FAIL: translate wrote $(wc -l <"$work/test.hyp") lines for $(wc -l <"$work/raw/test.en")"; exit 1; }
grep -q "output tokens/s (beam [0-9]*, fp32, cpu)" "$work/translate.log" ||
  { echo "FAIL: the float translate log does not say fp32:"; tail -2 "$work/translate.log"; exit 1; }
# An ensemble of a model with itself translates as the model does.
"$mixseq" --threads 1 translate -c "$ckpt" -c "$ckpt" -i "$work/raw/test.en" -o "$work/ensemble.hyp" --device cpu \
  2>"$work/ensemble.log" || { tail -20 "$work/ensemble.log"; exit 1; }
cmp -s "$work/test.hyp" "$work/ensemble.hyp" || { echo "FAIL: the self-ensemble translates differently"; exit 1; }
# Forced decoding of its own translations.
"$mixseq" --threads 1 score -c "$ckpt" -s "$work/raw/test.en" -t "$work/test.hyp" -o "$work/scores" --device cpu \
  2>"$work/score.log" || { tail -20 "$work/score.log"; exit 1; }
[ "$(wc -l <"$work/scores")" -eq "$(wc -l <"$work/raw/test.en")" ] || { echo "FAIL: score lines"; exit 1; }

# Checkpoint averaging: the mean of the best and the last checkpoints translates every line.
"$mixseq" average-checkpoints --inputs "$work/run/checkpoint_best.pt" "$ckpt" -o "$work/averaged.pt" \
  2>"$work/average.log" || { tail -20 "$work/average.log"; exit 1; }
"$mixseq" --threads 1 translate -c "$work/averaged.pt" -i "$work/raw/test.en" -o "$work/averaged.hyp" --device cpu \
  2>"$work/averaged.log" || { tail -20 "$work/averaged.log"; exit 1; }
[ "$(wc -l <"$work/averaged.hyp")" -eq "$(wc -l <"$work/raw/test.en")" ] || { echo "FAIL: averaged translate"; exit 1; }

# bf16 (autocast on the CPU): a few updates with finite losses.
"${train[@]}" --train.max_steps 5 --train.log_interval 1 --train.precision bf16 --train.validate_bleu false \
  --train.run_dir "$work/bf16" 2>"$work/bf16.log" || { tail -20 "$work/bf16.log"; exit 1; }
[ "$(grep -c '"kind":"train"' "$work/bf16/metrics.jsonl")" -eq 5 ] || { echo "FAIL: bf16 run"; exit 1; }
grep '"kind":"train"' "$work/bf16/metrics.jsonl" | grep -qi 'nan\|inf' && { echo "FAIL: bf16 loss not finite"; exit 1; }

# int8: every convolution and linear layer quantized (the tiny model's 13: the encoder's fc1, 2
# convolutions and fc2; the decoder's fc1, 2 convolutions, their attentions' 2 projections each, fc2, fc3), and the int8 checkpoint
# translates every line within a few BLEU of the float one (their calibrated ranges cost little).
"$mixseq" --threads 1 quantize -c "$ckpt" --calib "$work/raw/valid.en" -o "$work/int8.pt" 2>"$work/quantize.log" ||
  { tail -20 "$work/quantize.log"; exit 1; }
grep -q "13 of 13 linear layers, 0 of 0 embeddings, 0 of 0 points quantized (int8;" "$work/quantize.log" ||
  { echo "FAIL: expected all 13 convolutions and linear layers in int8:"; tail -5 "$work/quantize.log"; exit 1; }
"$mixseq" --threads 1 translate -c "$work/int8.pt" -i "$work/raw/test.en" -o "$work/int8.hyp" --device cpu \
  2>"$work/int8.log" || { tail -20 "$work/int8.log"; exit 1; }
[ "$(wc -l <"$work/int8.hyp")" -eq "$(wc -l <"$work/raw/test.en")" ] || { echo "FAIL: int8 translate"; exit 1; }
# The log says what ran: int8 layers, fp32 for the rest (not plain "fp32", as it once did).
grep -q "output tokens/s (beam [0-9]*, int8 layers, fp32 elsewhere, cpu)" "$work/int8.log" ||
  { echo "FAIL: the int8 translate log does not say int8:"; tail -2 "$work/int8.log"; exit 1; }
float_bleu=$("$mixseq" bleu -b "$work/raw/test.de" -i "$work/test.hyp")
int8_bleu=$("$mixseq" bleu -b "$work/raw/test.de" -i "$work/int8.hyp")
echo "test BLEU: float $float_bleu, int8 $int8_bleu"
awk -v f="$float_bleu" -v q="$int8_bleu" 'BEGIN { exit !(q >= f - 3 && f > 0) }' ||
  { echo "FAIL: int8 BLEU $int8_bleu is more than 3 below the float model's $float_bleu"; exit 1; }

# OpenSeq2Seq's en-de-convs2s (configs/convs2s_en_de_openseq2seq.yaml), its layers shrunk: the file's
# keys load (shared embeddings, the transformer_policy schedule: update 0 at 9 / sqrt(512) / 4000^1.5),
# a few updates train, and the checkpoint translates.
"$mixseq" --threads 1 train -c "$(dirname "$0")/../../configs/convs2s_en_de_openseq2seq.yaml" --data.dir "$work/data" \
  --data.max_sentences 16 --train.update_freq 1 --train.device cpu --train.precision fp32 \
  --model.fconv.encoder_embed_dim 32 --model.fconv.decoder_embed_dim 32 --model.fconv.decoder_out_embed_dim 32 \
  --model.fconv.encoder_layers "[(32, 3)] * 2" --model.fconv.decoder_layers "[(32, 3)] * 2" --train.max_steps 4 \
  --train.log_interval 1 --train.validate_bleu false --train.run_dir "$work/shared" 2>"$work/shared.log" ||
  { tail -20 "$work/shared.log"; exit 1; }
python3 - "$work/shared/metrics.jsonl" <<'PY'
import json, math, sys
updates = [r for r in map(json.loads, open(sys.argv[1])) if r.get("kind") == "train"]
assert len(updates) == 4, updates
expected = 9 / math.sqrt(512) / 4000 ** 1.5
assert abs(updates[0]["lr"] - expected) < 1e-9 * expected, (updates[0]["lr"], expected)
PY
"$mixseq" --threads 1 translate -c "$work/shared/checkpoint_last.pt" -i "$work/raw/test.en" -o "$work/shared.hyp" \
  --device cpu 2>"$work/shared_translate.log" || { tail -20 "$work/shared_translate.log"; exit 1; }
[ "$(wc -l <"$work/shared.hyp")" -eq "$(wc -l <"$work/raw/test.en")" ] || { echo "FAIL: shared-embedding translate"; exit 1; }

preset=$(dirname "$0")/../../configs/bench/convs2s.yaml
"$mixseq" --threads 1 bench train -c "$preset" --vocab 2000 --batch 4 --seq-len 6 --steps 2 --warmup-steps 1 \
  --precision fp32 >"$work/bench_train.json"
"$mixseq" --threads 1 bench translate -c "$preset" --vocab 2000 --beam 2 --batch 2 --batches 1 --max-len 4 \
  --precision fp32 >"$work/bench_translate.json"
python3 - "$work" <<'PY'
import json, sys
train, search = (json.loads(open(f"{sys.argv[1]}/{name}").readline()) for name in ("bench_train.json", "bench_translate.json"))
for record in (train, search):
    assert record["model"] == "fconv" and record["params"] == 5484448, record
assert train["tgt_tok_per_s"] > 0 and train["tgt_tok_per_s"] == train["tok_per_s"], train
assert train["optimizer"] == "nag" and train["lr"] == 0.25 and train["max_norm"] == 0.1, train
assert search["sent_per_s"] > 0, search
PY
echo "PASS: fconv loss $first -> $last over 150 updates; translated (alone, as an ensemble, averaged), scored, bf16, quantize refused, OpenSeq2Seq's shared preset, bench preset"
