#!/usr/bin/env bash
# The Python module's overhead (issue 28's goal: within 5% of the command's sentences/s): the same
# sentences translated by `mixseq translate` (its logged sentences/s: translation time only, the
# checkpoint's loading excluded) and by mixseq.Translator.translate_batch in one call (timed the
# same way), alternated ROUNDS times at each thread count. Prints one line per run and the medians.
#   bench/python_overhead.sh [CHECKPOINT] [SOURCES] [ROUNDS] [THREADS...]
#   defaults: runs/demo/checkpoint_best.pt runs/demo/raw/test.en 5 1 0
# Needs the build tree's module (build/python) and program (build/bin/mixseq).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
checkpoint=${1:-runs/demo/checkpoint_best.pt}
sources=${2:-runs/demo/raw/test.en}
rounds=${3:-5}
shift $(( $# < 3 ? $# : 3 ))
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=(1 0)
mixseq=$root/build/bin/mixseq
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs); load $(cut -d' ' -f1-3 /proc/loadavg)"
for t in "${threads[@]}"; do
  cli=() py=()
  for ((r = 1; r <= rounds; r++)); do
    c=$("$mixseq" --threads "$t" translate -c "$checkpoint" -i "$sources" -o /dev/null 2>&1 |
        sed -n 's/.* s of translation: \([0-9.]*\) sentences\/s.*/\1/p')
    p=$(PYTHONPATH=$root/build/python /usr/bin/python3 - "$checkpoint" "$sources" "$t" <<'PY'
import sys, time
import mixseq
checkpoint, sources, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = open(sources, encoding="utf-8").read().splitlines()
translator = mixseq.Translator(checkpoint, threads=threads)
start = time.perf_counter()
translator.translate_batch(lines)
print(f"{len(lines) / (time.perf_counter() - start):.1f}")
PY
)
    echo "threads $t round $r: mixseq translate $c sentences/s, Python translate_batch $p sentences/s"
    cli+=("$c") py+=("$p")
  done
  median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
  mc=$(median "${cli[@]}") mp=$(median "${py[@]}")
  echo "threads $t medians: mixseq translate $mc, Python $mp sentences/s: Python/command $(awk -v a="$mp" -v b="$mc" 'BEGIN { printf "%.3f", a / b }')"
done
