#!/usr/bin/env bash
# Builds mixseq with AddressSanitizer + UndefinedBehaviorSanitizer (clang, in ./build-sanitize, the
# build that scripts/fuzz.sh fuzzes in) and runs the unit tests and the fuzz seeds there; any
# sanitizer report fails the test that triggered it (docs/reliability.md, "Sanitizers").
#   scripts/sanitize.sh              # labels unit and fuzz
#   scripts/sanitize.sh -R test_text # extra arguments go to ctest instead of the labels
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/sanitizer_env.sh

configure_sanitize_build
# The unit suites and the fuzz targets only: the CLI and the e2e tests are not run here.
cmake --build "$sanitize_build_dir" --target unit_tests fuzzers
args=("$@")
((${#args[@]})) || args=(-L "unit|fuzz")
ctest --test-dir "$sanitize_build_dir" --output-on-failure -j "$(nproc)" "${args[@]}"
