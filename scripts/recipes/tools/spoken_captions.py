#!/usr/bin/env python3
"""Multi30k's English captions as speech: the training captions read by many espeak-ng voices (its
English variants at random rates and pitches), the validation captions read by Debian's flite
voices, an engine never heard in training; so the validation WER measures how the recognizer
carries to a new synthesiser, with a real vocabulary of about 10,000 words.

  spoken_captions.py MULTI30K_DIR OUT_DIR [--train N] [--valid N] [--seed S] [--jobs J] [--voice ENGINE:VOICE]

With --voice (e.g. flite:slt, espeak-ng:en-us), one voice reads both splits at its default rate and
pitch: data for speech synthesis (scripts/recipes/spoken_captions_tts.sh), whose validation captions
are held out from its training.

reads MULTI30K_DIR/train.en.gz and val.en.gz; writes OUT_DIR/audio/*.wav, the manifests
OUT_DIR/train.tsv and OUT_DIR/valid.tsv (`audio<TAB>transcript`, paths relative to the manifest)
and OUT_DIR/lm_train.txt: every training caption, normalised, one per line (for the word n-gram
model of the beam search; the captions that were synthesised are among them, the validation ones
are not). Transcripts are lowercased, hyphens and slashes become spaces, other punctuation is
dropped, and captions with digits are left out (a digit's spoken form is the synthesiser's choice).
"""
import argparse
import gzip
import os
import random
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ESPEAK_VOICES = ["en-us", "en-gb", "en-gb-x-rp", "en-gb-scotland", "en-gb-x-gbclan", "en-gb-x-gbcwmd", "en-029",
                 "en-us+m3", "en-us+f2", "en-gb+f3", "en-us+m7", "en-gb+f4", "en-us+klatt", "en-gb+m5"]
FLITE_VOICES = ["kal", "kal16", "awb", "rms", "slt"]


def normalise(caption):
    text = caption.lower().replace("-", " ").replace("/", " ")
    text = re.sub(r"[^a-z' ]", " ", text)
    text = re.sub(r"\s+", " ", text).strip().strip("'")
    return text


def read_captions(path):
    captions = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            if re.search(r"[0-9]", line):
                continue
            text = normalise(line)
            if text:
                captions.append(text)
    return captions


def espeak(path, text, rng):
    subprocess.run(["espeak-ng", "-v", rng.choice(ESPEAK_VOICES), "-s", str(rng.randint(140, 200)), "-p",
                    str(rng.randint(30, 70)), "-w", path, text], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def flite(path, text, rng):
    subprocess.run(["flite", "-voice", rng.choice(FLITE_VOICES), "-t", text, "-o", path], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def one_voice(spec):
    """The reader of --voice ENGINE:VOICE."""
    engine, _, voice = spec.partition(":")
    if engine == "flite":
        return lambda path, text, rng: subprocess.run(["flite", "-voice", voice, "-t", text, "-o", path], check=True,
                                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if engine == "espeak-ng":
        return lambda path, text, rng: subprocess.run(["espeak-ng", "-v", voice, "-w", path, text], check=True,
                                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sys.exit(f"spoken_captions.py: --voice {spec!r} is not flite:VOICE or espeak-ng:VOICE")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("multi30k_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--train", type=int, default=6000)
    ap.add_argument("--valid", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--voice", help="ENGINE:VOICE reading both splits (speech synthesis data)")
    args = ap.parse_args()
    for tool in ("espeak-ng", "flite"):
        if subprocess.run(["sh", "-c", f"command -v {tool}"], stdout=subprocess.DEVNULL).returncode != 0:
            sys.exit(f"spoken_captions.py: {tool} is not installed (scripts/setup.sh installs it)")
    train = read_captions(os.path.join(args.multi30k_dir, "train.en.gz"))
    valid = read_captions(os.path.join(args.multi30k_dir, "val.en.gz"))
    os.makedirs(os.path.join(args.out_dir, "audio"), exist_ok=True)
    with open(os.path.join(args.out_dir, "lm_train.txt"), "w") as f:
        f.writelines(text + "\n" for text in train)
    rng = random.Random(args.seed)
    jobs = []
    train_engine, valid_engine = (one_voice(args.voice),) * 2 if args.voice else (espeak, flite)
    for split, captions, count, engine in (("train", train, args.train, train_engine),
                                           ("valid", valid, args.valid, valid_engine)):
        chosen = rng.sample(captions, min(count, len(captions)))
        lines = []
        for i, text in enumerate(chosen):
            name = f"audio/{split}{i:05d}.wav"
            # each utterance its own generator, so the voices do not depend on the order jobs run in
            jobs.append((engine, os.path.join(args.out_dir, name), text, random.Random(rng.random())))
            lines.append(f"{name}\t{text}\n")
        with open(os.path.join(args.out_dir, f"{split}.tsv"), "w") as f:
            f.writelines(lines)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for future in [pool.submit(engine, path, text, r) for engine, path, text, r in jobs]:
            future.result()
    if args.voice:
        print(f"spoken_captions.py: {args.train} training and {args.valid} validation utterances in the voice "
              f"{args.voice} in {args.out_dir}")
    else:
        print(f"spoken_captions.py: {sum(1 for j in jobs if j[0] is espeak)} espeak-ng training and "
              f"{sum(1 for j in jobs if j[0] is flite)} flite validation utterances in {args.out_dir}")


if __name__ == "__main__":
    main()
