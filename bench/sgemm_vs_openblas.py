"""oneDNN's sgemm against OpenBLAS's, at the fp32 products of a Transformer training step at the
bench shape (992 positions a side, d_model 256, ffn 1024, vocabulary 2000: each layer's forward,
input-gradient and weight-gradient products) and at 1024^3: the question behind
nn/cpu_float_linear.h, whether sending fp32 products to oneDNN pays on this CPU. A last line adds
the products up as one training step has them (3 encoder layers of 4 attention projections and
the feed-forward's two, 3 decoder layers of 8 and two, the output layer once): the time a step
cannot go under at these rates, whatever else it does; the per-head attention products (0.8 GFLOP
a step) are left out. Both libraries
are called through ctypes on the same arrays, row-major, at the threads the environment gives
them (OMP_NUM_THREADS for oneDNN, OPENBLAS_NUM_THREADS for OpenBLAS); OpenBLAS's kernels are
those it picks or OPENBLAS_CORETYPE names (check the printed core: on CPUs newer than it, Debian's
OpenBLAS 0.3.21 falls back to Prescott's). Prints one JSON line per product, best of 5 timings
of 10 calls each.
    OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 OPENBLAS_CORETYPE=Cooperlake /usr/bin/python3 bench/sgemm_vs_openblas.py
Needs Debian's python3-numpy, libdnnl2 and libopenblas0 (scripts/setup.sh installs the libraries).
"""
import ctypes
import json
import time

import numpy as np

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112

POSITIONS = 992  # 32 sentences of 31 tokens
# (layer, outputs, inputs): a linear layer's weight is [outputs, inputs].
LAYERS = [("attention projection", 256, 256), ("ffn in", 1024, 256), ("ffn out", 256, 1024),
          ("output layer", 2000, 256)]
# How many of each layer a training step at the bench shape runs: 3 encoder layers (q, k, v and
# output projections) and 3 decoder layers (self and cross attention: 8 projections), each with
# the feed-forward's two linears; one output layer (the shared embedding's product).
STEP_COUNT = {"attention projection": 3 * 4 + 3 * 8, "ffn in": 6, "ffn out": 6, "output layer": 1}


def products():
    """(name, M, N, K, A transposed, B transposed) for C[M, N] = op(A) op(B): each layer's
    forward x Wᵀ, input gradient dy W and weight gradient dyᵀ x, then 1024^3."""
    for layer, outputs, inputs in LAYERS:
        yield f"{layer}, forward", POSITIONS, outputs, inputs, False, True
        yield f"{layer}, input gradient", POSITIONS, inputs, outputs, False, False
        yield f"{layer}, weight gradient", outputs, inputs, POSITIONS, True, False
    yield "square 1024", 1024, 1024, 1024, False, False


def load():
    dnnl = ctypes.CDLL("libdnnl.so.2")
    i64, f32, ptr = ctypes.c_int64, ctypes.c_float, ctypes.c_void_p
    dnnl.dnnl_sgemm.argtypes = [ctypes.c_char, ctypes.c_char, i64, i64, i64, f32, ptr, i64, ptr, i64, f32, ptr, i64]
    blas = ctypes.CDLL("libopenblas.so.0")
    i32 = ctypes.c_int
    blas.cblas_sgemm.argtypes = [i32, i32, i32, i32, i32, i32, f32, ptr, i32, ptr, i32, f32, ptr, i32]
    blas.openblas_get_corename.restype = ctypes.c_char_p
    return dnnl, blas


def best_seconds(call):
    for _ in range(3):
        call()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(10):
            call()
        best = min(best, (time.perf_counter() - start) / 10)
    return best


def main():
    dnnl, blas = load()
    core = blas.openblas_get_corename().decode()
    rng = np.random.default_rng(0)
    step = {"onednn_ms": 0.0, "openblas_ms": 0.0, "gflop": 0.0}
    for name, m, n, k, a_t, b_t in products():
        a = rng.random((k, m) if a_t else (m, k), dtype=np.float32)
        b = rng.random((n, k) if b_t else (k, n), dtype=np.float32)
        c_dnnl = np.zeros((m, n), np.float32)
        c_blas = np.zeros((m, n), np.float32)
        lda, ldb = a.shape[1], b.shape[1]
        ta, tb = (b"T" if a_t else b"N"), (b"T" if b_t else b"N")

        def onednn():
            dnnl.dnnl_sgemm(ta, tb, m, n, k, 1.0, a.ctypes.data, lda, b.ctypes.data, ldb, 0.0, c_dnnl.ctypes.data, n)

        def openblas():
            blas.cblas_sgemm(ROW_MAJOR, TRANS if a_t else NO_TRANS, TRANS if b_t else NO_TRANS, m, n, k, 1.0,
                             a.ctypes.data, lda, b.ctypes.data, ldb, 0.0, c_blas.ctypes.data, n)

        onednn_s, openblas_s = best_seconds(onednn), best_seconds(openblas)
        # The two must compute the same product: a check that the calls above are right.
        assert np.allclose(c_dnnl, c_blas, rtol=1e-4, atol=1e-3 * k), name
        gflop = 2 * m * n * k / 1e9
        print(json.dumps({"product": name, "m": m, "n": n, "k": k, "openblas_core": core,
                          "onednn_ms": round(onednn_s * 1e3, 3), "openblas_ms": round(openblas_s * 1e3, 3),
                          "onednn_gflop_per_s": round(gflop / onednn_s, 1),
                          "openblas_gflop_per_s": round(gflop / openblas_s, 1),
                          "openblas_over_onednn": round(openblas_s / onednn_s, 3)}))
        count = STEP_COUNT.get(name.split(",")[0], 0)
        step["onednn_ms"] += count * onednn_s * 1e3
        step["openblas_ms"] += count * openblas_s * 1e3
        step["gflop"] += count * gflop
    print(json.dumps({"product": "training step's products", "openblas_core": core,
                      "gflop": round(step["gflop"], 2), "onednn_ms": round(step["onednn_ms"], 1),
                      "openblas_ms": round(step["openblas_ms"], 1)}))


if __name__ == "__main__":
    main()
