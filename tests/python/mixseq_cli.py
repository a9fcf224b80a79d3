"""The mixseq program for the Python module's tests: MIXSEQ (set by CTest) and run(), which runs it
and raises with its output when it fails."""
import os
import subprocess

MIXSEQ = os.environ["MIXSEQ"]


def run(*args, **kwargs):
    return subprocess.run([MIXSEQ, *args], check=True, capture_output=True, text=True, **kwargs)
