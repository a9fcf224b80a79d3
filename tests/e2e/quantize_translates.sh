#!/usr/bin/env bash
# Post-training quantization end to end (issue 13): a tiny Transformer (the recipe of
# transformer_learns.sh, with untied embeddings so that the output projection is a linear layer
# of its own) learns the built-in task, `mixseq quantize` calibrates it on the validation
# sources, and the int8 checkpoint, and a simulated one, translate the test split within a few BLEU
# of the float model (trained on one thread: the same model whatever the load; the bounds below
# come from 12 seeds). All 33 linear
# layers are quantized (and in simulation the embeddings and quantization points too), and the
# int8 checkpoint stores their weights in 8 bits. Then the float-only tools refuse the quantized
# checkpoint. The automatic per-layer search runs too, and prints a speed column.
#   quantize_translates.sh <mixseq> <work dir> [seed]     (train.seed; 1 in the test suite)
set -euo pipefail
mixseq=$1
work=$2
seed=${3:-1}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"

"$mixseq" synth -o "$work/raw" --train-size 4000 --valid-size 100 --test-size 600
"$mixseq" bpe learn -i "$work/raw/train.en" -i "$work/raw/train.de" -s 400 -o "$work/raw/codes.bpe"
"$mixseq" prepare --train "$work/raw/train" --valid "$work/raw/valid" -o "$work/data" \
  --tokenizer "bpe:$work/raw/codes.bpe" >/dev/null
"$mixseq" --threads 1 train --train.device cpu --data.dir "$work/data" --data.max_tokens 1024 \
  --model.arch transformer --model.transformer.embed_dim 64 --model.transformer.ffn_dim 256 \
  --model.transformer.heads 4 --model.transformer.encoder_layers 2 --model.transformer.decoder_layers 2 \
  --model.transformer.dropout 0 --model.transformer.share_all_embeddings false \
  --model.transformer.share_decoder_input_output_embed false --optim.betas "[0.9, 0.98]" --optim.lr 3e-3 \
  --schedule.name inverse_sqrt --schedule.inverse_sqrt.warmup_updates 100 --train.max_epochs 14 --train.target_bleu 60 \
  --validation_search.beam_size 4 --validation_search.length_penalty 0.6 --validation_search.coverage_penalty 0 \
  --train.seed "$seed" --train.run_dir "$work/run" 2>"$work/train.log" || { tail -20 "$work/train.log"; exit 1; }

bleu_of() {  # checkpoint name -> test BLEU
  "$mixseq" translate -c "$1" -i "$work/raw/test.en" -o "$work/$2.hyp.de" --device cpu \
    --beam-size 4 --length-penalty 0.6 --coverage-penalty 0 2>"$work/translate.$2.log" ||
    { tail -20 "$work/translate.$2.log" >&2; exit 1; }
  "$mixseq" bleu -b "$work/raw/test.de" -i "$work/$2.hyp.de"
}
float_bleu=$(bleu_of "$work/run/checkpoint_best.pt" float)

"$mixseq" quantize -c "$work/run/checkpoint_best.pt" --calib "$work/raw/valid.en" -o "$work/int8.pt" \
  2>"$work/quantize.int8.log" || { tail -20 "$work/quantize.int8.log"; exit 1; }
# Calibration translates as translate does: with the run's validation_search (beam 4, no coverage penalty).
grep -q "translate with beam 4, length penalty 0.6, coverage penalty 0 (the checkpoint's" "$work/quantize.int8.log" ||
  { echo "FAIL: calibration did not use the checkpoint's search settings:"; grep "translate with" "$work/quantize.int8.log"; exit 1; }
grep -q "33 of 33 linear layers, 0 of 2 embeddings, 0 of [0-9]* points quantized (int8;" "$work/quantize.int8.log" ||
  { echo "FAIL: expected all 33 linear layers in int8:"; tail -5 "$work/quantize.int8.log"; exit 1; }
int8_bleu=$(bleu_of "$work/int8.pt" int8)

# Simulation quantizes every op boundary (embeddings, attention products and softmax, residual
# adds). Percentile clipping of the attention's points cost 1.7 BLEU here (79.5 -> 77.8), as
# clipping did in the Transformer study of docs/quantization.md; left unclipped: 78.9.
printf 'mode: simulated\ndefaults: {activation_symmetric: true, clip: percentile, percentile: 99.9}\n%s\n' \
  'layers: [{pattern: "*attn.*", clip: none}]' >"$work/simulated.yaml"
