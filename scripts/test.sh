#!/usr/bin/env bash
# Builds what changed and runs the whole test suite (the README's second command).
#   scripts/test.sh                # all tests
#   scripts/test.sh -L unit        # extra arguments go to ctest, e.g. one label
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
cmake --build "$build_dir"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" "$@"
