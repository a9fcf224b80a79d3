#!/usr/bin/env bash
# Settings used only late in a run (the validation search runs first at an epoch end) are
# checked before the first update: a bad one fails at once, with nothing written (a run folder it
# made is removed again), and an --overwrite with a bad setting keeps the previous run.
#   train_early_errors.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
source "$(dirname "$0")/small_task.sh"
make_small_task "$mixseq" "$work"
tiny_train_command "$mixseq" "$work"
train+=(--model.gnmt.hidden_size 16 --model.gnmt.num_layers 2 --train.max_epochs 1 --train.log_interval 1)
fail() { echo "FAIL: $*"; exit 1; }
# Train with the given extra arguments must fail before its first update, saying $1.
fails_early() {
  local expected=$1 log=$work/early.log
  shift
  if "${train[@]}" "$@" 2>"$log"; then fail "train $* ran"; fi
  grep -q -- "$expected" "$log" || fail "train $* did not say '$expected': $(tail -2 "$log")"
  ! grep -q "train | epoch" "$log" || fail "train $* failed only after updates"
}

fails_early "validation_search: beam_size must be in 1..1000" --train.run_dir "$work/beam0" --validation_search.beam_size 0
fails_early "validation_search: a source of [0-9]* tokens gets max_len = .* below min_len" \
  --train.run_dir "$work/len0" --validation_search.max_len_a 0 --validation_search.max_len_b 0
fails_early "data.valid_max_tokens (0)" --train.run_dir "$work/valid0" --data.valid_max_tokens 0
# An example over a batch limit names the split and the config key to raise (for validation, which
# skips nothing, not data.max_length).
fails_early "the valid split of '.*': example [0-9]* (counting from 1) has [0-9]* tokens, more than \
data.valid_max_tokens (2); raise data.valid_max_tokens$" --train.run_dir "$work/valid2" --data.valid_max_tokens 2
fails_early "the training split of '.*': example [0-9]* (counting from 1) has [0-9]* tokens, more than \
data.max_tokens (2); raise data.max_tokens, or set data.max_length to skip such examples" \
  --train.run_dir "$work/train2" --data.max_tokens 2
# A run refused at start leaves nothing, not even the folder it made (or its lock file).
for refused in beam0 len0 valid0 valid2 train2; do
  [ ! -e "$work/$refused" ] || fail "the run refused at start left $work/$refused: $(find "$work/$refused")"
done
# In a folder that was there before, the folder and what the user put there stay.
mkdir -p "$work/mine" && echo note >"$work/mine/notes.txt"
fails_early "data.valid_max_tokens (0)" --train.run_dir "$work/mine" --data.valid_max_tokens 0
[ -f "$work/mine/notes.txt" ] || fail "a run refused at start removed the user's own file"

"${train[@]}" --train.run_dir "$work/kept" --train.max_epochs 0 --train.max_steps 2 --train.validate_bleu false \
  2>"$work/kept.log" || fail "the run to keep: $(tail -3 "$work/kept.log")"
fails_early "validation_search: beam_size must be in 1..1000" --train.run_dir "$work/kept" --overwrite \
  --validation_search.beam_size 0
[ -f "$work/kept/checkpoint_last.pt" ] || fail "--overwrite with a bad setting deleted the previous run"
echo "PASS: bad validation settings fail before the first update, and delete nothing"
