#include "text/sentencepiece_module.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include "mixseq/util/error.h"

// AddressSanitizer: gcc defines __SANITIZE_ADDRESS__, clang answers __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define MIXSEQ_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MIXSEQ_ADDRESS_SANITIZER 1
#endif
#endif

namespace mixseq::sentencepiece_module {
namespace {

// Globals of libstdc++ and libc that libsentencepiece uses and a program may hold a copy of.
struct SharedGlobal {
  const char* symbol;
  const char* name;
};
constexpr SharedGlobal kSharedGlobals[] = {{"_ZSt4cerr", "std::cerr"},
                                           {"_ZSt4cout", "std::cout"},
                                           {"_ZSt4clog", "std::clog"},
                                           {"_ZSt3cin", "std::cin"},
                                           {"__libc_single_threaded", "__libc_single_threaded"}};

// Each global must be one object for the program and the module: the program's copy (a copy
// relocation, from code compiled -fPIE) is the one libstdc++ constructs and libc updates, while
// the module, bound with RTLD_DEEPBIND, would use the library's original (see the header).
void check_one_copy_of_shared_globals(void* handle, const std::string& path) {
  for (const auto& global : kSharedGlobals) {
    void* in_module = dlsym(handle, global.symbol);
    void* in_program = dlsym(RTLD_DEFAULT, global.symbol);
    MIXSEQ_CHECK(in_module == nullptr || in_program == nullptr || in_module == in_program,
                 "this program holds its own copy of ", global.name, " (a copy relocation: some of its code was ",
                 "compiled -fPIE), which SentencePiece's module '", path, "' would not see, and it would crash; ",
                 "compile the program with -fPIC, as mixseq's CMakeLists.txt does");
  }
}

// The module lies in lib/mixseq/, beside libmixseq.so in lib/ and the program's bin/ folder, in the
// build tree as where it is installed (CMakeLists.txt), so it is found wherever the folders were put.
// Code in libmixseq.so (the mixseq program, a program or Python module built on the installed
// library) looks beside the library; code linked statically (test_text) beside the program.
std::string module_path() {
  if (const char* path = std::getenv("MIXSEQ_SENTENCEPIECE_MODULE")) return path;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&module_path), &info) != 0 && info.dli_fname != nullptr) {
    const std::filesystem::path object = info.dli_fname;
    if (object.filename().string().rfind("libmixseq.so", 0) == 0)  // libmixseq.so.<version>
      return (object.parent_path() / "mixseq" / "libmixseq_sentencepiece.so").string();
  }
  std::error_code error;
  const auto program = std::filesystem::read_symlink("/proc/self/exe", error);
  MIXSEQ_CHECK(!error, "cannot find mixseq's SentencePiece module: /proc/self/exe does not name this program (",
               error.message(), "); point $MIXSEQ_SENTENCEPIECE_MODULE at libmixseq_sentencepiece.so");
  return (program.parent_path().parent_path() / "lib" / "mixseq" / "libmixseq_sentencepiece.so").string();
}

const Functions& open_module() {
  const std::string path = module_path();
  MIXSEQ_CHECK(unavailable_reason().empty(), "cannot open mixseq's SentencePiece module '", path, "': ",
               unavailable_reason());
  // RTLD_LOCAL | RTLD_DEEPBIND: see the header; the handle stays open for the process.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  MIXSEQ_CHECK(handle != nullptr, "cannot open mixseq's SentencePiece module '", path, "': ", dlerror(),
               "; it belongs at lib/mixseq/ beside the program's bin/ folder (rebuild or reinstall mixseq), "
               "or point $MIXSEQ_SENTENCEPIECE_MODULE at libmixseq_sentencepiece.so");
  check_one_copy_of_shared_globals(handle, path);
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

std::string_view unavailable_reason() {
#ifdef MIXSEQ_ADDRESS_SANITIZER
  return "this is an AddressSanitizer build (MIXSEQ_SANITIZE), and ASan refuses the RTLD_DEEPBIND dlopen that "
         "isolates libsentencepiece's protobuf from LibTorch's; use a normal build for SentencePiece";
#else
  return "";
#endif
}

const Functions& functions() {
  static const Functions& loaded = open_module();
  return loaded;
}

}  // namespace mixseq::sentencepiece_module
