#!/usr/bin/env python3
"""The built-in speech task of the tests and `demo --task speech`: spoken digit strings ("three one
four") synthesised with Debian's espeak-ng in several voices (variants), speaking rates and pitches, so
that no downloaded data is needed.

  spoken_numbers.py OUT_DIR [--train N] [--valid N] [--seed S] [--max-digits K] [--voice V]
                    [--flite VOICE,...] [--voices default|wide] [--pronunciations voice|accents]
                    [--jobs N] [--list-voices] [--list-pronunciations]

writes OUT_DIR/audio/*.wav (22.05 kHz, espeak-ng's rate) and the manifests OUT_DIR/train.tsv and
OUT_DIR/valid.tsv (`audio<TAB>transcript`, paths relative to the manifest; written last, after every
file), running --jobs synthesisers at once (default: one per CPU; the files are the same). The validation
utterances use voices not heard in training, so the validation WER measures generalisation to a new
voice, not memorisation. With --voice, every utterance of both splits is that one voice at one rate
and pitch: data for speech synthesis, which learns one voice. With --flite (e.g. awb,rms,slt,kal16),
Debian's flite voices read training utterances too, each utterance's voice drawn evenly from the
espeak-ng voices and these, flite's at random durations and (where the voice follows it) pitches:
more kinds of voice than one engine has. With --voices wide, each espeak-ng training utterance is
read by one of espeak-ng's eight English accents with one of 30 voice variants (or none) drawn at
random (m2-m8, f1-f5, the Klatt synthesiser's klatt-klatt5, croak and twelve named ones; m1 and
klatt6 sound as none and klatt), less the three validation voices: 245 where the default has 8,
with flite's share (--flite) as by default. --list-voices prints the espeak-ng
voices, `split<TAB>voice` a line, and writes nothing.

With --pronunciations accents, each digit word an espeak-ng voice reads in training is, with equal
chance, the voice's own pronunciation or one of the other pronunciations English accents give it
(ACCENT_PRONUNCIATIONS: espeak-ng phonemes, read by that voice): a back [u] in "two" (Caribbean,
Irish, Indian English, where espeak-ng's accents but en-029 front it), "three" with [t] or [f]
(TH-stopping, TH-fronting), monophthongs for the diphthongs of "eight", "five", "nine" and "zero"
(Scottish, Caribbean, Southern US), the diphthongs [VI] and [OI] (Scottish and Canadian raising,
London and Australia), "one" with [U] (Northern England), "six" with [i:] or [@] (New Zealand),
"seven" with [I] (the Southern US pin-pen merger), "four" rhotic or not. A voice's accent table
still shapes each phoneme. The draws have their own random stream, so the transcripts, voices,
rates and pitches are those of --pronunciations voice (the default); flite's share and the
validation voices keep their own pronunciations. --list-pronunciations prints them,
`word<TAB>phonemes` a line, and writes nothing.
"""
import argparse
import concurrent.futures
import os
import random
import subprocess
import sys

WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
TRAIN_VOICES = ["en-us", "en-gb", "en-us+m3", "en+f2", "en-us+f3", "en-gb-x-rp", "en-us+m7", "en-gb-scotland+f4"]
VALID_VOICES = ["en-us+f1", "en+m2", "en-gb-x-gbclan"]
# British English with a variant is "en+f2", not "en-gb+f2": espeak-ng 1.51 drops the variant of the
# latter and reads plain "en-gb" (until 2026-12-03 one validation voice, "en-gb+m2", was so a training one).
# --voices wide: every English accent of espeak-ng with every one of these variants (or none).
WIDE_ACCENTS = ["en-us", "en", "en-gb-scotland", "en-gb-x-gbclan", "en-gb-x-rp", "en-gb-x-gbcwmd", "en-029",
                "en-us-nyc"]
WIDE_VARIANTS = ["", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "f1", "f2", "f3", "f4", "f5", "klatt", "klatt2",
                 "klatt3", "klatt4", "klatt5", "croak", "Andy", "Denis", "Gene", "Lee", "Mike", "adam",
                 "anika", "belinda", "benjamin", "grandma", "grandpa", "linda"]
# --pronunciations accents: other accents' pronunciations of each digit word, in espeak-ng's phoneme
# mnemonics (its English tables; `espeak-ng -x` writes a word's own). The first is General American's,
# which the voices' own reading already covers; the others are drawn as often as the voice's own.
ACCENT_PRONUNCIATIONS = {
    "zero": ["z'i@roU", "z'i:ro:", "z'i:roU"],
    "one": ["w'Vn", "w'0n", "w'Un"],
    "two": ["t'u:", "t'u"],
    "three": ["Tr'i:", "tr'i:", "fr'i:"],
    "four": ["f'o@", "f'O@", "f'O:", "f'o@r", "f'o:r"],
    "five": ["f'aIv", "f'A:v", "f'VIv", "f'OIv"],
    "six": ["s'Iks", "s'i:ks", "s'@ks"],
    "seven": ["s'Ev@n", "s'Iv@n", "s'Evn"],
    "eight": ["'eIt", "'e:t", "'aIt"],
    "nine": ["n'aIn", "n'A:n", "n'VIn", "n'OIn"],
}
# flite's voices and the range of mean pitch (Hz) each is read at; rms keeps its own (it ignores it).
FLITE_PITCH = {"awb": (85, 140), "kal": (85, 140), "kal16": (85, 140), "rms": None, "slt": (140, 220)}


