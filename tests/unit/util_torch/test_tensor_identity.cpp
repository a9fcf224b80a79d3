// TensorIdentity (util/tensor_identity.h): the same tensor, unwritten, matches; a write through it
// or a view of it, another tensor with the same values, another view of the same storage, and an
// undefined tensor do not.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "mixseq/util/tensor_identity.h"

namespace mixseq {
namespace {

TEST(TensorIdentity, MatchesTheSameTensorUntilItIsWritten) {
  auto weight = torch::arange(12, torch::kFloat).reshape({3, 4});
  const TensorIdentity identity(weight);
  EXPECT_TRUE(identity.matches(weight));
  EXPECT_TRUE(identity.matches(weight.view({3, 4})));  // another handle on the same elements
  weight.add_(1.0);
  EXPECT_FALSE(identity.matches(weight));
  EXPECT_TRUE(TensorIdentity(weight).matches(weight));
}

TEST(TensorIdentity, SeesAWriteThroughAView) {
  auto weight = torch::zeros({4, 4});
  const TensorIdentity identity(weight);
  weight.select(0, 2).fill_(3.0);
  EXPECT_FALSE(identity.matches(weight));
}

TEST(TensorIdentity, TellsOtherTensorsAndOtherViewsApart) {
  const auto weight = torch::arange(16, torch::kFloat).reshape({4, 4});
  const TensorIdentity identity(weight);
  EXPECT_FALSE(identity.matches(weight.clone()));               // equal values, other memory
  EXPECT_FALSE(identity.matches(weight.t()));                   // the same memory read otherwise
  EXPECT_FALSE(identity.matches(weight.narrow(0, 1, 3)));       // another place in the storage
  EXPECT_FALSE(identity.matches(weight.reshape({2, 8})));       // other sizes
  EXPECT_FALSE(identity.matches(torch::Tensor()));
  // The same sizes and strides and the same storage, at another offset in it.
  const TensorIdentity top(weight.narrow(0, 0, 2));
  EXPECT_TRUE(top.matches(weight.narrow(0, 0, 2)));
  EXPECT_FALSE(top.matches(weight.narrow(0, 2, 2)));
}

TEST(TensorIdentity, TheDefaultAndAnUndefinedTensorMatchNothing) {
  const auto weight = torch::ones({2, 2});
  EXPECT_FALSE(TensorIdentity().matches(weight));
  EXPECT_FALSE(TensorIdentity(torch::Tensor()).matches(weight));
  EXPECT_FALSE(TensorIdentity().matches(torch::Tensor()));
}

}  // namespace
}  // namespace mixseq
