#!/usr/bin/env bash
# A tiny Tacotron 2 (configs/tacotron2_tiny.yaml) learns spoken digit strings in one espeak-ng voice
# (tests/e2e/tools/spoken_numbers.py --voice en-us): its teacher-forced validation attention turns
# diagonal and sharp (the metrics log's attention_diagonal and attention_focus) far beyond the
# untrained model's, and its frame and stop-token losses fall; `mixseq synthesize` speaks the
# validation texts, ending each at its stop token, into one WAV per text in input order with a
# manifest that `mixseq transcribe` reads; `mixseq serve`'s POST /synthesize answers the command's
# audio byte for byte (tools/serve_synthesize_check.py: also concurrent clients, bad bodies);
# `mixseq plot -c` draws an alignment; bad text, settings of another task and a truncated
# checkpoint get errors naming them; a model on linear magnitude frames trains and speaks.
#   synthesis_learns.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
config=$here/../../configs/tacotron2_tiny.yaml
rm -rf "$work" && mkdir -p "$work"
command -v espeak-ng >/dev/null || { echo "SKIP: espeak-ng is not installed (scripts/setup.sh installs it)"; exit 77; }
python3 "$here/tools/spoken_numbers.py" "$work/digits" --train 240 --valid 16 --max-digits 6 --seed 2 --voice en-us
"$mixseq" prepare --task speech --train "$work/digits/train.tsv" --valid "$work/digits/valid.tsv" \
  -o "$work/prepared" --sample-rate 22050 --workers 2 >"$work/prepare.log"
# One thread, so that the run is the same whatever else the machine runs: with the default threads
# following the load, the sums' rounding and with them the 20 epochs' outcome moved with it (a
# CI run beside another test ended at attention focus 0.245 where idle runs reach 0.30, and one
# text's synthesized duration was 1.7 s off).
"$mixseq" --threads 1 train -c "$config" --data.dir "$work/prepared" --train.run_dir "$work/run" 2>"$work/train.log"
grep ' valid |' "$work/train.log" | sed -n '1p;$p'

# The first validation (after one epoch, 11 updates) against the last. The attention's focus at
# the first is an untrained model's (0.13 after one update): spread over 7 or 8 symbols. Its
# diagonal (the correlation of step and attended position) is high from the start: location-
# sensitive attention drifts forward (0.91 after one update); it must stay so.
python3 - "$work/run/metrics.jsonl" <<'PY'
import json, sys
valid = [r for r in map(json.loads, open(sys.argv[1])) if r.get("kind") == "valid"]
first, last = valid[0], valid[-1]
for key in ("loss", "mel_loss", "gate_loss", "guided_attention_loss", "attention_diagonal", "attention_focus"):
    print(f"{key}: {first[key]:.4f} -> {last[key]:.4f}")
assert last["attention_diagonal"] >= 0.95, "the attention does not move forward through the text"
assert last["attention_focus"] >= 1.6 * first["attention_focus"], "the attention did not sharpen"
assert last["mel_loss"] < 0.4 * first["mel_loss"], "the frame loss did not fall"
PY

# synthesize: one file per text, in order, ended by the stop token, and a manifest transcribe reads.
checkpoint=$work/run/checkpoint_best.pt
cut -f2 "$work/digits/valid.tsv" >"$work/texts.txt"
"$mixseq" --threads 1 synthesize -c "$checkpoint" -i "$work/texts.txt" -o "$work/audio" --manifest "$work/audio/manifest.tsv" \
  --batch-size 4 --buffer-size 6 2>"$work/synthesize.log"
