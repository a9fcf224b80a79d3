#!/usr/bin/env bash
# Real read speech: the five LibriVox clips of Debian's pocketsphinx-testdata (Jane Austen's "Sense
# and Sensibility", one reader, 16 kHz, 36 s in all) transcribed by a mixseq speech recognizer, next
# to pocketsphinx's own output on them (its en-us acoustic model, trigram and dictionary from
# Debian's pocketsphinx-en-us), both scored by `mixseq wer` against the package's transcription.
#   scripts/recipes/librivox_clips.sh CHECKPOINT [WORK_DIR] [mixseq transcribe options...]
# e.g. the spoken-captions model with its caption trigram:
#   scripts/recipes/librivox_clips.sh runs/spoken_captions/run/checkpoint_best.pt runs/librivox \
#     --beam-size 32 --lm runs/spoken_captions/captions.arpa --lm-weight 0.8 --word-bonus 1
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
checkpoint=${1:?usage: librivox_clips.sh CHECKPOINT [WORK_DIR] [transcribe options...]}
work=${2:-runs/librivox}
shift $(( $# > 2 ? 2 : $# ))
mixseq=${MIXSEQ:-$here/build/bin/mixseq}
clips=${LIBRIVOX_DIR:-/usr/share/pocketsphinx/test/data/librivox}
model=${POCKETSPHINX_MODEL:-/usr/share/pocketsphinx/model/en-us}
[ -s "$clips/transcription" ] || { echo "librivox_clips.sh: no $clips/transcription (apt-get install pocketsphinx-testdata)" >&2; exit 1; }
mkdir -p "$work"

# "<s> words </s> (clip id)" -> the manifest (audio<TAB>words) and the references.
: >"$work/clips.tsv"
: >"$work/clips.ref"
while IFS= read -r line; do
  id=${line##*(}
  id=${id%)}
  words=$(echo "$line" | sed -e 's/ *([^)]*)$//' -e 's/<s> *//' -e 's/ *<\/s>//')
  printf '%s\t%s\n' "$clips/$id.wav" "$words" >>"$work/clips.tsv"
  echo "$words" >>"$work/clips.ref"
done <"$clips/transcription"

"$mixseq" transcribe -c "$checkpoint" -i "$work/clips.tsv" -o "$work/mixseq.hyp" "$@"
if command -v pocketsphinx_continuous >/dev/null && [ -d "$model/en-us" ]; then
  : >"$work/pocketsphinx.hyp"
  start=$SECONDS
  while IFS=$'\t' read -r audio _; do
    pocketsphinx_continuous -infile "$audio" -hmm "$model/en-us" -lm "$model/en-us.lm.bin" \
      -dict "$model/cmudict-en-us.dict" 2>/dev/null | tr '\n' ' ' | sed 's/ *$//' >>"$work/pocketsphinx.hyp"
    echo >>"$work/pocketsphinx.hyp"
  done <"$work/clips.tsv"
  echo "pocketsphinx 5prealpha (en-us, its trigram), $((SECONDS - start)) s:"
  "$mixseq" wer "$work/clips.ref" -i "$work/pocketsphinx.hyp"
else
  echo "no pocketsphinx_continuous or $model (apt-get install pocketsphinx pocketsphinx-en-us): its row is left out"
fi
echo "mixseq ($checkpoint):"
"$mixseq" wer "$work/clips.ref" -i "$work/mixseq.hyp"
"$mixseq" wer "$work/clips.ref" -i "$work/mixseq.hyp" --cer
