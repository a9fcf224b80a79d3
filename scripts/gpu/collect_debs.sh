#!/usr/bin/env bash
# Run on a Debian 12 machine with package access: downloads the .deb files of mixseq's build
# dependencies (all but LibTorch, which the GPU machine's PyTorch provides) into .gpu-debs/,
# for scripts/gpu/build_and_test.sh on a GPU machine that has no package registry.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .gpu-debs
grep -qx '/.gpu-debs/' .git/info/exclude 2>/dev/null || echo '/.gpu-debs/' >> .git/info/exclude
cd .gpu-debs
apt-get download \
  libcli11-dev nlohmann-json3-dev \
  libyaml-cpp-dev libyaml-cpp0.7 \
  libsentencepiece-dev libsentencepiece0 libprotobuf-lite32 \
  libicu-dev libicu72 \
  libgtest-dev \
  libsndfile1-dev libsndfile1 libflac-dev libflac12 libogg-dev libogg0 libvorbis-dev libvorbis0a \
  libvorbisenc2 libvorbisfile3 libopus-dev libopus0 libmpg123-dev libmpg123-0 libmp3lame0 \
  libsoxr-dev libsoxr0 libsoxr-lsr0 \
  libcpp-httplib-dev libcpp-httplib0.11 libssl-dev libssl3 zlib1g-dev zlib1g libbrotli-dev libbrotli1
ls -l
