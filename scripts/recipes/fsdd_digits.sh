#!/usr/bin/env bash
# Connected-digit recognition on real recordings (the Free Spoken Digit Dataset: 5 speakers x 10
# digits x 50 takes, 8 kHz): utterances of 1-7 digits joined from one speaker's takes with short
# random gaps (scripts/recipes/tools/fsdd_connected.py); trained on four speakers plus espeak-ng's
# and flite's voices reading digit strings (tests/e2e/tools/spoken_numbers.py), validated on the
# fifth speaker, never heard in training; then `mixseq transcribe` and `mixseq wer` on the
# held-out speaker. The best checkpoint is picked by that speaker's WER, so its figure is
# optimistic; AVERAGE's is not picked by it.
#   [HELD_OUT=theo] [CONFIG=...] scripts/recipes/fsdd_digits.sh [FSDD_RECORDINGS_DIR] [WORK_DIR] [mixseq train overrides...]
# FSDD_RECORDINGS_DIR defaults to ../shared/data/fsdd/recordings; the model is left at
# WORK_DIR/heldout_<speaker>/checkpoint_best.pt. Rotate HELD_OUT over george, jackson, lucas,
# theo, yweweler for the per-speaker figures of docs/benchmarks.md. SYNTHETIC=0 leaves the
# synthetic voices out; FLITE (default awb,rms,slt,kal16) names the flite voices that read a share of
# the synthetic utterances beside espeak-ng's (one voice in 12 each; FLITE= for espeak-ng's alone, as
# before 2026-11-28); VOICES=wide draws espeak-ng's voices from its 8 English accents times 31
# variants less the 3 validation voices (245) instead of the 8 of the tests; SYNTHETIC_TRAIN
# (default 1500) is how many synthetic utterances there are; PRONUNCIATIONS=accents has espeak-ng's
# voices read each digit word in other English accents' pronunciations too (spoken_numbers.py
# --pronunciations: a back-vowel "two", "three" with [t] or [f], monophthong "eight"...; default
# voice: each voice's own; it helped neither george nor yweweler, docs/benchmarks.md); SEED changes
# the utterances drawn.
# Prints the greedy WER and CER, then those of
# CTC prefix beam search (BEAM=16) fused with a word bigram of the training transcripts (irstlm,
# Witten-Bell; ALPHA=0.5, BETA=1.0): the digits are drawn at random, so what the word model adds
# is the lexicon, the ten digit words. AVERAGE=N keeps the last N epochs' checkpoints and decodes
# their average as well (WORK_DIR/heldout_<speaker>/checkpoint_average.pt). UNITS=words makes the
# model's symbols the words of the training transcripts (a SentencePiece word model: CTC over the ten
# digit words) in place of OpenSeq2Seq's 28 characters (UNITS=characters, the default).
# ADAPT=N (default 0) adds unsupervised speaker adaptation: N more utterances of the held-out
# speaker, unlabelled and from takes the validation utterances do not use (the speaker's odd take
# numbers; validation then draws from the even ones, so its utterances differ from ADAPT=0's), on
# which `mixseq transcribe --adapt-norms` re-estimates the model's batch-norm statistics before
# decoding the validation utterances again, greedy and with the digit bigram. TRIM_ONSET=MS
# (default 0: none) starts half the real training takes up to MS ms after their speech onset
# (scripts/recipes/tools/fsdd_connected.py --trim-onset), for speakers whose first consonants the
# recordings' trimming left weak or cut.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
recordings=${1:-$here/../shared/data/fsdd/recordings}
work=${2:-runs/fsdd}
shift $(( $# > 2 ? 2 : $# ))
mixseq=${MIXSEQ:-$here/build/bin/mixseq}
config=${CONFIG:-$here/configs/fsdd_digits.yaml}
held_out=${HELD_OUT:-theo}
seed=${SEED:-1}
run=$work/heldout_$held_out
data=$work/data_$held_out

adapt=${ADAPT:-0}
python3 "$here/scripts/recipes/tools/fsdd_connected.py" "$recordings" "$data/fsdd" --held-out "$held_out" \
  --train 2000 --valid 300 --adapt "$adapt" --seed "$seed" --trim-onset "${TRIM_ONSET:-0}"
train_manifest=$data/fsdd/train.tsv
if [ "${SYNTHETIC:-1}" != 0 ]; then
  python3 "$here/tests/e2e/tools/spoken_numbers.py" "$data/espeak" --train "${SYNTHETIC_TRAIN:-1500}" --valid 0 \
    --max-digits 7 --seed "$seed" --flite "${FLITE-awb,rms,slt,kal16}" --voices "${VOICES:-default}" \
    --pronunciations "${PRONUNCIATIONS:-voice}"
  { cat "$data/fsdd/train.tsv" | sed "s|^|fsdd/|"; sed "s|^|espeak/|" "$data/espeak/train.tsv"; } >"$data/train_all.tsv"
  train_manifest=$data/train_all.tsv
fi
symbols=english
if [ "${UNITS:-characters}" = words ]; then
  cut -f2 "$train_manifest" >"$data/transcripts.txt"
  words=$(tr ' ' '\n' <"$data/transcripts.txt" | sort -u | grep -c .)
  "$mixseq" spm train --input "$data/transcripts.txt" --model-prefix "$data/words" --model-type word \
    --vocab-size $((words + 3))
  symbols=spm:$data/words.model
elif [ "${UNITS:-characters}" != characters ]; then
  echo "fsdd_digits.sh: UNITS must be characters or words, not '$UNITS'" >&2
  exit 2
fi
"$mixseq" prepare --task speech --train "$train_manifest" --valid "$data/fsdd/valid.tsv" --sample-rate 8000 \
  --symbols "$symbols" -o "$data/prepared" --workers 2
average=${AVERAGE:-0}
"$mixseq" train -c "$config" --data.dir "$data/prepared" --train.run_dir "$run" \
  --train.keep_last_checkpoints "$average" "$@"
"$mixseq" transcribe -c "$run/checkpoint_best.pt" -i "$data/fsdd/valid.tsv" -o "$run/valid.hyp"
cut -f2 "$data/fsdd/valid.tsv" >"$run/valid.ref"
echo "held-out speaker $held_out:"
"$mixseq" wer "$run/valid.ref" -i "$run/valid.hyp"
"$mixseq" wer "$run/valid.ref" -i "$run/valid.hyp" --cer
# A word bigram of every training transcript (the held-out speaker's are not among them).
cut -f2 "$train_manifest" >"$run/lm_train.txt"
"$here/scripts/recipes/tools/word_lm.sh" 2 "$run/lm_train.txt" "$run/digits.arpa"
"$mixseq" transcribe -c "$run/checkpoint_best.pt" -i "$data/fsdd/valid.tsv" -o "$run/valid.lm.hyp" \
  --beam-size "${BEAM:-16}" --lm "$run/digits.arpa" --lm-weight "${ALPHA:-0.5}" --word-bonus "${BETA:-1.0}"
echo "held-out speaker $held_out, beam ${BEAM:-16} with the digit bigram (alpha ${ALPHA:-0.5}, beta ${BETA:-1.0}):"
"$mixseq" wer "$run/valid.ref" -i "$run/valid.lm.hyp"
"$mixseq" wer "$run/valid.ref" -i "$run/valid.lm.hyp" --cer
if [ "$average" -gt 0 ]; then
  "$mixseq" average-checkpoints --run-dir "$run" --num "$average" -o "$run/checkpoint_average.pt"
  "$mixseq" transcribe -c "$run/checkpoint_average.pt" -i "$data/fsdd/valid.tsv" -o "$run/valid.average.hyp"
  echo "held-out speaker $held_out, the average of the last $average epochs:"
  "$mixseq" wer "$run/valid.ref" -i "$run/valid.average.hyp"
  "$mixseq" wer "$run/valid.ref" -i "$run/valid.average.hyp" --cer
  "$mixseq" transcribe -c "$run/checkpoint_average.pt" -i "$data/fsdd/valid.tsv" -o "$run/valid.average.lm.hyp" \
    --beam-size "${BEAM:-16}" --lm "$run/digits.arpa" --lm-weight "${ALPHA:-0.5}" --word-bonus "${BETA:-1.0}"
  echo "held-out speaker $held_out, the average, beam ${BEAM:-16} with the digit bigram:"
  "$mixseq" wer "$run/valid.ref" -i "$run/valid.average.lm.hyp"
fi
if [ "$adapt" -gt 0 ]; then
  "$mixseq" transcribe -c "$run/checkpoint_best.pt" -i "$data/fsdd/valid.tsv" -o "$run/valid.adapted.hyp" \
    --adapt-norms "$data/fsdd/adapt.tsv"
  echo "held-out speaker $held_out, batch norms adapted on $adapt unlabelled utterances of other takes:"
  "$mixseq" wer "$run/valid.ref" -i "$run/valid.adapted.hyp"
  "$mixseq" wer "$run/valid.ref" -i "$run/valid.adapted.hyp" --cer
  "$mixseq" transcribe -c "$run/checkpoint_best.pt" -i "$data/fsdd/valid.tsv" -o "$run/valid.adapted.lm.hyp" \
    --adapt-norms "$data/fsdd/adapt.tsv" --beam-size "${BEAM:-16}" --lm "$run/digits.arpa" \
    --lm-weight "${ALPHA:-0.5}" --word-bonus "${BETA:-1.0}"
  echo "held-out speaker $held_out, adapted, beam ${BEAM:-16} with the digit bigram:"
  "$mixseq" wer "$run/valid.ref" -i "$run/valid.adapted.lm.hyp"
  "$mixseq" wer "$run/valid.ref" -i "$run/valid.adapted.lm.hyp" --cer
fi
