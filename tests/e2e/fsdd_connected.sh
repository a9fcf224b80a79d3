#!/usr/bin/env bash
# scripts/recipes/tools/fsdd_connected.py (the FSDD recipe's utterance maker) on fake FSDD
# recordings whose every sample encodes its take (speaker, digit, take number), so that each output
# utterance can be traced back to the takes it joined:
# - train.tsv holds only the training speakers' takes, valid.tsv only the held-out speaker's, and
#   each transcript names the digits of the takes joined, in order;
# - with --adapt N, adapt.tsv holds N utterances of the held-out speaker from odd take numbers and
#   valid.tsv from even ones (no recording in both), and the training utterances are the same as
#   without --adapt.
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
                w.writeframes(array.array("h", [value] * 400).tobytes())
PY
tool=$root/scripts/recipes/tools/fsdd_connected.py
python3 "$tool" "$work/recordings" "$work/plain" --held-out bob --train 40 --valid 20 --seed 3
python3 "$tool" "$work/recordings" "$work/adapted" --held-out bob --train 40 --valid 20 --adapt 15 --seed 3
python3 - "$work" <<'PY'
import array, os, sys, wave
work = sys.argv[1]
words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
speakers = ["ann", "bob", "cyd"]

def takes_of(folder, line):
    path, transcript = line.rstrip("\n").split("\t")
    with wave.open(os.path.join(folder, path)) as w:
        samples = array.array("h", w.readframes(w.getnframes()))
    runs, previous = [], None
    for x in samples:  # one run of a constant value above the noise per take
        if x >= 1000 and x != previous:
            runs.append(x)
        previous = x if x >= 1000 else None
    takes = [((v - 1000) // 1000, (v % 1000) // 100, (v % 100) // 10) for v in runs]  # speaker, take, digit
    assert " ".join(words[d] for _, _, d in takes) == transcript, (path, transcript, takes)
    return takes

def split(folder, name):
    with open(os.path.join(work, folder, f"{name}.tsv")) as f:
        return [takes_of(os.path.join(work, folder), line) for line in f]

failures = []
for folder in ("plain", "adapted"):
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
print("\n".join(f"FAIL: {f}" for f in failures) or "PASS: fsdd_connected.py's splits")
sys.exit(1 if failures else 0)
PY
