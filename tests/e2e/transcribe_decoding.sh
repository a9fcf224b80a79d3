#!/usr/bin/env bash
# `mixseq transcribe --workers`, `--adapt-norms` and `--rescore-lm` (issue 25, "Decoding and scoring") on the speech
# model e2e_speech_learns trains (a CTest fixture: that test runs first and leaves
# <speech work>/run/checkpoint_best.pt and the spoken digits <speech work>/digits):
# - one worker and two write the same transcripts, greedy and beam search alike, and an unreadable
#   audio file ends either with an exit status from 1 to 127 and a message naming it;
# - --adapt-norms (batch norms re-estimated on unlabelled audio) moves the scores, keeps one line
#   per input and the workers' agreement, and names a bad or empty adaptation manifest;
# - a tiny Transformer-XL trained here on the training transcripts (number words) re-ranks the
#   beam search's n-best: the JSON n-best is ordered by search score + W * LM log-probability +
#   bonus * words, each entry carrying both scores, misspelt words scored as <unk>, and the plain
#   transcripts are its first entries; weight 0 keeps the search's order; with a large weight the
#   transcripts change, every line is a transcript, they hold at most 2 more words the language
#   model never saw (misspelt digits) than the beam's, and their WER stays within a measured
#   margin of the beam search's (docs/reliability.md, "Statistical bounds"); a checkpoint that is
#   not a language model, greedy decoding with --rescore-lm, and --nbest 1 are errors that say so.
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
printf 'not audio' >"$work/bad.wav"
{ head -5 "$manifest" | awk -F'\t' -v dir="$speech/digits" '{ print dir "/" $1 }'; echo "$work/bad.wav"; } >"$work/bad.tsv"
for workers in 1 2; do
  expect_error "$work/bad.wav" --threads 2 transcribe -c "$checkpoint" -i "$work/bad.tsv" -o "$work/bad.hyp" \
    --workers "$workers" --buffer-size 2
done

# --adapt-norms: the batch norms re-estimated on unlabelled audio (here the input itself) before
# decoding: one line per input, a log line saying what was adapted, other scores than without it
# (the statistics moved), the same transcripts whatever the worker count; an unreadable or empty
# adaptation manifest is an error naming it.
"${transcribe[@]}" --beam-size 8 --nbest 2 --json -o plain.json 2>/dev/null
"${transcribe[@]}" --beam-size 8 --nbest 2 --json --adapt-norms "$manifest" -o adapted.json 2>adapt.log
grep -q "batch norms adapted on $lines utterances (.* s of audio) of $manifest" adapt.log ||
  { echo "FAIL: no adaptation line"; cat adapt.log; exit 1; }
