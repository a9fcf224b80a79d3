#!/usr/bin/env bash
# Data-parallel `mixseq train` with 2 ranks over Gloo (RANK/WORLD_SIZE/MASTER_* as torchrun sets
# them), against one process with update_freq 2 on the same batches:
#   - the same loss at every update (up to float summation order) and the same validation;
#   - only rank 0 logs and writes metrics and checkpoints; both ranks resume from them;
#   - a rank killed mid-run ends the other with a clear error, and checkpoint_last stays valid.
#   train_distributed.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
source "$(dirname "$0")/small_task.sh"
make_small_task "$mixseq" "$work"
tiny_train_command "$mixseq" "$work"
train+=(--model.gnmt.hidden_size 32 --model.gnmt.num_layers 3 --model.gnmt.dropout 0
       --train.max_epochs 0 --train.log_interval 1 --validation_search.max_len_b 5)
source "$(dirname "$0")/two_ranks.sh"

# 1. Two ranks with one batch each per update, one process with two: the same updates.
start_rank 0 pair --train.run_dir "$work/pair" --train.max_steps 30
start_rank 1 pair --train.run_dir "$work/pair" --train.max_steps 30
wait %1 || fail "rank 0 failed: $(tail -3 "$work/pair.rank0.log")"
wait %2 || fail "rank 1 failed: $(tail -3 "$work/pair.rank1.log")"
"${train[@]}" --train.run_dir "$work/alone" --train.max_steps 30 --train.update_freq 2 2>"$work/alone.log"
losses "$work/pair/metrics.jsonl" >"$work/pair.losses"
losses "$work/alone/metrics.jsonl" >"$work/alone.losses"
[ "$(wc -l <"$work/pair.losses")" -eq 30 ] || fail "expected 30 logged updates from rank 0"
same_numbers "$work/pair.losses" "$work/alone.losses" ||
  fail "2 ranks and 1 process with update_freq 2 logged different losses: $(paste "$work/pair.losses" "$work/alone.losses" | head -3)"
echo "1 $(valid_loss "$work/pair/metrics.jsonl")" >"$work/pair.valid"
echo "1 $(valid_loss "$work/alone/metrics.jsonl")" >"$work/alone.valid"
same_numbers "$work/pair.valid" "$work/alone.valid" || fail "validation losses differ: $(cat "$work/pair.valid" "$work/alone.valid")"
grep -q "joined the gloo group" "$work/pair.rank0.log" || fail "rank 0 did not report the group"
! grep -q "train |" "$work/pair.rank1.log" || fail "rank 1 logged training lines without distributed.log_all_ranks"
echo "PASS: 2 ranks x 1 batch = 1 process x 2 batches over 30 updates"

# 2. Both ranks resume from rank 0's checkpoint_last.
start_rank 0 pair_resumed --train.run_dir "$work/pair" --train.max_steps 40 --resume
start_rank 1 pair_resumed --train.run_dir "$work/pair" --train.max_steps 40 --resume
wait %1 || fail "resumed rank 0 failed: $(tail -3 "$work/pair_resumed.rank0.log")"
wait %2 || fail "resumed rank 1 failed: $(tail -3 "$work/pair_resumed.rank1.log")"
grep -q "resuming from" "$work/pair_resumed.rank0.log" || fail "rank 0 did not resume"
grep -q '"step":40' "$work/pair/metrics.jsonl" || fail "the resumed run did not reach update 40"
echo "PASS: resumed on 2 ranks to update 40"

# 3. Kill rank 1 mid-run: rank 0 must stop with an error naming the failure, soon.
start_rank 0 killed --train.run_dir "$work/killed" --train.max_steps 100000 --train.save_interval 5 \
  --distributed.timeout 60
start_rank 1 killed --train.run_dir "$work/killed" --train.max_steps 100000 --train.save_interval 5 \
  --distributed.timeout 60
rank1=$!
logged_updates() {
  local count
  count=$(grep -c '"kind":"train"' "$work/killed/metrics.jsonl" 2>/dev/null || true)
  echo "${count:-0}"
}
for _ in $(seq 600); do
  [ "$(logged_updates)" -ge 12 ] && break
  sleep 0.1
done
kill -9 "$rank1"
killed_at=$SECONDS
wait "$rank1" 2>/dev/null || true
rank0_status=0
wait %1 2>/dev/null || rank0_status=$?
[ "$rank0_status" -ne 0 ] || fail "rank 0 exited cleanly after its peer was killed"
[ $((SECONDS - killed_at)) -lt 30 ] || fail "rank 0 took $((SECONDS - killed_at)) s to notice"
# A signal (141 = SIGPIPE from a socket write to the dead peer) would end rank 0 without a word.
[ "$rank0_status" -eq 1 ] || fail "rank 0 ended with status $rank0_status, not mixseq's error status 1"
grep -q "A peer rank has exited or stopped responding" "$work/killed.rank0.log" ||
  fail "rank 0's error does not say what happened (status $rank0_status): $(tail -2 "$work/killed.rank0.log")"
"$mixseq" --threads 1 translate -c "$work/killed/checkpoint_last.pt" -i "$work/raw/valid.en" -o "$work/killed.hyp" --device cpu \
  2>"$work/killed.translate.log" || fail "checkpoint_last.pt of the killed run does not load"
echo "PASS: rank 0 stopped $((SECONDS - killed_at)) s after rank 1 was killed: $(grep -m1 'mixseq: error' "$work/killed.rank0.log")"
