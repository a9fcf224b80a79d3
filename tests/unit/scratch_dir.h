// ScratchDir: a fresh folder under the system's temporary directory for one test, removed with
// everything in it when the test ends, so that tests make their own small files.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace mixseq::test {

class ScratchDir {
 public:
  ScratchDir() {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string name = test ? std::string(test->test_suite_name()) + "." + test->name() : "mixseq";
    path_ = std::filesystem::temp_directory_path() / ("mixseq-" + name + "-" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // "<dir>/<name>" as a string.
  std::string path(const std::string& name) const { return (path_ / name).string(); }

  // Writes `content` byte for byte to <dir>/<name> and returns its path.
  std::string write(const std::string& name, const std::string& content) const {
    const std::string file = path(name);
    std::ofstream(file, std::ios::binary) << content;
    return file;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace mixseq::test
