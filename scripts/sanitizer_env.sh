# Sourced by scripts/sanitize.sh and scripts/fuzz.sh: the one clang build with ASan + UBSan and
# libFuzzer's instrumentation that both use (docs/reliability.md), and the sanitizer settings.
# Defines sanitize_build_dir and configure_sanitize_build; exports ASAN_OPTIONS, UBSAN_OPTIONS.

sanitize_build_dir="${SANITIZE_BUILD_DIR:-build-sanitize}"

configure_sanitize_build() {
  # -O1 keeps the sanitizers' reports exact and the build quick; line tables give file:line in reports.
  cmake -S . -B "$sanitize_build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DMIXSEQ_BUILD_FUZZERS=ON -DMIXSEQ_BUILD_BENCHMARKS=OFF --log-level=WARNING
}

# abort_on_error: a report ends the process with SIGABRT, which CTest and libFuzzer count as a failure.
# allocator_may_return_null: a huge allocation (a corrupt size field) throws std::bad_alloc as in a
# normal build, instead of ASan's report. LibTorch, OpenBLAS and the other installed libraries are
# not instrumented, so ASan sees only their calls to malloc and free; the one leak of LibTorch's that
# LeakSanitizer reports is suppressed, with the proof, in scripts/lsan_suppressions.txt.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:allocator_may_return_null=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan_suppressions.txt}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
