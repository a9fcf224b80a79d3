#include "mixseq/util/int8_engine.h"

#include <ATen/Context.h>

#include <algorithm>
#include <iterator>
#include <string>

#include "mixseq/util/error.h"

namespace mixseq {

namespace {

constexpr at::QEngine kPreferredEngines[] = {at::QEngine::ONEDNN, at::QEngine::FBGEMM};

bool contains(const std::vector<at::QEngine>& engines, at::QEngine engine) {
  return std::find(engines.begin(), engines.end(), engine) != engines.end();
}

}  // namespace

bool int8_engine_available() {
  const auto& supported = at::globalContext().supportedQEngines();
  return std::any_of(std::begin(kPreferredEngines), std::end(kPreferredEngines),
                     [&](at::QEngine engine) { return contains(supported, engine); });
}

at::QEngine choose_int8_engine(const std::vector<at::QEngine>& supported) {
  for (const auto engine : kPreferredEngines)
    if (contains(supported, engine)) return engine;
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
