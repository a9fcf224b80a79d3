#include "text/sentencepiece_module.h"

#include <dlfcn.h>

#include <cstdlib>

#include "mixseq/util/error.h"

namespace mixseq::sentencepiece_module {
namespace {

std::string module_path() {
  if (const char* path = std::getenv("MIXSEQ_SENTENCEPIECE_MODULE")) return path;
  return MIXSEQ_SENTENCEPIECE_MODULE_PATH;  // set by src/CMakeLists.txt
}

const Functions& open_module() {
  const std::string path = module_path();
  // RTLD_LOCAL | RTLD_DEEPBIND: see the header; the handle stays open for the process.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  MIXSEQ_CHECK(handle != nullptr, "cannot open mixseq's SentencePiece module '", path, "': ", dlerror(),
               "; rebuild mixseq (target mixseq_sentencepiece) or point $MIXSEQ_SENTENCEPIECE_MODULE at "
               "libmixseq_sentencepiece.so");
  using Entry = const Functions* (*)();
  const auto entry = reinterpret_cast<Entry>(dlsym(handle, "mixseq_sentencepiece_module_functions"));
  MIXSEQ_CHECK(entry != nullptr, "'", path, "' is not mixseq's SentencePiece module: ", dlerror());
  const Functions* functions = entry();
  MIXSEQ_CHECK(functions->interface_version == kInterfaceVersion, "SentencePiece module '", path,
               "' has interface version ", functions->interface_version, ", this mixseq needs ", kInterfaceVersion,
               "; rebuild both from the same sources");
  return *functions;
}

}  // namespace

const Functions& functions() {
  static const Functions& loaded = open_module();
  return loaded;
}

}  // namespace mixseq::sentencepiece_module
