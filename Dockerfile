# mixseq on Debian 12: installs the Debian packages, builds, installs under /usr/local and runs the
# demo (the README's first command) by default.
#   docker build -t mixseq .
#   docker run --rm mixseq                                   # the demo: train, translate, score
#   docker run --rm -v "$PWD/runs:/work/runs" mixseq train \
#     -c /usr/local/share/mixseq/configs/gnmt_tiny.yaml ...   # any other command; runs/ kept on the host
FROM debian:12
WORKDIR /src
COPY . .
# The image needs the command, not the tests and benchmarks: they are left out of its build.
RUN MIXSEQ_CMAKE_ARGS="-DMIXSEQ_BUILD_TESTS=OFF -DMIXSEQ_BUILD_BENCHMARKS=OFF" BUILD_DIR=/tmp/build scripts/setup.sh \
    && cmake --install /tmp/build --prefix /usr/local \
    && rm -rf /tmp/build /root/.cache/ccache
WORKDIR /work
ENTRYPOINT ["mixseq"]
CMD ["demo"]
