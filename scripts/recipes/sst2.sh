#!/usr/bin/env bash
# SST-2 sentiment classification with transfer learning (issue 26; docs/classification.md):
#   1. a language model pretrained for 30 minutes (configs/sst2_lm.yaml) on lowercased WikiText-2
#      (to match SST-2's lowercased text; WikiText's "didn 't" split as SST-2's PTB "did n't") with
#      the SST-2 training sentences appended, labels left out (ULMFiT's target-task LM stage);
#   2. SST-2 prepared with that model's vocabulary (prepare --task classify --pretrained);
#   3. the classifier of configs/sst2_classifier.yaml fine-tuned from the language model, 30 minutes,
#      gradual unfreezing every 300 updates and discriminative rates (each layer group down learns
#      at the rate of the one above over 2.6, ULMFiT's) (WORK_DIR/transfer);
#   4. the same classifier from scratch on the same data, 30 minutes (WORK_DIR/scratch);
#   5. dev accuracy of both, from `mixseq classify --labelled`, in WORK_DIR/results.txt.
#   scripts/recipes/sst2.sh [SST2_DIR] [WORK_DIR]
# SST2_DIR holds train.tsv.gz and dev.tsv (default ../shared/data/sst-2); WikiText-2 comes from
# WIKITEXT2_DIR (default ../shared/data/wikitext-2). MIXSEQ names the program; LM_TIME and
# CLASSIFIER_TIME (seconds, default 1800) change the budgets. SPLIT=sentences pools the two files
# and draws a dev set of 872 whole sentences whose own phrases no training row holds, as GLUE's
# own dev set is (scripts/recipes/tools/sst2_sentence_split.py); the default, SPLIT=files, uses
# them as they are.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
sst2=${1:-$here/../shared/data/sst-2}
work=${2:-runs/sst2}
wikitext2=${WIKITEXT2_DIR:-$here/../shared/data/wikitext-2}
mixseq=${MIXSEQ:-$here/build/bin/mixseq}
lm_time=${LM_TIME:-1800}
classifier_time=${CLASSIFIER_TIME:-1800}
split=${SPLIT:-files}

mkdir -p "$work/raw"
case $split in
  files)
    gzip -dc "$sst2/train.tsv.gz" >"$work/raw/train.tsv"
    cp "$sst2/dev.tsv" "$work/raw/dev.tsv" ;;
  sentences)
    python3 "$here/scripts/recipes/tools/sst2_sentence_split.py" "$sst2/train.tsv.gz" "$sst2/dev.tsv" \
      "$work/raw/train.tsv" "$work/raw/dev.tsv" ;;
  *) echo "SPLIT=$split: expected 'files' or 'sentences'" >&2; exit 2 ;;
esac
lowercase() { tr '[:upper:]' '[:lower:]' | sed "s/n 't\b/ n't/g"; }
{ gzip -dc "$wikitext2/train.txt.gz" | lowercase; tail -n +2 "$work/raw/train.tsv" | cut -f1; } >"$work/raw/lm.train"
lowercase <"$wikitext2/valid.txt" >"$work/raw/lm.valid"

if [ ! -f "$work/lm/checkpoint_best.pt" ]; then
  # The vocabulary padded to a multiple of 8 (prepare's default): the output layer's bf16 product
  # over an odd vocabulary (35,351 here) made every update 1.4x slower on AMX (docs/benchmarks.md).
  "$mixseq" prepare --source-lang "" --target-lang "" --train "$work/raw/lm.train" --valid "$work/raw/lm.valid" \
    --tokenizer none -o "$work/lm_data"
  "$mixseq" train -c "$here/configs/sst2_lm.yaml" --data.dir "$work/lm_data" --train.run_dir "$work/lm" \
    --train.max_time "$lm_time"
fi
"$mixseq" prepare --task classify --pretrained "$work/lm/checkpoint_best.pt" --train "$work/raw/train.tsv" \
  --valid "$work/raw/dev.tsv" -o "$work/data"
"$mixseq" train -c "$here/configs/sst2_classifier.yaml" --data.dir "$work/data" --train.run_dir "$work/transfer" \
  --classify.pretrained "$work/lm/checkpoint_best.pt" --classify.unfreeze_every 300 --classify.layer_lr_divisor 2.6 \
  --train.max_time "$classifier_time"
"$mixseq" train -c "$here/configs/sst2_classifier.yaml" --data.dir "$work/data" --train.run_dir "$work/scratch" \
  --train.max_time "$classifier_time"
{
  for run in transfer scratch; do
    printf '%s: ' "$run"
    "$mixseq" classify -c "$work/$run/checkpoint_best.pt" -i "$work/raw/dev.tsv" --labelled -o /dev/null 2>&1 |
      sed -n 's/.*; accuracy/dev accuracy/p'
  done
} | tee "$work/results.txt"
