#!/usr/bin/env bash
# mixseq wer against NIST's sclite (issue 25): a few hundred random reference/hypothesis pairs
# (words from a small vocabulary with ASCII and non-ASCII letters, random substitutions,
# deletions and insertions, empty references and hypotheses), scored by both programs. S, D, I, N
# and the rate must agree exactly, in total and line by line, for words (`sclite -s`), characters
# (`sclite -s -c`), and case-folded words (sclite's default, `mixseq wer --lowercase`); and the lists
# of sclite's detailed report (confusion pairs, insertions, deletions, substitutions, falsely
# recognized) must equal `mixseq wer --confusions 0`'s, entry for entry and in sclite's order.
#   wer_sclite.sh <mixseq> <work dir> [<sclite>] [<seed>]
# Without sclite (Debian's package sctk puts it in /usr/lib/sctk/bin) it prints SKIP and exits 77,
# which CMake reports as skipped.
set -euo pipefail
mixseq=$1
work=$2
sclite=${3:-}
seed=${4:-25}
fail() { echo "FAIL: $*"; exit 1; }

for candidate in "$sclite" "$(command -v sclite || true)" /usr/lib/sctk/bin/sclite; do
  if [ -n "$candidate" ] && [ -x "$candidate" ]; then sclite=$candidate; break; fi
  sclite=
done
if [ -z "$sclite" ]; then
  echo "SKIP: sclite not found (Debian: apt-get install sctk)"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"

# ref.txt / hyp.txt for mixseq, ref.trn / hyp.trn for sclite ("words (utterance id)").
python3 - "$work" "$seed" <<'EOF'
import random, sys
work, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
# Short words that share letters (so that characters align in interesting ways), some with
# characters of 2 and 3 UTF-8 bytes; capitalized copies make case count.
base = ["a", "at", "cat", "cart", "tab", "bat", "the", "then", "than", "ab", "ba", "n", "año", "ano",
        "wörld", "world", "über", "uber", "東京", "京", "日本", "本"]
vocab = base + [w.capitalize() for w in base if w[0].isascii()]
def words(n): return [rng.choice(vocab) for _ in range(n)]
refs, hyps = [], []
for i in range(400):
    kind = rng.random()
    ref = [] if kind < 0.05 else words(rng.randint(1, 12))
    if kind < 0.10:                       # empty reference, or empty hypothesis
        hyp = words(rng.randint(0, 5)) if kind < 0.05 else []
    elif kind < 0.15:                     # unrelated hypothesis
        hyp = words(rng.randint(0, 12))
    elif kind < 0.30:                     # reordered: many alignments of equal cost, so the tie-breaking shows
        k = rng.randint(1, max(1, len(ref) - 1))
        hyp = ref[k:] + ref[:k] if rng.random() < 0.5 else ref[::-1]
        hyp = [rng.choice(vocab) if rng.random() < 0.2 else w for w in hyp]
    else:                                 # random edits of the reference
        hyp, p = [], rng.choice([0.1, 0.25, 0.5])
        for w in ref:
            while rng.random() < p / 3: hyp.append(rng.choice(vocab))    # insertions
            r = rng.random()
            if r < p / 3: continue                                        # deletion
            hyp.append(rng.choice(vocab) if r < 2 * p / 3 else w)         # substitution or kept
        while rng.random() < p / 3: hyp.append(rng.choice(vocab))
    refs.append(ref); hyps.append(hyp)
for name, lines in (("ref", refs), ("hyp", hyps)):
    with open(f"{work}/{name}.txt", "w", encoding="utf-8") as f:
        f.writelines(" ".join(l) + "\n" for l in lines)
    with open(f"{work}/{name}.trn", "w", encoding="utf-8") as f:
        f.writelines(" ".join(l) + f" (spk_{i + 1:04d})\n" for i, l in enumerate(lines))
EOF