[ "$(wc -l <adapted.json)" -eq "$lines" ] || { echo "FAIL: --adapt-norms wrote $(wc -l <adapted.json) lines"; exit 1; }
python3 - plain.json adapted.json <<'PY' || exit 1
import json, sys
plain, adapted = ([json.loads(l) for l in open(p)] for p in sys.argv[1:])
moved = sum(abs(a["nbest"][0]["ctc_log_prob"] - b["nbest"][0]["ctc_log_prob"]) > 1e-3 for a, b in zip(plain, adapted))
print(f"--adapt-norms: {moved} of {len(plain)} best scores moved")
sys.exit(0 if moved > len(plain) // 2 else f"FAIL: adapting moved {moved} of {len(plain)} scores")
PY
for workers in 1 2; do
  "${transcribe[@]}" --adapt-norms "$manifest" --workers "$workers" -o "adapted.$workers.hyp" 2>/dev/null
done
cmp adapted.1.hyp adapted.2.hyp || { echo "FAIL: --adapt-norms: --workers 2 wrote other transcripts"; exit 1; }
expect_error "$work/bad.wav" --threads 2 transcribe -c "$checkpoint" -i "$manifest" -o adapted.hyp --adapt-norms bad.tsv
: >empty.tsv
expect_error "--adapt-norms $work/empty.tsv lists no audio files" transcribe -c "$checkpoint" -i "$manifest" \
  -o adapted.hyp --adapt-norms "$work/empty.tsv"
# An output that is one of the adaptation manifest's recordings is refused before any work, and
# the recording is left as it was (a hostile-input sweep, 2026-12-07: it was overwritten).
first_audio=$(head -1 "$manifest" | cut -f1)
[ "${first_audio#/}" = "$first_audio" ] && first_audio="$(dirname "$manifest")/$first_audio"
cp "$first_audio" victim.wav
printf 'victim.wav\n' >adapt_victim.tsv
before=$(md5sum <victim.wav)
expect_error "--output 'victim.wav' is the same file as --adapt-norms audio file" transcribe -c "$checkpoint" \
  -i "$manifest" --adapt-norms adapt_victim.tsv -o victim.wav
[ "$(md5sum <victim.wav)" = "$before" ] || { echo "FAIL: --adapt-norms audio overwritten"; failures=$((failures + 1)); }
# NeMo's segments: the first utterance twice in one file, read back as two segments of it, gives
# its transcript twice; a segment past the file's end is an error naming the manifest line.
python3 - "$first_audio" "$work" <<'PY'
import json, sys, wave
audio, work = sys.argv[1:]
with wave.open(audio) as w:
    rate, frames = w.getframerate(), w.readframes(w.getnframes())
    params = w.getparams()
with wave.open(f"{work}/twice.wav", "wb") as w:
    w.setparams(params)
    w.writeframes(frames + frames)
seconds = len(frames) / params.sampwidth / params.nchannels / rate
with open(f"{work}/segments.json", "w") as f:
    f.write(json.dumps({"audio_filepath": "twice.wav", "duration": seconds}) + "\n")
    f.write(json.dumps({"audio_filepath": "twice.wav", "offset": seconds, "duration": seconds}) + "\n")
with open(f"{work}/past.json", "w") as f:
    f.write(json.dumps({"audio_filepath": "twice.wav", "offset": 0}) + "\n")
    f.write(json.dumps({"audio_filepath": "twice.wav", "offset": 3 * seconds}) + "\n")
PY
"$mixseq" --threads 2 transcribe -c "$checkpoint" "$first_audio" -o whole.hyp 2>/dev/null
"$mixseq" --threads 2 transcribe -c "$checkpoint" -i "$work/segments.json" -o segments.hyp 2>/dev/null
[ "$(cat segments.hyp)" = "$(cat whole.hyp whole.hyp)" ] ||
  { echo "FAIL: segments transcribed as '$(cat segments.hyp)', the file alone as '$(cat whole.hyp)'"; failures=$((failures + 1)); }
expect_error "$work/past.json:2: $work/twice.wav: the segment's offset" transcribe -c "$checkpoint" \
  -i "$work/past.json" -o past.hyp
# Adapting on silence is warned about (the statistics describe no speaker).
python3 -c 'import wave; w = wave.open("silence.wav", "wb"); w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000); w.writeframes(bytes(32000))'
printf 'silence.wav\n' >adapt_silence.tsv
"$mixseq" --threads 2 transcribe -c "$checkpoint" "$first_audio" --adapt-norms adapt_silence.tsv -o /dev/null 2>silence.log
grep -qF "the --adapt-norms audio is nearly silent (RMS 0)" silence.log ||
  { echo "FAIL: no warning for silent adaptation audio"; cat silence.log; failures=$((failures + 1)); }
grep -q "nearly silent" adapt.log && { echo "FAIL: warned about speech"; failures=$((failures + 1)); }
[ "$failures" -eq 0 ] || exit 1
echo "PASS: --adapt-norms"

# A tiny Transformer-XL on the training transcripts (tests/e2e/small_task.sh's, words as tokens; a
# full softmax: the vocabulary is 10 words and the 4 special symbols).
source "$here/small_task.sh"
mkdir -p lm/raw
cut -f2 "$speech/digits/train.tsv" >lm/raw/train.en
head -60 lm/raw/train.en >lm/raw/valid.en
"$mixseq" prepare --source-lang en --target-lang "" --train lm/raw/train --valid lm/raw/valid -o lm/data \
  --tokenizer none --vocab-pad-to-multiple 1 >lm/prepare.log 2>&1
tiny_lm_train_command "$mixseq" "$work/lm"
"${train[@]}" --model.transformer_xl.cutoffs "[]" --train.run_dir lm/run --train.max_steps 150 --train.log_interval 50 2>lm/train.log ||
  { tail -5 lm/train.log; exit 1; }
lm=$work/lm/run/checkpoint_best.pt

# Rescoring the beam's 16 best with a large weight, against the beam search alone.
wer_of() { "$mixseq" wer valid.ref -i "$1" --json | python3 -c "import json,sys; print('%.2f' % json.load(sys.stdin)['wer'])"; }
"${transcribe[@]}" --beam-size 16 -o beam.hyp 2>/dev/null
"${transcribe[@]}" --beam-size 16 --rescore-lm "$lm" --rescore-weight 5 -o rescored.hyp 2>rescore.log
grep -q "rescoring the 16 best of each utterance with the language model $lm (transformer_xl" rescore.log ||
  { echo "FAIL: no rescoring line"; cat rescore.log; exit 1; }
[ "$(wc -l <rescored.hyp)" -eq "$lines" ] || { echo "FAIL: rescoring wrote $(wc -l <rescored.hyp) lines, not $lines"; exit 1; }
grep -qvE "^[a-z' ]*$" rescored.hyp && { echo "FAIL: a line that is no transcript:"; grep -vE "^[a-z' ]*$" rescored.hyp; exit 1; }
unseen_words() { tr ' ' '\n' <"$1" | grep -cvxE '|zero|one|two|three|four|five|six|seven|eight|nine' || true; }
beam_wer=$(wer_of beam.hyp)
rescored_wer=$(wer_of rescored.hyp)
beam_unseen=$(unseen_words beam.hyp)
rescored_unseen=$(unseen_words rescored.hyp)
echo "beam 16: WER $beam_wer, $beam_unseen words that are no digit; rescored (W 5): WER $rescored_wer, $rescored_unseen"
# The language model of random digit strings knows spelling and little else (perplexity about 9.5
# of 10 digits), so what rescoring does to the WER follows the acoustic model: 8-12 points better
# on a good one (47.5 -> 35.5-39.7), up to 6.4 points worse on a weak one (76.6 -> 83.0), in 80
# pairs of acoustic and language models (docs/reliability.md); the bound is twice that rise.
awk -v r="$rescored_wer" -v b="$beam_wer" 'BEGIN { exit !(r <= b + 13) }' ||
  { echo "FAIL: rescoring raised the WER by over 13 points: $rescored_wer against $beam_wer"; exit 1; }
# Words outside the digits fell in 40 of the 41 pairs of acoustic and language models measured on
# 2026-12-06 (by 3 to 38) and rose by one on a weak model (CER 55) in CI; the bound is twice that
# rise (docs/reliability.md, "Statistical bounds").
[ "$rescored_unseen" -le $((beam_unseen + 2)) ] ||
  { echo "FAIL: rescoring raised the words that are no digit by over 2 ($beam_unseen -> $rescored_unseen)"; exit 1; }
cmp -s beam.hyp rescored.hyp && { echo "FAIL: rescoring with weight 5 changed no transcript"; exit 1; }
# Weight 0 and no word bonus: the search's own order.
"${transcribe[@]}" --beam-size 16 --rescore-lm "$lm" --rescore-weight 0 -o unweighted.hyp 2>/dev/null
cmp beam.hyp unweighted.hyp || { echo "FAIL: --rescore-weight 0 changed the transcripts"; exit 1; }

# JSON: the n-best re-ranked, best first, with both scores; misspelt words scored (as <unk>).
"${transcribe[@]}" --beam-size 16 --nbest 8 --rescore-lm "$lm" --rescore-weight 5 --rescore-word-bonus 1 --json \
  -o rescored.jsonl 2>/dev/null
"${transcribe[@]}" --beam-size 16 --nbest 8 --rescore-lm "$lm" --rescore-weight 5 --rescore-word-bonus 1 \
  -o rescored_bonus.hyp 2>/dev/null
python3 - rescored.jsonl rescored_bonus.hyp <<'PY'
import json, math, sys
texts = [line.rstrip("\n") for line in open(sys.argv[2])]
records = [json.loads(line) for line in open(sys.argv[1])]
assert [r["text"] for r in records] == texts, "the JSON's transcripts differ from the plain output's"
digits = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
unseen = 0
for record in records:
    nbest = record["nbest"]
    assert 1 <= len(nbest) <= 8 and nbest[0]["text"] == record["text"], record
    assert all(a["score"] >= b["score"] for a, b in zip(nbest, nbest[1:])), nbest
    for h in nbest:
        assert math.isfinite(h["rescore_lm_log_prob"]) and h["rescore_lm_log_prob"] < 0, h
        words = h["text"].split()
        expected = h["search_score"] + 5 * h["rescore_lm_log_prob"] + len(words)
        assert abs(h["score"] - expected) < 1e-6 * max(1, abs(expected)), (h, expected)
        unseen += sum(w not in digits for w in words)
assert unseen > 0, "no hypothesis held a word outside the language model's vocabulary"
PY

expect_error "'$checkpoint' is a speech recognizer (CTC acoustic model) with model.arch 'wave2letter_plus', not a language model" \
  transcribe -c "$checkpoint" -i "$manifest" --beam-size 4 --rescore-lm "$checkpoint"
expect_error "no-such.pt" transcribe -c "$checkpoint" -i "$manifest" --beam-size 4 --rescore-lm no-such.pt
expect_error "--rescore-lm re-ranks the beam search's n-best: give --beam-size above 1" \
  transcribe -c "$checkpoint" -i "$manifest" --rescore-lm "$lm"
expect_error "--rescore-lm with --nbest 1 has nothing to re-rank" \
  transcribe -c "$checkpoint" -i "$manifest" --beam-size 4 --nbest 1 --rescore-lm "$lm"
[ "$failures" -eq 0 ] || exit 1
echo "PASS: rescoring with a language model of the transcripts"
