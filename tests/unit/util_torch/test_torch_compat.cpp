// The wrappers of util/torch_compat.h that are chosen by what LibTorch offers rather than by its
// version: each is checked here with stand-ins for both kinds of LibTorch, so that the branch the
// GPU machine's PyTorch 2.x takes runs on the CPU machine's 1.13 too.
#include "util/torch_compat.h"

#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>

#include <stdexcept>

namespace mixseq {
namespace {

struct GroupWithShutdown {  // c10d::ProcessGroupNCCL in PyTorch 2.x
  int shutdowns = 0;
  void shutdown() { ++shutdowns; }
};

struct GroupWhoseShutdownThrows {
  void shutdown() { throw std::runtime_error("communicator already aborted"); }
};

struct GroupWithoutShutdown {};  // LibTorch 1.13's

TEST(TorchCompat, ShutDownCallsShutdownWhereTheGroupHasOne) {
  GroupWithShutdown group;
  compat::shut_down(group);
  EXPECT_EQ(group.shutdowns, 1);
  GroupWhoseShutdownThrows throwing;
  EXPECT_NO_THROW(compat::shut_down(throwing));
  GroupWithoutShutdown none;
  compat::shut_down(none);  // compiles, does nothing
  static_assert(compat::detail::has_shutdown<GroupWithShutdown>::value);
  static_assert(!compat::detail::has_shutdown<GroupWithoutShutdown>::value);
}

// A load that does what PyTorch 2.x's torch::optim::serialize does: the saved options replace the
// built ones (`current_options = saved_options`).
TEST(TorchCompat, KeepingParamGroupOptionsUndoesALoadThatOverwritesThem) {
  torch::nn::Linear model(3, 2);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(5e-4).betas({0.8, 0.9}).amsgrad(true));
  const torch::optim::AdamOptions saved = torch::optim::AdamOptions(1e-3).betas({0.9, 0.98}).weight_decay(0.1);
  bool loaded = false;
  compat::keeping_param_group_options(optimizer, [&] {
    static_cast<torch::optim::AdamOptions&>(optimizer.param_groups()[0].options()) = saved;
    loaded = true;
  });
  EXPECT_TRUE(loaded);
  const auto& options = static_cast<const torch::optim::AdamOptions&>(optimizer.param_groups()[0].options());
  EXPECT_EQ(options.lr(), 5e-4);
  EXPECT_EQ(options.betas(), std::make_tuple(0.8, 0.9));
  EXPECT_EQ(options.weight_decay(), 0.0);
  EXPECT_TRUE(options.amsgrad());
}

}  // namespace
}  // namespace mixseq
