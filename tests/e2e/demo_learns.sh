#!/usr/bin/env bash
# The README's main job: `mixseq demo` trains the small GNMT on the built-in task, translates
# the test split and must score BLEU and chrF above thresholds that only a model that learnt
# the task reaches (see docs/benchmarks.md: a model that ignores its source, as every model
# does before it finds the alignment, scores BLEU < 3 and chrF < 60 here).
#   demo_learns.sh <mixseq> <work dir> <min BLEU> <min chrF>
set -euo pipefail
mixseq=$1
work=$2
min_bleu=$3
min_chrf=$4
rm -rf "$work"

"$mixseq" demo --work-dir "$work" >"$work.out" 2>"$work.log" || { tail -20 "$work.log"; exit 1; }
cat "$work.out"
bleu=$(sed -n 's/^BLEU|[^=]* = \([0-9.]*\) .*/\1/p' "$work.out")
chrf=$(sed -n 's/^chrF2|.* = \([0-9.]*\)$/\1/p' "$work.out")
[ -n "$bleu" ] && [ -n "$chrf" ] || { echo "FAIL: no BLEU or chrF line in the demo's output"; exit 1; }
awk -v b="$bleu" -v c="$chrf" -v mb="$min_bleu" -v mc="$min_chrf" 'BEGIN { exit !(b >= mb && c >= mc) }' ||
  { echo "FAIL: BLEU $bleu (want >= $min_bleu), chrF $chrf (want >= $min_chrf)"; exit 1; }
echo "demo learnt the task: BLEU $bleu, chrF $chrf"
# The best model is also at <work dir>/checkpoint_best.pt (docs/python.md opens it there).
[ "$(readlink "$work/checkpoint_best.pt")" = run/checkpoint_best.pt ] || { echo "FAIL: no checkpoint_best.pt link"; exit 1; }
head -3 "$work/raw/test.en" | "$mixseq" translate -c "$work/checkpoint_best.pt" -i - >"$work/linked.hyp"
[ "$(wc -l <"$work/linked.hyp")" -eq 3 ] || { echo "FAIL: the linked checkpoint did not translate"; exit 1; }
