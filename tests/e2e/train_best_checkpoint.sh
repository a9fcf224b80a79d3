#!/usr/bin/env bash
# Every finished run leaves a checkpoint_best.pt, so `translate -c <run_dir>/checkpoint_best.pt`
# (the README's command) works even when train.max_steps ends training before the first epoch
# does: the final model is validated (BLEU, or without BLEU the loss decides), and without a
# validation split the final model is the best one.
#   train_best_checkpoint.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
source "$(dirname "$0")/small_task.sh"
make_small_task "$mixseq" "$work"
"$mixseq" prepare --train "$work/raw/train" -o "$work/train_only" --tokenizer none >/dev/null
train=("$mixseq" --threads 1 train --train.device cpu --data.max_tokens 256 --model.gnmt.hidden_size 16
       --model.gnmt.num_layers 2 --train.max_epochs 0 --train.max_steps 3 --train.log_interval 1
       --validation_search.max_len_a 1.5 --validation_search.max_len_b 10)
fail() { echo "FAIL: $*"; exit 1; }
head -3 "$work/raw/test.en" >"$work/three.en"
translates() {
  "$mixseq" --threads 1 translate -c "$1/checkpoint_best.pt" -i "$work/three.en" -o "$work/three.hyp" --device cpu \
    2>"$work/translate.log" || fail "translate -c $1/checkpoint_best.pt: $(tail -2 "$work/translate.log")"
}

"${train[@]}" --data.dir "$work/data" --train.run_dir "$work/bleu" 2>"$work/bleu.log" || fail "$(tail -3 "$work/bleu.log")"
grep '"kind":"valid"' "$work/bleu/metrics.jsonl" | grep '"step":3[,}]' | grep -q '"bleu"' ||
  fail "the final model (update 3) was not validated with BLEU"
translates "$work/bleu"

"${train[@]}" --data.dir "$work/data" --train.run_dir "$work/loss" --train.validate_bleu false 2>"$work/loss.log" ||
  fail "$(tail -3 "$work/loss.log")"
grep -q 'valid | .*step 3 .*(best)' "$work/loss.log" || fail "without BLEU the validation loss did not pick the best"
translates "$work/loss"

"${train[@]}" --data.dir "$work/train_only" --train.run_dir "$work/none" 2>"$work/none.log" || fail "$(tail -3 "$work/none.log")"
grep -q "checkpoint_best.pt is the final model" "$work/none.log" || fail "without a validation split the log does not say what best is"
translates "$work/none"
echo "PASS: checkpoint_best.pt after a max_steps run: by BLEU, by loss, and without a validation split"
