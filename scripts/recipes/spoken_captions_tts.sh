#!/usr/bin/env bash
# Speech synthesis judged by a recognizer (issue 27). One voice (flite's slt, never heard by the
# recognizer in training) reads Multi30k English captions: TRAIN training captions teach a
# Tacotron 2 (configs/tacotron2_captions.yaml, MAX_TIME seconds, 60 minutes by default); the VALID
# held-out validation captions are then synthesized with it and transcribed by the spoken-captions
# recognizer (FLITE_TRAIN=kal,kal16,awb,rms scripts/recipes/spoken_captions.sh: espeak-ng voices and
# flite's others, never slt), beside the same recognizer on the voice's own recordings of those
# captions. Prints both CERs and WERs (greedy decoding), their ratio (the goal: a synthesized CER
# within 1.5x of the recordings') and the recognizer's chance level (its transcripts of the
# recordings against other captions). A ratio means something only where chance is far above 1.5x.
# It also prints the vocoder's ceiling: the recordings turned into the model's frames and back with
# Griffin-Lim alone (`mixseq synthesize --copy-synthesis`), as the synthesizer would sound if it
# predicted every frame exactly.
#   [TRAIN=3000] [VALID=200] [MAX_TIME=3600] [VOICE=flite:slt] \
#     scripts/recipes/spoken_captions_tts.sh RECOGNIZER_CHECKPOINT [MULTI30K_DIR] [WORK_DIR] [mixseq train overrides...]
# RECOGNIZER_CHECKPOINT: e.g. runs/judge/run/checkpoint_best.pt; MULTI30K_DIR defaults to
# ../shared/data/multi30k; the synthesizer is left at WORK_DIR/run/checkpoint_best.pt.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
recognizer=${1:?give the spoken-captions recognizer checkpoint (scripts/recipes/spoken_captions.sh)}
multi30k=${2:-$here/../shared/data/multi30k}
work=${3:-runs/spoken_captions_tts}
shift $(( $# > 3 ? 3 : $# ))
mixseq=${MIXSEQ:-$here/build/bin/mixseq}
config=${CONFIG:-$here/configs/tacotron2_captions.yaml}
run=$work/run
[ -f "$recognizer" ] || { echo "spoken_captions_tts.sh: no recognizer checkpoint '$recognizer'" >&2; exit 1; }

if [ ! -s "$work/speech/valid.tsv" ]; then
  python3 "$here/scripts/recipes/tools/spoken_captions.py" "$multi30k" "$work/speech" --train "${TRAIN:-3000}" \
    --valid "${VALID:-200}" --seed "${SEED:-1}" --voice "${VOICE:-flite:slt}"
fi
"$mixseq" prepare --task speech --train "$work/speech/train.tsv" --valid "$work/speech/valid.tsv" -o "$work/data" \
  --sample-rate 16000 --workers 2
"$mixseq" train -c "$config" --data.dir "$work/data" --train.run_dir "$run" --train.max_time "${MAX_TIME:-3600}" "$@"

# The held-out captions, synthesized, and the voice's own recordings of them, through one recognizer.
cut -f2 "$work/speech/valid.tsv" >"$work/valid.ref"
"$mixseq" synthesize -c "$run/checkpoint_best.pt" -i "$work/valid.ref" -o "$work/synthesized" \
  --manifest "$work/synthesized/manifest.tsv"
"$mixseq" transcribe -c "$recognizer" -i "$work/synthesized/manifest.tsv" -o "$work/synthesized.hyp"
"$mixseq" transcribe -c "$recognizer" -i "$work/speech/valid.tsv" -o "$work/recorded.hyp"
# The vocoder's ceiling: the recordings through the model's frames and Griffin-Lim alone.
"$mixseq" synthesize -c "$run/checkpoint_best.pt" --copy-synthesis "$work/speech/valid.tsv" -o "$work/vocoded" \
  --manifest "$work/vocoded/manifest.tsv"
"$mixseq" transcribe -c "$recognizer" -i "$work/vocoded/manifest.tsv" -o "$work/vocoded.hyp"
for kind in recorded vocoded synthesized; do
  echo "$kind (${VOICE:-flite:slt}, ${VALID:-200} held-out captions):"
  "$mixseq" wer "$work/valid.ref" -i "$work/$kind.hyp"
  "$mixseq" wer "$work/valid.ref" -i "$work/$kind.hyp" --cer
done
# Chance for this recognizer: its transcripts of the recordings, each scored against another
# caption's text (rotated by one line). Synthesized speech it cannot understand lands near this.
{ tail -n +2 "$work/recorded.hyp"; head -n 1 "$work/recorded.hyp"; } >"$work/mismatched.hyp"
cer_of() { "$mixseq" wer "$work/valid.ref" -i "$1" --cer --json | python3 -c "import json,sys; print(json.load(sys.stdin)['cer'])"; }
python3 - "$(cer_of "$work/recorded.hyp")" "$(cer_of "$work/synthesized.hyp")" "$(cer_of "$work/mismatched.hyp")" \
  "$(cer_of "$work/vocoded.hyp")" <<'PY'
import sys
recorded, synthesized, chance, vocoded = map(float, sys.argv[1:5])
ratio = synthesized / recorded if recorded > 0 else float("inf")
print(f"CER: recorded {recorded:.2f}, synthesized {synthesized:.2f}: {ratio:.2f}x (goal: at most 1.5x); "
      f"chance for this recognizer (transcripts against other captions) {chance:.2f}; "
      f"the recordings through the frames and Griffin-Lim alone (copy synthesis) {vocoded:.2f}")
PY
