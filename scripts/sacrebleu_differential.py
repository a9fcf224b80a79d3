#!/usr/bin/env python3
# Differential check of `mixseq bleu` / `mixseq chrf` against sacreBLEU's own command line on random
# corpora (empty lines in hypotheses and references, 1-3 references, punctuation, numbers,
# non-ASCII and CJK text), over tokenizers, smoothing, lowercasing, chrF/chrF++ options, sentence
# level and several metrics at once. Prints every difference, signature versions aside.
# sacreBLEU is not a mixseq dependency: point PYTHON at an interpreter that imports it, e.g. a
# checkout of mjpost/sacrebleu on PYTHONPATH (with a version.py) and Debian's python3-regex,
# python3-portalocker, python3-tabulate, python3-colorama, python3-lxml, python3-numpy.
#   PYTHONPATH=~/sacrebleu PYTHON=/usr/bin/python3 scripts/sacrebleu_differential.py build/bin/mixseq 50
import os, random, re, subprocess, sys, tempfile
mixseq, trials = sys.argv[1], int(sys.argv[2])
python = os.environ.get("PYTHON", "python3")
words = ["the", "The", "cat", "sat", "on", "mat", "Ünïcode", "ßtraße", "1,000.50", "3.5%", "-", "a", "dog",
         "runs", "(approx.)", "\"quoted\"", "it's", "don't", "--", "...", "日本語", "テスト", "€", "&amp;", "x"]
def sentence(rng):
    if rng.random() < 0.12: return ""
    s = " ".join(rng.choice(words) for _ in range(rng.randint(1, 14)))
    if rng.random() < 0.5: s += rng.choice([".", "!", "?", " ."])
    return s
configs = ["", "-tok intl", "-tok char", "-tok none", "-lc", "-s floor", "-s add-k -sv 2", "-s none", "-sl",
           "-m chrf", "-m chrf -cw 2", "-m chrf --chrf-eps-smoothing", "-m chrf --chrf-whitespace",
           "-m chrf --chrf-lowercase", "-m chrf -cc 4 -cw 1", "-m chrf -cw 2 -sl", "-m bleu chrf -f text -w 4",
           "-m bleu chrf -b"]
diffs = runs = 0
for trial in range(trials):
    rng = random.Random(trial)
    n, refs = rng.randint(1, 12), rng.randint(1, 3)
    d = tempfile.mkdtemp()
    hyp = [sentence(rng) for _ in range(n)]
    open(f"{d}/hyp", "w").write("\n".join(hyp) + "\n")
    for r in range(refs):
        open(f"{d}/ref{r}", "w").write("\n".join(sentence(rng) for _ in range(n)) + "\n")
    ref_files = [f"{d}/ref{r}" for r in range(refs)]
    for config in configs:
        args = ref_files + ["-i", f"{d}/hyp"] + config.split()
        a = subprocess.run([python, "-m", "sacrebleu"] + args, capture_output=True, text=True)
        b = subprocess.run([mixseq, "bleu"] + args, capture_output=True, text=True)
        norm = lambda s: re.sub(r'"version": "[^"]*"', '"version": "X"', re.sub(r"(version|v):[0-9a-z.+\-]+", r"\1:X", s))
        runs += 1
        if a.returncode != 0 or b.returncode != 0:
            if (a.returncode == 0) != (b.returncode == 0):
                diffs += 1
                print(f"EXIT trial {trial} [{config}]: sacrebleu {a.returncode} {a.stderr.strip()[-200:]} | mixseq {b.returncode} {b.stderr.strip()[-200:]}")
            continue
        if norm(a.stdout) != norm(b.stdout):
            diffs += 1
            print(f"DIFF trial {trial} [{config}] in {d}:\n  sacrebleu: {norm(a.stdout)[:300]}\n  mixseq:    {norm(b.stdout)[:300]}")
print(f"{runs} runs, {diffs} differences")
