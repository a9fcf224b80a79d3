#!/usr/bin/env bash
# mixseq translate streams (issue 14): through a pipe kept open it answers each line before the
# next is written; --buffer-size changes batching, not output; the search defaults come from the
# checkpoint's validation_search (a flag overrides one setting); --moses-nbest writes Moses'
# 4-field n-best lines; --print-alignment adds each output word's source position.
#   translate_stream.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
here=$(dirname "$0")
source "$here/small_task.sh"
make_tiny_translation_model "$mixseq" "$work"
fail() { echo "FAIL: $*"; exit 1; }
translate() { "$mixseq" --threads 1 translate -c "$work/model.pt" --device cpu -i "$work/raw/test.en" "$@" 2>>"$work/translate.log"; }

translate >"$work/file.hyp"
[ "$(wc -l <"$work/file.hyp")" -eq 20 ] || fail "translate wrote $(wc -l <"$work/file.hyp") lines for 20"
python3 "$here/tools/interactive_translate.py" "$mixseq" "$work/model.pt" "$work/raw/test.en" >"$work/pipe.hyp"
cmp -s "$work/file.hyp" "$work/pipe.hyp" || fail "line-by-line translation through a pipe differs from the file's"
translate --buffer-size 1 >"$work/buffer1.hyp"
translate --buffer-size 7 >"$work/buffer7.hyp"
cmp -s "$work/file.hyp" "$work/buffer1.hyp" && cmp -s "$work/file.hyp" "$work/buffer7.hyp" ||
  fail "--buffer-size changed the translations"

# The stored search is beam 3, at most 1.5 * length + 10 tokens; the built-in defaults (beam 5, 200 tokens) differ.
translate --beam-size 3 --max-len-a 1.5 --max-len-b 10 >"$work/explicit.hyp"
cmp -s "$work/file.hyp" "$work/explicit.hyp" || fail "the default search is not the checkpoint's validation_search"
grep -q "(beam 3," "$work/translate.log" || fail "the log does not name the stored beam size 3"
translate --beam-size 5 --max-len-a 0 --max-len-b 200 >"$work/builtin.hyp"
cmp -s "$work/file.hyp" "$work/builtin.hyp" && fail "the built-in search gives the same output; the test cannot tell them apart"
translate --beam-size 1 >"$work/greedy.hyp"
translate --beam-size 1 --max-len-a 1.5 --max-len-b 10 >"$work/greedy_explicit.hyp"
cmp -s "$work/greedy.hyp" "$work/greedy_explicit.hyp" || fail "--beam-size alone dropped the stored max_len_a / max_len_b"

translate --nbest 2 --moses-nbest >"$work/moses.txt"
[ "$(wc -l <"$work/moses.txt")" -eq 40 ] || fail "--nbest 2 --moses-nbest wrote $(wc -l <"$work/moses.txt") lines for 20 x 2"
bad=$(awk -F' \\|\\|\\| ' 'NF != 4 || $1 !~ /^[0-9]+$/ || $3 !~ /^F0= -?[0-9.e+-]+$/ || ("F0= " $4) != $3' "$work/moses.txt" | head -3)
[ -z "$bad" ] || fail "lines not in the Moses format 'i ||| text ||| F0= score ||| score': $bad"
[ "$(cut -d' ' -f1 "$work/moses.txt" | uniq | wc -l)" -eq 20 ] || fail "Moses n-best indices are not 0..19, two each"
# --print-alignment: one "source-target" pair per output word (the tokenizer is "none": pieces
# are words), targets 0..m-1 in order, sources within the source's words and its </s>. (This
# tiny model attends to its first source word throughout; that the positions are each step's
# attention argmax is checked by the unit test BeamSearch.AlignmentIsEachStepsMostAttendedSourcePosition.)
translate --print-alignment >"$work/aligned.txt"
awk -F' \\|\\|\\| ' '{ print $1 }' "$work/aligned.txt" | cmp -s - "$work/file.hyp" ||
  fail "--print-alignment changed the translations"
paste -d'\t' "$work/raw/test.en" "$work/aligned.txt" | awk -F'\t' '{
    split($2, parts, / \|\|\| /); n = split($1, source, " "); m = split(parts[1], target, " "); k = split(parts[2], pairs, " ")
    if (k != m) { print "FAIL: line " NR ": " k " alignment pairs for " m " words"; bad = 1; next }
    for (t = 1; t <= k; t++) { split(pairs[t], st, "-")
      if (st[2] != t - 1 || st[1] < 0 || st[1] > n) { print "FAIL: line " NR ": pair " pairs[t] " (source of " n " words + </s>)"; bad = 1 } }
  } END { exit bad }'
translate --nbest 2 --moses-nbest --print-alignment | awk -F' \\|\\|\\| ' 'NF != 5 { exit 1 }' ||
  fail "--moses-nbest --print-alignment lines do not have the alignment as a fifth field"

echo "PASS: translate streams through a pipe, buffers do not change output, search defaults from the checkpoint, Moses n-best, alignments"
