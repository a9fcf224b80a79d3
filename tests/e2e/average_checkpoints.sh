#!/usr/bin/env bash
# Checkpoint averaging end to end: training with train.keep_last_checkpoints 3 leaves exactly 3
# numbered checkpoints, `mixseq average-checkpoints --run-dir --num 3` averages them, and
# `mixseq translate` translates with the result alone; the average never replaces a checkpoint
# that training can resume from.
#   average_checkpoints.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
source "$(dirname "$0")/small_task.sh"
make_small_task "$mixseq" "$work"
"$mixseq" --threads 1 train --train.device cpu --data.dir "$work/data" --data.max_tokens 256 \
  --model.gnmt.hidden_size 32 --model.gnmt.num_layers 2 --model.gnmt.dropout 0.2 \
  --train.max_epochs 0 --train.max_steps 20 --train.log_interval 5 --train.save_interval 4 \
  --train.keep_last_checkpoints 3 --train.validate_bleu false --train.run_dir "$work/run" 2>"$work/train.log" ||
  { tail -20 "$work/train.log"; exit 1; }

numbered=$(find "$work/run" -maxdepth 1 -name 'checkpoint_[0-9]*.pt' | wc -l)
[ "$numbered" -eq 3 ] || { echo "FAIL: expected 3 numbered checkpoints, found $numbered"; ls "$work/run"; exit 1; }
[ -f "$work/run/checkpoint_20.pt" ] || { echo "FAIL: the newest numbered checkpoint is missing"; ls "$work/run"; exit 1; }

"$mixseq" average-checkpoints --run-dir "$work/run" --num 3 -o "$work/averaged.pt" 2>"$work/average.log" ||
  { cat "$work/average.log"; exit 1; }
[ "$(grep -c 'average-checkpoints: .*checkpoint_[0-9]*\.pt$' "$work/average.log")" -eq 3 ] ||
  { echo "FAIL: expected the 3 averaged files to be listed"; cat "$work/average.log"; exit 1; }

# The average has no optimizer state: it must not replace the checkpoint that --resume needs.
before=$(md5sum <"$work/run/checkpoint_last.pt")
if "$mixseq" average-checkpoints --run-dir "$work/run" --num 3 -o "$work/run/checkpoint_last.pt" 2>"$work/refused.log"; then
  echo "FAIL: average-checkpoints replaced checkpoint_last.pt"; exit 1
fi
grep -q "is a training checkpoint" "$work/refused.log" || { echo "FAIL: no clear refusal"; cat "$work/refused.log"; exit 1; }
[ "$(md5sum <"$work/run/checkpoint_last.pt")" = "$before" ] || { echo "FAIL: checkpoint_last.pt changed"; exit 1; }

head -5 "$work/raw/test.en" >"$work/five.en"
"$mixseq" --threads 1 translate -c "$work/averaged.pt" -i "$work/five.en" -o "$work/five.hyp" --device cpu \
  2>"$work/translate.log" || { tail -20 "$work/translate.log"; exit 1; }
[ "$(wc -l <"$work/five.hyp")" -eq 5 ] || { echo "FAIL: translate wrote $(wc -l <"$work/five.hyp") lines for 5"; exit 1; }
echo "PASS: 3 numbered checkpoints kept, averaged, and the average translates"
