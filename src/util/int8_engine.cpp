#include "mixseq/util/int8_engine.h"

#include <ATen/Context.h>

#include <algorithm>
#include <string>

#include "mixseq/util/error.h"

namespace mixseq {

at::QEngine choose_int8_engine(const std::vector<at::QEngine>& supported) {
  for (const auto engine : {at::QEngine::ONEDNN, at::QEngine::FBGEMM})
    if (std::find(supported.begin(), supported.end(), engine) != supported.end()) return engine;
  std::string names;
  for (const auto engine : supported) names += (names.empty() ? "" : ", ") + c10::toString(engine);
  throw Error(str_cat("int8 execution needs LibTorch's ONEDNN or FBGEMM quantized engine; this LibTorch has ",
                      names.empty() ? "none" : names,
                      " here. Run the model in float, or quantized in simulation (mode: simulated)"));
}

const char* use_int8_engine() {
  const auto engine = choose_int8_engine(at::globalContext().supportedQEngines());
  if (at::globalContext().qEngine() != engine) at::globalContext().setQEngine(engine);
  return engine == at::QEngine::ONEDNN ? "ONEDNN" : "FBGEMM";
}

}  // namespace mixseq