grep -q "real-time factor" "$work/synthesize.log" || { echo "FAIL: no real-time factor"; cat "$work/synthesize.log"; exit 1; }
python3 - "$work/texts.txt" "$work/audio" "$work/digits/valid.tsv" <<'PY'
import os, sys, wave
texts = open(sys.argv[1]).read().splitlines()
folder = sys.argv[2]
manifest = [line.split("\t") for line in open(os.path.join(folder, "manifest.tsv")).read().splitlines()]
assert [m[1] for m in manifest] == texts, manifest
assert [m[0] for m in manifest] == [f"{i:06d}.wav" for i in range(1, len(texts) + 1)], manifest
# The spoken texts last about as long as the voice's own recordings of them: the stop token ended
# each (not --max-steps: 300 frames, 7 s), and the durations follow the texts' (0.7 to 2.5 s). How
# well depends on the 20 epochs' trajectory, which the sums' rounding (thread count, kernels)
# moves: idle two-thread runs came within 0.26-0.35 s of the recordings, correlated at 0.95-0.97;
# one under CI load at 0.77 with one text 1.7 s long; this one-thread run (model 207) at 0.42 with
# a median gap of 0.35 s and two texts cut only after 6 s. The bounds take all of these and still
# fail a stop token that fires at random (correlation near 0) or late everywhere (median gap).
originals = [line.split("\t")[0] for line in open(sys.argv[3]).read().splitlines()]
spoken, recorded = [], []
for (name, text), original in zip(manifest, originals):
    w = wave.open(os.path.join(folder, name))
    assert w.getframerate() == 22050 and w.getnchannels() == 1 and w.getsampwidth() == 2
    spoken.append(w.getnframes() / 22050)
    recorded.append(wave.open(os.path.join(os.path.dirname(sys.argv[3]), original)).getnframes() / 22050)
