#!/usr/bin/env bash
# Penn Treebank (Mikolov's word-level version, 10k vocabulary) with Transformer-XL's small CPU preset
# (configs/transformer_xl_wt2.yaml); the adaptive softmax keeps one tail cluster (cutoff 2000),
# as the vocabulary is small. Then lm-eval on the validation split with a memory of 128.
#   scripts/recipes/ptb.sh [PTB_DIR] [WORK_DIR] [extra mixseq train overrides...]
# PTB_DIR holds ptb.train.txt.gz and ptb.valid.txt; these machines have a copy in ../shared/data/ptb.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
source_dir=${1:-$here/../shared/data/ptb}
work=${2:-runs/ptb}
shift $(( $# > 2 ? 2 : $# ))
mixseq=${MIXSEQ:-$here/build/bin/mixseq}
run=$work/transformer_xl_ptb

mkdir -p "$work/raw"
gzip -dc "$source_dir/ptb.train.txt.gz" >"$work/raw/train"
cp "$source_dir/ptb.valid.txt" "$work/raw/valid"
"$mixseq" prepare --source-lang "" --target-lang "" --train "$work/raw/train" --valid "$work/raw/valid" \
  --tokenizer none --vocab-pad-to-multiple 1 -o "$work/data"
"$mixseq" train -c "$here/configs/transformer_xl_wt2.yaml" --data.dir "$work/data" --train.run_dir "$run" \
  --model.transformer_xl.cutoffs "[2000]" "$@"
"$mixseq" lm-eval -c "$run/checkpoint_best.pt" -i "$work/raw/valid" --tgt-len 64 --mem-len 128
