#!/usr/bin/env bash
# Hostile inputs to the newer commands (issue 29, section 5): an output that is one of the
# command's inputs is refused before any work, for every command (quantize -o onto its -c,
# translate -o onto its -c or -i, score, average-checkpoints, plot, bpe, vocab), and the input is
# left as it was; quantize refuses a --config that is a folder, a layer rule that matches no layer,
# an empty calibration file and an empty search set, each naming the file; score refuses -s - -t -
# and sentences over its length limits (naming file and line, at once); plot refuses a metric that
# is not a number (naming file and line) and draws a null one as a gap, saying so; generate writes
# its tokens as they come, so a SIGTERM loses none of them. An output folder where a file is gets
# an error naming that file.
#   hostile_inputs.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/small_task.sh"
make_tiny_translation_model "$mixseq" "$work"
cd "$work"
source "$here/expect_error.sh"  # expect <message part> <mixseq arguments...>
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
one=(--threads 1)
src=raw/valid.en
tgt=raw/valid.de

# (3) An output that is one of the command's inputs, however it is spelled.
cp model.pt ck.pt
cp "$src" src.en
cp "$tgt" tgt.de
ln -sf ck.pt link.pt
checksums=$(md5sum ck.pt src.en tgt.de)
expect "--output 'ck.pt' is the same file as --checkpoint, which this command reads" \
  "${one[@]}" quantize -c ck.pt --calib src.en -o ck.pt
expect "--output 'link.pt' is the same file as --checkpoint ('ck.pt')" \
  "${one[@]}" quantize -c ck.pt --calib src.en -o link.pt
expect "--output './ck.pt' is the same file as --checkpoint ('ck.pt')" \
  "${one[@]}" translate -c ck.pt -i src.en -o ./ck.pt --device cpu
expect "--output 'src.en' is the same file as --input" "${one[@]}" translate -c ck.pt -i src.en -o src.en --device cpu
expect "--output 'ck.pt' is the same file as --checkpoint" \
  "${one[@]}" translate -c model.pt -c ck.pt -i src.en -o ck.pt --device cpu
expect "--output 'tgt.de' is the same file as --target" \
  "${one[@]}" score -c ck.pt -s src.en -t tgt.de -o tgt.de --device cpu
expect "--output 'ck.pt' is the same file as --checkpoint" \
  "${one[@]}" score -c ck.pt -s src.en -t tgt.de -o ck.pt --device cpu
expect "--output 'ck.pt' is the same file as --inputs" average-checkpoints --inputs model.pt ck.pt -o ck.pt
expect "--output 'src.en' is the same file as --input" vocab build -i src.en -o src.en
"$mixseq" bpe learn -s 20 -i src.en -o codes.bpe 2>/dev/null
expect "--output 'codes.bpe' is the same file as --codes" bpe apply -c codes.bpe -i src.en -o codes.bpe
# A full standard output stops translate with a message, not exit 0 or "unknown error".
if [ -w /dev/full ]; then
  status=0
  "$mixseq" "${one[@]}" translate -c ck.pt -i src.en --device cpu >/dev/full 2>full_err.txt || status=$?
  { [ "$status" -ne 0 ] && grep -q "cannot write to standard output: No space left on device" \
    full_err.txt; } || fail "translate >/dev/full: exit $status, $(cat full_err.txt)"
  # Many lines: the write that fails comes inside the stream, long before the end; its reason stays.
  for line in $(seq 200); do cat src.en; done >many.en
  status=0
  "$mixseq" "${one[@]}" translate -c ck.pt -i many.en --device cpu >/dev/full 2>full_err.txt || status=$?
  { [ "$status" -ne 0 ] && grep -q "cannot write to standard output: No space left on device" full_err.txt; } ||
    fail "translate of many lines >/dev/full: exit $status, $(cat full_err.txt)"
fi
# Standard input that the shell opened on the output's file (-i left at "-"), for bpe and translate.
for command in "bpe apply -c codes.bpe" "translate -c ck.pt --device cpu"; do
  status=0
  # shellcheck disable=SC2086
  "$mixseq" "${one[@]}" $command -o src.en <src.en >/dev/null 2>stdin_err.txt || status=$?
  { [ "$status" -ne 0 ] && grep -qF "is the same file as --input ('-', standard input" stdin_err.txt; } ||
    fail "$command -o src.en <src.en: exit $status, $(cat stdin_err.txt)"
