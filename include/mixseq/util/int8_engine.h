// Which of LibTorch's quantized CPU engines runs mixseq's int8 layers. The choice is global in
// LibTorch (at::globalContext().setQEngine) and fixes the kernels a weight is packed for.
//
// Preference (docs/quantization.md has the measurements, bench/int8_linear_bench.cpp makes them):
// oneDNN, then FBGEMM (not in Debian's LibTorch 1.13, so unmeasured here). QNNPACK, the only
// other engine of that LibTorch, is left out: written for ARM, its int8 linear ran 3-4x slower
// than fp32 at the beam-search shapes of the GNMT and Transformer benches on this x86 CPU.
#pragma once

#include <c10/core/QEngine.h>

#include <vector>

namespace mixseq {

// The preferred engine among `supported` (what at::globalContext().supportedQEngines() lists).
// Throws mixseq::Error listing the engines there are when none of them can run int8.
at::QEngine choose_int8_engine(const std::vector<at::QEngine>& supported);

// Whether this LibTorch has an engine that choose_int8_engine would take.
bool int8_engine_available();

// Selects choose_int8_engine's choice for this LibTorch (idempotent) and returns its name
// ("ONEDNN", "FBGEMM").
const char* use_int8_engine();

}  // namespace mixseq
