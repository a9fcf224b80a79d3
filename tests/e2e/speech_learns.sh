#!/usr/bin/env bash
# A small Wave2Letter+ (configs/speech_tiny.yaml) learns the built-in spoken-digits task
# (tests/e2e/tools/spoken_numbers.py: espeak-ng, validation in voices not heard in training):
# the best checkpoint's validation CER falls far below an untrained model's (~100%);
# `mixseq transcribe` over the validation manifest reproduces the CER the training validation
# logged (the same features and greedy decoding), its JSON lines carry word times; CTC prefix beam
# search is no worse than greedy decoding (within a measured 8.5 points of WER), and with a word
# trigram model that irstlm builds from the training transcripts (skipped without irstlm) no worse
# at all (it won by 6-35 points over 20 models, 2026-12-06); bad
# input (an unreadable audio file, one too short for the features, a float file holding a NaN, a
# manifest line without a tab, a text corpus, a bad config key, a malformed ARPA file) gets errors
# naming the file.
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
# Batches of at most 3,000 frames (the preset's 6,000 halved): twice the updates in the same time
# (about 2 minutes), which the model needs to leave CTC's all-blank plateau early enough. Over
# training seeds 1-10 (docs/reliability.md) the preset's batches left 2 models above the CER bound
# below (70.88, 82.28; the others 25.61-64.39), these none (10.88-58.60; 12.98-61.75 after each
# utterance's augmentation got a generator of its own, 2026-12-07).
"$mixseq" train -c "$here/../../configs/speech_tiny.yaml" --data.dir "$work/prepared" --train.run_dir "$work/run" \
  --train.max_epochs 20 --speech.max_frames 3000 2>"$work/train.log"
checkpoint=$work/run/checkpoint_best.pt
best=$(grep ' valid |' "$work/train.log" | grep '(best)' | tail -1)
echo "best validation: $best"
cer=$(sed -n 's/.*| cer \([0-9.]*\).*/\1/p' <<<"$best")
# An untrained model scores CER 85-100 here. After the 20 epochs, runs reached 18.95 to 43.33 while
# one of the three validation voices was in fact a training one (espeak-ng read "en-gb+m2" as
# "en-gb"); with three voices never heard and the preset's batches, 49.47-55.4 at the default seed
# and 25.61-82.28 over seeds 1-10; with the batches above, 10.88-58.60 over seeds 1-10
# (2026-12-06). The thread count follows the machine's load, docs/threads.md, and with it the
# sums' rounding, so a seed's spread is what another machine may see: the bound proves learning
# with 11 points of room above the worst of the ten.
awk -v c="$cer" 'BEGIN { exit !(c < 70) }' || { echo "FAIL: validation CER $cer is not below 70%"; exit 1; }

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

# Beam search, then shallow fusion with an ARPA trigram model of the training transcripts.
wer_of() { "$mixseq" wer "$work/valid.ref" -i "$1" --json | python3 -c "import json,sys; print('%.2f' % json.load(sys.stdin)['wer'])"; }
greedy_wer=$(wer_of "$work/valid.hyp")
"$mixseq" transcribe -c "$checkpoint" -i "$work/digits/valid.tsv" -o "$work/beam.hyp" --beam-size 16 2>/dev/null
beam_wer=$(wer_of "$work/beam.hyp")
echo "WER: greedy $greedy_wer, beam 16 $beam_wer"
# Beam search usually wins, by up to 21 points, but not on every model: over training seeds 1-10
# (2026-12-06) it lost by 0.71, 3.54 and 4.25 (1, 5 and 6 words of 141) on three; the bound is
# twice the largest loss (docs/reliability.md, "Statistical bounds"). The prefix beam search itself
# is checked against an exhaustive search in the unit tests.
awk -v b="$beam_wer" -v g="$greedy_wer" 'BEGIN { exit !(b <= g + 8.5) }' ||
  { echo "FAIL: beam search's WER $beam_wer is over greedy's $greedy_wer + 8.5"; exit 1; }
