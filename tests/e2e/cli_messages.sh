#!/usr/bin/env bash
# Messages that say what is wrong and how to fix it (issue 11): a mistyped command gets the nearest
# one, a directory given for a file says so, and a device error names the flag of the command in use.
#   cli_messages.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
rm -rf "$work" && mkdir -p "$work/folder"
cd "$work"
printf 'a b\n' >text

source "$(dirname "$0")/expect_error.sh"

expect "unknown command 'trian'; did you mean 'train'?" trian
expect "unknown command 'tarnslate'; did you mean 'translate'?" --threads 1 tarnslate -i text
expect "unknown spm command 'trian'; did you mean 'train'?" spm trian
expect "mixseq bpe needs a command: learn, apply" bpe
# A mistyped option of a command that takes configuration overrides took the next word as its
# value ("unexpected argument 'cpu'"): it is named, with the option it was meant to be.
expect "unknown option '--resme' for mixseq train; did you mean 'resume'?" train --resme --train.device cpu
expect "unknown option '--overwirte' for mixseq train; did you mean 'overwrite'?" train --train.device cpu --overwirte
expect "config file 'folder' is a directory; give a YAML file" train -c folder
expect "cannot read 'folder': it is a directory, not a text file" vocab build -i folder -o vocab.txt
expect "cannot read 'folder': it is a directory, not a text file" bleu folder -i text
expect "checkpoint 'folder' is a directory; name a checkpoint in it, such as folder/checkpoint_best.pt" \
  translate -c folder -i text --device cpu
expect "SentencePiece model 'folder' is a directory" spm encode -m folder -i text

# Without CUDA, each command names its own device flag.
status=0
"$mixseq" translate -c folder --device cuda >/dev/null 2>err.txt || status=$?
if grep -qF "sees no CUDA device" err.txt; then
  grep -qF -- "use --device cpu" err.txt && ! grep -qF -- "--train.device" err.txt ||
    { echo "FAIL: translate --device cuda names another flag:"; cat err.txt; failures=$((failures + 1)); }
  expect "--device cuda asked for, but this LibTorch sees no CUDA device; use --device cpu" \
    bench train --device cuda --vocab 10 --hidden 4 --layers 2 --batch 1 --seq-len 2 --steps 1
fi
# --version names mixseq's version and the LibTorch it was built with, and exits 0.
version=$("$mixseq" --version) || { echo "FAIL: --version exited non-zero"; failures=$((failures + 1)); }
[[ "$version" =~ ^mixseq\ [0-9]+\.[0-9]+\.[0-9]+\ \(LibTorch\ [0-9]+\.[0-9]+ ]] ||
  { echo "FAIL: --version printed '$version'"; failures=$((failures + 1)); }
# It names OpenBLAS's core too, and keeps the one a user chose with OPENBLAS_CORETYPE.
[[ "$version" == *"OpenBLAS "* ]] || { echo "FAIL: --version names no BLAS core: '$version'"; failures=$((failures + 1)); }
version=$(OPENBLAS_CORETYPE=Haswell "$mixseq" --version)
[[ "$version" == *"OpenBLAS Haswell (OPENBLAS_CORETYPE"* ]] ||
  { echo "FAIL: OPENBLAS_CORETYPE=Haswell gave '$version'"; failures=$((failures + 1)); }
# It names how tensors' memory is held (util/tensor_memory.h), and MIXSEQ_HUGE_PAGES=0 is obeyed.
[[ "$version" == *"; tensor memory: "* ]] || { echo "FAIL: --version names no tensor memory: '$version'"; failures=$((failures + 1)); }
version=$(MIXSEQ_HUGE_PAGES=0 "$mixseq" --version)
[[ "$version" == *"tensor memory: 4 KiB pages (MIXSEQ_HUGE_PAGES=0)"* ]] ||
  { echo "FAIL: MIXSEQ_HUGE_PAGES=0 gave '$version'"; failures=$((failures + 1)); }
[ "$failures" -eq 0 ] || exit 1
echo "PASS: typos get the nearest command, directories and devices are named; --version"
