#!/usr/bin/env bash
# The synthetic training voices of tests/e2e/tools/spoken_numbers.py (the built-in speech task and
# the FSDD recipe's synthetic share): the same seed writes the same files; `--voices wide` names 248
# voices (8 accents x 31 variants), each of which sounds different from every other (espeak-ng reads
# an unknown variant, or any variant of "en-gb", as the plain accent without a word), and the data
# it writes differs from the default voices' but keeps the manifest's form; `--voices` with
# `--voice` is refused.
#   synthetic_voices.sh <work dir>
set -euo pipefail
work=$1
tool=$(dirname "$0")/tools/spoken_numbers.py
fail() { echo "FAIL: $*"; exit 1; }
command -v espeak-ng >/dev/null || { echo "SKIP: espeak-ng is not installed"; exit 77; }
rm -rf "$work" && mkdir -p "$work"

python3 "$tool" "$work/a" --train 12 --valid 2 --seed 3
python3 "$tool" "$work/b" --train 12 --valid 2 --seed 3
diff -r "$work/a" "$work/b" >/dev/null || fail "the same seed wrote different data"

python3 "$tool" "$work/x" --list-voices >"$work/default.txt"
python3 "$tool" "$work/x" --list-voices --voices wide >"$work/wide.txt"
[ ! -e "$work/x" ] || fail "--list-voices wrote $work/x"
[ "$(wc -l <"$work/default.txt")" -eq 8 ] || fail "the default lists $(wc -l <"$work/default.txt") voices, not 8"
[ "$(sort -u "$work/wide.txt" | wc -l)" -eq 248 ] || fail "--voices wide lists $(sort -u "$work/wide.txt" | wc -l) distinct voices, not 248"
mkdir -p "$work/voices"
while read -r voice; do
  espeak-ng -v "$voice" -s 170 -p 50 -w "$work/voices/$voice.wav" "two six" || fail "espeak-ng does not know $voice"
done <"$work/wide.txt"
same=$(cd "$work/voices" && md5sum -- *.wav | sort | uniq -w32 -D)
[ -z "$same" ] || fail "voices that sound the same: $(echo "$same" | cut -c35- | tr '\n' ' ')"

python3 "$tool" "$work/w" --train 12 --valid 2 --seed 3 --voices wide
[ "$(wc -l <"$work/w/train.tsv")" -eq 12 ] && [ "$(wc -l <"$work/w/valid.tsv")" -eq 2 ] || fail "--voices wide: manifests"
for i in $(seq -f %05g 0 11); do [ -s "$work/w/audio/train$i.wav" ] || fail "--voices wide: no train$i.wav"; done
differing=0
for i in $(seq -f %05g 0 11); do cmp -s "$work/a/audio/train$i.wav" "$work/w/audio/train$i.wav" || differing=$((differing + 1)); done
[ "$differing" -ge 6 ] || fail "--voices wide: only $differing of 12 training files differ from the default voices'"

if python3 "$tool" "$work/v" --voice en-us --voices wide 2>"$work/refused.err"; then fail "--voices wide with --voice ran"; fi
grep -q "is not with --voice" "$work/refused.err" || fail "--voices with --voice: $(cat "$work/refused.err")"
echo "synthetic voices: ok"
