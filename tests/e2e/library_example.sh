#!/usr/bin/env bash
# The installed C++ library (issue 28). `cmake --install` puts libmixseq (with its SONAME), the
# public headers alone, the CMake package and the pkg-config file under a prefix; examples/translate,
# copied out of the tree and configured in another folder against that prefix alone, translates as
# the installed `mixseq translate` does (and so does the installed Python module), with a model this test trains on SentencePiece pieces (so
# that a program outside mixseq's tree opens the SentencePiece module beside the library too).
#   library_example.sh <build dir> <source dir> <work dir>
set -euo pipefail
build=$(cd "$1" && pwd)
source=$(cd "$2" && pwd)
work=$3
here=$(dirname "$0")
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
work=$(cd "$work" && pwd)

cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" || fail "$(tail -3 "$work/install.log")"
prefix=$work/prefix
[ -f "$prefix/include/mixseq/mixseq.h" ] || fail "no include/mixseq/mixseq.h"
[ -f "$prefix/include/mixseq/api/translator.h" ] || fail "no include/mixseq/api/translator.h"
[ ! -e "$prefix/include/mixseq/decode" ] || fail "internal headers (include/mixseq/decode) were installed"
library=$(ls "$prefix"/lib/libmixseq.so.*.*.*) || fail "no lib/libmixseq.so.<version>"
soname=$(readelf -d "$library" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ "$soname" == libmixseq.so.* ]] || fail "libmixseq has SONAME '$soname'"
[ -e "$prefix/lib/$soname" ] && [ -e "$prefix/lib/libmixseq.so" ] || fail "no $soname or libmixseq.so link"
[ -f "$prefix/lib/cmake/mixseq/mixseqConfig.cmake" ] || fail "no CMake package"
version=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --modversion mixseq) || fail "pkg-config mixseq"
# (Outputs are captured before grep: with pipefail, `cmd | grep -q` fails when grep exits at its
# match before cmd has written everything, and cmd dies of SIGPIPE.)
[[ "$("$prefix/bin/mixseq" --version)" == *"mixseq $version "* ]] || fail "pkg-config says $version, mixseq --version differs"

# The example, outside the tree, against the installed package alone.
cp -r "$source/examples/translate" "$work/example-src"
cmake -S "$work/example-src" -B "$work/example-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  >"$work/example-configure.log" 2>&1 || fail "configuring the example: $(tail -5 "$work/example-configure.log")"
cmake --build "$work/example-build" >"$work/example-build.log" 2>&1 ||
  fail "building the example: $(tail -20 "$work/example-build.log")"
example=$work/example-build/translate
! grep -qF -- "$source/include" "$work/example-build/build.ninja" "$work/example-build/CMakeFiles" -r 2>/dev/null ||
  fail "the example was compiled with mixseq's source headers"
libraries=$(ldd "$example")
[[ "$libraries" == *"$prefix/lib/$soname"* ]] || fail "the example does not load the installed libmixseq: $(grep mixseq <<<"$libraries")"

# A tiny model on SentencePiece pieces, trained by the installed mixseq.
mixseq=$prefix/bin/mixseq
"$mixseq" synth -o "$work/raw" --train-size 400 --valid-size 20 --test-size 20 >/dev/null
cat "$work/raw/train.en" "$work/raw/train.de" >"$work/spm.txt"
"$mixseq" spm train --input "$work/spm.txt" --model-prefix "$work/spm" --vocab-size 80 2>"$work/spm.log" ||
  fail "spm train: $(tail -2 "$work/spm.log")"
"$mixseq" prepare --train "$work/raw/train" --valid "$work/raw/valid" -o "$work/data" --tokenizer "spm:$work/spm.model" \
  >/dev/null 2>"$work/prepare.log" || fail "prepare: $(tail -3 "$work/prepare.log")"
"$mixseq" --threads 1 train --train.device cpu --data.dir "$work/data" --data.max_tokens 256 --model.gnmt.hidden_size 32 \
  --model.gnmt.num_layers 2 --train.max_epochs 0 --train.max_steps 300 --optim.lr 5e-3 --train.run_dir "$work/run" \
  --validation_search.beam_size 3 --validation_search.max_len_a 1.5 --validation_search.max_len_b 10 \
  2>"$work/train.log" || fail "train: $(tail -5 "$work/train.log")"
model=$work/run/checkpoint_best.pt

"$mixseq" translate -c "$model" -i "$work/raw/test.en" >"$work/cli.hyp" 2>"$work/cli.log" || fail "$(tail -3 "$work/cli.log")"
"$example" "$model" <"$work/raw/test.en" >"$work/example.hyp" 2>"$work/example.log" ||
  fail "the example failed: $(tail -3 "$work/example.log")"
[ "$(wc -l <"$work/example.hyp")" -eq 20 ] || fail "the example wrote $(wc -l <"$work/example.hyp") lines for 20"
cmp -s "$work/cli.hyp" "$work/example.hyp" || fail "the example's translations differ from mixseq translate's:
$(diff "$work/cli.hyp" "$work/example.hyp" | head -6)"
"$mixseq" translate -c "$model" -i "$work/raw/test.en" --beam-size 1 >"$work/cli1.hyp" 2>>"$work/cli.log"
"$example" "$model" 1 <"$work/raw/test.en" >"$work/example1.hyp" 2>>"$work/example.log"
cmp -s "$work/cli1.hyp" "$work/example1.hyp" || fail "with beam 1 the example's translations differ from mixseq translate's"
cmp -s "$work/cli.hyp" "$work/cli1.hyp" && echo "note: beam 1 and the stored beam 3 agree on this model"
# The Python module installed under the prefix (lib/python3/dist-packages) gives the same translations.
module=$(ls "$prefix"/lib/python3/dist-packages/mixseq*.so 2>/dev/null) || fail "no mixseq*.so under lib/python3/dist-packages"
PYTHONPATH=$(dirname "$module") /usr/bin/python3 -c '
import sys, mixseq
lines = open(sys.argv[2]).read().splitlines()
for result in mixseq.Translator(sys.argv[1]).translate_batch(lines):
    print(result.text)' "$model" "$work/raw/test.en" >"$work/python.hyp" 2>"$work/python.log" ||
  fail "the installed Python module failed: $(tail -3 "$work/python.log")"
cmp -s "$work/cli.hyp" "$work/python.hyp" || fail "the installed Python module's translations differ from mixseq translate's"
# An error reaches the program as an exception with mixseq's message.
if "$example" "$work/missing.pt" </dev/null >/dev/null 2>"$work/missing.log"; then fail "a missing checkpoint did not fail"; fi
grep -qF "missing.pt" "$work/missing.log" || fail "the error does not name the checkpoint: $(cat "$work/missing.log")"
echo "PASS: the example, built against the installed package alone, translates as mixseq translate does"
