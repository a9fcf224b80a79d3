#!/usr/bin/env bash
# The run folder is never overwritten by mistake: `mixseq train` refuses a folder that holds a
# previous run unless told --resume (continue it) or --overwrite (delete it first), and --resume
# without checkpoint_last.pt is an error unless the folder holds no run at all. Only one process
# trains in a folder at a time, and a killed one does not keep it locked.
#   train_run_dir.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
source "$(dirname "$0")/small_task.sh"
make_small_task "$mixseq" "$work"
tiny_train_command "$mixseq" "$work"
train+=(--model.gnmt.hidden_size 16 --model.gnmt.num_layers 2 --train.max_epochs 0 --train.max_steps 3
       --train.log_interval 1 --train.validate_bleu false)
run=$work/run
fail() { echo "FAIL: $*"; exit 1; }
# Runs train with the given extra arguments, which must fail with a message holding $1.
refused() {
  local expected=$1 log=$work/refused.log
  shift
  if "${train[@]}" "$@" 2>"$log"; then fail "train $* ran; it should have refused: $(tail -2 "$log")"; fi
  grep -q -- "$expected" "$log" || fail "train $* did not say '$expected': $(tail -2 "$log")"
}
fingerprint() { md5sum "$run"/checkpoint_*.pt "$run"/metrics.jsonl 2>/dev/null; }

"${train[@]}" --train.run_dir "$run" 2>"$work/first.log" || fail "first run: $(tail -3 "$work/first.log")"
before=$(fingerprint)

# 1. A second run without --resume must leave the first one's checkpoint and metrics alone.
refused "holds a previous run (checkpoint_best.pt, checkpoint_last.pt, metrics.jsonl); continue it with --resume" \
  --train.run_dir "$run"
[ "$(fingerprint)" = "$before" ] || fail "the refused run changed a checkpoint or metrics.jsonl"

# 2. --resume without checkpoint_last.pt but with a previous run's results: an error, not a fresh start.
best=$(md5sum <"$run/checkpoint_best.pt")
mv "$run/checkpoint_last.pt" "$work/saved_last.pt"
refused "has no checkpoint_last.pt to continue" --train.run_dir "$run" --resume
[ "$(md5sum <"$run/checkpoint_best.pt")" = "$best" ] || fail "the refused --resume changed checkpoint_best.pt"
mv "$work/saved_last.pt" "$run/checkpoint_last.pt"

# 3. --overwrite deletes the previous results first: metrics.jsonl then holds only the new run.
"${train[@]}" --train.run_dir "$run" --overwrite 2>"$work/overwrite.log" || fail "--overwrite: $(tail -3 "$work/overwrite.log")"
grep -q "starting over: deleted $run/checkpoint_best.pt" "$work/overwrite.log" || fail "--overwrite did not report what it deleted"
[ "$(grep -c '"kind":"train"' "$run/metrics.jsonl")" -eq 3 ] || fail "--overwrite appended to the old metrics.jsonl"

# 4. --resume into a new folder starts fresh; --resume and --overwrite together are refused.
"${train[@]}" --train.run_dir "$work/fresh" --resume 2>"$work/fresh.log" || fail "--resume, new folder: $(tail -3 "$work/fresh.log")"
grep -q "holds no previous run; starting from scratch" "$work/fresh.log" || fail "--resume into a new folder did not say so"
refused "excludes" --train.run_dir "$run" --resume --overwrite
echo "PASS: previous runs are kept unless --resume continues them or --overwrite deletes them"

# 5. A second process in the folder of a running one is refused, naming the holder's pid.
logged_updates() {
  local count
  count=$(grep -c '"kind":"train"' "$work/busy/metrics.jsonl" 2>/dev/null || true)
  echo "${count:-0}"
}
"${train[@]}" --train.run_dir "$work/busy" --train.max_steps 100000 --train.save_interval 1 2>"$work/busy.log" &
busy=$!
for _ in $(seq 600); do
  [ "$(logged_updates)" -ge 2 ] && break
  kill -0 "$busy" 2>/dev/null || fail "the long run ended early: $(tail -3 "$work/busy.log")"
  sleep 0.05
done
refused "in use by another training process (pid $busy" --train.run_dir "$work/busy" --resume
kill -9 "$busy"
wait "$busy" 2>/dev/null || true
"${train[@]}" --train.run_dir "$work/busy" --resume --train.max_steps 1 2>"$work/after_kill.log" ||
  fail "the lock of a killed run was not released: $(tail -3 "$work/after_kill.log")"
echo "PASS: one process per run folder; a killed one leaves no stale lock"
