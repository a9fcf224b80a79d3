#!/usr/bin/env bash
# Exact resume: a training run killed with SIGKILL and resumed with --resume from
# checkpoint_last.pt logs the same loss at every update as a run that never stopped (and, logging
# every 4 updates, the same loss at every log line though it was killed between them). With "lm",
# a Transformer-XL language model whose memory carries across updates (and is saved with the
# stream position), over an epoch boundary; with "lstm_lm" the same for an LSTM language model, whose
# memory is its (h, c) state, with dropout and weight drop. With "speech", a small Wave2Letter+ on espeak-ng
# digits, over several epochs, with dropout, speed perturbation, dither and SpecAugment (drawn
# per batch from the seed, the epoch and the batch), and a third run that makes every update's
# features on the training thread (--speech.prefetch false) logs the same losses as the two that
# made the next update's on a background thread. With "fconv", a small ConvS2S with dropout and
# NAG's momentum buffers. With "synthesis", a tiny Tacotron 2 on one espeak-ng voice, with its
# dropouts (the prenet's, also drawn at validation from a fixed seed) and the guided-attention loss.
#   train_resume.sh <mixseq> <work dir> [translation|lm|lstm_lm|speech|fconv|synthesis]
set -euo pipefail
mixseq=$1
work=$2
kind=${3:-translation}
source "$(dirname "$0")/small_task.sh"
if [ "$kind" = speech ]; then
  command -v espeak-ng >/dev/null || { echo "SKIP: espeak-ng is not installed"; exit 77; }
  rm -rf "$work" && mkdir -p "$work"
  python3 "$(dirname "$0")/tools/spoken_numbers.py" "$work/digits" --train 120 --valid 10 --seed 2
  "$mixseq" prepare --task speech --train "$work/digits/train.tsv" --valid "$work/digits/valid.tsv" -o "$work/data" >/dev/null
  train=("$mixseq" --threads 1 train -c "$(dirname "$0")/../../configs/speech_tiny.yaml" --data.dir "$work/data"
         --model.wave2letter_plus.channels "[32, 32, 32]" --model.wave2letter_plus.prologue_channels 32
         --model.wave2letter_plus.epilogue_channels 32 --model.wave2letter_plus.enc_feats 32
         --speech.max_frames 3000 --train.max_epochs 0 --train.max_steps 70)
elif [ "$kind" = synthesis ]; then
  command -v espeak-ng >/dev/null || { echo "SKIP: espeak-ng is not installed"; exit 77; }
  rm -rf "$work" && mkdir -p "$work"
  python3 "$(dirname "$0")/tools/spoken_numbers.py" "$work/digits" --train 60 --valid 6 --seed 3 --voice en-us
  "$mixseq" prepare --task speech --train "$work/digits/train.tsv" --valid "$work/digits/valid.tsv" -o "$work/data" \
    --sample-rate 22050 >/dev/null
  train=("$mixseq" --threads 1 train -c "$(dirname "$0")/../../configs/tacotron2_tiny.yaml" --data.dir "$work/data"
         --synthesis.max_frames 600 --train.validate_interval 20 --train.max_epochs 0 --train.max_steps 60)
elif [ "$kind" = lm ]; then
  make_small_lm_task "$mixseq" "$work"
  tiny_lm_train_command "$mixseq" "$work"
  train+=(--model.transformer_xl.dropout 0.1 --train.max_steps 250)
elif [ "$kind" = lstm_lm ]; then
  make_small_lm_task "$mixseq" "$work"
  tiny_lstm_lm_train_command "$mixseq" "$work"
  train+=(--train.max_steps 250)
elif [ "$kind" = fconv ]; then
  make_small_task "$mixseq" "$work"
  tiny_fconv_train_command "$mixseq" "$work"
  train+=(--model.fconv.dropout 0.2 --train.max_steps 200 --train.validate_bleu false)
else
  make_small_task "$mixseq" "$work"
  tiny_train_command "$mixseq" "$work"
  train+=(--model.gnmt.hidden_size 32 --model.gnmt.num_layers 2 --model.gnmt.dropout 0.2 --train.max_epochs 0
         --train.max_steps 150 --train.validate_bleu false)
fi
base=("${train[@]}")
train+=(--train.log_interval 1 --train.save_interval 1)
steps=$(printf '%s\n' "${train[@]}" | grep -A1 -x -- --train.max_steps | tail -1)

"${train[@]}" --train.run_dir "$work/straight" 2>"$work/straight.log"

