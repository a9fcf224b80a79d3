#!/usr/bin/env bash
# Budgets: train.max_time ends a run of unbounded epochs on time, with the schedule sized to the
# updates that fit (shortened when the run slows down, lengthened when it was measured too slow)
# and a last validation; a run that never reaches train.target_bleu fails
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
planned=$(grep -o "lengthened from [0-9]* to [0-9]*\|shortened from [0-9]* to [0-9]*" "$work/timed.log" | tail -1 | awk '{ print $5 }')
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

# Held for 2 s before it is sized (as if start-up were slow), the run first plans too few updates;
# measured again at the next tenth of the budget, it lengthens its schedule at the same learning
# rate and uses the budget instead of ending early (issue 26).
start=$(date +%s)
"${train[@]}" --train.run_dir "$work/paced" --train.max_epochs 0 --train.max_time 12 2>"$work/paced.log" &
paced=$!
for _ in $(seq 200); do grep -q "| step " "$work/paced.log" && break; sleep 0.05; done
grep -q "schedule sized to" "$work/paced.log" && { echo "FAIL: sized before the test could hold it"; exit 1; }
kill -STOP "$paced"
sleep 2
kill -CONT "$paced"
wait "$paced" || { tail -5 "$work/paced.log"; echo "FAIL: the paced run failed"; exit 1; }
grep -q "faster than measured .* schedule lengthened from" "$work/paced.log" ||
  { grep "max_time" "$work/paced.log"; echo "FAIL: sized after a 2 s hold, the run never lengthened its schedule"; exit 1; }
sed -n 's/.*"kind":"train".*"lr":\([^,}]*\).*"step":\([0-9]*\).*/\2 \1/p' "$work/paced/metrics.jsonl" |
  awk '$1 > 5 && $2 > previous * (1 + 1e-9) && previous != "" { print "FAIL: lr rose to " $2 " at update " $1; bad = 1 }
       $1 > 5 { previous = $2 } END { exit bad }' || exit 1
# The budget was used: the last update came after 85% of it, and the decay ran to its end.
last_s=$(grep -o '"kind":"train"[^}]*' "$work/paced/metrics.jsonl" | tail -1 | grep -o '"train_s":[0-9.]*' | cut -d: -f2)
awk -v s="$last_s" 'BEGIN { exit !(s >= 0.85 * 12) }' || { echo "FAIL: the last update came at $last_s s of 12"; exit 1; }
planned=$(grep -o "lengthened from [0-9]* to [0-9]*\|shortened from [0-9]* to [0-9]*" "$work/paced.log" | tail -1 | awk '{ print $5 }')
last=$(grep -o '"kind":"train"[^}]*"step":[0-9]*' "$work/paced/metrics.jsonl" | tail -1 | grep -o '[0-9]*$')
[ "$last" -ge $(( planned * 9 / 10 )) ] || { echo "FAIL: planned $planned updates, stopped at $last"; exit 1; }

# Killed after it was sized, then resumed: the checkpoint brings the sizing back, so the resumed
# run goes on along the same learning-rate curve (before, it restarted at the unsized schedule's
# rate for 20 updates, then sized itself afresh).
cosine=(--schedule.name cosine --schedule.cosine.warmup_steps 5)
"${train[@]}" "${cosine[@]}" --train.run_dir "$work/resumed" --train.max_epochs 0 --train.max_time 10 \
  --train.save_interval 20 2>"$work/resumed_1.log" &
first=$!
for _ in $(seq 400); do grep -q "schedule sized to" "$work/resumed_1.log" && break; sleep 0.05; done
sleep 1.5
kill -KILL "$first"
wait "$first" 2>/dev/null || true
"${train[@]}" "${cosine[@]}" --train.run_dir "$work/resumed" --train.max_epochs 0 --train.max_time 10 \
  --train.save_interval 20 --resume 2>"$work/resumed_2.log" || { tail -5 "$work/resumed_2.log"; echo "FAIL: the resumed run failed"; exit 1; }
grep -q "schedule sized to" "$work/resumed_2.log" && { echo "FAIL: the resumed run sized its schedule afresh"; exit 1; }
lr_by_step() { sed -n 's/.*| step \([0-9]*\)[/ ].*| lr \([^ ]*\) .*/\1 \2/p' "$1"; }
resumed_step=$(lr_by_step "$work/resumed_2.log" | awk 'NR == 1 { print $1 }')
# The first run's rate at that update, or (when the kill came between the checkpoint and that
# update's log line) at the last update it logged before it: a cosine moves by far less than the
# 5% allowed between neighbouring updates, while the unsized schedule's rate is far off.
lr_before=$(lr_by_step "$work/resumed_1.log" | awk -v s="$resumed_step" '$1 <= s { v = $2 } END { print v }')
lr_after=$(lr_by_step "$work/resumed_2.log" | awk 'NR == 1 { print $2 }')
[ -n "$lr_before" ] || { echo "FAIL: no update up to $resumed_step (the first after resuming) was logged before the kill"; exit 1; }
awk -v a="$lr_before" -v b="$lr_after" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.05 * a) }' ||
  { echo "FAIL: update $resumed_step had lr $lr_before before the kill and $lr_after after resuming"; exit 1; }

# A finished run resumed: with the same train.max_steps it trains no more and says why; with a
# larger one it goes on to it.
"${train[@]}" --train.run_dir "$work/stepped" --train.max_epochs 0 --train.max_steps 5 2>"$work/stepped_1.log"
"${train[@]}" --train.run_dir "$work/stepped" --train.max_epochs 0 --train.max_steps 5 --resume 2>"$work/stepped_2.log"
grep -q "the resumed run has made all of its 5 updates (all that train.max_epochs and train.max_steps allow)" \
  "$work/stepped_2.log" || { tail -5 "$work/stepped_2.log"; echo "FAIL: a finished run resumed said nothing"; exit 1; }
grep -q "| lr " "$work/stepped_2.log" && { echo "FAIL: the finished run trained again"; exit 1; }
"${train[@]}" --train.run_dir "$work/stepped" --train.max_epochs 0 --train.max_steps 8 --resume 2>"$work/stepped_3.log"
[ "$(lr_by_step "$work/stepped_3.log" | awk 'END { print $1 }')" = 8 ] ||
  { tail -5 "$work/stepped_3.log"; echo "FAIL: resumed with train.max_steps 8, the run did not go on to update 8"; exit 1; }
grep -q "the resumed run has made all" "$work/stepped_3.log" && { echo "FAIL: the message came with more to train"; exit 1; }

if "${train[@]}" --train.run_dir "$work/missed" --train.max_epochs 1 --train.target_bleu 99 2>"$work/missed.log"; then
  echo "FAIL: a run that missed train.target_bleu exited 0"; exit 1
fi
grep -q "never reached train.target_bleu 99" "$work/missed.log" || { echo "FAIL: no message for the missed target"; exit 1; }
echo "PASS: stopped on time after $seconds s; a missed target fails"
