#!/usr/bin/env bash
# Every numeric option is checked before any work (issue 11): `translate --length-penalty nan`
# printed nan scores and `synth --train-size -5` wrote a short split, both with exit 0; `bench`
# printed LibTorch traces. Each case must exit non-zero, say the flag and what is allowed, and write
# nothing.
#   option_validation.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
cd "$work"
printf 'a b\n' >text

source "$(dirname "$0")/expect_error.sh"

expect "--length-penalty: nan is not a finite number" translate -c missing.pt --length-penalty nan
expect "--coverage-penalty: -1 is out of range; it must be at least 0" translate -c missing.pt --coverage-penalty -1
expect "--beam-size: 0 is out of range; it must be in 1..1000" translate -c missing.pt --beam-size 0
expect "--max-len-a: inf is not a finite number" translate -c missing.pt --max-len-a inf
expect "--max-tokens: 0 is out of range; it must be at least 1" translate -c missing.pt --max-tokens 0
expect "--train-size: -5 is out of range; it must be at least 0" synth -o synth --train-size -5
expect "--max-value: 1000000 is out of range; it must be in 1..999999" synth -o synth --max-value 1000000
expect "--seed: -1 is out of range; it must be at least 0" synth -o synth --seed -1
# Sizes out of memory's reach are refused by value (they ended in a bare "std::bad_alloc").
expect "number task: train_size (99999999999) must be in 0..10000000" synth -o synth --train-size 99999999999
expect "vocabulary pad_to_multiple must be in 1..1048576" vocab build -i text -o vocab.txt --pad-to-multiple 2000000000
[ ! -e synth ] || { echo "FAIL: a refused synth wrote $work/synth"; failures=$((failures + 1)); }
# The option parser's errors begin as every other error does.
status=0
"$mixseq" synth -o synth --train-size -5 2>parse_err.txt || status=$?
head -1 parse_err.txt | grep -qx "mixseq: error: --train-size: -5 is out of range; it must be at least 0" ||
  { echo "FAIL: the option parser's error (exit $status): $(cat parse_err.txt)"; failures=$((failures + 1)); }
expect "--train-size: 0 is out of range; it must be at least 1" demo --work-dir demo --train-size 0
expect "--batch: 0 is out of range; it must be at least 1" bench train --batch 0
expect "--steps: 0 is out of range; it must be at least 1" bench train --steps 0
expect "--bucket-mb: nan is not a finite number" bench train --bucket-mb nan
expect "--vocab: 3 is out of range; it must be at least 5" bench train --vocab 3
expect "--beam: 100000 is out of range; it must be in 1..1000" bench translate --beam 100000
expect "--vocab-size: 0 is out of range; it must be in 1..2147483647" spm train --input text --model-prefix m --vocab-size 0
expect "--character-coverage: nan is not a finite number" spm train --input text --model-prefix m --character-coverage nan
expect "--seed: 4294967295 is out of range; it must be in 0..4294967294" spm train --input text --model-prefix m --seed 4294967295
expect "--pad-to-multiple: 0 is out of range; it must be at least 1" vocab build -i text -o vocab.txt --pad-to-multiple 0
expect "--max-length-ratio: inf is not a finite number" prepare --train text -o data --max-length-ratio inf
expect "--vocab-min-count: -2 is out of range; it must be at least 0" prepare --train text -o data --vocab-min-count -2
expect "--symbols: -1 is out of range; it must be at least 0" bpe learn -i text -o codes -s -1
expect "--merges: -2 is out of range; it must be at least -1" bpe apply -c codes -i text -m -2
expect "--num: 0 is out of range; it must be at least 1" average-checkpoints --run-dir . --num 0 -o avg.pt
expect "--width: 100 is out of range; it must be in 0..17" bleu text -i text -w 100
expect "--smooth-value: nan is not a finite number" bleu text -i text -s floor --smooth-value nan
expect "--chrf-beta: -1 is out of range; it must be at least 0" chrf text -i text --chrf-beta -1
expect "--optim.lr must be a finite number, not '.nan'" train --optim.lr .nan --print-config
[ ! -e vocab.txt ] && [ ! -e data ] && [ ! -e codes ] && [ ! -e m.model ] ||
  { echo "FAIL: a refused command wrote output"; failures=$((failures + 1)); }
[ "$failures" -eq 0 ] || exit 1
echo "PASS: every bad numeric option is refused with the flag and the allowed range"
