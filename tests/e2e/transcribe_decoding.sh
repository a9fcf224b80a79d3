#!/usr/bin/env bash
# `mixseq transcribe --workers` (issue 25, "Decoding and scoring") on the speech model
# e2e_speech_learns trains (a CTest fixture: that test runs first and leaves
# <speech work>/run/checkpoint_best.pt and the spoken digits <speech work>/digits): one worker and
# two write the same transcripts, greedy and beam search alike, and an unreadable audio file ends
# either with an exit status from 1 to 127 and a message naming it.
#   transcribe_decoding.sh <mixseq> <speech_learns work dir> <work dir>
set -euo pipefail
mixseq=$1
speech=$2
work=$3
here=$(cd "$(dirname "$0")" && pwd)
checkpoint=$speech/run/checkpoint_best.pt
[ -f "$checkpoint" ] || { echo "FAIL: no $checkpoint: e2e_speech_learns (this test's fixture) did not leave it"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
manifest=$speech/digits/valid.tsv
cut -f2 "$manifest" >"$work/valid.ref"
lines=$(wc -l <"$manifest")
transcribe=("$mixseq" --threads 2 transcribe -c "$checkpoint" --device cpu -i "$manifest")

# --workers: the same lines with 1 and 2 workers (the 60 files in buffers of 64 are 1 batch or 2).
for decoding in greedy beam; do
  flags=()
  [ "$decoding" = beam ] && flags=(--beam-size 8)
  "${transcribe[@]}" "${flags[@]}" --workers 1 -o "$work/$decoding.1.hyp" 2>"$work/$decoding.1.log"
  "${transcribe[@]}" "${flags[@]}" --workers 2 -o "$work/$decoding.2.hyp" 2>"$work/$decoding.2.log"
  [ "$(wc -l <"$work/$decoding.2.hyp")" -eq "$lines" ] || { echo "FAIL: $decoding: not $lines lines"; exit 1; }
  cmp "$work/$decoding.1.hyp" "$work/$decoding.2.hyp" ||
    { echo "FAIL: $decoding: --workers 2 wrote other transcripts than --workers 1"; exit 1; }
done
echo "PASS: --workers 1 and 2 agree (greedy and beam 8)"

cd "$work"
source "$here/expect_error.sh"
expect_error() {  # expect, plus an exit status from 1 to 127
  local message=$1
  shift
  expect "$message" "$@"
  local status=0
  "$mixseq" "$@" >/dev/null 2>&1 || status=$?
  [ "$status" -ge 1 ] && [ "$status" -le 127 ] || { echo "FAIL: exit status $status"; failures=$((failures + 1)); }
}
printf 'not audio' >"$work/bad.wav"
{ head -5 "$manifest" | awk -F'\t' -v dir="$speech/digits" '{ print dir "/" $1 }'; echo "$work/bad.wav"; } >"$work/bad.tsv"
for workers in 1 2; do
  expect_error "$work/bad.wav" --threads 2 transcribe -c "$checkpoint" -i "$work/bad.tsv" -o "$work/bad.hyp" \
    --workers "$workers" --buffer-size 2
done

[ "$failures" -eq 0 ] || exit 1
echo "PASS: an unreadable file with 1 and 2 workers"
