// Programs that link libmixseq call libstdc++'s own std::filesystem functions, not the copies that
// PyTorch 2.x's LibTorch exports (pytorch/pytorch#133437; src/CMakeLists.txt orders the libraries).
// On the GPU machine remove_all bound to libtorch.so's copy and jumped to address 0.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <system_error>

namespace {

TEST(StandardLibrary, FilesystemCallsReachLibstdcxxNotLibTorchsCopies) {
  void* libstdcxx = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD);
  if (libstdcxx == nullptr) GTEST_SKIP() << "libstdc++.so.6 is not loaded (linked statically?)";
  using RemoveAll = std::uintmax_t (*)(const std::filesystem::path&, std::error_code&);
  using CreateDirectories = bool (*)(const std::filesystem::path&, std::error_code&);
  using TempDirectoryPath = std::filesystem::path (*)(std::error_code&);
  const RemoveAll remove_all = &std::filesystem::remove_all;
  const CreateDirectories create_directories = &std::filesystem::create_directories;
  const TempDirectoryPath temp_directory_path = &std::filesystem::temp_directory_path;
  const struct {
    const char* symbol;
    void* bound;
  } calls[] = {
      {"_ZNSt10filesystem10remove_allERKNS_7__cxx114pathERSt10error_code", reinterpret_cast<void*>(remove_all)},
      {"_ZNSt10filesystem18create_directoriesERKNS_7__cxx114pathERSt10error_code",
       reinterpret_cast<void*>(create_directories)},
      {"_ZNSt10filesystem19temp_directory_pathB5cxx11ERSt10error_code", reinterpret_cast<void*>(temp_directory_path)},
  };
  for (const auto& call : calls) {
    void* own = dlsym(libstdcxx, call.symbol);
    ASSERT_NE(own, nullptr) << call.symbol << " is not in libstdc++.so.6";
    Dl_info bound_to{};
    ASSERT_NE(dladdr(call.bound, &bound_to), 0);
    EXPECT_EQ(call.bound, own) << call.symbol << " is bound to " << bound_to.dli_fname << ", not libstdc++.so.6";
  }
  dlclose(libstdcxx);
}

}  // namespace
