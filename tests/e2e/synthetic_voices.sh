#!/usr/bin/env bash
# The synthetic training voices of tests/e2e/tools/spoken_numbers.py (the built-in speech task and
# the FSDD recipe's synthetic share): the same seed writes the same files; the default's 8 training
# and 3 validation voices, and `--voices wide`'s 245 training voices (8 accents x 31 variants less
# the validation voices), each sound different from every other (espeak-ng reads an unknown variant,
# or any variant of "en-gb", as the plain accent without a word), so that no validation voice is
# heard in training; the data `--voices wide` writes differs from the default voices' but keeps the
# manifests' form; `--jobs` (synthesisers at once) changes no file; a synthesiser that fails ends
# the tool with a message naming the file, and no manifest; `--voices` with `--voice` is refused;
# and `mixseq demo --task speech` (which draws its own spoken digits in C++) lists the same voices
# for each split as the default here.
# `--pronunciations accents`: every word has its voice's own reading (espeak-ng -x's) and at least
# one other, each written in phonemes espeak-ng knows (read back unchanged) and each sounding
# different; the data keeps the default's transcripts, voices and validation audio (its draws have
# their own random stream) and changes training audio; with --voice it is refused.
#   synthetic_voices.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
tool=$(dirname "$0")/tools/spoken_numbers.py
fail() { echo "FAIL: $*"; exit 1; }
command -v espeak-ng >/dev/null || { echo "SKIP: espeak-ng is not installed"; exit 77; }
rm -rf "$work" && mkdir -p "$work"

python3 "$tool" "$work/a" --train 12 --valid 2 --seed 3
python3 "$tool" "$work/b" --train 12 --valid 2 --seed 3
diff -r "$work/a" "$work/b" >/dev/null || fail "the same seed wrote different data"
python3 "$tool" "$work/j1" --train 12 --valid 2 --seed 3 --jobs 1
python3 "$tool" "$work/j3" --train 12 --valid 2 --seed 3 --jobs 3
diff -r "$work/a" "$work/j1" >/dev/null && diff -r "$work/a" "$work/j3" >/dev/null || fail "--jobs changed the data"

python3 "$tool" "$work/x" --list-voices >"$work/default.txt"
python3 "$tool" "$work/x" --list-voices --voices wide >"$work/wide.txt"
[ ! -e "$work/x" ] || fail "--list-voices wrote $work/x"
"$mixseq" demo --task speech --list-voices --work-dir "$work/demo" >"$work/demo.txt"
[ ! -e "$work/demo" ] || fail "demo --list-voices wrote $work/demo"
cmp -s "$work/demo.txt" "$work/default.txt" ||
  fail "mixseq demo --task speech and spoken_numbers.py have other voices: $(diff "$work/demo.txt" "$work/default.txt" | tr '\n' ' ')"
if "$mixseq" demo --list-voices >/dev/null 2>"$work/translation.err"; then fail "demo --list-voices ran for translation"; fi
grep -q "is an option of the speech demo" "$work/translation.err" || fail "demo --list-voices: $(cat "$work/translation.err")"
count() { grep -c "^$1	" "$2" || true; }
[ "$(count train "$work/default.txt")" -eq 8 ] && [ "$(count valid "$work/default.txt")" -eq 3 ] ||
  fail "the default lists $(count train "$work/default.txt") training and $(count valid "$work/default.txt") validation voices, not 8 and 3"
[ "$(count train "$work/wide.txt")" -eq 245 ] || fail "--voices wide lists $(count train "$work/wide.txt") training voices, not 245"
cmp -s <(grep "^valid" "$work/default.txt") <(grep "^valid" "$work/wide.txt") || fail "--voices wide changed the validation voices"
for list in default wide; do
  rm -rf "$work/voices" && mkdir -p "$work/voices"
  while IFS=$'\t' read -r split voice; do
    espeak-ng -v "$voice" -s 170 -p 50 -w "$work/voices/$split:$voice.wav" "two six" || fail "espeak-ng does not know $voice"
  done <"$work/$list.txt"
  same=$(cd "$work/voices" && md5sum -- *.wav | sort | uniq -w32 -D)
  [ -z "$same" ] || fail "$list: voices that sound the same: $(echo "$same" | cut -c35- | tr '\n' ' ')"
done

