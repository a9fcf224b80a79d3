#!/usr/bin/env bash
# WikiText-2 language modelling with Transformer-XL's small CPU preset (configs/transformer_xl_wt2.yaml):
# word-level vocabulary counted on the training split (as the reference: one </s> per line,
# ordered by frequency, which the adaptive softmax's cutoffs rely on), then mixseq train, then
# lm-eval on the validation split with a memory of 128 (alone, then with the continuous cache;
# CACHE_THETA and CACHE_LAMBDA change its settings) and a short generated sample.
#   [CONFIG=...] scripts/recipes/wikitext2.sh [WIKITEXT2_DIR] [WORK_DIR] [extra mixseq train overrides...]
# WIKITEXT2_DIR holds train.txt.gz and valid.txt (wiki.train.tokens / wiki.valid.tokens); these
# machines have a copy in ../shared/data/wikitext-2.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
source_dir=${1:-$here/../shared/data/wikitext-2}
work=${2:-runs/wikitext2}
shift $(( $# > 2 ? 2 : $# ))
mixseq=${MIXSEQ:-$here/build/bin/mixseq}
config=${CONFIG:-$here/configs/transformer_xl_wt2.yaml}
run=$work/$(basename "$config" .yaml)

mkdir -p "$work/raw"
gzip -dc "$source_dir/train.txt.gz" >"$work/raw/train"
cp "$source_dir/valid.txt" "$work/raw/valid"
# No filler symbols: the vocabulary is exactly the corpus's (33,278 with </s>, plus <pad> and <s>).
"$mixseq" prepare --source-lang "" --target-lang "" --train "$work/raw/train" --valid "$work/raw/valid" \
  --tokenizer none --vocab-pad-to-multiple 1 -o "$work/data"
"$mixseq" train -c "$config" --data.dir "$work/data" --train.run_dir "$run" "$@"
"$mixseq" lm-eval -c "$run/checkpoint_best.pt" -i "$work/raw/valid" --tgt-len 64 --mem-len 128
# The same with the continuous cache (docs/language_models.md); theta and lambda were chosen for
# the Transformer-XL preset on the first half of the validation split (docs/benchmarks.md).
"$mixseq" lm-eval -c "$run/checkpoint_best.pt" -i "$work/raw/valid" --tgt-len 64 --mem-len 128 \
  --cache-window 2000 --cache-theta "${CACHE_THETA:-0.03}" --cache-lambda "${CACHE_LAMBDA:-0.25}"
"$mixseq" generate -c "$run/checkpoint_best.pt" --prompt "The game" --max-tokens 40 --top-p 0.9