# check <name> <sclite flags> -- <mixseq flags>: runs both and compares.
check() {
  local name=$1; shift
  local sclite_flags=() mixseq_flags=()
  while [ "$1" != "--" ]; do sclite_flags+=("$1"); shift; done
  shift
  mixseq_flags=("$@")
  "$sclite" -r "$work/ref.trn" trn -h "$work/hyp.trn" trn -i spu_id -e utf-8 "${sclite_flags[@]}" \
    -o dtl pralign -O "$work" -n "$name" >"$work/$name.sclite.log" 2>&1 || fail "$name: sclite failed: $(tail -3 "$work/$name.sclite.log")"
  "$mixseq" wer "$work/ref.txt" -i "$work/hyp.txt" "${mixseq_flags[@]}" --details --confusions 0 --json >"$work/$name.json" \
    || fail "$name: mixseq wer failed"
  "$mixseq" wer "$work/ref.txt" -i "$work/hyp.txt" "${mixseq_flags[@]}" >"$work/$name.txt" || fail "$name: mixseq wer (text) failed"
  python3 - "$work" "$name" <<'EOF' || fail "$name: mixseq wer and sclite disagree (see $work/$name.*)"
import json, re, sys
work, name = sys.argv[1], sys.argv[2]
dtl = open(f"{work}/{name}.dtl", encoding="utf-8", errors="replace").read()
def count(label): return int(re.search(re.escape(label) + r"\s*=\s*\S+\s*\(\s*(\d+)\)", dtl).group(1))
sclite = {"substitutions": count("Percent Substitution"), "deletions": count("Percent Deletions"),
          "insertions": count("Percent Insertions"), "errors": count("Percent Total Error"),
          "n": int(re.search(r"Ref\. words\s*=\s*\(\s*(\d+)\)", dtl).group(1))}
sclite_err = re.search(r"Percent Total Error\s*=\s*(\S+)%", dtl).group(1)
out = json.load(open(f"{work}/{name}.json"))
unit = "cer" if "cer" in out else "wer"
n = out["reference_chars" if unit == "cer" else "reference_words"]
mine = {"substitutions": out["substitutions"], "deletions": out["deletions"], "insertions": out["insertions"],
        "errors": out["substitutions"] + out["deletions"] + out["insertions"], "n": n}
bad = []
if mine != sclite: bad.append(f"totals: mixseq {mine}, sclite {sclite}")
# sctk.h: pct(num, dem) = (double)num / (double)dem * 100.0, printed after F_ROUND(x, 1).
rate = mine["errors"] / n * 100.0
if out[unit] != rate: bad.append(f"{unit} {out[unit]!r}, expected {rate!r}")
if "%.1f" % (int(rate * 10 + 0.5) / 10) != sclite_err: bad.append(f"sclite prints {sclite_err}%, mixseq {out[unit]}")
text = open(f"{work}/{name}.txt", encoding="utf-8").read()
expected = "%s %.2f %% (S %d D %d I %d / N %d %s)\n" % (unit.upper(), rate, mine["substitutions"], mine["deletions"],
                                                       mine["insertions"], n, "characters" if unit == "cer" else "words")
if text != expected: bad.append(f"text output {text!r}, expected {expected!r}")
# Line by line: pralign's "id: (spk_0007)" then "Scores: (#C #S #D #I) c s d i".
pra = open(f"{work}/{name}.pra", encoding="utf-8", errors="replace").read()
scores = {int(i): tuple(map(int, s.split())) for i, s in
          re.findall(r"id: \(spk_(\d+)\)\nScores: \(#C #S #D #I\) ([\d ]+)\n", pra)}
utterances = out["utterances"]
if len(scores) != len(utterances) or out["hypotheses"] != len(utterances):
    bad.append(f"{len(scores)} sclite utterances, {len(utterances)} mixseq lines, hypotheses {out['hypotheses']}")
for u in utterances:
    c = (u["correct"], u["substitutions"], u["deletions"], u["insertions"])
    if scores.get(u["line"]) != c: bad.append(f"line {u['line']}: mixseq C S D I {c}, sclite {scores.get(u['line'])}")
# The dtl's lists: "HEADING   Total (k)" then lines "   1:    3  ->  tok" or "... ->  ref ==> hyp".
sections = {}
current = None
for line in dtl.splitlines():
    heading = re.match(r"(CONFUSION PAIRS|INSERTIONS|DELETIONS|SUBSTITUTIONS|FALSELY RECOGNIZED)\s+Total", line)
    if heading:
        current = sections.setdefault(heading.group(1), [])
        continue
    entry = re.match(r"\s*\d+:\s+(\d+)\s+->\s+(.*)$", line)
    if entry and current is not None:
        current.append((int(entry.group(1)), entry.group(2)))
    elif line.startswith("     -------"):
        current = None
confusions = out["confusions"]
mine_lists = {
    "CONFUSION PAIRS": [(e["count"], f"{e['reference']} ==> {e['hypothesis']}") for e in confusions["pairs"]],
    "INSERTIONS": [(e["count"], e["token"]) for e in confusions["insertions"]],
    "DELETIONS": [(e["count"], e["token"]) for e in confusions["deletions"]],
    "SUBSTITUTIONS": [(e["count"], e["token"]) for e in confusions["substitutions"]],
    "FALSELY RECOGNIZED": [(e["count"], e["token"]) for e in confusions["falsely_recognized"]],
}
for key, listed in mine_lists.items():
    theirs = sections.get(key, [])
    if listed != theirs:
        where = next((i for i, (a, b) in enumerate(zip(listed, theirs)) if a != b), min(len(listed), len(theirs)))
        bad.append(f"{key}: {len(listed)} entries against sclite's {len(theirs)}, first difference at {where + 1}: "
                   f"mixseq {listed[where:where + 2]}, sclite {theirs[where:where + 2]}")
if not sections.get("CONFUSION PAIRS") or not sections.get("INSERTIONS") or not sections.get("DELETIONS"):
    bad.append(f"sclite's dtl lists not found (sections: {sorted(sections)})")
for line in bad[:10]: print(f"{name}: {line}")
if bad: sys.exit(1)
print(f"{name}: {len(utterances)} lines, S {mine['substitutions']} D {mine['deletions']} I {mine['insertions']} "
      f"N {n}, {unit.upper()} {rate:.2f} % as sclite ({sclite_err} %); its {len(mine_lists['CONFUSION PAIRS'])} "
      f"confusion pairs and the other lists as sclite's")
EOF
}

