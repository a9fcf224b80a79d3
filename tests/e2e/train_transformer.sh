#!/usr/bin/env bash
# The trainer and the search run the Transformer: a tiny one trains on the built-in task from
# the command line (loss must fall), validates with beam search (BLEU on the valid split),
# and `mixseq translate` translates with its checkpoint, one line per source line.
#   train_transformer.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
source "$(dirname "$0")/small_task.sh"
make_small_task "$mixseq" "$work"
"$mixseq" --threads 1 train --train.device cpu --data.dir "$work/data" --data.max_tokens 512 \
  --model.arch transformer --model.transformer.embed_dim 32 --model.transformer.ffn_dim 64 \
  --model.transformer.heads 4 --model.transformer.encoder_layers 2 --model.transformer.decoder_layers 2 \
  --model.transformer.normalize_before true \
  --train.max_epochs 0 --train.max_steps 60 --train.log_interval 1 --train.validate_interval 60 \
  --train.validate_bleu true --train.run_dir "$work/run" 2>"$work/train.log" || { tail -20 "$work/train.log"; exit 1; }

# Mean loss of the first and of the last 10 updates.
sed -n 's/.*"kind":"train".*"loss":\([^,}]*\).*/\1/p' "$work/run/metrics.jsonl" >"$work/losses"
[ "$(wc -l <"$work/losses")" -eq 60 ] || { echo "FAIL: expected 60 logged updates"; exit 1; }
first=$(head -10 "$work/losses" | awk '{ s += $1 } END { print s / NR }')
last=$(tail -10 "$work/losses" | awk '{ s += $1 } END { print s / NR }')
awk -v f="$first" -v l="$last" 'BEGIN { exit !(l < 0.8 * f) }' ||
  { echo "FAIL: loss did not fall: first 10 updates $first, last 10 $last"; exit 1; }
grep -q '"bleu"' "$work/run/metrics.jsonl" || { echo "FAIL: no validation BLEU logged"; exit 1; }

"$mixseq" --threads 1 translate -c "$work/run/checkpoint_last.pt" -i "$work/raw/test.en" -o "$work/test.hyp" \
  --device cpu 2>"$work/translate.log" || { tail -20 "$work/translate.log"; exit 1; }
[ "$(wc -l <"$work/test.hyp")" -eq "$(wc -l <"$work/raw/test.en")" ] ||
  { echo "FAIL: translate wrote $(wc -l <"$work/test.hyp") lines for $(wc -l <"$work/raw/test.en")"; exit 1; }
# A source over --max-source-tokens stops translate naming its line, or is cut with
# --truncate-long-sources (a 1 MB line used to run for minutes).
{ head -2 "$work/raw/test.en"; printf 'one %.0s' $(seq 40); echo; } >"$work/long.en"
if "$mixseq" --threads 1 translate -c "$work/run/checkpoint_last.pt" -i "$work/long.en" -o "$work/long.hyp" \
     --device cpu --max-source-tokens 30 2>"$work/long.log"; then
  echo "FAIL: a 40-token line passed --max-source-tokens 30"; exit 1
fi
grep -q "source line 3 has 40 tokens, more than the limit of 30" "$work/long.log" ||
  { echo "FAIL: no message naming the long line:"; cat "$work/long.log"; exit 1; }
"$mixseq" --threads 1 translate -c "$work/run/checkpoint_last.pt" -i "$work/long.en" -o "$work/long.hyp" \
  --device cpu --max-source-tokens 30 --truncate-long-sources 2>"$work/long.log" ||
  { echo "FAIL: --truncate-long-sources did not translate"; cat "$work/long.log"; exit 1; }
[ "$(wc -l <"$work/long.hyp")" -eq 3 ] || { echo "FAIL: expected 3 translations"; exit 1; }
echo "PASS: loss $first -> $last over 60 updates; validated and translated with the Transformer"
