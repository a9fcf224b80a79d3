#!/usr/bin/env python3
"""Multi30k's English captions as speech: the training captions read by many espeak-ng voices (its
English variants at random rates and pitches), the validation captions read by Debian's flite
voices, an engine never heard in training; so the validation WER measures how the recognizer
carries to a new synthesiser, with a real vocabulary of about 10,000 words.

  spoken_captions.py MULTI30K_DIR OUT_DIR [--train N] [--valid N] [--seed S] [--jobs J] [--voice ENGINE:VOICE]
                     [--flite-train VOICE,...]

With --flite-train (e.g. kal,kal16,awb,rms), those flite voices read training captions too (each
training caption's reader drawn from the espeak-ng voices and these, evenly) and only the other flite
voices read the validation captions: a recognizer that has heard flite, but never the validation
voices (the judge of scripts/recipes/spoken_captions_tts.sh, whose voice is flite's slt).

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


def flite_reader(voices):
    """A reader that draws one of these flite voices per utterance."""
    def read(path, text, rng):
        subprocess.run(["flite", "-voice", rng.choice(voices), "-t", text, "-o", path], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return read


def mixed_reader(voices):
    """Each utterance read by one of the espeak-ng voices or one of these flite voices, evenly."""
    def read(path, text, rng):
        voice = rng.randrange(len(ESPEAK_VOICES) + len(voices))
        if voice < len(ESPEAK_VOICES):
            espeak(path, text, rng)
        else:
            flite_reader([voices[voice - len(ESPEAK_VOICES)]])(path, text, rng)
    return read


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
    ap.add_argument("--flite-train", default="", help="flite voices that read training captions too (VOICE,...)")
    args = ap.parse_args()
    flite_train = [v for v in args.flite_train.split(",") if v]
    unknown = [v for v in flite_train if v not in FLITE_VOICES]
    if unknown or (flite_train and args.voice):
        sys.exit(f"spoken_captions.py: --flite-train {args.flite_train!r}: "
                 + (f"not among flite's voices {FLITE_VOICES}" if unknown else "does not go with --voice"))
    valid_voices = [v for v in FLITE_VOICES if v not in flite_train]
    if not valid_voices:
        sys.exit("spoken_captions.py: --flite-train leaves no flite voice to read the validation captions")
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
    if args.voice:
        train_engine = valid_engine = one_voice(args.voice)
    else:
        train_engine = mixed_reader(flite_train) if flite_train else espeak
        valid_engine = flite_reader(valid_voices)
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
        heard = "espeak-ng" + (f" and flite ({', '.join(flite_train)})" if flite_train else "")
        print(f"spoken_captions.py: {sum(1 for j in jobs if j[0] is train_engine)} training utterances read by "
              f"{heard} and {sum(1 for j in jobs if j[0] is valid_engine)} validation ones read by flite "
              f"({', '.join(valid_voices)}) in {args.out_dir}")


if __name__ == "__main__":
    main()
