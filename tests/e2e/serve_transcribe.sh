#!/usr/bin/env bash
# mixseq serve's POST /transcribe (issue 25) with real HTTP clients (tools/serve_transcribe_check.py),
# on the speech model e2e_speech_learns trains (a CTest fixture: that test runs first and leaves
# <speech work>/run/checkpoint_best.pt and the validation audio <speech work>/digits): every
# validation file gets exactly `mixseq transcribe`'s text and word times; one server serves a
# translation model beside it; 8 concurrent clients get their own answers, batched together; bad
# bodies (not audio, empty, truncated, a float WAV holding a NaN, too long or short, too big, another
# Content-Type) get a 4xx naming what is wrong while the server keeps running; SIGTERM ends it
# with 0; with --speech-beam-size and --speech-lm, /transcribe gives transcribe's beam-search
# transcripts.
#   serve_transcribe.sh <mixseq> <speech_learns work dir> <work dir>
set -euo pipefail
mixseq=$1
speech=$2
work=$3
here=$(dirname "$0")
checkpoint=$speech/run/checkpoint_best.pt
[ -f "$checkpoint" ] || { echo "FAIL: no $checkpoint: e2e_speech_learns (this test's fixture) did not leave it"; exit 1; }
source "$here/small_task.sh"
make_small_task "$mixseq" "$work" >/dev/null
# Any translation model will do for serving both: it is checked to answer, not to translate well.
tiny_train_command "$mixseq" "$work"
"${train[@]}" --model.gnmt.hidden_size 16 --model.gnmt.num_layers 2 --train.max_epochs 0 --train.max_steps 5 \
  --train.run_dir "$work/run" 2>"$work/train.log" || { tail -5 "$work/train.log"; exit 1; }

# What `mixseq transcribe` makes of the validation files, read from absolute paths.
awk -F'\t' -v dir="$(cd "$speech/digits" && pwd)" '{ print dir "/" $1 }' "$speech/digits/valid.tsv" >"$work/valid.list"
mapfile -t files <"$work/valid.list"
"$mixseq" --threads 1 transcribe -c "$checkpoint" --device cpu --json "${files[@]}" -o "$work/expected.jsonl" \
  2>"$work/transcribe.log" || { tail -5 "$work/transcribe.log"; exit 1; }
# With the fixture's word trigram (left there when irstlm made it): beam search fused with it.
lm_check=()
if [ -f "$speech/digits.arpa" ]; then
  "$mixseq" --threads 1 transcribe -c "$checkpoint" --device cpu --json "${files[@]}" -o "$work/expected_lm.jsonl" \
    --beam-size 8 --lm "$speech/digits.arpa" --lm-weight 1 --word-bonus 2 2>"$work/transcribe_lm.log" ||
    { tail -5 "$work/transcribe_lm.log"; exit 1; }
  lm_check=("$work/expected_lm.jsonl" "$speech/digits.arpa")
fi
python3 "$here/tools/serve_transcribe_check.py" "$mixseq" "$checkpoint" "$work/run/checkpoint_last.pt" \
  "$work/expected.jsonl" "$work" "${lm_check[@]}"
echo "PASS: /transcribe matches transcribe, beside /translate, 8 concurrent clients, bad bodies, SIGTERM"