done
[ "$(md5sum ck.pt src.en tgt.de)" = "$checksums" ] || fail "a refused command changed its input"
ls ./*.tmp 2>/dev/null && fail "a refused command left a temporary file"
# Still allowed: standard input and output, and another file.
"$mixseq" "${one[@]}" translate -c ck.pt -i - -o - --device cpu <src.en >out.de 2>/dev/null ||
  fail "translate -i - -o - was refused"
[ "$(wc -l <out.de)" -eq "$(wc -l <src.en)" ] || fail "translate -i - -o - wrote $(wc -l <out.de) lines"

# (4) quantize: a --config that is a folder; a rule that matches no layer (a typo).
mkdir -p config_dir
expect "cannot read quantization config 'config_dir': it is a directory" \
  "${one[@]}" quantize -c ck.pt --calib src.en --config config_dir -o int8.pt
printf 'layers:\n  - {pattern: "clasifier", keep_float: true}\n' >typo.yaml
expect "typo.yaml layers[0] (line 2): pattern 'clasifier' matches no layer of this model" \
  "${one[@]}" quantize -c ck.pt --calib src.en --config typo.yaml -o int8.pt
grep -qF "did you mean 'classifier'" err.txt || fail "no nearest layer name in: $(cat err.txt)"
# (9) An empty calibration file, or one of empty lines.
: >empty.en
printf '\n\n' >blank.en
expect "--calib 'empty.en': the calibration file has no sentences" \
  "${one[@]}" quantize -c ck.pt --calib empty.en -o int8.pt
expect "--calib 'blank.en': the calibration file has no sentences (its first 2 lines are empty)" \
  "${one[@]}" quantize -c ck.pt --calib blank.en -o int8.pt
# (10) An empty search set, named, before the calibration's work.
expect "--search-src 'empty.en' has no lines" \
  "${one[@]}" quantize -c ck.pt --calib src.en --search-src empty.en --search-ref empty.en -o int8.pt
[ ! -e int8.pt ] || fail "a refused quantize wrote int8.pt"

# (11) score: both sides from standard input.
expect "-s and -t both read standard input" "${one[@]}" score -c ck.pt -s - -t - --device cpu
# (13) score: sentences over the length limits fail at once, naming file and line.
python3 -c "print('\n'.join(['one two'] * 2 + [' '.join(['seven'] * 40000)]))" >long.en
printf 'eins\nzwei drei\nvier\n' >short.de
start=$(date +%s)
expect "long.en:3: 40000 tokens, more than the limit of 1024; raise --max-source-tokens" \
  "${one[@]}" score -c ck.pt -s long.en -t short.de --device cpu
expect "short.de:2: 2 tokens, more than the limit of 1; raise --max-target-tokens" \
  "${one[@]}" score -c ck.pt -s long.en -t short.de --device cpu --max-source-tokens 0 --max-target-tokens 1
[ $(($(date +%s) - start)) -lt 30 ] || fail "score took over 30 s to refuse over-long sentences"
head -2 long.en >two.en
head -2 short.de >two.de
"$mixseq" "${one[@]}" score -c ck.pt -s two.en -t two.de --device cpu --max-target-tokens 2 >two.scores 2>/dev/null ||
  fail "score within the limits failed"
[ "$(wc -l <two.scores)" -eq 2 ] || fail "score wrote $(wc -l <two.scores) lines for 2 pairs"

# (5) plot: a value that is not a number is an error naming file and line; null (how a NaN loss is
# logged) is a gap, said on stderr; -o onto a run's metrics is refused.
mkdir -p run_bad run_null
printf '%s\n' '{"kind":"train","step":1,"loss":2.5,"lr":0.1}' '{"kind":"train","step":2,"loss":"2.4","lr":0.1}' \
  >run_bad/metrics.jsonl
printf '%s\n' '{"kind":"train","step":1,"loss":2.5,"lr":0.1}' '{"kind":"train","step":2,"loss":null,"lr":0.1}' \
  '{"kind":"train","step":3,"loss":2.3,"lr":0.1}' >run_null/metrics.jsonl
expect "run_bad/metrics.jsonl:2: \"loss\" is \"2.4\", not a number" plot run_bad -o bad.svg
printf '%s\n' '{"kind":5,"step":1,"loss":2.5}' >run_bad/metrics.jsonl
expect "run_bad/metrics.jsonl:1: \"kind\" is 5, not a string" plot run_bad -o bad.svg
[ ! -e bad.svg ] || fail "plot wrote bad.svg"
"$mixseq" plot run_null -o null.svg 2>plot.log || fail "plot of a null loss: $(cat plot.log)"
grep -qF 'run_null/metrics.jsonl: 1 "loss" value is null (NaN or infinite when logged), drawn as gaps' plot.log ||
  fail "plot said nothing of the null loss: $(cat plot.log)"
grep -q 'data-panel="train_loss"' null.svg || fail "plot dropped the panel with a null loss"
cp run_null/metrics.jsonl metrics_before
expect "--output 'run_null/metrics.jsonl' is the same file as the metrics of run_null" \
  plot run_null -o run_null/metrics.jsonl
cmp -s metrics_before run_null/metrics.jsonl || fail "plot replaced the metrics it read"

# An output folder where a file is: an error naming the file in the way, not std::filesystem's
# "cannot create directories: Not a directory" (found 2026-12-06).
echo "a file" > in_the_way
expect "cannot create the folder 'in_the_way': 'in_the_way' is not a folder" synth -o in_the_way
expect "cannot create the folder 'in_the_way/data': 'in_the_way' is not a folder" \
  prepare --train raw/train --valid raw/valid -o in_the_way/data
expect "cannot create the folder 'in_the_way': 'in_the_way' is not a folder" \
  "${one[@]}" train --data.dir data --train.run_dir in_the_way --train.max_steps 1
expect "cannot create the folder 'in_the_way': 'in_the_way' is not a folder" demo --work-dir in_the_way
[ "$(cat in_the_way)" = "a file" ] || fail "the file in the way was changed"

# (12) generate writes each token as it comes: SIGTERM mid-way loses nothing written, exits 143.
make_small_lm_task "$mixseq" "$work/lm" >/dev/null
tiny_lm_train_command "$mixseq" "$work/lm"
"${train[@]}" --train.run_dir "$work/lm/run" --train.max_steps 30 --train.log_interval 10 2>lm_train.log ||
  { fail "LM training: $(tail -3 lm_train.log)"; }
lm=$work/lm/run/checkpoint_last.pt
generate=("$mixseq" "${one[@]}" generate -c "$lm" --device cpu --prompt "seven hundred" --seed 3)
"${generate[@]}" --max-tokens 300 >gen300.txt 2>/dev/null || fail "generate --max-tokens 300"
# Word-level text: a token is a word, a line end (</s>) or nothing (<pad> and <s>, which a model
# this undertrained still draws); the last line end is the command's.
tokens=$(($(wc -w <gen300.txt) + $(wc -l <gen300.txt) - 1))
[ "$tokens" -le 300 ] && [ "$tokens" -ge 150 ] || fail "generate --max-tokens 300 wrote $tokens tokens"
"${generate[@]}" --max-tokens 1048576 >gen_long.txt 2>gen_long.log &
pid=$!
for _ in $(seq 1 600); do
  [ "$(wc -c <gen_long.txt)" -gt 2000 ] && break
  sleep 0.1
done
seen=$(wc -c <gen_long.txt)
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
[ "$seen" -gt 2000 ] || fail "generate wrote only $seen bytes in 60 s: it does not stream"
[ "$status" -eq 143 ] || fail "generate stopped by SIGTERM exited $status, not 143"
[ "$(wc -c <gen_long.txt)" -ge "$seen" ] || fail "generate's output shrank after SIGTERM"
grep -q "generate: stopped by a signal after" gen_long.log || fail "generate did not say it stopped: $(cat gen_long.log)"
# What was written is the start of the same generation run to its end.
common=$(($(wc -c <gen300.txt) - 1))  # without the line end that ends a generation
[ "$seen" -lt "$common" ] && common=$seen
cmp -s <(head -c "$common" gen_long.txt) <(head -c "$common" gen300.txt) ||
  fail "the streamed text differs from the same seed's shorter generation"

[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
echo "PASS: outputs onto inputs refused, quantize/score/plot inputs checked, generate streams"
