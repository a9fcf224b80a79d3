#!/usr/bin/env bash
# WMT16 English->German with GNMT v2 as in NVIDIA's PyTorch GNMT example and the MLPerf
# reference: Europarl v7, Common Crawl and News Commentary v11 for training, newstest2015 for
# validation, newstest2016 for testing. Run it on a machine with internet access.
#   scripts/recipes/wmt16_en_de.sh [WORK_DIR] [extra mixseq train overrides...]
#
# Preprocessing differs from the reference on purpose: the reference tokenizes with Moses and
# learns 32k BPE merges; here one joint SentencePiece model of 32k pieces segments raw text,
# which needs no Perl tokenizer and decodes to the raw form, so BLEU is sacreBLEU on raw
# references (the reference reports BLEU on its own detokenized output; compare with care).
# The GNMT recipe's filters are kept: pairs with characters outside Latin-1 are dropped, and
# training pairs of more than 50 tokens are skipped by data.max_length.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-runs/wmt16_en_de}
shift $(( $# > 1 ? 1 : $# ))
mixseq=${MIXSEQ:-$here/build/bin/mixseq}
mkdir -p "$work/download" "$work/raw"
cd "$work"

fetch() { [ -f "download/$2" ] || wget -nv -O "download/$2" "$1"; }
fetch http://www.statmt.org/europarl/v7/de-en.tgz europarl-v7-de-en.tgz
fetch http://www.statmt.org/wmt13/training-parallel-commoncrawl.tgz commoncrawl.tgz
fetch http://data.statmt.org/wmt16/translation-task/training-parallel-nc-v11.tgz nc-v11.tgz
fetch http://data.statmt.org/wmt16/translation-task/dev.tgz dev.tgz
fetch http://data.statmt.org/wmt16/translation-task/test.tgz test.tgz
for archive in download/*.tgz; do tar -xzf "$archive" -C download; done

cat download/europarl-v7.de-en.en download/commoncrawl.de-en.en \
    download/training-parallel-nc-v11/news-commentary-v11.de-en.en >raw/train.en
cat download/europarl-v7.de-en.de download/commoncrawl.de-en.de \
    download/training-parallel-nc-v11/news-commentary-v11.de-en.de >raw/train.de
# The SGML test sets: keep the text of <seg> elements.
sgm_text() { sed -n 's/.*<seg[^>]*>\(.*\)<\/seg>.*/\1/p' "$1"; }
sgm_text download/dev/newstest2015-ende-src.en.sgm >raw/valid.en
sgm_text download/dev/newstest2015-ende-ref.de.sgm >raw/valid.de
sgm_text download/test/newstest2016-ende-src.en.sgm >raw/test.en
sgm_text download/test/newstest2016-ende-ref.de.sgm >raw/test.de

"$mixseq" spm train --input raw/train.en --input raw/train.de --model-prefix raw/spm32k \
  --vocab-size 32000 --model-type bpe --character-coverage 1.0 --input-sentence-size 10000000
"$mixseq" prepare --source-lang en --target-lang de --train raw/train --valid raw/valid --test raw/test \
  --tokenizer spm:raw/spm32k.model --drop-non-latin1 --drop-malformed-utf8 --max-length 250 \
  --max-length-ratio 9 -o data
"$mixseq" train -c "$here/configs/gnmt_v2_wmt16.yaml" --data.dir data --train.run_dir run "$@"
"$mixseq" translate -c run/checkpoint_best.pt -i raw/test.en -o test.hyp.de
"$mixseq" bleu raw/test.de -i test.hyp.de
