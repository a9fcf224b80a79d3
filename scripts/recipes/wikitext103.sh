#!/usr/bin/env bash
# WikiText-103 with Transformer-XL base (configs/transformer_xl_base.yaml; CONFIG=configs/transformer_xl_large.yaml
# for large): downloads the corpus (needs internet; 181 MB), prepares a word-level vocabulary
# (267,735 types with </s>), trains (a GPU job: 40,000 updates of 256 x 192 tokens; several
# GPUs with mpirun/srun, docs/distributed.md), then evaluates the test split with the
# reference's evaluation settings (segments of 64, memory 640, clamp_len 400).
#   [CONFIG=...] scripts/recipes/wikitext103.sh [WORK_DIR] [extra mixseq train overrides...]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-runs/wikitext103}
shift $(( $# > 1 ? 1 : $# ))
mixseq=${MIXSEQ:-$here/build/bin/mixseq}
config=${CONFIG:-$here/configs/transformer_xl_base.yaml}
run=$work/$(basename "$config" .yaml)

mkdir -p "$work/raw"
if [ ! -f "$work/raw/wiki.train.tokens" ]; then
  curl -fL --retry 3 -o "$work/raw/wikitext-103-v1.zip" https://s3.amazonaws.com/research.metamind.io/wikitext/wikitext-103-v1.zip
  unzip -q -j -o "$work/raw/wikitext-103-v1.zip" -d "$work/raw"
fi
for split in train valid test; do ln -sf "wiki.$split.tokens" "$work/raw/$split"; done
"$mixseq" prepare --source-lang "" --target-lang "" --train "$work/raw/train" --valid "$work/raw/valid" \
  --test "$work/raw/test" --tokenizer none --vocab-pad-to-multiple 1 -o "$work/data"
"$mixseq" train -c "$config" --data.dir "$work/data" --train.run_dir "$run" "$@"
"$mixseq" lm-eval -c "$run/checkpoint_best.pt" -i "$work/raw/test"
