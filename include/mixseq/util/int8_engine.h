// Which of LibTorch's quantized CPU engines runs mixseq's int8 layers. The choice is global in
// LibTorch (at::globalContext().setQEngine) and fixes the kernels a weight is packed for.
//
// Preference (docs/quantization.md has the measurements): oneDNN, then FBGEMM. QNNPACK, the
// only other engine of Debian's LibTorch 1.13, is left out: built for ARM, it ran 5-6x slower
// than fp32 at the GNMT and Transformer bench shapes here.
#pragma once

namespace mixseq {

// Selects the engine (idempotent) and returns its name ("ONEDNN", "FBGEMM"). Throws
// mixseq::Error listing the engines this LibTorch has when none of them can run int8 here.
const char* use_int8_engine();

}  // namespace mixseq
