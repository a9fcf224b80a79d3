#!/usr/bin/env bash
# A speech recognizer over SentencePiece pieces instead of characters, end to end: `spm train` on
# the training transcripts, `prepare --task speech --symbols spm:MODEL` (the model travels with the
# dataset), a few training steps, and `transcribe --json` whose words come from word-initial
# pieces; a dataset whose vocab.txt does not list its model's pieces is an error naming both.
# Whether such a model learns as well as the character one is for docs/benchmarks.md.
#   speech_pieces.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
here=$(dirname "$0")
fail() { echo "FAIL: $*"; exit 1; }
command -v espeak-ng >/dev/null || { echo "SKIP: espeak-ng is not installed"; exit 77; }
"$mixseq" spm train --help >/dev/null 2>&1 || { echo "SKIP: no SentencePiece in this build"; exit 77; }
rm -rf "$work" && mkdir -p "$work"

python3 "$here/tools/spoken_numbers.py" "$work/digits" --train 40 --valid 6 --seed 5
cut -f2 "$work/digits/train.tsv" >"$work/transcripts.txt"
"$mixseq" spm train --input "$work/transcripts.txt" --model-prefix "$work/units" --vocab-size 25 2>"$work/spm.log" || { tail -1 "$work/spm.log"; fail "spm train failed"; }
"$mixseq" prepare --task speech --train "$work/digits/train.tsv" --valid "$work/digits/valid.tsv" \
  --symbols "spm:$work/units.model" -o "$work/data" >"$work/prepare.out"
grep -q "^train: 40 utterances" "$work/prepare.out" || fail "prepare: $(cat "$work/prepare.out")"
[ "$(head -1 "$work/data/vocab.txt")" = "$(printf '<blank>\tpieces')" ] || fail "vocab.txt does not list pieces"
cmp -s "$work/units.model" "$work/data/symbols.model" || fail "the SentencePiece model is not in the dataset"
# 22 pieces besides <unk> <s> </s>, and the blank (ten number words need no more than 29)
[ "$(wc -l <"$work/data/vocab.txt")" -eq 23 ] || fail "vocab.txt lists $(wc -l <"$work/data/vocab.txt") lines, not 23"
# The folder prepared again with its own model, which is copied over itself (it was refused as an
# output over an input).
"$mixseq" prepare --task speech --train "$work/digits/train.tsv" --valid "$work/digits/valid.tsv" \
  --symbols "spm:$work/data/symbols.model" -o "$work/data" >"$work/again.out" 2>&1 || fail "again: $(cat "$work/again.out")"
cmp -s "$work/units.model" "$work/data/symbols.model" || fail "preparing again with its own model changed the model"

"$mixseq" --threads 1 train -c "$here/../../configs/speech_tiny.yaml" --data.dir "$work/data" \
  --train.run_dir "$work/run" --model.wave2letter_plus.channels "[32, 32, 32]" \
  --model.wave2letter_plus.prologue_channels 32 --model.wave2letter_plus.epilogue_channels 32 \
  --model.wave2letter_plus.enc_feats 32 --train.max_epochs 0 --train.max_steps 8 --train.log_interval 4 --schedule.cosine.warmup_steps 2 \
  2>"$work/train.log" || { tail -5 "$work/train.log"; fail "training on pieces failed"; }
grep -q "23 symbols" "$work/train.log" || fail "the model was not built for 23 symbols: $(grep -m1 'task' "$work/train.log")"
"$mixseq" --threads 1 transcribe -c "$work/run/checkpoint_last.pt" -i "$work/digits/valid.tsv" --json \
  -o "$work/valid.jsonl" 2>"$work/transcribe.log" || { tail -3 "$work/transcribe.log"; fail "transcribe failed"; }
python3 - "$work/valid.jsonl" <<'PY'
import json, sys
lines = [json.loads(line) for line in open(sys.argv[1])]
assert len(lines) == 6, len(lines)
for record in lines:
    text, words = record["text"], record["words"]
    # the text is its words with one space between them, none at the ends
    assert text == " ".join(w["word"] for w in words), record
    assert all(0 <= w["start"] < w["end"] for w in words), record
PY

# vocab.txt and the model must belong together.
cp -r "$work/data" "$work/bad"
sed -i '2d' "$work/bad/vocab.txt"
status=0
"$mixseq" --threads 1 train -c "$here/../../configs/speech_tiny.yaml" --data.dir "$work/bad" \
  --train.run_dir "$work/bad_run" --train.max_steps 1 2>"$work/bad.log" || status=$?
[ "$status" -ne 0 ] && grep -q "vocab.txt does not list the pieces of .*symbols.model" "$work/bad.log" ||
  fail "a vocab.txt without one of the model's pieces: exit $status, $(tail -1 "$work/bad.log")"
echo "PASS: prepare, train and transcribe over SentencePiece pieces"
