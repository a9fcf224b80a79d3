#!/usr/bin/env bash
# `cmake --install` puts mixseq, its SentencePiece module and the configs under a prefix, and the
# installed program finds its module relative to itself: the prefix still works once moved, with
# no build-time path left in it.
#   install.sh <build dir> <work dir>
set -euo pipefail
build=$1
work=$2
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/first" >"$work/install.log" || fail "$(tail -3 "$work/install.log")"
mv "$work/first" "$work/moved"
prefix=$work/moved
[ -x "$prefix/bin/mixseq" ] || fail "no bin/mixseq"
[ -f "$prefix/lib/mixseq/libmixseq_sentencepiece.so" ] || fail "no lib/mixseq/libmixseq_sentencepiece.so"
[ -f "$prefix/share/mixseq/configs/gnmt_multi30k.yaml" ] || fail "no share/mixseq/configs"
if grep -qaF "$(cd "$build" && pwd)" "$prefix/bin/mixseq"; then fail "bin/mixseq holds a path into the build tree"; fi

mixseq=$prefix/bin/mixseq
"$mixseq" --version | grep -q '^mixseq ' || fail "--version"
"$mixseq" synth -o "$work/raw" --train-size 200 --valid-size 1 --test-size 1
env -u MIXSEQ_SENTENCEPIECE_MODULE "$mixseq" spm train --input "$work/raw/train.en" --model-prefix "$work/spm" \
  --vocab-size 60 2>"$work/spm.log" || fail "spm train from the moved prefix: $(tail -2 "$work/spm.log")"
head -2 "$work/raw/train.en" | env -u MIXSEQ_SENTENCEPIECE_MODULE "$mixseq" spm encode -m "$work/spm.model" \
  >"$work/pieces" || fail "spm encode from the moved prefix"
[ "$(wc -l <"$work/pieces")" = 2 ] || fail "spm encode wrote $(wc -l <"$work/pieces") lines"

# Without the module where it belongs the error says where it looked and what to do.
rm "$prefix/lib/mixseq/libmixseq_sentencepiece.so"
if env -u MIXSEQ_SENTENCEPIECE_MODULE "$mixseq" spm encode -m "$work/spm.model" -i "$work/raw/train.en" \
  >/dev/null 2>"$work/missing.log"; then fail "spm encode ran without its module"; fi
grep -qF "$prefix/bin/../lib/mixseq/libmixseq_sentencepiece.so" "$work/missing.log" ||
  grep -qF "$prefix/lib/mixseq/libmixseq_sentencepiece.so" "$work/missing.log" || fail "$(cat "$work/missing.log")"
grep -qF "lib/mixseq/ beside the program's bin/ folder" "$work/missing.log" || fail "$(cat "$work/missing.log")"
echo "PASS: an installed, moved prefix runs mixseq and its SentencePiece module"
