#!/usr/bin/env bash
# scripts/recipes/tools/fsdd_connected.py (the FSDD recipe's utterance maker) on fake FSDD
# recordings whose every sample encodes its take (speaker, digit, take number), so that each output
# utterance can be traced back to the takes it joined:
# - train.tsv holds only the training speakers' takes, valid.tsv only the held-out speaker's, and
#   each transcript names the digits of the takes joined, in order;
# - with --adapt N, adapt.tsv holds N utterances of the held-out speaker from odd take numbers and
#   valid.tsv from even ones (no recording in both), and the training utterances are the same as
#   without --adapt;
# - with --trim-onset MS, about half of the training takes lose their quiet lead-in and up to MS ms
#   of the take itself (never more), while every transcript, and the validation and adaptation
#   audio byte for byte, stay those of the same seed without it.
#   fsdd_connected.sh <repository root> <work dir>
set -euo pipefail
root=$1
work=$2
rm -rf "$work" && mkdir -p "$work/recordings"
python3 - "$work/recordings" <<'PY'
import array, sys, wave
speakers = ["ann", "bob", "cyd"]
for s, speaker in enumerate(speakers):
    for digit in range(10):
        for take in range(6):
            value = 1000 + 1000 * s + 100 * take + 10 * digit  # far above the gaps' noise of +-30
            with wave.open(f"{sys.argv[1]}/{digit}_{speaker}_{take}.wav", "wb") as w:
                w.setnchannels(1), w.setsampwidth(2), w.setframerate(8000)
                lead_in = [(-1) ** i * 20 for i in range(120)]  # quiet, below the 1000s that trace takes
                w.writeframes(array.array("h", lead_in + [value] * 400).tobytes())
PY
tool=$root/scripts/recipes/tools/fsdd_connected.py
python3 "$tool" "$work/recordings" "$work/plain" --held-out bob --train 40 --valid 20 --seed 3
python3 "$tool" "$work/recordings" "$work/adapted" --held-out bob --train 40 --valid 20 --adapt 15 --seed 3
python3 "$tool" "$work/recordings" "$work/trimmed" --held-out bob --train 40 --valid 20 --adapt 15 --seed 3 \
  --trim-onset 15
python3 - "$work" <<'PY'
import array, os, sys, wave
work = sys.argv[1]
words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
speakers = ["ann", "bob", "cyd"]

def runs_of(folder, path):
    """[value, length] of each take in the utterance: one run of a constant value above the noise."""
    with wave.open(os.path.join(folder, path)) as w:
        samples = array.array("h", w.readframes(w.getnframes()))
    runs, previous = [], None
    for x in samples:
        if x >= 1000 and x != previous:
            runs.append([x, 0])
        if x >= 1000:
            runs[-1][1] += 1
        previous = x if x >= 1000 else None
    return runs

def takes_of(folder, line):
    path, transcript = line.rstrip("\n").split("\t")
    runs = [v for v, _ in runs_of(folder, path)]
    takes = [((v - 1000) // 1000, (v % 1000) // 100, (v % 100) // 10) for v in runs]  # speaker, take, digit
    assert " ".join(words[d] for _, _, d in takes) == transcript, (path, transcript, takes)
    return takes

def split(folder, name):
    with open(os.path.join(work, folder, f"{name}.tsv")) as f:
        return [takes_of(os.path.join(work, folder), line) for line in f]

failures = []
for folder in ("plain", "adapted", "trimmed"):
    train, valid = split(folder, "train"), split(folder, "valid")
    if len(train) != 40 or len(valid) != 20:
        failures.append(f"{folder}: {len(train)} training and {len(valid)} validation utterances, not 40 and 20")
    if any(speakers[s] == "bob" for u in train for s, _, _ in u):
        failures.append(f"{folder}: the held-out speaker in train.tsv")
    if any(speakers[s] != "bob" for u in valid for s, _, _ in u):
        failures.append(f"{folder}: another speaker in valid.tsv")
if os.path.exists(os.path.join(work, "plain", "adapt.tsv")):
    failures.append("plain: an adapt.tsv without --adapt")
adapt, valid = split("adapted", "adapt"), split("adapted", "valid")
if len(adapt) != 15 or any(speakers[s] != "bob" for u in adapt for s, _, _ in u):
    failures.append(f"adapt.tsv: {len(adapt)} utterances, or another speaker's")
if any(t % 2 == 0 for u in adapt for _, t, _ in u) or any(t % 2 == 1 for u in valid for _, t, _ in u):
    failures.append("adapt.tsv and valid.tsv share a take parity: the same recordings in both")
if split("plain", "train") != split("adapted", "train"):
    failures.append("--adapt changed the training utterances")
if split("trimmed", "train") != split("adapted", "train"):
    failures.append("--trim-onset changed the takes or the transcripts of the training utterances")
for name in ("valid", "adapt"):
    with open(os.path.join(work, "trimmed", f"{name}.tsv")) as f:
        for line in f:
            path = line.split("\t")[0]
            with open(os.path.join(work, "trimmed", path), "rb") as a, open(os.path.join(work, "adapted", path), "rb") as b:
                if a.read() != b.read():
                    failures.append(f"--trim-onset changed {name} audio ({path})")
lengths = []
with open(os.path.join(work, "trimmed", "train.tsv")) as f:
    for line in f:
        lengths += [n for _, n in runs_of(os.path.join(work, "trimmed"), line.split("\t")[0])]
cut = [n for n in lengths if n < 400]
if any(n < 400 - 15 * 8 for n in lengths):
    failures.append(f"--trim-onset 15 cut more than 120 samples of a take: {min(lengths)} of 400 left")
if not 0.25 * len(lengths) <= len(cut) <= 0.75 * len(lengths):
    failures.append(f"--trim-onset cut {len(cut)} of {len(lengths)} training takes, not about half")
print("\n".join(f"FAIL: {f}" for f in failures) or "PASS: fsdd_connected.py's splits")
sys.exit(1 if failures else 0)
PY
