#include "mixseq/util/int8_engine.h"

#include <ATen/Context.h>

#include <algorithm>
#include <string>

#include "mixseq/util/error.h"

namespace mixseq {

const char* use_int8_engine() {
  const auto& supported = at::globalContext().supportedQEngines();
  const auto has = [&](at::QEngine engine) {
    return std::find(supported.begin(), supported.end(), engine) != supported.end();
  };
  for (const auto engine : {at::QEngine::ONEDNN, at::QEngine::FBGEMM}) {
    if (!has(engine)) continue;
    if (at::globalContext().qEngine() != engine) at::globalContext().setQEngine(engine);
    return engine == at::QEngine::ONEDNN ? "ONEDNN" : "FBGEMM";
  }
  std::string names;
  for (const auto engine : supported) names += (names.empty() ? "" : ", ") + c10::toString(engine);
  throw Error(str_cat("int8 execution needs LibTorch's ONEDNN or FBGEMM quantized engine; this LibTorch has ",
                      names.empty() ? "none" : names,
                      " here. Run the model in float, or quantized in simulation (mode: simulated)"));
}

}  // namespace mixseq
