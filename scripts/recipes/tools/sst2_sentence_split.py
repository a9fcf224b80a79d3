#!/usr/bin/env python3
"""Re-split SST-2's labelled phrases so that the dev set holds whole sentences never seen in training.

GLUE's SST-2 training set (as in ../shared/data/sst-2, split by phrase into train.tsv.gz and
dev.tsv) holds every sentence of the treebank's training part together with its labelled phrases.
A dev set cut from it by phrase shares words and phrases with the training rows of the same
sentence, so a classifier trained from scratch reads most of its answers there (docs/benchmarks.md,
"SST-2"). GLUE's own dev set is 872 whole sentences whose phrases are in no training row. This tool
makes a dev set of that kind from the same rows:

  1. both files' rows are pooled; a *sentence* is a row that is no token-substring of another row;
  2. --dev sentences are drawn (--seed) for the new dev set;
  3. every row that is a token-substring of a dev sentence and of no remaining training sentence is
     left out of training (its words are that sentence's own); a phrase that also occurs in a
     training sentence (e.g. "the film") stays, as it would in GLUE's training set.

The outputs have the inputs' header and format (`sentence<TAB>label`); the counts go to stderr.

  sst2_sentence_split.py TRAIN_TSV[.gz] DEV_TSV OUT_TRAIN_TSV OUT_DEV_TSV [--dev 872] [--seed 1]
"""
import argparse
import gzip
import os
import random
import sys


def read_rows(path):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            data = f.read()
    except OSError as e:
        sys.exit(f"{path}: cannot read: {e.strerror or e}")
    try:
        lines = data.decode("utf-8").split("\n")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        sys.exit(f"{path}:{line}: malformed UTF-8 at byte {e.start}")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or lines[0].split("\t")[:2] != ["sentence", "label"]:
        sys.exit(f"{path}:1: expected the header 'sentence<TAB>label'")
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != 2 or fields[1] not in ("0", "1"):
            sys.exit(f"{path}:{number}: expected 'text<TAB>0|1', got {line!r}")
        rows.append((tuple(fields[0].split()), fields[1]))
    return lines[0], rows


def write_rows(path, header, rows):
    """`header` and one `text<TAB>label` line per row, written whole or not at all."""
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(header + "\n")
        f.writelines(" ".join(t) + "\t" + l + "\n" for t, l in rows)
    os.replace(path + ".tmp", path)


def substrings(tokens):
    """Every contiguous token span of `tokens`, the whole included."""
    n = len(tokens)
    return {tokens[i:j] for i in range(n) for j in range(i + 1, n + 1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("train")
    parser.add_argument("dev")
    parser.add_argument("out_train")
    parser.add_argument("out_dev")
    parser.add_argument("--dev", dest="dev_sentences", type=int, default=872,
                        help="sentences in the new dev set (GLUE's dev set has 872)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    header, train = read_rows(args.train)
    _, dev = read_rows(args.dev)
    rows = [r for r in train + dev if r[0]]
    # A row is a sentence when no longer row contains it: the longer rows' spans, collected from
    # the longest down, tell which of the shorter ones are inside another.
    inside = set()
    sentences = []
    for tokens, label in sorted(set(rows), key=lambda r: -len(r[0])):
        if tokens not in inside:
            sentences.append((tokens, label))
        inside |= substrings(tokens) - {tokens}
    sentences.sort()  # a fixed order before the draw, whatever the inputs' order
    if args.dev_sentences >= len(sentences):
        sys.exit(f"--dev {args.dev_sentences}: the data holds {len(sentences)} sentences")
    random.Random(args.seed).shuffle(sentences)
    dev_sentences = sentences[:args.dev_sentences]
    kept = set()
    for tokens, _ in sentences[args.dev_sentences:]:
        kept |= substrings(tokens)
    theirs = set()
    for tokens, _ in dev_sentences:
        theirs |= substrings(tokens)
    out_train = [r for r in rows if r[0] in kept or r[0] not in theirs]
    left_out = len(rows) - len(out_train)

    write_rows(args.out_train, header, out_train)
    write_rows(args.out_dev, header, dev_sentences)
    positive = sum(l == "1" for _, l in dev_sentences)
    print(f"{len(rows)} rows, {len(sentences)} sentences; dev: {len(dev_sentences)} sentences "
          f"({positive} positive); train: {len(out_train)} rows ({left_out} rows of the dev sentences "
          f"left out)", file=sys.stderr)


if __name__ == "__main__":
    main()