"$mixseq" quantize -c "$work/run/checkpoint_best.pt" --calib "$work/raw/valid.en" --config "$work/simulated.yaml" \
  -o "$work/simulated.pt" 2>"$work/quantize.simulated.log" || { tail -20 "$work/quantize.simulated.log"; exit 1; }
simulated_bleu=$(bleu_of "$work/simulated.pt" simulated)
# The int8 checkpoint stores its linear layers' weights in 8 bits, the simulated one in fp32.
int8_bytes=$(stat -c %s "$work/int8.pt")
simulated_bytes=$(stat -c %s "$work/simulated.pt")
echo "checkpoint bytes: int8 $int8_bytes, simulated (fp32 weights) $simulated_bytes"
awk -v i="$int8_bytes" -v s="$simulated_bytes" 'BEGIN { exit !(i < 0.6 * s) }' ||
  { echo "FAIL: the int8 checkpoint ($int8_bytes bytes) is not much smaller than fp32 ($simulated_bytes)"; exit 1; }

# The per-layer search with no loss allowed on the validation split: it must end within budget
# (keeping layers in float as needed) and the checkpoint it writes must translate.
"$mixseq" quantize -c "$work/run/checkpoint_best.pt" --calib "$work/raw/valid.en" --search-src "$work/raw/valid.en" \
  --search-ref "$work/raw/valid.de" --search-budget 0 -o "$work/searched.pt" 2>"$work/quantize.searched.log" ||
  { tail -20 "$work/quantize.searched.log"; exit 1; }
grep -q "quantize: search: | all layers | 0 |" "$work/quantize.searched.log" ||
  { echo "FAIL: the search printed no table"; exit 1; }
grep -q "quantize: search: | tried | layers in float | BLEU | weights MB | sentences/s |" \
  "$work/quantize.searched.log" || { echo "FAIL: the search table has no speed column"; exit 1; }
search_float=$(sed -n 's/.*search: float BLEU \([0-9.]*\),.*/\1/p' "$work/quantize.searched.log")
search_chosen=$(sed -n 's/.*search: chose BLEU \([0-9.]*\) .*/\1/p' "$work/quantize.searched.log")
awk -v f="$search_float" -v c="$search_chosen" 'BEGIN { exit !(c >= f) }' ||
  { echo "FAIL: the search chose validation BLEU $search_chosen below float $search_float with budget 0"; exit 1; }
searched_bleu=$(bleu_of "$work/searched.pt" searched)

echo "test BLEU: float $float_bleu, int8 $int8_bleu, simulated $simulated_bleu, searched $searched_bleu"
awk -v f="$float_bleu" 'BEGIN { exit !(f >= 50) }' || { echo "FAIL: the float model did not learn the task"; exit 1; }
# A quantization that did nothing would pass the BLEU check: the int8 output must differ somewhere.
! cmp -s "$work/float.hyp.de" "$work/int8.hyp.de" || { echo "FAIL: int8 translations identical to float ones"; exit 1; }
# How far below float each may fall: 1.5 times the largest drop over train.seed 1-12 on
# 2026-11-26 (docs/reliability.md, "Statistical bounds"): int8 at most 2.3 (mean 0.5), simulated
# 3.9 (mean 1.0; every op boundary quantized), searched 1.4 (mean 0.3). A bound of 1 failed 5 of
# those 12 seeds, and seed 1 on a fresh machine (issue 29). A broken quantizer loses tens of points.
check_drop() {  # name, BLEU, allowed drop
  awk -v f="$float_bleu" -v q="$2" -v d="$3" 'BEGIN { exit !(q >= f - d) }' ||
    { echo "FAIL: $1 BLEU $2 is more than $3 below float $float_bleu"; exit 1; }
}
check_drop int8 "$int8_bleu" 3.5
check_drop simulated "$simulated_bleu" 6
check_drop searched "$searched_bleu" 2.5

# Float-only tools refuse the quantized checkpoint and say why.
cd "$work"
source "$here/expect_error.sh"
cp -r run run_quantized && cp int8.pt run_quantized/checkpoint_last.pt
expect "is a quantized checkpoint (written by mixseq quantize)" train --train.run_dir run_quantized --resume
expect "is a quantized checkpoint (written by mixseq quantize)" average-checkpoints --inputs int8.pt int8.pt -o avg.pt
expect "is a quantized checkpoint (written by mixseq quantize)" quantize -c int8.pt --calib raw/valid.en -o again.pt
[ "$failures" -eq 0 ] || exit 1
echo "quantized checkpoints translate close to float (int8 within 3.5 BLEU, simulated 6, searched 2.5) and float-only tools refuse them"
