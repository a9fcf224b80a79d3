#!/bin/sh
# Regenerates the *.ref files here with subword-nmt's scripts (rsennrich/subword-nmt 0.3.9, commit
# 03caef25 for learn_bpe.py, 0607b544 for apply_bpe.py and learn_joint_bpe_and_vocab.py).
#   usage: tests/data/bpe/make_golden.sh /path/to/subword-nmt/subword_nmt
# train.txt, train2.txt, test.txt and dict.txt are hand-made inputs, kept as they are; prune.txt is
# random syllables, found by search as a small text whose codes depend on how prune_stats adds the
# negative counts of pruned pairs to big_stats.
#
# Two deviations from running the 0.3.9 command lines as they are:
#   - glossaries: 0.3.9's isolate_glossary keeps only the first character of the text after the last
#     match (ending[0]); the expected output keeps all of it, as 0.3.8 and the reference's own
#     test_glossaries.py do, so apply_bpe.py is run with that line of isolate_glossary patched.
#   - --separator: 0.3.9's apply_bpe.py declares it type=bytes, which rejects every value given on
#     the command line, so the "##" output comes from apply_bpe.BPE called from Python.
set -eu
REF=$1
cd "$(dirname "$0")"
PY=${PYTHON:-python3}

"$PY" "$REF/learn_bpe.py" -i train.txt -o codes.ref -s 100
"$PY" "$REF/learn_bpe.py" -i train.txt -o codes_total.ref -s 100 --total-symbols
"$PY" "$REF/learn_bpe.py" -i train.txt -o codes_min6.ref -s 300 --min-frequency 6
"$PY" "$REF/learn_bpe.py" -i prune.txt -o codes_prune.ref -s 400
"$PY" "$REF/learn_bpe.py" -i dict.txt -o codes_dict.ref -s 100 --dict-input
"$PY" "$REF/learn_joint_bpe_and_vocab.py" -i train.txt train2.txt -o codes_joint.ref -s 300 \
  --write-vocabulary vocab_train.ref vocab_train2.ref

"$PY" "$REF/apply_bpe.py" -c codes.ref -i test.txt -o test.bpe.ref
"$PY" "$REF/apply_bpe.py" -c codes.ref -i test.txt -o test_merges40.bpe.ref --merges 40
"$PY" "$REF/apply_bpe.py" -c codes_joint.ref -i test.txt -o test_vocab2.bpe.ref \
  --vocabulary vocab_train2.ref --vocabulary-threshold 2

GLOSSARY_REF=$(mktemp -d)
sed 's/\[ending\[0\]\.strip(strip_chars)\]/[ending.strip(strip_chars)]/' "$REF/apply_bpe.py" > "$GLOSSARY_REF/apply_bpe.py"
"$PY" "$GLOSSARY_REF/apply_bpe.py" -c codes.ref -i test.txt -o test_glossaries.bpe.ref \
  --glossaries 'USA' '<tag>\w*</tag>' '\d+' 'like'
rm -r "$GLOSSARY_REF"

"$PY" - "$REF" <<'PYTHON'
import codecs, sys
sys.path.insert(0, sys.argv[1])
import apply_bpe
bpe = apply_bpe.BPE(codecs.open('codes.ref', encoding='utf-8'), separator='##')
with codecs.open('test.txt', encoding='utf-8') as text, codecs.open('test_separator.bpe.ref', 'w', encoding='utf-8') as out:
    for line in text:
        out.write(bpe.process_line(line))
PYTHON