python3 "$tool" "$work/w" --train 12 --valid 2 --seed 3 --voices wide
[ "$(wc -l <"$work/w/train.tsv")" -eq 12 ] && [ "$(wc -l <"$work/w/valid.tsv")" -eq 2 ] || fail "--voices wide: manifests"
for i in $(seq -f %05g 0 11); do [ -s "$work/w/audio/train$i.wav" ] || fail "--voices wide: no train$i.wav"; done
differing=0
for i in $(seq -f %05g 0 11); do cmp -s "$work/a/audio/train$i.wav" "$work/w/audio/train$i.wav" || differing=$((differing + 1)); done
[ "$differing" -ge 6 ] || fail "--voices wide: only $differing of 12 training files differ from the default voices'"

python3 "$tool" "$work/x" --list-pronunciations >"$work/pronunciations.txt"
[ ! -e "$work/x" ] || fail "--list-pronunciations wrote $work/x"
rm -rf "$work/said" && mkdir -p "$work/said"
for word in zero one two three four five six seven eight nine; do
  mapfile -t said < <(grep "^$word	" "$work/pronunciations.txt" | cut -f2)
  [ "${#said[@]}" -ge 2 ] || fail "--list-pronunciations: $word has ${#said[@]} pronunciations"
  own=$(espeak-ng -q -x -v en-us "$word" | tr -d ' ')
  [ "${said[0]}" = "$own" ] || fail "$word: the first pronunciation is ${said[0]}, espeak-ng en-us reads $own"
  for i in "${!said[@]}"; do
    back=$(espeak-ng -q -x -v en-us "[[${said[$i]}]]" | tr -d ' ')
    [ "$back" = "${said[$i]}" ] || fail "$word: espeak-ng reads [[${said[$i]}]] as $back (a phoneme it does not know?)"
    espeak-ng -v en-us -s 170 -p 50 -w "$work/said/$word.$i.wav" "[[${said[$i]}]]"
  done
done
same=$(cd "$work/said" && md5sum -- *.wav | sort | uniq -w32 -D)
[ -z "$same" ] || fail "pronunciations that sound the same: $(echo "$same" | cut -c35- | tr '\n' ' ')"
python3 "$tool" "$work/p" --train 12 --valid 2 --seed 3 --pronunciations accents
cmp -s "$work/a/train.tsv" "$work/p/train.tsv" && cmp -s "$work/a/valid.tsv" "$work/p/valid.tsv" ||
  fail "--pronunciations accents changed the transcripts"
for i in 00000 00001; do
  cmp -s "$work/a/audio/valid$i.wav" "$work/p/audio/valid$i.wav" || fail "--pronunciations accents changed valid$i.wav"
done
differing=0
for i in $(seq -f %05g 0 11); do cmp -s "$work/a/audio/train$i.wav" "$work/p/audio/train$i.wav" || differing=$((differing + 1)); done
[ "$differing" -ge 6 ] || fail "--pronunciations accents: only $differing of 12 training files differ from the voices' own"
if python3 "$tool" "$work/v" --voice en-us --pronunciations accents 2>"$work/refused.err"; then
  fail "--pronunciations accents with --voice ran"
fi
grep -q "is not with --voice" "$work/refused.err" || fail "--pronunciations with --voice: $(cat "$work/refused.err")"

mkdir -p "$work/stub" && printf '#!/bin/sh\necho "stub: no voice" >&2\nexit 3\n' >"$work/stub/espeak-ng"
chmod +x "$work/stub/espeak-ng"
if PATH="$work/stub:$PATH" python3 "$tool" "$work/f" --train 3 --valid 1 2>"$work/failed.err"; then
  fail "a failing espeak-ng was not reported"
fi
grep -q "espeak-ng failed (exit 3) writing $work/f/audio/train0000[0-2].wav: stub: no voice" "$work/failed.err" ||
  fail "a failing espeak-ng: $(cat "$work/failed.err")"
[ ! -e "$work/f/train.tsv" ] || fail "a failing espeak-ng left a manifest"

if python3 "$tool" "$work/v" --voice en-us --voices wide 2>"$work/refused.err"; then fail "--voices wide with --voice ran"; fi
grep -q "is not with --voice" "$work/refused.err" || fail "--voices with --voice: $(cat "$work/refused.err")"
echo "synthetic voices: ok"
