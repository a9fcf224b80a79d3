#!/usr/bin/env bash
# `mixseq demo --task speech` end to end on a few utterances and one epoch: espeak-ng synthesis,
# prepare, training, transcription of the validation split and its WER and CER lines. Its training
# config must be configs/speech_tiny.yaml's (the demo builds it in code, as the translation demo
# does configs/transformer_tiny.yaml's). Whether the model learns is e2e_speech_learns's to show.
# Without espeak-ng the demo ends with an error saying how to install it.
#   demo_speech.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
here=$(dirname "$0")
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

# No espeak-ng on PATH: a clear error before anything is written.
status=0
PATH=/nonexistent "$mixseq" demo --task speech --work-dir "$work/none" >/dev/null 2>"$work/none.log" || status=$?
[ "$status" -ge 1 ] && [ "$status" -le 127 ] && grep -q "espeak-ng, which synthesises its spoken digits, is not on PATH" \
  "$work/none.log" || fail "without espeak-ng: exit $status, $(tail -1 "$work/none.log")"
[ ! -e "$work/none" ] || fail "without espeak-ng the demo wrote $work/none"
# An option of the other demo is refused.
status=0
"$mixseq" demo --task speech --bpe-merges 10 --work-dir "$work/x" >/dev/null 2>"$work/x.log" || status=$?
[ "$status" -ne 0 ] && grep -q "bpe-merges is an option of the translation demo" "$work/x.log" ||
  fail "--bpe-merges with --task speech: exit $status, $(tail -1 "$work/x.log")"

command -v espeak-ng >/dev/null || { echo "SKIP: espeak-ng is not installed (scripts/setup.sh installs it)"; exit 77; }
"$mixseq" demo --task speech --work-dir "$work/demo" --train-utterances 24 --valid-utterances 6 \
  --train.max_epochs 1 --schedule.cosine.warmup_steps 0 >"$work/demo.out" 2>"$work/demo.log" || { tail -20 "$work/demo.log"; fail "the demo failed"; }
cat "$work/demo.out"
grep -Eq '^WER [0-9.]+ % \(S [0-9]+ D [0-9]+ I [0-9]+ / N [0-9]+ words\)$' "$work/demo.out" || fail "no WER line"
grep -Eq '^CER [0-9.]+ % \(S [0-9]+ D [0-9]+ I [0-9]+ / N [0-9]+ characters\)$' "$work/demo.out" || fail "no CER line"
[ "$(wc -l <"$work/demo/raw/train.tsv")" -eq 24 ] && [ "$(wc -l <"$work/demo/raw/valid.tsv")" -eq 6 ] ||
  fail "the manifests do not hold 24 and 6 utterances"
[ "$(wc -l <"$work/demo/valid.hyp")" -eq 6 ] || fail "valid.hyp does not hold 6 transcripts"
grep -q "demo: 4/4 transcribed 6 validation utterances" "$work/demo.log" || fail "no transcription line in the log"

# The demo's training config is configs/speech_tiny.yaml's, section by section.
"$mixseq" train -c "$here/../../configs/speech_tiny.yaml" --data.dir "$work/demo/data" \
  --train.run_dir "$work/demo/run" --train.max_epochs 1 --schedule.cosine.warmup_steps 0 --print-config >"$work/preset.yaml" 2>/dev/null
python3 - "$work/demo/run/config.yaml" "$work/preset.yaml" <<'PY'
import sys, yaml
demo, preset = (yaml.safe_load(open(path)) for path in sys.argv[1:3])
differ = [f"{section}: demo {demo[section]} / preset {preset.get(section)}"
          for section in demo if demo[section] != preset.get(section)]
assert not differ, "demo --task speech and configs/speech_tiny.yaml differ:\n" + "\n".join(differ)
print(f"demo config = configs/speech_tiny.yaml in {len(demo)} sections")
PY
echo "OK"
