#!/usr/bin/env bash
# Fuzzes every libFuzzer target of tests/fuzz for a while (docs/reliability.md, "Fuzzing"), in the
# sanitizer build of scripts/sanitize.sh (./build-sanitize, clang with ASan + UBSan).
#   scripts/fuzz.sh               # 600 s per target
#   scripts/fuzz.sh 20            # 20 s per target (CI)
#   scripts/fuzz.sh 300 bpe_apply config   # only these targets
# Each target starts from its seeds in tests/fuzz/corpus/<name>/ (never written to) and keeps what
# it finds in build-sanitize/fuzz/<name>/: the grown corpus, the log, and any crash-*, timeout-*
# or oom-* input. Exits 1 when a target found something. To keep a finding as a seed (after fixing
# it), minimize it into the repository's corpus:
#   build-sanitize/bin/fuzz_<name> -merge=1 tests/fuzz/corpus/<name> <crash file>
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/sanitizer_env.sh

seconds="${1:-600}"
shift $(($# > 0 ? 1 : 0))
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(utf8 sacrebleu_tokenizer scoring bpe_learn bpe_apply vocabulary config token_dataset prepared_data
           checkpoint)
fi

configure_sanitize_build
cmake --build "$sanitize_build_dir" --target "${targets[@]/#/fuzz_}"

failed=()
for name in "${targets[@]}"; do
  work="$sanitize_build_dir/fuzz/$name"
  mkdir -p "$work/corpus" "$work/tmp"
  rm -f "$work"/crash-* "$work"/timeout-* "$work"/oom-* "$work"/leak-*
  echo "fuzz_$name: ${seconds} s (log: $work/log)"
  # -timeout: an input that takes 30 s is a hang; the targets write their files under $TMPDIR.
  if ! TMPDIR="$PWD/$work/tmp" "$sanitize_build_dir/bin/fuzz_$name" -max_total_time="$seconds" \
      -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$work/" \
      "$work/corpus" "tests/fuzz/corpus/$name" >"$work/log" 2>&1; then
    failed+=("$name")
    grep -E "ERROR|SUMMARY|fuzz property failed|terminate called|what\(\)" "$work/log" | head -n 20 || true
    ls "$work"/crash-* "$work"/timeout-* "$work"/oom-* "$work"/leak-* 2>/dev/null || true
  fi
  grep -E "^stat::number_of_executed_units|^INFO: .*corpus" "$work/log" | tail -n 2 || true
done

((${#failed[@]} == 0)) || echo "fuzz findings in: ${failed[*]} (inputs and logs under $sanitize_build_dir/fuzz/)"
echo "fuzzed ${#targets[@]} targets for ${seconds} s each"
echo "fuzz: $((${#targets[@]} - ${#failed[@]})) passed, ${#failed[@]} failed"
((${#failed[@]} == 0))
