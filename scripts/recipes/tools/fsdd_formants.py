#!/usr/bin/env python3
"""The first two formants (F1, F2) of the vowel of each FSDD take, median per speaker and digit:
how each speaker pronounces a digit's vowel, to see why a held-out speaker's word is taken for
another (docs/benchmarks.md, "Where george's errors are").

  fsdd_formants.py RECORDINGS_DIR [--digits 2,4] [--speakers george,jackson,...]
  fsdd_formants.py --files A.wav B.wav ...     (each file's own F1 and F2: e.g. espeak-ng's "two")

Per take: the voiced part is where the 10 ms moving average of |x| is above 0.3 of its peak; at
its middle, 30 ms (240 samples at 8 kHz) are pre-emphasised (0.63), Hamming-windowed and fitted
with a 10th-order LPC (autocorrelation, Levinson-Durbin); the formants are the angles of the
polynomial's roots above 200 Hz with a bandwidth under 400 Hz, lowest first. Other rates than
8 kHz are interpolated to 8 kHz first (espeak-ng's 22,050 Hz files, for comparison). Needs numpy
(Debian: python3-numpy).
"""
import argparse
import collections
import os
import re
import sys
import wave

try:
    import numpy as np
except ImportError:
    sys.exit("fsdd_formants.py needs numpy (Debian: apt-get install python3-numpy)")

RATE = 8000


def read(path):
    with wave.open(path) as w:
        rate = w.getframerate()
        x = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(float)
    if rate != RATE:
        t = np.arange(0, len(x) / rate, 1 / RATE)
        x = np.interp(t, np.arange(len(x)) / rate, x)
    return x


def lpc(segment, order):
    r = np.correlate(segment, segment, "full")[len(segment) - 1:len(segment) + order + 1]
    a, error = np.zeros(order + 1), r[0]
    a[0] = 1.0
    for i in range(1, order + 1):
        k = -(r[i] + np.dot(a[1:i], r[i - 1:0:-1])) / error
        previous = a.copy()
        for j in range(1, i):
            a[j] = previous[j] + k * previous[i - j]
        a[i] = k
        error *= 1 - k * k
    return a


def formants(path, order=10):
    x = read(path)
    envelope = np.convolve(np.abs(x), np.ones(80) / 80, "same")
    voiced = np.where(envelope > 0.3 * envelope.max())[0]
    if len(voiced) < 240:
        return None
    middle = (voiced[0] + voiced[-1]) // 2
    segment = x[max(0, middle - 120):middle + 120]
    segment = np.append(segment[0], segment[1:] - 0.63 * segment[:-1]) * np.hamming(len(segment))
    roots = [z for z in np.roots(lpc(segment, order)) if np.imag(z) > 0]
    found = sorted((np.angle(z) * RATE / (2 * np.pi), -np.log(abs(z)) * RATE / np.pi) for z in roots)
    found = [f for f, bandwidth in found if f > 200 and bandwidth < 400]
    return found[:2] if len(found) >= 2 else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("recordings", nargs="?")
    ap.add_argument("--files", nargs="+", default=[], help="measure these WAV files, one line each")
    ap.add_argument("--digits", default="2,4")
    ap.add_argument("--speakers", default="", help="comma-separated; default: every speaker found")
    args = ap.parse_args()
    if args.files:
        print("file\tF1 (Hz)\tF2 (Hz)")
        for path in args.files:
            found = formants(path)
            print(f"{path}\t" + ("\t".join(f"{f:.0f}" for f in found) if found else "no vowel found"))
        return
    if not args.recordings:
        ap.error("RECORDINGS_DIR or --files is needed")
    digits = {int(d) for d in args.digits.split(",")}
    wanted = {s for s in args.speakers.split(",") if s}
    takes = collections.defaultdict(list)
    for name in sorted(os.listdir(args.recordings)):
        m = re.fullmatch(r"(\d)_([a-z]+)_(\d+)\.wav", name)
        if m and int(m.group(1)) in digits and (not wanted or m.group(2) in wanted):
            takes[(m.group(2), int(m.group(1)))].append(os.path.join(args.recordings, name))
    if not takes:
        sys.exit(f"no takes of digits {args.digits} in {args.recordings}")
    print("speaker\tdigit\ttakes\tF1 (Hz, median)\tF2 (Hz, median)")
    for (speaker, digit), paths in sorted(takes.items()):
        found = [f for f in (formants(p) for p in paths) if f is not None]
        if found:
            f1, f2 = np.median(np.array(found), axis=0)
            print(f"{speaker}\t{digit}\t{len(found)}\t{f1:.0f}\t{f2:.0f}")


if __name__ == "__main__":
    main()
