#!/usr/bin/env bash
# A small Wave2Letter+ (configs/speech_tiny.yaml) learns the built-in spoken-digits task
# (tests/e2e/tools/spoken_numbers.py: espeak-ng, validation in voices not heard in training):
# the best checkpoint's validation CER falls far below an untrained model's (~100%);
# `mixseq transcribe` over the validation manifest reproduces the CER the training validation
# logged (the same features and greedy decoding), its JSON lines carry word times, and bad input
# (an unreadable audio file, a manifest line without a tab, a text corpus, a bad config key) gets
# errors naming the file.
#   speech_learns.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
here=$(dirname "$0")
rm -rf "$work" && mkdir -p "$work"
command -v espeak-ng >/dev/null || { echo "SKIP: espeak-ng is not installed (scripts/setup.sh installs it)"; exit 77; }
python3 "$here/tools/spoken_numbers.py" "$work/digits" --train 600 --valid 60 --seed 1
"$mixseq" prepare --task speech --train "$work/digits/train.tsv" --valid "$work/digits/valid.tsv" \
  -o "$work/prepared" --workers 2 >"$work/prepare.log"
grep -q "^train: 600 utterances" "$work/prepare.log" || { echo "FAIL: prepare"; cat "$work/prepare.log"; exit 1; }
"$mixseq" train -c "$here/../../configs/speech_tiny.yaml" --data.dir "$work/prepared" --train.run_dir "$work/run" \
  --train.max_epochs 20 2>"$work/train.log"
checkpoint=$work/run/checkpoint_best.pt
best=$(grep ' valid |' "$work/train.log" | grep '(best)' | tail -1)
echo "best validation: $best"
cer=$(sed -n 's/.*| cer \([0-9.]*\).*/\1/p' <<<"$best")
awk -v c="$cer" 'BEGIN { exit !(c < 45) }' || { echo "FAIL: validation CER $cer is not below 45%"; exit 1; }

# transcribe: the same CER as the training validation logged for the best checkpoint.
"$mixseq" transcribe -c "$checkpoint" -i "$work/digits/valid.tsv" -o "$work/valid.hyp" 2>"$work/transcribe.log"
cut -f2 "$work/digits/valid.tsv" >"$work/valid.ref"
[ "$(wc -l <"$work/valid.hyp")" -eq 60 ] || { echo "FAIL: transcribe wrote $(wc -l <"$work/valid.hyp") lines, not 60"; exit 1; }
"$mixseq" wer "$work/valid.ref" -i "$work/valid.hyp" --cer --json >"$work/cer.json"
transcribed=$(python3 -c "import json,sys; print('%.2f' % json.load(open(sys.argv[1]))['cer'])" "$work/cer.json")
[ "$transcribed" = "$cer" ] || { echo "FAIL: transcribe's CER $transcribed differs from the validation's $cer"; exit 1; }
grep -q "real-time factor" "$work/transcribe.log" || { echo "FAIL: no real-time factor"; cat "$work/transcribe.log"; exit 1; }
# JSON lines with word times inside the audio.
first=$(head -1 "$work/digits/valid.tsv" | cut -f1)
"$mixseq" transcribe -c "$checkpoint" --json "$work/digits/$first" >"$work/one.json" 2>/dev/null
python3 - "$work/one.json" "$work/digits/$first" <<'PY'
import json, sys, wave
record = json.loads(open(sys.argv[1]).read())
seconds = wave.open(sys.argv[2]).getnframes() / 22050
words = record["words"]
assert record["text"] == " ".join(w["word"] for w in words), record
assert all(0 <= w["start"] < w["end"] <= seconds + 0.05 for w in words), (words, seconds)
assert all(a["end"] <= b["start"] for a, b in zip(words, words[1:])), words
PY

# Bad input: each error names the file.
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
printf '%s\n' "$work/digits/$first" "$work/bad.wav" >"$work/bad.tsv"
expect_error "$work/bad.wav" transcribe -c "$checkpoint" -i "$work/bad.tsv" -o "$work/bad.hyp"
printf 'no-tab-here\n' >"$work/notab.tsv"
expect_error "notab.tsv:1" prepare --task speech --train "$work/notab.tsv" -o "$work/p2"
expect_error "not a speech dataset" train -c "$here/../../configs/speech_tiny.yaml" \
  --data.dir "$work/digits" --train.run_dir "$work/run2"
expect_error "data.max_tokens is a setting of the translation task" train \
  -c "$here/../../configs/speech_tiny.yaml" --data.dir "$work/prepared" --train.run_dir "$work/run3" \
  --data.max_tokens 100
[ "$failures" -eq 0 ] || exit 1
echo "OK"