print("recorded / synthesized seconds: " + " ".join(f"{r:.2f}/{s:.2f}" for r, s in zip(recorded, spoken)))
ms, mr = sum(spoken) / len(spoken), sum(recorded) / len(recorded)
cov = sum((s - ms) * (r - mr) for s, r in zip(spoken, recorded))
r = cov / (sum((s - ms) ** 2 for s in spoken) * sum((r - mr) ** 2 for r in recorded)) ** 0.5
print(f"correlation of the durations: {r:.2f}")
gaps = sorted(abs(s - r) for s, r in zip(spoken, recorded))
median_gap = (gaps[(len(gaps) - 1) // 2] + gaps[len(gaps) // 2]) / 2
print(f"median gap between synthesized and recorded durations: {median_gap:.2f} s")
assert median_gap < 0.6, "the texts' durations are far from their recordings'"
assert r >= 0.3, "the synthesized durations do not follow the texts"
PY
if grep -q "without a stop token" "$work/synthesize.log"; then
  echo "FAIL: texts ran to --max-steps"; cat "$work/synthesize.log"; exit 1
fi
# The flags reach the model: --max-steps 5 cuts a text at 5 frames (5 hops of 512 samples, and
# the last window's half), and says so; --seed draws other audio.
"$mixseq" synthesize -c "$checkpoint" -o "$work/capped" --max-steps 5 --griffin-lim-iters 2 "one two three" \
  2>"$work/capped.log"
grep -q "no stop token in 5 frames" "$work/capped.log" || { echo "FAIL: --max-steps 5"; cat "$work/capped.log"; exit 1; }
python3 -c "import sys, wave; n = wave.open(sys.argv[1]).getnframes(); assert n <= 6 * 512, n" "$work/capped/000001.wav"
# One text into the folder of the 16 above: their files 2 to 16 are named as not this run's (and kept).
"$mixseq" synthesize -c "$checkpoint" -o "$work/audio" --max-steps 2 --griffin-lim-iters 1 "one" 2>"$work/older.log"
grep -q "audio also holds 15 numbered audio files this run did not write (000002.wav to 000016.wav)" \
  "$work/older.log" || { echo "FAIL: older numbered files"; cat "$work/older.log"; exit 1; }
[ -s "$work/audio/000016.wav" ] || { echo "FAIL: an earlier run's file was removed"; exit 1; }
"$mixseq" synthesize -c "$checkpoint" -o "$work/seed2" --seed 2 "$(sed -n 3p "$work/texts.txt")" 2>/dev/null
# A text given on the command line; then serve's POST /synthesize gives these very bytes for it.
text=$(sed -n 3p "$work/texts.txt")
"$mixseq" --threads 1 synthesize --device cpu -c "$checkpoint" -o "$work/one" "$text" 2>/dev/null
[ -s "$work/one/000001.wav" ] || { echo "FAIL: no audio for a text given on the command line"; exit 1; }
if cmp -s "$work/one/000001.wav" "$work/seed2/000001.wav"; then echo "FAIL: --seed 2 gave seed 1's audio"; exit 1; fi
python3 "$here/tools/serve_synthesize_check.py" "$mixseq" "$checkpoint" "$text" "$work/one/000001.wav" "$work"
# The attention alignment of a text as an SVG heatmap.
"$mixseq" plot -c "$checkpoint" --text "$text" -o "$work/alignment.svg" 2>"$work/plot.log"
cells=$(grep -c 'class="cell"' "$work/alignment.svg" || true)
[ "$cells" -ge 20 ] || { echo "FAIL: the alignment has $cells cells"; cat "$work/plot.log"; exit 1; }
grep -q "diagonal" "$work/alignment.svg" || { echo "FAIL: the alignment's title has no figures"; exit 1; }

# Copy synthesis: the validation recordings through the model's frames and Griffin-Lim alone come
# back as long as they went in (to a hop), in manifest order with their texts, and with their own
# loudness contour: the correlation of each copy's 20 ms frame energies (in dB) with its
# recording's, 0.94 at worst and 0.97 on average where measured, against 0.06 on average (0.50 at
# most) for a copy beside another recording.
"$mixseq" synthesize -c "$checkpoint" --copy-synthesis "$work/digits/valid.tsv" -o "$work/copied" \
  --manifest "$work/copied/manifest.tsv" --griffin-lim-iters 30 2>"$work/copied.log"
grep -q "16 recordings copied" "$work/copied.log" || { echo "FAIL: copy synthesis"; cat "$work/copied.log"; exit 1; }
python3 - "$work/digits/valid.tsv" "$work/copied/manifest.tsv" <<'PY'
import array, math, os, sys, wave
def read(path):
    w = wave.open(path)
    assert w.getframerate() == 22050 and w.getnchannels() == 1 and w.getsampwidth() == 2, path
    return array.array("h", w.readframes(w.getnframes()))
def energies(x, n=441):
    return [10 * math.log10(1 + sum(v * v for v in x[i:i + n]) / n) for i in range(0, len(x) - n + 1, n)]
def correlation(a, b):
    k = min(len(a), len(b)); a, b = a[:k], b[:k]
    ma, mb = sum(a) / k, sum(b) / k
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    return cov / (sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b)) ** 0.5
originals = [line.split("\t") for line in open(sys.argv[1]).read().splitlines()]
copies = [line.split("\t") for line in open(sys.argv[2]).read().splitlines()]
assert [c[1] for c in copies] == [o[1] for o in originals], "the manifest's texts are not the recordings'"
assert [c[0] for c in copies] == [f"{i:06d}.wav" for i in range(1, len(originals) + 1)], copies
recordings = [read(os.path.join(os.path.dirname(sys.argv[1]), o[0])) for o in originals]
copied = [read(os.path.join(os.path.dirname(sys.argv[2]), c[0])) for c in copies]
for (original, _), a, b in zip(originals, recordings, copied):
    assert abs(len(a) - len(b)) <= 512, (original, len(a), len(b))
x, y = [energies(a) for a in recordings], [energies(b) for b in copied]
matched = [correlation(a, b) for a, b in zip(x, y)]
others = [correlation(x[i], y[(i + 1) % len(y)]) for i in range(len(x))]
mean = lambda v: sum(v) / len(v)
print(f"copy synthesis: loudness contours correlate at {min(matched):.3f} at worst, {mean(matched):.3f} on average; "
      f"a copy beside another recording: {mean(others):.3f} on average")
assert min(matched) >= 0.85, "a copy's loudness contour is not its recording's"
assert mean(matched) - mean(others) >= 0.5, "copies match other recordings as well as their own"
PY

# Bad input: each error names the file (and line and column) or the setting.
cd "$work"
source "$here/expect_error.sh"
printf 'one two\n\nthree\n' >"$work/empty.txt"
expect_error "empty.txt:2: empty text" synthesize -c "$checkpoint" -i "$work/empty.txt" -o "$work/bad"
printf 'one two\nroom 101\n' >"$work/digit.txt"
expect_error "digit.txt:2: column 6: '1' is not a symbol" synthesize -c "$checkpoint" -i "$work/digit.txt" -o "$work/bad"
# A bad line late in a file stops the run before any audio is written; from stdin the texts before
# it stream out, and the error says where they went.
printf 'one two\nthree\nroom 101\n' >"$work/late.txt"
expect_error "late.txt:3: column 6: '1' is not a symbol" synthesize -c "$checkpoint" -i "$work/late.txt" \
  -o "$work/late" --buffer-size 1
[ -z "$(ls -A "$work/late" 2>/dev/null)" ] || { echo "FAIL: audio written before the bad line's error"; failures=$((failures + 1)); }
status=0
"$mixseq" synthesize -c "$checkpoint" -i - -o "$work/late_stdin" --buffer-size 1 <"$work/late.txt" 2>"$work/late_stdin.log" ||
  status=$?
if [ "$status" -eq 0 ] || ! grep -qF "(texts 1-2 were already written to $work/late_stdin)" "$work/late_stdin.log" ||
  [ ! -s "$work/late_stdin/000002.wav" ]; then
  echo "FAIL: synthesize from stdin, bad third line (exit $status):"; cat "$work/late_stdin.log"; failures=$((failures + 1))
fi
# Outputs over inputs, refused before anything is written: recordings named as the copies are
# (000001.wav in the -o folder), and an -i text file there (the sweep of 2026-12-07 lost both).
mkdir -p "$work/over"
first=$(head -1 "$work/digits/valid.tsv" | cut -f1)
[ "${first#/}" = "$first" ] && first="$work/digits/$first"
cp "$first" "$work/over/000001.wav"
printf '000001.wav\tone\n' >"$work/over/m.tsv"
before=$(md5sum <"$work/over/000001.wav")
expect_error "-o '$work/over/000001.wav' is the same file as $work/over/m.tsv:1's recording" \
  synthesize -c "$checkpoint" --copy-synthesis "$work/over/m.tsv" -o "$work/over"
[ "$(md5sum <"$work/over/000001.wav")" = "$before" ] || { echo "FAIL: a recording was overwritten"; failures=$((failures + 1)); }
mkdir -p "$work/over2"
printf 'one two\n' >"$work/over2/000001.wav"
expect_error "-o '$work/over2/000001.wav' is the same file as --input" synthesize -c "$checkpoint" \
  -i "$work/over2/000001.wav" -o "$work/over2"
[ "$(cat "$work/over2/000001.wav")" = "one two" ] || { echo "FAIL: the -i text was overwritten"; failures=$((failures + 1)); }
expect_error "no symbols to synthesize: the braces hold no ARPAbet phonemes" synthesize -c "$checkpoint" -o "$work/bad" "{}"
printf 'missing.wav\tone two\n' >"$work/missing.tsv"
expect_error "missing.wav" synthesize -c "$checkpoint" --copy-synthesis "$work/missing.tsv" -o "$work/bad"
expect_error "give no --input or texts with it" synthesize -c "$checkpoint" --copy-synthesis "$work/digits/valid.tsv" \
  -o "$work/bad" "one"
expect_error "speech.n_mels is a setting of the speech_recognition task" train -c "$config" \
  --data.dir "$work/prepared" --train.run_dir "$work/run2" --speech.n_mels 40
expect_error "synthesis.window_ms" train -c "$config" --data.dir "$work/prepared" --train.run_dir "$work/run2" \
  --synthesis.window_ms 100
expect_error "not a speech dataset" train -c "$config" --data.dir "$work/digits" --train.run_dir "$work/run2"
head -c 20000 "$checkpoint" >"$work/truncated.pt"
expect_error "$work/truncated.pt" synthesize -c "$work/truncated.pt" -o "$work/bad" "one"
expect_error "the model's frames have 40 bins (model.tacotron2.n_mel_channels) but the data's have 513 magnitude bins" \
  train -c "$config" --data.dir "$work/prepared" --train.run_dir "$work/run2" --synthesis.frames magnitude
[ "$failures" -eq 0 ] || exit 1

# Linear magnitude frames (513 bins at n_fft 1024, OpenSeq2Seq's "magnitude"): a model trains on them
# and synthesize speaks through Griffin-Lim alone (two updates: the path, not the voice).
"$mixseq" train -c "$config" --data.dir "$work/prepared" --train.run_dir "$work/magnitude" --synthesis.frames magnitude \
  --model.tacotron2.n_mel_channels 513 --train.max_epochs 0 --train.max_steps 2 --model.tacotron2.max_decoder_steps 40 \
  2>"$work/magnitude.log"
grep -q "513 magnitude bins every" "$work/magnitude.log" || { echo "FAIL: no magnitude frames"; tail -3 "$work/magnitude.log"; exit 1; }
"$mixseq" synthesize -c "$work/magnitude/checkpoint_best.pt" -o "$work/magnitude_audio" "$text" 2>"$work/magnitude_synth.log"
grep -q "513 magnitude bins at 22050 Hz" "$work/magnitude_synth.log" || { echo "FAIL: synthesize's log"; cat "$work/magnitude_synth.log"; exit 1; }
python3 -c "import sys, wave; w = wave.open(sys.argv[1]); assert w.getframerate() == 22050 and w.getnframes() > 0" \
  "$work/magnitude_audio/000001.wav"
echo "OK"
