#!/usr/bin/env bash
# IWSLT'14 German->English (TED talks) with fairseq's transformer_iwslt_de_en
# (configs/transformer_iwslt_de_en.yaml). Downloads the data: run it with internet access and,
# for the config's fp16, a GPU (--train.precision fp32 on a CPU).
#   scripts/recipes/iwslt14_de_en.sh [WORK_DIR] [extra mixseq train overrides...]
# RAW_DIR=DIR skips the download: DIR already holds {train,valid,test}.{de,en}.
# VOCAB_SIZE=N sets the SentencePiece pieces (10000, as fairseq's 10k joint BPE merges).
#
# The splits are those of fairseq's examples/translation/prepare-iwslt14.sh: the WIT3 2014-01
# release, training pairs cleaned as its clean-corpus-n.perl -ratio 1.5 (1 to 175 tokens), every
# 23rd of them held out for validation, and the test set the concatenation of TED.dev2010,
# TEDX.dev2012 and TED.tst2010-2012 (6750 pairs).
#
# Why SentencePiece rather than Moses tokenization + BPE: one joint model segments the raw text
# and decodes back to it, so there is no Perl tokenizer to install or undo and BLEU is sacreBLEU
# on the raw references. Why cased, where fairseq lowercases: the model then writes real English
# and is scored as such; the lowercased score is printed too, nearer fairseq's setting but still
# not comparable with its BLEU on Moses tokens.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-runs/iwslt14_de_en}
shift $(( $# > 1 ? 1 : $# ))
mixseq=${MIXSEQ:-$here/build/bin/mixseq}
raw=${RAW_DIR:-$work/raw}

if [ -z "${RAW_DIR:-}" ]; then
  mkdir -p "$work/download" "$raw"
  tgz=$work/download/de-en.tgz
  [ -f "$tgz" ] || wget -nv -O "$tgz" http://dl.fbaipublicfiles.com/fairseq/data/iwslt14/de-en.tgz
  tar -xzf "$tgz" -C "$work/download"
  orig=$work/download/de-en
  for lang in de en; do
    grep -v -e '<url>' -e '<talkid>' -e '<keywords>' "$orig/train.tags.de-en.$lang" |
      sed -e 's/<title>//g; s/<\/title>//g; s/<description>//g; s/<\/description>//g' \
      >"$work/download/train.$lang"
    # As fairseq: right single quotes become apostrophes, as the training transcripts write them.
    for set in TED.dev2010 TEDX.dev2012 TED.tst2010 TED.tst2011 TED.tst2012; do
      grep '<seg id' "$orig/IWSLT14.$set.de-en.$lang.xml" |
        sed -e 's/<seg id="[0-9]*">\s*//; s/\s*<\/seg>\s*//' -e "s/’/'/g"
    done >"$raw/test.$lang"
  done
  # Moses' clean-corpus-n keeps pairs of 1 to 175 tokens with a length ratio of at most 1.5. On raw
  # text a token is taken to be a word (inner punctuation included) or a punctuation mark at its
  # edge, roughly as Moses' tokenizer splits (this drops 0.3% of fairseq's own cleaned pairs).
  # Every 23rd kept pair is the validation split.
  awk -v raw="$raw" '
    function tokens(text) {
      return gsub(/[^[:space:][:punct:]]([^[:space:]]*[^[:space:][:punct:]])?|[[:punct:]]/, "&", text)
    }
    NR == FNR { de[FNR] = $0; next }
    { s = tokens(de[FNR]); t = tokens($0) }
    s >= 1 && t >= 1 && s <= 175 && t <= 175 && s <= 1.5 * t && t <= 1.5 * s {
      split_name = ++kept % 23 ? "train" : "valid"
      print de[FNR] >(raw "/" split_name ".de"); print >(raw "/" split_name ".en")
    }' "$work/download/train.de" "$work/download/train.en"
fi

mkdir -p "$work/spm"
"$mixseq" spm train --input "$raw/train.de" --input "$raw/train.en" --model-prefix "$work/spm/spm" \
  --vocab-size "${VOCAB_SIZE:-10000}" --model-type bpe --character-coverage 1.0
"$mixseq" prepare --source-lang de --target-lang en --train "$raw/train" --valid "$raw/valid" \
  --test "$raw/test" --tokenizer "spm:$work/spm/spm.model" -o "$work/data"
"$mixseq" train -c "$here/configs/transformer_iwslt_de_en.yaml" --data.dir "$work/data" \
  --train.run_dir "$work/run" "$@"

# Average the numbered checkpoints train.keep_last_checkpoints kept; with none, take the best.
shopt -s nullglob
kept=("$work"/run/checkpoint_[0-9]*.pt)
checkpoint=$work/run/checkpoint_best.pt
[ -f "$checkpoint" ] || checkpoint=$work/run/checkpoint_last.pt   # no validation BLEU was run
if (( ${#kept[@]} > 1 )); then
  checkpoint=$work/run/checkpoint_avg.pt
  "$mixseq" average-checkpoints --run-dir "$work/run" --num "${#kept[@]}" -o "$checkpoint"
fi
"$mixseq" translate -c "$checkpoint" -i "$raw/test.de" -o "$work/test.hyp.en" \
  --beam-size 4 --length-penalty 0.6 --coverage-penalty 0
"$mixseq" bleu "$raw/test.en" -i "$work/test.hyp.en"
"$mixseq" bleu --lowercase "$raw/test.en" -i "$work/test.hyp.en"
