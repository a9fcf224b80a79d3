#!/usr/bin/env bash
# `mixseq spm train` takes spm_train's own flag spellings (--model_prefix, --input=a,b,
# --user_defined_symbols=x,y), so a command written for spm_train runs as it is, and trains the
# same model as mixseq's spellings do.
#   spm_train_flags.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
"$mixseq" synth -o "$work/raw" --train-size 200 --valid-size 1 --test-size 1
"$mixseq" spm train --input="$work/raw/train.en,$work/raw/train.de" --model_prefix="$work/theirs" \
  --vocab_size=80 --model_type=bpe --character_coverage=1.0 --user_defined_symbols='<a>,<b>' 2>"$work/theirs.log" ||
  fail "spm_train spellings: $(tail -2 "$work/theirs.log")"
grep -q "from 400 lines" "$work/theirs.log" || fail "both comma-separated inputs were not read: $(tail -1 "$work/theirs.log")"
"$mixseq" spm train --input "$work/raw/train.en" --input "$work/raw/train.de" --model-prefix "$work/ours" \
  --vocab-size 80 --model-type bpe --character-coverage 1.0 --user-defined-symbols '<a>' --user-defined-symbols '<b>' \
  2>"$work/ours.log" || fail "mixseq spellings: $(tail -2 "$work/ours.log")"
cmp -s "$work/theirs.model" "$work/ours.model" || fail "the two spellings trained different models"
sed -n 4,5p "$work/theirs.vocab" | cut -f1 | tr '\n' ' ' | grep -qx '<a> <b> ' || fail "user-defined symbols missing"
# A path that is itself a file stays one input, commas and all.
mkdir -p "$work/a,b" && cp "$work/raw/train.en" "$work/a,b/train.en"
"$mixseq" spm train --input "$work/a,b/train.en" --model-prefix "$work/comma" --vocab-size 60 2>"$work/comma.log" ||
  fail "a path with a comma: $(tail -2 "$work/comma.log")"
grep -q "from 200 lines" "$work/comma.log" || fail "$(tail -1 "$work/comma.log")"
# One missing input of a comma-separated list is named alone (it named the whole list as one file).
if "$mixseq" spm train --input="$work/raw/train.en,$work/missing.de" --model-prefix "$work/m" 2>"$work/missing.log"; then
  fail "a missing input was not refused"
fi
grep -qF "cannot open '$work/missing.de' for reading" "$work/missing.log" || fail "$(tail -1 "$work/missing.log")"
echo "PASS: spm train reads spm_train's flag spellings; a path with a comma stays whole"