"${train[@]}" --train.run_dir "$work/killed" 2>"$work/killed.log" &
pid=$!
updates() {
  local count
  count=$(grep -c '"kind":"train"' "$work/killed/metrics.jsonl" 2>/dev/null || true)
  echo "${count:-0}"
}
while [ "$(updates)" -lt 40 ]; do
  kill -0 "$pid" 2>/dev/null || { echo "FAIL: the run ended before it could be killed"; exit 1; }
  sleep 0.02
done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
echo "killed after $(updates) logged updates"

"${train[@]}" --train.run_dir "$work/killed" --resume 2>"$work/resumed.log"
grep -q "resuming from" "$work/resumed.log" || { echo "FAIL: the second run did not resume"; exit 1; }

logged_losses "$work/straight/metrics.jsonl" >"$work/straight.losses"
logged_losses "$work/killed/metrics.jsonl" >"$work/killed.losses"
[ "$(wc -l <"$work/straight.losses")" -eq "$steps" ] || { echo "FAIL: expected $steps logged updates"; exit 1; }
if ! diff "$work/straight.losses" "$work/killed.losses" >"$work/diff.txt"; then
  echo "FAIL: per-update losses differ after resume:"; head "$work/diff.txt"; exit 1
fi
if [ "$kind" = speech ]; then
  "${train[@]}" --train.run_dir "$work/unprefetched" --speech.prefetch false 2>"$work/unprefetched.log"
  logged_losses "$work/unprefetched/metrics.jsonl" >"$work/unprefetched.losses"
  if ! diff "$work/straight.losses" "$work/unprefetched.losses" >"$work/diff.txt"; then
    echo "FAIL: per-update losses differ between features prefetched and made in place:"; head "$work/diff.txt"; exit 1
  fi
fi
if [ "$kind" = translation ]; then
  # A log line every 4 updates and a checkpoint after each update: a kill lands between log lines,
  # and the first line after a resume must still cover the updates before the kill (their sums go
  # into checkpoint_last.pt), as the run that never stopped logs them. Two kills: the chance that
  # both resume exactly at a log line, where the check would learn nothing, is 1 in 16; the
  # resumed updates are printed.
  sparse=("${base[@]}" --train.log_interval 4 --train.save_interval 1)
  "${sparse[@]}" --train.run_dir "$work/sparse_straight" 2>"$work/sparse_straight.log"
  lines() {
    local count
    count=$(grep -c '"kind":"train"' "$work/sparse_killed/metrics.jsonl" 2>/dev/null || true)
    echo "${count:-0}"
  }
  for round in 1 2 3; do
    resume=(); [ "$round" -gt 1 ] && resume=(--resume)
    "${sparse[@]}" --train.run_dir "$work/sparse_killed" "${resume[@]}" 2>"$work/sparse_$round.log" &
    pid=$!
    [ "$round" -eq 3 ] && { wait "$pid" || { echo "FAIL: the last resume failed"; exit 1; }; break; }
    while [ "$(lines)" -lt $((round * 8)) ]; do
      kill -0 "$pid" 2>/dev/null || { echo "FAIL: the sparse run ended before it could be killed"; exit 1; }
      sleep 0.01
    done
    # A log line was just written, and the checkpoint of its update: wait for the next two
    # checkpoints (each replaces checkpoint_last.pt, a new inode), so that the kill lands after them.
    for more in 1 2; do
      inode=$(stat -c %i "$work/sparse_killed/checkpoint_last.pt" 2>/dev/null || echo none)
      while [ "$(stat -c %i "$work/sparse_killed/checkpoint_last.pt" 2>/dev/null || echo none)" = "$inode" ]; do
        kill -0 "$pid" 2>/dev/null || { echo "FAIL: the sparse run ended before it could be killed"; exit 1; }
        sleep 0.005
      done
    done
    kill -9 "$pid"
    wait "$pid" 2>/dev/null || true
  done
  grep -ho "resuming from .* at update [0-9]*" "$work"/sparse_[23].log | sed 's/.* at update /resumed at update /'
  logged_losses "$work/sparse_straight/metrics.jsonl" >"$work/sparse_straight.losses"
  logged_losses "$work/sparse_killed/metrics.jsonl" >"$work/sparse_killed.losses"
  if ! diff "$work/sparse_straight.losses" "$work/sparse_killed.losses" >"$work/diff.txt"; then
    echo "FAIL: the losses logged every 4 updates differ after resuming between log lines:"; head "$work/diff.txt"
    exit 1
  fi
fi
echo "PASS: $steps updates, identical losses with and without the kill"
