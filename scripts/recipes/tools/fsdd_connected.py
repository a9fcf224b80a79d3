#!/usr/bin/env python3
"""Connected-digit utterances from the Free Spoken Digit Dataset (one digit per recording):
each utterance is 1-7 takes of ONE speaker, concatenated with random gaps of 50-300 ms of low
noise, written as 8 kHz 16-bit WAV with its transcript (the lowercase digit words).

  fsdd_connected.py RECORDINGS_DIR OUT_DIR --held-out SPEAKER [--train N] [--valid N] [--adapt N] [--seed S]
                    [--trim-onset MS [--trim-share P]]

OUT_DIR/train.tsv: utterances of every speaker but SPEAKER; OUT_DIR/valid.tsv: SPEAKER's alone.
With --adapt N, OUT_DIR/adapt.tsv holds N more utterances of SPEAKER for unsupervised adaptation
(`mixseq transcribe --adapt-norms`), and SPEAKER's takes are split between the two by take number
(even ones for valid.tsv, odd ones for adapt.tsv), so that no recording is in both.
With --trim-onset MS, a share P (default 0.5) of the training takes start later: everything
before the take's speech onset (its first 5 ms frame with an RMS of at least a tenth of its
loudest frame's) and a further 0 to MS ms of the speech itself are cut, as a tighter trimming
would have cut them, so that the model also learns words whose first consonant is weak or
missing (FSDD's takes are "trimmed to near-minimal silence"; one held-out speaker's "two" has
almost no burst left). The validation and adaptation takes are never trimmed, and the trims
draw from their own random stream: the utterances and transcripts are those of the same seed
without it.
Paths in the manifests are relative to OUT_DIR.
"""
import argparse
import array
import collections
import os
import random
import re
import sys
import wave

WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
RATE = 8000


def read(path):
    with wave.open(path) as w:
        if w.getframerate() != RATE or w.getnchannels() != 1 or w.getsampwidth() != 2:
            sys.exit(f"{path}: expected 8 kHz 16-bit mono (FSDD's format)")
        return array.array("h", w.readframes(w.getnframes()))


def write(path, samples):
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(samples.tobytes())


def speech_onset(samples):
    """The first sample of the take's first 5 ms frame whose RMS is at least a tenth of its loudest frame's."""
    frame = RATE // 200
    energies = [sum(v * v for v in samples[i:i + frame]) for i in range(0, max(1, len(samples) - frame + 1), frame)]
    loudest = max(energies)
    for k, energy in enumerate(energies):
        if energy * 100 >= loudest:  # RMS ratio 1/10 is an energy ratio of 1/100
            return k * frame
    return 0


def trimmed(samples, onset, trim_ms, rng):
    """`samples` from `onset` plus 0 to trim_ms ms on, keeping at least 60% of what follows the onset."""
    cut = onset + int(rng.uniform(0, trim_ms) * RATE / 1000)
    cut = min(cut, onset + int(0.4 * (len(samples) - onset)))
    return samples[cut:]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("recordings")
    ap.add_argument("out_dir")
    ap.add_argument("--held-out", required=True)
    ap.add_argument("--train", type=int, default=2000, help="training utterances (over all training speakers)")
    ap.add_argument("--valid", type=int, default=300, help="validation utterances of the held-out speaker")
    ap.add_argument("--adapt", type=int, default=0,
                    help="adaptation utterances of the held-out speaker, from takes valid.tsv does not use")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--trim-onset", type=float, default=0.0, metavar="MS",
                    help="cut a share of the training takes from their speech onset plus up to MS ms (0: none)")
    ap.add_argument("--trim-share", type=float, default=0.5, metavar="P",
                    help="the share of the training takes --trim-onset cuts")
    args = ap.parse_args()
    if args.trim_onset < 0 or not 0 <= args.trim_share <= 1:
        sys.exit("--trim-onset must be >= 0 and --trim-share within [0, 1]")
    takes = collections.defaultdict(list)  # speaker -> [(digit, path)]
    for name in sorted(os.listdir(args.recordings)):
        m = re.fullmatch(r"(\d)_([a-z]+)_(\d+)\.wav", name)
        if m:
            speaker = m.group(2)
            if args.adapt > 0 and speaker == args.held_out:
                speaker = (speaker, "adapt" if int(m.group(3)) % 2 else "valid")
            takes[speaker].append((int(m.group(1)), os.path.join(args.recordings, name)))
    speakers = sorted({s if isinstance(s, str) else s[0] for s in takes})
    if args.held_out not in speakers:
        sys.exit(f"no recordings of speaker '{args.held_out}' in {args.recordings}; speakers: {', '.join(speakers)}")
    rng = random.Random(args.seed)
    trim_rng = random.Random(f"trim-onset {args.seed}")  # its own stream: the utterances stay the seed's
    cache = {}
    onsets = {}  # path -> speech_onset of its take, measured once
    os.makedirs(os.path.join(args.out_dir, "audio"), exist_ok=True)
    held_out = (lambda part: (args.held_out, part)) if args.adapt > 0 else (lambda part: args.held_out)
    splits = [("train", args.train, [s for s in speakers if s != args.held_out]),
              ("valid", args.valid, [held_out("valid")])]
    if args.adapt > 0:
        splits.append(("adapt", args.adapt, [held_out("adapt")]))
    for split, count, split_speakers in splits:
        lines = []
        for i in range(count):
            speaker = split_speakers[i % len(split_speakers)]
            chosen = [rng.choice(takes[speaker]) for _ in range(rng.randint(1, 7))]
            if not isinstance(speaker, str):
                speaker = speaker[0]
            samples = array.array("h")
            for k, (digit, path) in enumerate(chosen):
                gap = rng.randint(int(0.05 * RATE), int(0.3 * RATE)) if k else rng.randint(0, int(0.1 * RATE))
                samples.extend(rng.randint(-30, 30) for _ in range(gap))
                if path not in cache:
                    cache[path] = read(path)
                if split == "train" and args.trim_onset > 0 and trim_rng.random() < args.trim_share:
                    if path not in onsets:
                        onsets[path] = speech_onset(cache[path])
                    samples.extend(trimmed(cache[path], onsets[path], args.trim_onset, trim_rng))
                else:
                    samples.extend(cache[path])
            samples.extend(rng.randint(-30, 30) for _ in range(rng.randint(0, int(0.1 * RATE))))
            name = f"audio/{split}_{speaker}_{i:05d}.wav"
            write(os.path.join(args.out_dir, name), samples)
            lines.append(f"{name}\t{' '.join(WORDS[d] for d, _ in chosen)}\n")
        with open(os.path.join(args.out_dir, f"{split}.tsv"), "w") as f:
            f.writelines(lines)


if __name__ == "__main__":
    main()
