#!/usr/bin/env bash
# `mixseq spm train` while libsentencepiece writes log lines: with --verbose, and on input with a
# line over 4,192 bytes (a warning). Both crashed with a segfault (exit 139) while the mixseq
# binary held its own copy of std::cerr (issue 11, src/text/sentencepiece_module.h).
#   spm_train_logs.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
"$mixseq" synth -o "$work/raw" --train-size 300 --valid-size 1 --test-size 1
{ python3 -c "print('one two three ' * 400)"; cat "$work/raw/train.en"; } >"$work/long.txt"

status=0
"$mixseq" spm train --input "$work/long.txt" --model-prefix "$work/long" --vocab-size 60 2>"$work/long.log" || status=$?
[ "$status" -eq 0 ] || { echo "FAIL: spm train on a 5,600-byte line exited $status"; tail -5 "$work/long.log"; exit 1; }
grep -q "Found too long line" "$work/long.log" || { echo "FAIL: no warning about the long line"; cat "$work/long.log"; exit 1; }

status=0
"$mixseq" spm train --input "$work/raw/train.en" --model-prefix "$work/verbose" --vocab-size 60 --verbose \
  2>"$work/verbose.log" || status=$?
[ "$status" -eq 0 ] || { echo "FAIL: spm train --verbose exited $status"; tail -5 "$work/verbose.log"; exit 1; }
grep -q "LOG(INFO)" "$work/verbose.log" || { echo "FAIL: --verbose printed no training log"; exit 1; }
[ -s "$work/long.model" ] && [ -s "$work/verbose.model" ] || { echo "FAIL: a model is missing"; exit 1; }
echo "PASS: spm train logs (--verbose, a long line) without crashing"
