#include "mixseq/util/file_bytes.h"

#include <fstream>
#include <iterator>

#include "mixseq/util/error.h"
#include "mixseq/util/output_file.h"

namespace mixseq {

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  MIXSEQ_CHECK(in.is_open(), "cannot open '", path, "'");
  std::string bytes(std::istreambuf_iterator<char>(in), {});
  MIXSEQ_CHECK(!in.bad(), "cannot read '", path, "'");
  return bytes;
}

void write_file_bytes(const std::string& path, const std::string& bytes) {
  OutputFile out(path);
  out.stream() << bytes;
  out.commit();
}

}  // namespace mixseq
