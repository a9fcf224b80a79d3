#!/usr/bin/env bash
# Budgets: train.max_time ends a run of unbounded epochs on time, with the schedule sized to the
# updates that fit (and shortened when the run slows down) and a last validation; a run that never reaches train.target_bleu fails
# (transformer_learns.sh checks that a run reaching it stops there).
#   train_budgets.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
source "$(dirname "$0")/small_task.sh"
make_small_task "$mixseq" "$work"
tiny_train_command "$mixseq" "$work"
train+=(--model.gnmt.hidden_size 32 --model.gnmt.num_layers 2 --train.log_interval 1
       --schedule.name gnmt_step --schedule.gnmt_step.warmup_steps 5)

start=$(date +%s)
"${train[@]}" --train.run_dir "$work/timed" --train.max_epochs 0 --train.max_time 12 2>"$work/timed.log" &
timed=$!
# Once sized, the run is held for 3 s (SIGSTOP, as if another process took the CPU): slower than
# measured, it must shorten its schedule so that the decay still ends on time.
for _ in $(seq 200); do grep -q "schedule sized to" "$work/timed.log" && break; sleep 0.05; done
kill -STOP "$timed"
sleep 3
kill -CONT "$timed"
wait "$timed" || { tail -5 "$work/timed.log"; echo "FAIL: the timed run failed"; exit 1; }
seconds=$(( $(date +%s) - start ))
grep -q "schedule sized to" "$work/timed.log" || { echo "FAIL: no schedule sized to the time budget"; exit 1; }
grep -q "slower than measured .* schedule shortened from" "$work/timed.log" ||
  { echo "FAIL: held for 3 s of a 12 s budget, the run did not shorten its schedule"; exit 1; }
# It ends at (about) the total it planned last: the learning-rate decay was not cut off.
planned=$(grep -o "shortened from [0-9]* to [0-9]*" "$work/timed.log" | tail -1 | awk '{ print $5 }')
last=$(grep -o '"kind":"train"[^}]*"step":[0-9]*' "$work/timed/metrics.jsonl" | tail -1 | grep -o '[0-9]*$')
[ "$last" -ge $(( planned * 8 / 10 )) ] || { echo "FAIL: planned $planned updates, stopped at $last"; exit 1; }
# Process start, data loading and the last save come on top of the 12 s budget.
[ "$seconds" -le 30 ] || { echo "FAIL: a 12 s budget took $seconds s"; exit 1; }
tail -1 "$work/timed/metrics.jsonl" | grep -q '"kind":"valid"' || { echo "FAIL: no last validation"; exit 1; }
# Sized once (issue 29), then only shortened: after the warmup the learning rate never rises again.
[ "$(grep -c "schedule sized to" "$work/timed.log")" -eq 1 ] || { echo "FAIL: the schedule was sized more than once"; exit 1; }
sed -n 's/.*"kind":"train".*"lr":\([^,}]*\).*"step":\([0-9]*\).*/\2 \1/p' "$work/timed/metrics.jsonl" |
  awk '$1 > 5 && $2 > previous * (1 + 1e-9) && previous != "" { print "FAIL: lr rose to " $2 " at update " $1; bad = 1 }
       $1 > 5 { previous = $2 } END { exit bad }' || exit 1
[ -f "$work/timed/checkpoint_best.pt" ] || { echo "FAIL: no best checkpoint"; exit 1; }

if "${train[@]}" --train.run_dir "$work/missed" --train.max_epochs 1 --train.target_bleu 99 2>"$work/missed.log"; then
  echo "FAIL: a run that missed train.target_bleu exited 0"; exit 1
fi
grep -q "never reached train.target_bleu 99" "$work/missed.log" || { echo "FAIL: no message for the missed target"; exit 1; }
echo "PASS: stopped on time after $seconds s; a missed target fails"
