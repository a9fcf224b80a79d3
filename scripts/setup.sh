#!/usr/bin/env bash
# Installs the Debian 12 packages mixseq needs, then configures and builds it in ./build.
# Safe to run again: installed packages are kept, and the build only redoes what changed.
#   scripts/setup.sh            # packages + Release build with tests and benchmarks
#   BUILD_DIR=out scripts/setup.sh
#   MIXSEQ_CMAKE_ARGS="-DMIXSEQ_BUILD_TESTS=OFF" scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  g++ cmake ninja-build pkg-config ccache   # toolchain; ccache speeds up rebuilds
  libtorch-dev libgloo-dev                  # LibTorch 1.13 (CPU) with c10d's Gloo headers
  libopenblas-dev libopenblas0-openmp       # BLAS for LibTorch; the OpenMP build shares LibTorch's thread pool
  libsentencepiece-dev libicu-dev           # SentencePiece; Unicode classes for sacreBLEU's intl tokenizer
  libcli11-dev nlohmann-json3-dev libyaml-cpp-dev
  zlib1g-dev                                # CRC-32: checkpoints' zip entries are verified before LibTorch reads them
  libcpp-httplib-dev                        # mixseq serve: Debian's HTTP/1.1 server library (cpp-httplib 0.11)
  libsndfile1-dev libsoxr-dev               # audio/: reading WAV, FLAC, OGG/Vorbis files; resampling them
  espeak-ng sctk                            # speech tests: espeak-ng synthesizes their speech, sctk's sclite checks WER
  irstlm                                    # writes ARPA word n-gram models for CTC beam search (speech tests, docs/speech.md)
  flite                                     # spoken_captions.sh: validation voices of another engine; fsdd_digits.sh: training voices
  pocketsphinx pocketsphinx-en-us pocketsphinx-testdata  # scripts/recipes/librivox_clips.sh: real read speech and its baseline
  libgtest-dev python3                      # the end-to-end tests parse JSON and make test input with python3
  pybind11-dev python3-dev python3-pytest    # the Python module (python/, docs/python.md) and its tests
  chromium chromium-driver                  # e2e_serve_page: mixseq serve's page in a headless browser
  clang libclang-rt-14-dev llvm-14          # scripts/sanitize.sh, scripts/fuzz.sh: ASan, UBSan, libFuzzer, symbolizer
)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if ((${#missing[@]})); then
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

build_dir="${BUILD_DIR:-build}"
# A unity build: CMake compiles the sources of each target in batches of 8, one compiler run per
# batch, so that LibTorch's headers and templates are processed once per batch rather than per file.
# A clean build takes about a third of the time on 2 cores (docs/reliability.md, "Build time"); an
# edit recompiles its batch. MIXSEQ_UNITY_BUILD=OFF builds file by file, as development trees do.
# MIXSEQ_CMAKE_ARGS: more CMake options, e.g. "-DMIXSEQ_BUILD_TESTS=OFF" (the Dockerfile).
# shellcheck disable=SC2086
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD="${MIXSEQ_UNITY_BUILD:-ON}" \
  ${MIXSEQ_CMAKE_ARGS:-}
cmake --build "$build_dir"

# `import mixseq` in Debian's python3 without PYTHONPATH (docs/python.md): a .pth file in its site
# directory names this build's module folder, as `pip install -e` would (the tree set up last wins;
# PYTHONPATH still comes first).
if [ -d "$build_dir/python" ]; then
  site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
  $sudo mkdir -p "$site"
  (cd "$build_dir/python" && pwd) | $sudo tee "$site/mixseq.pth" >/dev/null
fi
