#!/usr/bin/env bash
# WMT14 English->German with Transformer big and the "Scaling Neural Machine Translation" recipe
# (Ott et al. 2018; configs/transformer_big.yaml). Downloads the data: run it with internet
# access on GPUs.
#   GPUS=8 scripts/recipes/wmt14_en_de_big.sh [WORK_DIR] [extra mixseq train overrides...]
# VOCAB_SIZE=N sets the SentencePiece pieces (32000).
#
# Data as fairseq's examples/translation/prepare-wmt14en2de.sh: Europarl v7, Common Crawl and
# News Commentary for training, newstest2014 (the full 3003 sentences) for testing, and
# newstest2013 for validation, as in the paper (the fairseq script holds out 1% of training
# instead). News Commentary is v9, WMT14's own release, which makes the ~4.5M pairs the papers
# describe (fairseq's --icml17; its default is v12).
#
# Preprocessing differs on purpose, as in the other recipes: one joint SentencePiece model of 32k
# pieces segments raw text instead of Moses tokenization + 40k BPE, so there is no Perl tokenizer
# to install or undo and BLEU is sacreBLEU on the raw references (the paper's 29.3 is BLEU on
# tokens with compound splitting; compare with care). fairseq's cleaning is kept: training pairs
# of more than 250 pieces or with a length ratio over 1.5 are dropped.
#
# The paper's update is 128 batches of 3584 tokens (~460k tokens): 8 GPUs with update_freq 16.
# With N data-parallel ranks an update takes N x update_freq batches, so update_freq = 128 / GPUS
# keeps it; several GPUs run under `mpirun -np GPUS` (docs/distributed.md).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-runs/wmt14_en_de_big}
shift $(( $# > 1 ? 1 : $# ))
mixseq=${MIXSEQ:-$here/build/bin/mixseq}
gpus=${GPUS:-8}
(( gpus >= 1 && 128 % gpus == 0 )) || { echo "GPUS ($gpus) must divide 128" >&2; exit 1; }
launch=()
if (( gpus > 1 )); then launch=(mpirun -np "$gpus"); fi
mkdir -p "$work/download" "$work/raw"
cd "$work"

fetch() { [ -f "download/$2" ] || wget -nv -O "download/$2" "$1"; }
fetch http://www.statmt.org/europarl/v7/de-en.tgz europarl-v7-de-en.tgz
fetch http://www.statmt.org/wmt13/training-parallel-commoncrawl.tgz commoncrawl.tgz
fetch http://www.statmt.org/wmt14/training-parallel-nc-v9.tgz nc-v9.tgz
fetch http://data.statmt.org/wmt17/translation-task/dev.tgz dev.tgz
fetch http://www.statmt.org/wmt14/test-full.tgz test-full.tgz
for archive in download/*.tgz; do tar -xzf "$archive" -C download; done

for lang in en de; do
  cat download/europarl-v7.de-en.$lang download/commoncrawl.de-en.$lang \
      download/training/news-commentary-v9.de-en.$lang >raw/train.$lang
  cp download/dev/newstest2013.$lang raw/valid.$lang
done
# The SGML test set: the text of each <seg>, trimmed as sacreBLEU does.
sgm_text() { sed -n 's/.*<seg[^>]*>\s*\(.*\)<\/seg>.*/\1/p' "$1" | sed 's/\s*$//'; }
sgm_text download/test-full/newstest2014-deen-src.en.sgm >raw/test.en
sgm_text download/test-full/newstest2014-deen-ref.de.sgm >raw/test.de

# Character coverage below 1: Common Crawl carries many rare characters (other scripts, symbols)
# that would each take one of the 32k pieces.
"$mixseq" spm train --input raw/train.en --input raw/train.de --model-prefix raw/spm \
  --vocab-size "${VOCAB_SIZE:-32000}" --model-type bpe --character-coverage 0.9999 \
  --input-sentence-size 10000000
"$mixseq" prepare --source-lang en --target-lang de --train raw/train --valid raw/valid --test raw/test \
  --tokenizer spm:raw/spm.model --drop-malformed-utf8 --max-length 250 --max-length-ratio 1.5 -o data
"${launch[@]}" "$mixseq" train -c "$here/configs/transformer_big.yaml" --data.dir data --train.run_dir run \
  --train.update_freq $(( 128 / gpus )) --train.keep_last_checkpoints 5 "$@"
"$mixseq" average-checkpoints --run-dir run --num 5 -o run/checkpoint_avg5.pt
"$mixseq" translate -c run/checkpoint_avg5.pt -i raw/test.en -o test.hyp.de \
  --beam-size 4 --length-penalty 0.6 --coverage-penalty 0
"$mixseq" bleu raw/test.de -i test.hyp.de
