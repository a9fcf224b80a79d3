"""What the Python module's tests share: the mixseq program (MIXSEQ, set by CTest) and run(), which
runs it and raises with its output when it fails; spoken_digits(), the espeak-ng data of the speech
tests; in_threads(), one call made from several threads at once."""
import os
import pathlib
import shutil
import subprocess
import sys
import threading

import pytest

MIXSEQ = os.environ["MIXSEQ"]
SPOKEN_NUMBERS = pathlib.Path(__file__).resolve().parents[1] / "e2e/tools/spoken_numbers.py"


def run(*args, **kwargs):
    return subprocess.run([MIXSEQ, *args], check=True, capture_output=True, text=True, **kwargs)


def spoken_digits(out_dir, *flags):
    """tests/e2e/tools/spoken_numbers.py's spoken digits in out_dir (train.tsv, valid.tsv, audio/);
    the test is skipped where espeak-ng is not installed."""
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed (scripts/setup.sh installs it)")
    subprocess.run([sys.executable, str(SPOKEN_NUMBERS), str(out_dir), *flags], check=True)


def in_threads(count, call):
    """call() from `count` threads at once; their results in thread order. The first exception a
    thread met is raised here."""
    results, errors = [None] * count, []

    def one(i):
        try:
            results[i] = call()
        except Exception as error:  # raised below, in the calling thread
            errors.append(error)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results
