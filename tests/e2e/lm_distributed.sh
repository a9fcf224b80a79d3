#!/usr/bin/env bash
# Data-parallel language-model training with 2 ranks over Gloo, each reading half of the streams,
# against one process splitting the same streams into 2 chunks (lm.batch_chunk 2):
#   - the same loss at every update (up to float summation order) and the same validation;
#   - both ranks resume from rank 0's checkpoint_last, which holds every stream's memory: the
#     updates after the resume equal those of the single process that never stopped.
#   lm_distributed.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
source "$(dirname "$0")/small_task.sh"
make_small_lm_task "$mixseq" "$work"
tiny_lm_train_command "$mixseq" "$work"
train+=(--model.transformer_xl.dropout 0 --schedule.name constant --train.log_interval 1)
source "$(dirname "$0")/two_ranks.sh"

start_rank 0 pair --train.run_dir "$work/pair" --train.max_steps 20
start_rank 1 pair --train.run_dir "$work/pair" --train.max_steps 20
wait %1 || fail "rank 0 failed: $(tail -3 "$work/pair.rank0.log")"
wait %2 || fail "rank 1 failed: $(tail -3 "$work/pair.rank1.log")"
start_rank 0 resumed --train.run_dir "$work/pair" --train.max_steps 40 --resume
start_rank 1 resumed --train.run_dir "$work/pair" --train.max_steps 40 --resume
wait %1 || fail "resumed rank 0 failed: $(tail -3 "$work/resumed.rank0.log")"
wait %2 || fail "resumed rank 1 failed: $(tail -3 "$work/resumed.rank1.log")"
grep -q "resuming from" "$work/resumed.rank0.log" || fail "the ranks did not resume"
"${train[@]}" --train.run_dir "$work/alone" --train.max_steps 40 --lm.batch_chunk 2 2>"$work/alone.log"

losses "$work/pair/metrics.jsonl" >"$work/pair.losses"
losses "$work/alone/metrics.jsonl" >"$work/alone.losses"
[ "$(wc -l <"$work/pair.losses")" -eq 40 ] || fail "expected 40 logged updates from rank 0"
same_numbers "$work/pair.losses" "$work/alone.losses" ||
  fail "2 ranks and 1 process with 2 chunks logged different losses: $(diff "$work/pair.losses" "$work/alone.losses" | head -4)"
echo "1 $(valid_loss "$work/pair/metrics.jsonl")" >"$work/pair.valid"
echo "1 $(valid_loss "$work/alone/metrics.jsonl")" >"$work/alone.valid"
same_numbers "$work/pair.valid" "$work/alone.valid" || fail "validation losses differ: $(cat "$work/pair.valid" "$work/alone.valid")"
echo "PASS: 2 ranks x 4 streams = 1 process x 2 chunks over 40 updates, resumed at 20"
