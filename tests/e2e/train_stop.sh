#!/usr/bin/env bash
# A run stopped by a signal saves checkpoint_last.pt and then says it did not finish: `mixseq
# train` exits 143 after SIGTERM and 130 after SIGINT (128 + the signal, as a shell reports a
# process the signal killed), and `mixseq demo` stops there too instead of translating with a
# half-trained model. A save cut short leaves <file>.tmp; the next run deletes it. A new demo
# starts over in its own folder, but not in a --train.run_dir elsewhere.
#   train_stop.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
source "$(dirname "$0")/small_task.sh"
make_small_task "$mixseq" "$work"
tiny_train_command "$mixseq" "$work"
train+=(--model.gnmt.hidden_size 16 --model.gnmt.num_layers 2 --train.max_epochs 0 --train.log_interval 1
       --train.validate_bleu false)
fail() { echo "FAIL: $*"; exit 1; }
logged_updates() {
  local count
  count=$(grep -c '"kind":"train"' "$1" 2>/dev/null || true)
  echo "${count:-0}"
}
# Waits until the process $1 has logged 2 updates to the metrics file $2, then sends it signal $3
# and checks that it exits with code $4.
stop_and_expect() {
  local pid=$1 metrics=$2 signal=$3 expected=$4 status=0
  for _ in $(seq 1200); do
    [ "$(logged_updates "$metrics")" -ge 2 ] && break
    kill -0 "$pid" 2>/dev/null || fail "the run ended before it could be stopped"
    sleep 0.05
  done
  kill "-$signal" "$pid"
  wait "$pid" || status=$?
  [ "$status" -eq "$expected" ] || fail "after SIG$signal the exit code is $status, expected $expected"
}

for case in "TERM 143" "INT 130"; do
  read -r signal code <<<"$case"
  run=$work/$signal
  "${train[@]}" --train.run_dir "$run" --train.max_steps 100000 2>"$run.log" &
  stop_and_expect $! "$run/metrics.jsonl" "$signal" "$code"
  [ -f "$run/checkpoint_last.pt" ] || fail "SIG$signal: no checkpoint_last.pt saved"
  grep -q "stopped by signal" "$run.log" || fail "SIG$signal: the log does not say the run stopped: $(tail -2 "$run.log")"
done
echo "PASS: SIGTERM -> 143, SIGINT -> 130, checkpoint_last.pt saved"

run=$work/TERM
echo "half a checkpoint" >"$run/checkpoint_99.pt.tmp"
echo "half a config" >"$run/config.yaml.tmp"
"${train[@]}" --train.run_dir "$run" --resume --train.max_steps 1 2>"$work/resume.log" ||
  fail "resume after the stop: $(tail -3 "$work/resume.log")"
[ -z "$(find "$run" -name '*.tmp')" ] || fail "stale .tmp files survived the next run: $(ls "$run")"
echo "PASS: the next run deletes .tmp files left by interrupted saves"

"$mixseq" --threads 1 demo --work-dir "$work/demo" --train-size 400 --bpe-merges 50 --train.max_epochs 0 \
  --train.max_steps 100000 --train.log_interval 1 >"$work/demo.out" 2>"$work/demo.log" &
stop_and_expect $! "$work/demo/run/metrics.jsonl" TERM 143
[ ! -e "$work/demo/test.hyp.de" ] && ! grep -q "demo: 5/5" "$work/demo.log" ||
  fail "the stopped demo went on to translate"
echo "PASS: a stopped demo exits 143 without translating"

demo=("$mixseq" --threads 1 demo --work-dir "$work/demo" --train-size 400 --bpe-merges 50 --train.max_epochs 0
      --train.max_steps 1 --schedule.cosine.warmup_steps 0 --train.validate_bleu false)
"${demo[@]}" >/dev/null 2>"$work/demo_again.log" || fail "a second demo did not start over: $(tail -2 "$work/demo_again.log")"
[ -f "$work/demo/test.hyp.de" ] || fail "the second demo did not translate"
before=$(md5sum <"$work/TERM/checkpoint_last.pt")
if "${demo[@]}" --train.run_dir "$work/TERM" >/dev/null 2>"$work/demo_elsewhere.log"; then
  fail "the demo trained over a run folder outside its own"
fi
grep -q "holds a previous run" "$work/demo_elsewhere.log" || fail "no clear refusal: $(tail -2 "$work/demo_elsewhere.log")"
[ "$(md5sum <"$work/TERM/checkpoint_last.pt")" = "$before" ] || fail "the demo changed another run's checkpoint"
echo "PASS: the demo starts over in its own folder only"