def accented(text, rng):
    """The words of `text`, each the voice's own (the word) or another accent's phonemes ([[...]])."""
    words = []
    for word in text.split():
        choice = rng.randrange(len(ACCENT_PRONUNCIATIONS[word]))
        words.append(word if choice == 0 else f"[[{ACCENT_PRONUNCIATIONS[word][choice]}]]")
    return " ".join(words)


def synthesise(path, text, voice, rate, pitch):
    """espeak-ng's command that writes `text` to `path`."""
    return ["espeak-ng", "-v", voice, "-s", str(rate), "-p", str(pitch), "-w", path, text]


def flite(path, text, voice, rng):
    """flite's command that writes `text` to `path`, its duration and pitch drawn from `rng`."""
    command = ["flite", "-voice", voice, "--setf", f"duration_stretch={rng.uniform(0.8, 1.25):.2f}"]
    if FLITE_PITCH[voice]:
        command += ["--setf", f"int_f0_target_mean={rng.randint(*FLITE_PITCH[voice])}"]
    return command + ["-t", text, "-o", path]


def run(job):
    """Runs one synthesiser's (path, command); a failure ends the program with its message and file."""
    path, command = job
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"spoken_numbers.py: {command[0]} failed (exit {done.returncode}) writing {path}: "
                 + (done.stderr.strip() or "no message"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--train", type=int, default=600)
    ap.add_argument("--valid", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-digits", type=int, default=4)
    ap.add_argument("--voice", help="one espeak-ng voice for everything, at rate 160 and pitch 50")
    ap.add_argument("--flite", default="", help="flite voices that read training utterances too (VOICE,...)")
    ap.add_argument("--voices", choices=["default", "wide"], default="default",
                    help="espeak-ng training voices: the default 8, or every accent with every variant")
    ap.add_argument("--pronunciations", choices=["voice", "accents"], default="voice",
                    help="espeak-ng training words: the voice's own pronunciation, or other accents' too")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="synthesisers run at once (default: one per CPU); the files do not depend on it")
    ap.add_argument("--list-voices", action="store_true", help="print the espeak-ng voices of each split and stop")
    ap.add_argument("--list-pronunciations", action="store_true",
                    help="print each word's pronunciations of --pronunciations accents and stop")
    args = ap.parse_args()
    train_voices = TRAIN_VOICES
    if args.voices == "wide":
        train_voices = [a + ("+" + v if v else "") for a in WIDE_ACCENTS for v in WIDE_VARIANTS]
        train_voices = [v for v in train_voices if v not in VALID_VOICES]
    if args.list_voices:
        print("\n".join([f"train\t{v}" for v in train_voices] + [f"valid\t{v}" for v in VALID_VOICES]))
        return
    if args.list_pronunciations:
        print("\n".join(f"{w}\t{p}" for w in WORDS for p in ACCENT_PRONUNCIATIONS[w]))
        return
    flite_voices = [v for v in args.flite.split(",") if v]
    unknown = [v for v in flite_voices if v not in FLITE_PITCH]
    if unknown or (flite_voices and args.voice):
        sys.exit(f"spoken_numbers.py: --flite {args.flite!r}: "
                 + (f"unknown voice(s) {unknown} (known: {sorted(FLITE_PITCH)})" if unknown else "not with --voice"))
    if args.voices != "default" and args.voice:
        sys.exit(f"spoken_numbers.py: --voices {args.voices} is not with --voice (one voice for everything)")
    if args.pronunciations != "voice" and args.voice:
        sys.exit(f"spoken_numbers.py: --pronunciations {args.pronunciations} is not with --voice (one voice for everything)")
    if flite_voices and subprocess.run(["sh", "-c", "command -v flite"], stdout=subprocess.DEVNULL).returncode != 0:
        sys.exit("spoken_numbers.py: --flite needs flite (scripts/setup.sh installs it)")
    if subprocess.run(["sh", "-c", "command -v espeak-ng"], stdout=subprocess.DEVNULL).returncode != 0:
        sys.exit("spoken_numbers.py: espeak-ng is not installed (scripts/setup.sh installs it)")
    if args.jobs < 1:
        sys.exit(f"spoken_numbers.py: --jobs {args.jobs}: at least 1")
    rng = random.Random(args.seed)
    pronunciation_rng = random.Random(f"pronunciations {args.seed}")
    os.makedirs(os.path.join(args.out_dir, "audio"), exist_ok=True)
    jobs = []  # (path, command): every draw is made first, in order, so that --jobs changes no file
    manifests = {}
    for split, count, voices in (("train", args.train, train_voices), ("valid", args.valid, VALID_VOICES)):
        lines = []
        for i in range(count):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, args.max_digits)))
            name = f"audio/{split}{i:05d}.wav"
            path = os.path.join(args.out_dir, name)
            if args.voice:
                jobs.append((path, synthesise(path, text, args.voice, 160, 50)))
            elif (split == "train" and flite_voices
                  and rng.randrange(len(TRAIN_VOICES) + len(flite_voices)) >= len(TRAIN_VOICES)):
                jobs.append((path, flite(path, text, rng.choice(flite_voices), rng)))
            else:
                spoken = text
                if split == "train" and args.pronunciations == "accents":
                    spoken = accented(text, pronunciation_rng)
                jobs.append((path, synthesise(path, spoken, rng.choice(voices), rng.randint(130, 210),
                                              rng.randint(25, 75))))
            lines.append(f"{name}\t{text}\n")
        manifests[split] = lines
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(run, jobs))
    for split, lines in manifests.items():
        with open(os.path.join(args.out_dir, f"{split}.tsv"), "w") as f:
            f.writelines(lines)


if __name__ == "__main__":
    main()
