#!/usr/bin/env bash
# train.patience stops a run after that many validations of the best metric without improvement
# (fairseq's --patience), and a resumed run remembers the count; train.best_metric loss picks the
# best checkpoint by validation loss even while BLEU is measured.
#   train_patience.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
source "$(dirname "$0")/small_task.sh"
make_small_task "$mixseq" "$work"
tiny_train_command "$mixseq" "$work"
train+=(--model.gnmt.hidden_size 16 --model.gnmt.num_layers 2 --train.max_epochs 0 --train.log_interval 1
        --validation_search.max_len_a 1.5 --validation_search.max_len_b 10)
fail() { echo "FAIL: $*"; exit 1; }
valid_lines() { grep -c '"kind":"valid"' "$1/metrics.jsonl"; }

# A learning rate of 0: the validation loss never falls after the first validation, so with
# patience 2 the run stops at its third validation (update 3 of 20), finished (exit 0).
"${train[@]}" --train.run_dir "$work/flat" --train.max_steps 20 --train.validate_interval 1 --train.patience 2 \
  --train.validate_bleu false --optim.lr 0 2>"$work/flat.log" || fail "exit $?: $(tail -3 "$work/flat.log")"
[ "$(valid_lines "$work/flat")" = 3 ] || fail "expected 3 validations, got $(valid_lines "$work/flat")"
grep -q 'no better loss in 2 validations (train.patience): stopping' "$work/flat.log" || fail "no patience line"
grep -q 'train: done (stopped early: train.patience)' "$work/flat.log" || fail "the summary does not say why"
grep -q '"kind":"train".*"step":3[,}]' "$work/flat/metrics.jsonl" || fail "update 3 missing"
if grep -q '"kind":"train".*"step":4[,}]' "$work/flat/metrics.jsonl"; then fail "it trained past update 3"; fi
[ -f "$work/flat/checkpoint_best.pt" ] || fail "no checkpoint_best.pt"

# Resumed with more patience, the count goes on from 2: one more flat validation (3 of 3) stops it.
"${train[@]}" --train.run_dir "$work/flat" --train.max_steps 20 --train.validate_interval 1 --train.patience 3 \
  --train.validate_bleu false --optim.lr 0 --resume 2>"$work/resumed.log" || fail "$(tail -3 "$work/resumed.log")"
[ "$(valid_lines "$work/flat")" = 4 ] || fail "resumed: expected 1 more validation, got $(valid_lines "$work/flat")"
grep -q 'no better loss in 3 validations' "$work/resumed.log" || fail "the resumed run forgot the count"

# best_metric loss with BLEU on: "(best)" follows the loss, which learning makes fall at every
# validation here, while BLEU is still logged.
"${train[@]}" --train.run_dir "$work/by_loss" --train.max_steps 4 --train.validate_interval 2 \
  --train.best_metric loss --optim.lr 0.01 2>"$work/by_loss.log" || fail "$(tail -3 "$work/by_loss.log")"
grep '"kind":"valid"' "$work/by_loss/metrics.jsonl" | grep -q '"bleu"' || fail "BLEU was not measured"
grep -q 'valid | .*step 2 | loss [0-9.]* | ppl [0-9.]* (best)' "$work/by_loss.log" ||
  fail "a loss-only validation did not pick the best: $(grep 'valid |' "$work/by_loss.log")"
grep -q 'valid | .*step 4 | .*bleu [0-9.]* (best)' "$work/by_loss.log" || fail "the lower final loss was not the best"

# best_metric bleu without BLEU is refused before any work.
if "${train[@]}" --train.run_dir "$work/refused" --train.max_steps 2 --train.validate_bleu false \
  --train.best_metric bleu 2>"$work/refused.log"; then fail "best_metric bleu without BLEU was accepted"; fi
grep -q "train.best_metric bleu needs train.validate_bleu true" "$work/refused.log" || fail "$(tail -1 "$work/refused.log")"
# A language model stops the same way (its best metric is the validation loss).
make_small_lm_task "$mixseq" "$work/lm"
tiny_lm_train_command "$mixseq" "$work/lm"
"${train[@]}" --train.run_dir "$work/lm_run" --train.max_steps 40 --train.validate_interval 1 --train.patience 1 \
  --optim.lr 0 2>"$work/lm.log" || fail "language model: $(tail -3 "$work/lm.log")"
[ "$(valid_lines "$work/lm_run")" = 2 ] || fail "language model: expected 2 validations, got $(valid_lines "$work/lm_run")"
grep -q 'no better loss in 1 validations (train.patience): stopping' "$work/lm.log" || fail "language model: no patience line"
echo "PASS: patience stops at the third flat validation and survives a resume; best_metric loss and bleu; a language model"
