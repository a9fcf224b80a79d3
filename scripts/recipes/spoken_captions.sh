#!/usr/bin/env bash
# Sentence-level speech recognition with a real vocabulary: Multi30k's English captions read by
# espeak-ng voices for training and by flite voices for validation (an engine never heard in
# training; scripts/recipes/tools/spoken_captions.py), a Wave2Letter+ over characters
# (configs/spoken_captions.yaml, 30 minutes on a 2-core CPU), then the validation WER with greedy
# decoding and with CTC prefix beam search fused with a word trigram of the training captions
# (irstlm, Witten-Bell). FLITE_TRAIN=kal,kal16,awb,rms adds those flite voices to the training readers
# and leaves the others (slt) to validation: the judge of scripts/recipes/spoken_captions_tts.sh.
#   [CONFIG=...] [TRAIN=6000] [VALID=300] [FLITE_TRAIN=] [BEAM=32] [ALPHA=0.8] [BETA=1.0] \
#     scripts/recipes/spoken_captions.sh [MULTI30K_DIR] [WORK_DIR] [mixseq train overrides...]
# MULTI30K_DIR defaults to ../shared/data/multi30k; the model is left at WORK_DIR/run/checkpoint_best.pt.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
multi30k=${1:-$here/../shared/data/multi30k}
work=${2:-runs/spoken_captions}
shift $(( $# > 2 ? 2 : $# ))
mixseq=${MIXSEQ:-$here/build/bin/mixseq}
config=${CONFIG:-$here/configs/spoken_captions.yaml}
run=$work/run

if [ ! -s "$work/speech/valid.tsv" ]; then
  python3 "$here/scripts/recipes/tools/spoken_captions.py" "$multi30k" "$work/speech" --train "${TRAIN:-6000}" \
    --valid "${VALID:-300}" --seed "${SEED:-1}" --flite-train "${FLITE_TRAIN:-}"
fi
"$mixseq" prepare --task speech --train "$work/speech/train.tsv" --valid "$work/speech/valid.tsv" -o "$work/data" \
  --workers 2
"$mixseq" train -c "$config" --data.dir "$work/data" --train.run_dir "$run" --train.best_metric wer "$@"

cut -f2 "$work/speech/valid.tsv" >"$work/valid.ref"
"$mixseq" transcribe -c "$run/checkpoint_best.pt" -i "$work/speech/valid.tsv" -o "$work/valid.greedy.hyp"
# A word trigram of every training caption (the validation captions are not among them).
"$here/scripts/recipes/tools/word_lm.sh" 3 "$work/speech/lm_train.txt" "$work/captions.arpa"
"$mixseq" transcribe -c "$run/checkpoint_best.pt" -i "$work/speech/valid.tsv" -o "$work/valid.lm.hyp" \
  --beam-size "${BEAM:-32}" --lm "$work/captions.arpa" --lm-weight "${ALPHA:-0.8}" --word-bonus "${BETA:-1.0}"
echo "flite voices, greedy:"
"$mixseq" wer "$work/valid.ref" -i "$work/valid.greedy.hyp"
"$mixseq" wer "$work/valid.ref" -i "$work/valid.greedy.hyp" --cer
echo "flite voices, beam ${BEAM:-32} with the caption trigram (alpha ${ALPHA:-0.8}, beta ${BETA:-1.0}):"
"$mixseq" wer "$work/valid.ref" -i "$work/valid.lm.hyp"
"$mixseq" wer "$work/valid.ref" -i "$work/valid.lm.hyp" --cer
