#!/usr/bin/env bash
# scripts/recipes/tools/sst2_sentence_split.py (the SST-2 recipe's SPLIT=sentences) on a small
# treebank-like pool: four sentences, each with some of its phrases, one phrase ("the film") in
# two sentences, split across two files as ../shared/data/sst-2 is:
# - the sentences are found (rows inside no other row) and the dev set holds --dev of them, whole,
#   with their labels; the same --seed gives the same files, another seed (here) another dev set;
# - no training row is a phrase of a dev sentence alone; a phrase shared with a training sentence
#   stays; every other row stays; the counts line says what was left out;
# - a row without a 0/1 label, a missing header and malformed UTF-8 are errors naming the file and
#   line, an unreadable file one naming the file; a failed split writes nothing.
#   sst2_sentence_split.sh <repository root> <work dir>
set -euo pipefail
root=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
cd "$work"
tool=$root/scripts/recipes/tools/sst2_sentence_split.py
{ printf 'sentence\tlabel\n'; printf '%s\n' \
  $'the film is a joy .\t1' $'the film\t1' $'is a joy\t1' $'a joy\t1' \
  $'a dull , lifeless mess\t0' $'lifeless mess\t0' $'dull\t0' \
  $'we loved the film\t1' $'loved\t1' \
  $'nothing works here\t0' $'nothing works\t0'; } | gzip >train.tsv.gz
{ printf 'sentence\tlabel\n'; printf '%s\n' $'works here\t0' $'we loved\t1'; } >dev.tsv
for seed in 1 2 3 4 5 6; do
  python3 "$tool" train.tsv.gz dev.tsv train.$seed.tsv dev.$seed.tsv --dev 2 --seed "$seed" 2>counts.$seed.txt
done
python3 "$tool" train.tsv.gz dev.tsv again.tsv again_dev.tsv --dev 2 --seed 1 2>/dev/null
cmp train.1.tsv again.tsv && cmp dev.1.tsv again_dev.tsv || { echo "FAIL: seed 1 twice gave other files"; exit 1; }
python3 - <<'PY'
sentences = {"the film is a joy .": "1", "a dull , lifeless mess": "0", "we loved the film": "1",
             "nothing works here": "0"}
import gzip
rows = [l.rstrip("\n") for l in gzip.open("train.tsv.gz", "rt")][1:] + [l.rstrip("\n") for l in open("dev.tsv")][1:]
pool = [tuple(r.split("\t")) for r in rows]
def inside(phrase, sentence):
    p, s = phrase.split(), sentence.split()
    return any(s[i:i + len(p)] == p for i in range(len(s) - len(p) + 1))
dev_sets = set()
for seed in range(1, 7):
    train = [tuple(l.rstrip("\n").split("\t")) for l in open(f"train.{seed}.tsv")]
    dev = [tuple(l.rstrip("\n").split("\t")) for l in open(f"dev.{seed}.tsv")]
    assert train[0] == dev[0] == ("sentence", "label"), (train[0], dev[0])
    train, dev = train[1:], dev[1:]
    assert len(dev) == 2 and all(sentences.get(t) == l for t, l in dev), (seed, dev)
    dev_sets.add(frozenset(dev))
    kept = [s for s in sentences if s not in dict(dev)]
    expected = [r for r in pool
                if any(inside(r[0], s) for s in kept) or not any(inside(r[0], s) for s, _ in dev)]
    assert sorted(train) == sorted(expected), (seed, sorted(train), sorted(expected))
    assert not any(t in dict(dev) for t, _ in train), seed
    if "the film is a joy ." in dict(dev) and "we loved the film" in kept:
        assert ("the film", "1") in train, ("a shared phrase left out", seed)
    counts = open(f"counts.{seed}.txt").read()
    assert f"13 rows, 4 sentences; dev: 2 sentences" in counts and \
        f"({len(pool) - len(train)} rows of the dev sentences left out)" in counts, counts
assert len(dev_sets) > 1, "six seeds drew one dev set"
print(f"PASS: {len(dev_sets)} dev sets over 6 seeds, each 2 whole sentences, their own phrases out of training")
PY
printf 'sentence\tlabel\nfine\t1\nbad row\tpositive\n' >badlabel.tsv
if python3 "$tool" train.tsv.gz badlabel.tsv a.tsv b.tsv 2>err.txt; then echo "FAIL: a bad label passed"; exit 1; fi
grep -q "badlabel.tsv:3: expected 'text<TAB>0|1'" err.txt || { echo "FAIL: bad label message:"; cat err.txt; exit 1; }
printf 'fine\t1\n' >noheader.tsv
if python3 "$tool" train.tsv.gz noheader.tsv a.tsv b.tsv 2>err.txt; then echo "FAIL: no header passed"; exit 1; fi
grep -q "noheader.tsv:1: expected the header" err.txt || { echo "FAIL: header message:"; cat err.txt; exit 1; }
printf 'sentence\tlabel\nfine\t1\nbad \xff\t0\n' >badutf8.tsv
if python3 "$tool" train.tsv.gz badutf8.tsv a.tsv b.tsv 2>err.txt; then echo "FAIL: malformed UTF-8 passed"; exit 1; fi
grep -q "badutf8.tsv:3: malformed UTF-8 at byte 26" err.txt || { echo "FAIL: UTF-8 message:"; cat err.txt; exit 1; }
if python3 "$tool" train.tsv.gz no-such.tsv a.tsv b.tsv 2>err.txt; then echo "FAIL: a missing file passed"; exit 1; fi
grep -q "no-such.tsv: cannot read: No such file or directory" err.txt || { echo "FAIL: missing file message:"; cat err.txt; exit 1; }
[ ! -e a.tsv ] && [ ! -e b.tsv ] || { echo "FAIL: a failed split wrote its outputs"; exit 1; }
echo "OK"