if command -v irstlm >/dev/null; then
  cut -f2 "$work/digits/train.tsv" | irstlm add-start-end >"$work/train.se"
  (cd "$work" && irstlm build-lm -i train.se -n 3 -k 1 -t lm_tmp -o digits.ilm.gz &&
    irstlm compile-lm digits.ilm.gz --text=yes digits.arpa) >"$work/irstlm.log" 2>&1 ||
    { echo "FAIL: irstlm"; cat "$work/irstlm.log"; exit 1; }
  # alpha 1, beta 2: the best of alpha {0.5, 1, 2, 3} x beta {0, 1, 2, 4} on this task (WER 54 against
  # greedy's 77 and plain beam's 71 when first measured).
  "$mixseq" transcribe -c "$checkpoint" -i "$work/digits/valid.tsv" -o "$work/lm.hyp" --beam-size 16 \
    --lm "$work/digits.arpa" --lm-weight 1 --word-bonus 2 2>"$work/transcribe_lm.log"
  lm_wer=$(wer_of "$work/lm.hyp")
  echo "WER: greedy $greedy_wer, beam 16 $beam_wer, beam 16 + trigram LM $lm_wer"
  awk -v l="$lm_wer" -v g="$greedy_wer" 'BEGIN { exit !(l <= g) }' ||
    { echo "FAIL: the LM-fused WER $lm_wer is worse than greedy's $greedy_wer"; exit 1; }
  grep -q "language model .*digits.arpa: order 3" "$work/transcribe_lm.log" ||
    { echo "FAIL: no language model line"; cat "$work/transcribe_lm.log"; exit 1; }
  grep -q "lists no <unk>" "$work/transcribe_lm.log" && { echo "FAIL: irstlm's model has <unk>, yet warned"; exit 1; }
  # A model without <unk> is warned about (the search would run unknown words together).
  printf '\\data\\\nngram 1=2\n\n\\1-grams:\n-0.3\tone\n-0.3\ttwo\n\n\\end\\\n' >"$work/no_unk.arpa"
  "$mixseq" transcribe -c "$checkpoint" --beam-size 4 --lm "$work/no_unk.arpa" "$work/digits/$first" \
    -o /dev/null 2>"$work/no_unk.log"
  grep -qF "$work/no_unk.arpa lists no <unk>" "$work/no_unk.log" ||
    { echo "FAIL: no warning for a model without <unk>"; cat "$work/no_unk.log"; exit 1; }
  # JSON lines with the n best, best first, the first being the transcript.
  "$mixseq" transcribe -c "$checkpoint" --json "$work/digits/$first" --beam-size 8 --nbest 3 \
    --lm "$work/digits.arpa" --lm-weight 1 --word-bonus 2 >"$work/nbest.json" 2>/dev/null
  python3 - "$work/nbest.json" <<'PY'
import json, sys
record = json.loads(open(sys.argv[1]).read())
nbest = record["nbest"]
assert 1 <= len(nbest) <= 3 and nbest[0]["text"] == record["text"], record
assert all(a["score"] >= b["score"] for a, b in zip(nbest, nbest[1:])), nbest
assert all(h["ctc_log_prob"] <= 0 and h["lm_log10_prob"] < 0 for h in nbest), nbest
PY
else
  echo "SKIP (the language-model part only): irstlm is not installed (scripts/setup.sh installs it)"
fi

# Bad input: each error names the file.
cd "$work"
source "$here/expect_error.sh"
printf 'not audio' >"$work/bad.wav"
printf '%s\n' "$work/digits/$first" "$work/bad.wav" >"$work/bad.tsv"
expect_error "$work/bad.wav" transcribe -c "$checkpoint" -i "$work/bad.tsv" -o "$work/bad.hyp"
# A file too short for the model's features, and a float WAV holding a NaN: each named, with what
# is wrong (the first once failed inside the features without the file's name; the second was
# transcribed into words from NaN features).
python3 - "$work" <<'PY'
import struct, sys, wave
with wave.open(sys.argv[1] + "/blip.wav", "wb") as w:
    w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000), w.writeframes(b"\x10\x00" * 100)
data = struct.pack("<4000f", *([0.1] * 1234 + [float("nan")] + [0.1] * 2765))
header = b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 3, 1, 16000, 64000, 4, 32)
open(sys.argv[1] + "/nan.wav", "wb").write(header + b"data" + struct.pack("<I", len(data)) + data)
PY
expect_error "$work/blip.wav: too short for the model's features: 100 samples" transcribe -c "$checkpoint" \
  "$work/blip.wav"
expect_error "$work/nan.wav: damaged audio: frame 1234 (0.077125 s) holds a sample that is not a number" \
  transcribe -c "$checkpoint" "$work/nan.wav"
printf 'no-tab-here\n' >"$work/notab.tsv"
expect_error "notab.tsv:1" prepare --task speech --train "$work/notab.tsv" -o "$work/p2"
expect_error "not a speech dataset" train -c "$here/../../configs/speech_tiny.yaml" \
  --data.dir "$work/digits" --train.run_dir "$work/run2"
expect_error "data.max_tokens is a setting of the translation task" train \
  -c "$here/../../configs/speech_tiny.yaml" --data.dir "$work/prepared" --train.run_dir "$work/run3" \
  --data.max_tokens 100
printf '\\data\\\nngram 1=two\n' >"$work/bad.arpa"
expect_error "$work/bad.arpa:2: expected a count line" transcribe -c "$checkpoint" --lm "$work/bad.arpa" \
  "$work/digits/$first"
expect_error "--nbest (4) must be at most --beam-size (2)" transcribe -c "$checkpoint" --beam-size 2 --nbest 4 \
  "$work/digits/$first"
[ "$failures" -eq 0 ] || exit 1
echo "OK"
