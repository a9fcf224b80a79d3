#!/usr/bin/env bash
# Corruption and mix-ups are errors, not garbage: a flipped byte in a checkpoint's weights stops
# `translate`, a flipped (still valid) token id in a prepared dataset stops `train`, and resuming
# with another vocabulary of the same size is refused. Each error names the file.
#   train_integrity.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
source "$(dirname "$0")/small_task.sh"
make_small_task "$mixseq" "$work"
train=("$mixseq" --threads 1 train --train.device cpu --data.max_tokens 256 --model.gnmt.hidden_size 16
       --model.gnmt.num_layers 2 --train.max_epochs 0 --train.max_steps 2 --train.validate_bleu false)
fail() { echo "FAIL: $*"; exit 1; }
# Flips the lowest bit of the byte at offset $2 of file $1.
flip_bit() {
  local byte
  byte=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "\\x$(printf %02x $((byte ^ 1)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
# The command must fail with a message holding $1.
fails_saying() {
  local expected=$1 log=$work/fails.log
  shift
  if "$@" 2>"$log" >/dev/null; then fail "$* succeeded"; fi
  grep -q -- "$expected" "$log" || fail "$* did not say '$expected': $(tail -2 "$log")"
}

"${train[@]}" --data.dir "$work/data" --train.run_dir "$work/run" 2>"$work/train.log" || fail "$(tail -3 "$work/train.log")"

# 1. A flipped byte in the weights: the average holds little else, so its middle byte is a weight.
"$mixseq" average-checkpoints --inputs "$work/run/checkpoint_last.pt" -o "$work/weights.pt" 2>/dev/null
flip_bit "$work/weights.pt" $(($(stat -c %s "$work/weights.pt") / 2))
head -3 "$work/raw/valid.en" >"$work/three.en"
fails_saying "weights.pt' is not a readable checkpoint (truncated or corrupt?): entry '.*' does not match its CRC-32" \
  "$mixseq" --threads 1 translate -c "$work/weights.pt" -i "$work/three.en" --device cpu

# 2. A flipped token id in a prepared dataset, still inside the vocabulary.
cp -r "$work/data" "$work/flipped"
flip_bit "$work/flipped/train.en.bin" 64
fails_saying "train.en.bin' is corrupt: its checksum is" "${train[@]}" --data.dir "$work/flipped" --train.run_dir "$work/f"

# 3. Resuming on data with the same vocabulary size but two pieces swapped.
awk 'NR == 5 { held = $0; next } NR == 6 { print; print held; next } { print }' "$work/data/vocab.txt" >"$work/swapped.vocab"
[ "$(wc -l <"$work/swapped.vocab")" -eq "$(wc -l <"$work/data/vocab.txt")" ] || fail "the swapped vocabulary changed size"
"$mixseq" prepare --train "$work/raw/train" --valid "$work/raw/valid" -o "$work/swapped" --tokenizer none \
  --vocabulary "$work/swapped.vocab" >/dev/null
fails_saying "swapped/vocab.txt' is not the vocabulary '.*checkpoint_last.pt' was trained with" \
  "${train[@]}" --data.dir "$work/swapped" --train.run_dir "$work/run" --resume --train.max_steps 4
echo "PASS: corrupt weights, a corrupt dataset and another vocabulary are errors naming the file"
