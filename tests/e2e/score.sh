#!/usr/bin/env bash
# mixseq score (issue 14): forced decoding gives log P(target | source), the very number beam
# search ranks by when its penalties are off; so scoring the search's own output must give back
# its scores, for the greedy best and for every hypothesis of a 3-best list. --normalize divides
# by the target's tokens (with </s>); files of different lengths are an error naming both.
#   score.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
source "$(dirname "$0")/small_task.sh"
make_tiny_translation_model "$mixseq" "$work"
fail() { echo "FAIL: $*"; exit 1; }
run() { "$mixseq" --threads 1 "$@" --device cpu 2>>"$work/commands.log"; }
src=$work/raw/test.en
no_penalties=(--length-penalty 0 --coverage-penalty 0)

# Same scores within 1e-3 + 1e-5 relative (the search steps one token at a time, score runs the
# whole target at once; both print 6 significant digits).
same_scores() {  # <search scores> <forced scores> <what>
  paste "$1" "$2" | awk -v what="$3" '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-3 + 1e-5 * ($1 < 0 ? -$1 : $1) || NF != 2) { print "FAIL: " what " line " NR ": " $0; bad = 1 } }
    END { exit bad }'
}

run translate -c "$work/model.pt" -i "$src" --beam-size 1 "${no_penalties[@]}" --scores >"$work/greedy.txt"
awk -F' \\|\\|\\| ' '{ print $2 }' "$work/greedy.txt" >"$work/greedy.hyp"
awk -F' \\|\\|\\| ' '{ print $3 }' "$work/greedy.txt" >"$work/greedy.search"
run score -c "$work/model.pt" -s "$src" -t "$work/greedy.hyp" >"$work/greedy.forced"
[ "$(wc -l <"$work/greedy.forced")" -eq 20 ] || fail "score wrote $(wc -l <"$work/greedy.forced") lines for 20 pairs"
same_scores "$work/greedy.search" "$work/greedy.forced" "greedy search score vs forced decoding"

run translate -c "$work/model.pt" -i "$src" --beam-size 3 --nbest 3 "${no_penalties[@]}" >"$work/nbest.txt"
awk -F' \\|\\|\\| ' '{ print $2 }' "$work/nbest.txt" >"$work/nbest.hyp"
awk -F' \\|\\|\\| ' '{ print $3 }' "$work/nbest.txt" >"$work/nbest.search"
awk -F' \\|\\|\\| ' 'NR == FNR { line[NR - 1] = $0; next } { print line[$1] }' "$src" "$work/nbest.txt" >"$work/nbest.src"
run score -c "$work/model.pt" -s "$work/nbest.src" -t "$work/nbest.hyp" >"$work/nbest.forced"
same_scores "$work/nbest.search" "$work/nbest.forced" "3-best beam score vs forced decoding"
# The hypotheses of a sentence differ, so equal scores are not a coincidence of one number.
[ "$(sort -u "$work/nbest.forced" | wc -l)" -gt 20 ] || fail "the 60 forced scores take too few values to tell anything"

run score -c "$work/model.pt" -s "$src" -t "$work/greedy.hyp" --normalize >"$work/normalized"
paste "$work/greedy.forced" "$work/normalized" "$work/greedy.hyp" |
  awk -F'\t' '{ n = split($3, words, " ") + 1; d = $1 / n - $2; if (d < 0) d = -d; if (d > 1e-4) { print "FAIL: --normalize line " NR ": " $0; bad = 1 } }
    END { exit bad }'

head -5 "$work/greedy.hyp" >"$work/five.hyp"
if run score -c "$work/model.pt" -s "$src" -t "$work/five.hyp" >/dev/null; then fail "score accepted 20 sources with 5 targets"; fi
grep -q "has 20 lines but -t '$work/five.hyp' has 5" "$work/commands.log" || fail "the length mismatch error does not name the files: $(tail -1 "$work/commands.log")"
echo "PASS: score gives back the search's own log-probabilities (greedy and 3-best), --normalize, mismatched files"
