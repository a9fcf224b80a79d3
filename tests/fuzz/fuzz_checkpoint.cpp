// The checkpoint reader (models/checkpoint.h) on a file holding the input, loaded into the tiny
// model of checkpoint_seed_model.h. A truncated, corrupt, foreign or mismatched checkpoint gets
// mixseq::Error naming the file, never a LibTorch trace or a crash.
#include <string>

#include "checkpoint_seed_model.h"
#include "fuzz_support.h"
#include "mixseq/models/checkpoint.h"

using namespace mixseq;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_scratch_file("checkpoint.pt", fuzz::as_text(data, size));
  fuzz::expect_clear_errors([&] { read_checkpoint_contents(path); });
  fuzz::expect_clear_errors([&] {
    auto model = fuzz::make_seed_model();
    load_model_weights(path, *model);
  });
  fuzz::expect_clear_errors([&] {
    if (!has_optimizer_state(path)) return;
    auto model = fuzz::make_seed_model();
    auto optimizer = fuzz::make_seed_optimizer(model);
    load_optimizer_state(path, optimizer);
  });
  return 0;
}
