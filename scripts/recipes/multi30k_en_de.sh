#!/usr/bin/env bash
# Multi30k (task 1) English->German: SentencePiece on raw text, then mixseq prepare and mixseq
# train with configs/gnmt_multi30k.yaml (GNMT) or CONFIG=configs/transformer_multi30k.yaml (or
# configs/convs2s_multi30k.yaml, ConvS2S).
#   [CONFIG=...] scripts/recipes/multi30k_en_de.sh [MULTI30K_DIR] [WORK_DIR] [extra mixseq train overrides...]
# MULTI30K_DIR holds train.{en,de}.gz and val.{en,de}.gz as published by the multi30k/dataset
# repository (data/task1/raw); these machines have a copy in ../shared/data/multi30k.
#
# Why SentencePiece rather than Moses tokenization + BPE: the corpus is raw, cased text;
# SentencePiece segments it directly and decodes back to the exact raw form, so the translations
# are scored with sacreBLEU on untokenized references, with no Perl tokenizer to install or undo.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
source_dir=${1:-$here/../shared/data/multi30k}
work=${2:-runs/multi30k_en_de}
shift $(( $# > 2 ? 2 : $# ))
mixseq=${MIXSEQ:-$here/build/bin/mixseq}
config=${CONFIG:-$here/configs/gnmt_multi30k.yaml}
run=$work/$(basename "$config" .yaml)

mkdir -p "$work/raw"
for side in en de; do
  gzip -dc "$source_dir/train.$side.gz" >"$work/raw/train.$side"
  gzip -dc "$source_dir/val.$side.gz" >"$work/raw/valid.$side"
done

# One joint unigram model of 8000 pieces for both languages (the corpus has ~20k word types).
"$mixseq" spm train --input "$work/raw/train.en" --input "$work/raw/train.de" \
  --model-prefix "$work/raw/spm" --vocab-size 8000 --character-coverage 1.0
"$mixseq" prepare --source-lang en --target-lang de --train "$work/raw/train" --valid "$work/raw/valid" \
  --tokenizer "spm:$work/raw/spm.model" -o "$work/data"
"$mixseq" train -c "$config" --data.dir "$work/data" --train.run_dir "$run" "$@"
"$mixseq" translate -c "$run/checkpoint_best.pt" -i "$work/raw/valid.en" -o "$run/valid.hyp.de"
"$mixseq" bleu "$work/raw/valid.de" -i "$run/valid.hyp.de"
