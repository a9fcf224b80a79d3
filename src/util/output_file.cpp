#include "mixseq/util/output_file.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "mixseq/util/error.h"

namespace mixseq {

OutputFile::OutputFile(const std::string& path) : path_(path) {
  if (path == "-") {
    out_ = &std::cout;
    return;
  }
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  temporary_path_ = path + ".tmp";
  file_ = std::make_unique<std::ofstream>(temporary_path_, std::ios::binary | std::ios::trunc);
  MIXSEQ_CHECK(file_->is_open(), "cannot open '", temporary_path_, "' for writing");
  out_ = file_.get();
}

OutputFile::~OutputFile() {
  if (file_ && !committed_) {
    file_->close();
    std::remove(temporary_path_.c_str());
  }
}

void OutputFile::commit() {
  out_->flush();
  MIXSEQ_CHECK(out_->good(), "write error on '", path_, "' (disk full?)");
  if (file_) {
    file_->close();
    MIXSEQ_CHECK(!file_->fail(), "write error on '", path_, "' (disk full?)");
    std::filesystem::rename(temporary_path_, path_);
  }
  committed_ = true;
}

}  // namespace mixseq
