"""Drives `mixseq translate` through a pipe that stays open, as a person typing would: it writes
one line, waits (at most 30 s) for its translation, and only then writes the next; stdin is
closed at the end. A translate that reads all of stdin before writing would never answer.
    interactive_translate.py <mixseq> <checkpoint> <source file>   (prints one translation a line)
"""
import select
import subprocess
import sys

mixseq, checkpoint, source = sys.argv[1:4]
process = subprocess.Popen([mixseq, "--threads", "1", "translate", "-c", checkpoint, "--device", "cpu"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
for number, line in enumerate(open(source, encoding="utf-8"), 1):
    process.stdin.write(line.encode("utf-8"))
    process.stdin.flush()
    ready, _, _ = select.select([process.stdout], [], [], 30)
    if not ready:
        process.kill()
        sys.exit(f"FAIL: no translation of line {number} within 30 s while stdin stayed open")
    sys.stdout.write(process.stdout.readline().decode("utf-8"))
process.stdin.close()
sys.exit(process.wait())
