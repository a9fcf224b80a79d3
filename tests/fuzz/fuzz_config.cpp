// The configuration reader (util/config.h) on the real training configuration (train/train_config.h).
// Input: "<YAML file>\n%%\n<override lines, path=value>". Bad YAML, unknown keys and bad values get
// mixseq::Error; a configuration that reads written back as YAML reads back the same.
#include <string>

#include "fuzz_support.h"
#include "mixseq/train/train_config.h"
#include "mixseq/util/config.h"

using namespace mixseq;
using fuzz::fuzz_check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = fuzz::split_parts(fuzz::as_text(data, size), 2);
  fuzz::expect_clear_errors([&] {
    TrainConfig config;
    read_config_yaml(parts[0], "fuzz.yaml", config.fields());
    if (parts.size() > 1) {
      size_t start = 0;
      while (start <= parts[1].size()) {
        const size_t end = std::min(parts[1].find('\n', start), parts[1].size());
        const std::string line = parts[1].substr(start, end - start);
        const size_t equals = line.find('=');
        if (equals != std::string::npos)
          apply_config_override(line.substr(0, equals), line.substr(equals + 1), config.fields());
        start = end + 1;
      }
    }
    const std::string written = config_to_yaml(config.fields());
    TrainConfig again;
    read_config_yaml(written, "written.yaml", again.fields());
    fuzz_check(config_to_yaml(again.fields()) == written, "a written configuration reads back the same");
  });
  fuzz::expect_clear_errors([&] {
    ModelConfig model;
    read_config_yaml_sections(parts[0], "fuzz.yaml", [&](ConfigVisitor& v) { v.section("model", model); });
  });
  return 0;
}