check words -s --
check chars -s -c --  --cer
check words_folded -- --lowercase

# Errors that name what is wrong: both sides from standard input, and a pair too long to align
# (a byte a cell: two lines of 20,000 words would take 381 MiB, over the 256 MiB limit).
echo "a b" | "$mixseq" wer - -i - 2>"$work/stdin.err" && fail "wer - -i - succeeded"
grep -qF "the system output (-i) and the references read standard input 2 times" "$work/stdin.err" ||
  fail "wer - -i -: $(cat "$work/stdin.err")"
python3 -c 'print(" ".join(["one"] * 20000))' >"$work/long.ref"
python3 -c 'print(" ".join(["two"] * 20000))' >"$work/long.hyp"
"$mixseq" wer "$work/long.ref" -i "$work/long.hyp" 2>"$work/long.err" && fail "wer on 20,000-word lines succeeded"
grep -qF "$work/long.hyp:1 and $work/long.ref:1: error rate: 20000 hypothesis tokens against 20000 reference tokens" \
  "$work/long.err" || fail "wer on 20,000-word lines: $(cat "$work/long.err")"
echo "PASS: mixseq wer agrees with sclite ($sclite) on S, D, I, N and the rate, in total and per line, and on the detailed report's lists, for words, characters and case-folded words"
