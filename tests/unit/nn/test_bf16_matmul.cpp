// bf16_matmul_into against LibTorch's fp32 product of the same bf16 values: strided rows,
// transposed views, accumulating or replacing, and that it leaves the rest of c alone.
#include "mixseq/nn/bf16_matmul.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>
#include <tuple>
#include <vector>

#include "mixseq/util/threads.h"

namespace mixseq {
namespace {

at::Tensor random_bf16(at::IntArrayRef sizes) { return at::randn(sizes).to(at::kBFloat16); }

// fp32 sums of the same bf16 products; the order of the sums may differ.
void expect_near_product(const at::Tensor& c, const at::Tensor& expected, const char* what) {
  EXPECT_TRUE(at::allclose(c, expected, /*rtol=*/1e-5, /*atol=*/1e-4)) << what << ": " << (c - expected).abs().max();
}

TEST(Bf16Matmul, CallsOneDnnDirectlyWhereLibTorchLoadedLibdnnl) {
  const bool loaded = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_NOLOAD) || dlopen("libdnnl.so.3", RTLD_NOW | RTLD_NOLOAD);
  if (!loaded) GTEST_SKIP() << "this LibTorch does not link libdnnl dynamically";
  EXPECT_TRUE(bf16_matmul_is_direct());
}

TEST(Bf16Matmul, EqualsTheFp32ProductOfTheBf16Values) {
  at::manual_seed(1);
  // M 32 x K 256 x N 1024: a GNMT step at the bench shape; the others odd sizes.
  for (const auto& [M, K, N] : {std::tuple{32, 256, 1024}, std::tuple{5, 7, 3}, std::tuple{1, 33, 17}}) {
    const auto a = random_bf16({M, K}), b = random_bf16({K, N});
    const auto expected = at::mm(a.to(at::kFloat), b.to(at::kFloat));
    auto c = at::full({M, N}, 7.0f);
    bf16_matmul_into(a, b, c, /*accumulate=*/false);
    expect_near_product(c, expected, "replacing");
    bf16_matmul_into(a, b, c, /*accumulate=*/true);
    expect_near_product(c, 2 * expected, "accumulating");
  }
}

TEST(Bf16Matmul, ReadsStridedRowsAndTransposedViewsAndWritesOneStepOfABiggerTensor) {
  at::manual_seed(2);
  const int64_t B = 6, T = 4, K = 40, N = 24;
  const auto steps = random_bf16({B, T, K});  // a = step 2 of every sentence: rows T * K apart
  const auto weight = random_bf16({N, K});    // b = weightᵀ, a transposed view
  const auto a = steps.select(1, 2), b = weight.t();
  const auto expected = at::mm(a.to(at::kFloat), b.to(at::kFloat));

  auto gates = at::randn({B, T, N});
  const auto before = gates.clone();
  auto step = gates.select(1, 2);  // [B, N], rows T * N apart
  bf16_matmul_into(a, b, step, /*accumulate=*/true);
  expect_near_product(gates.select(1, 2), before.select(1, 2) + expected, "strided");
  for (const int64_t t : {0, 1, 3}) EXPECT_TRUE(at::equal(gates.select(1, t), before.select(1, t))) << t;

  // A transposed a: the weight gradients' dgatesᵀ x.
  const auto dgates = random_bf16({K, B});
  auto c = at::empty({B, N});
  bf16_matmul_into(dgates.t(), b, c, /*accumulate=*/false);
  expect_near_product(c, at::mm(dgates.t().to(at::kFloat), b.to(at::kFloat)), "transposed a");
}

TEST(Bf16Matmul, RejectsOtherDtypesAndShapes) {
  auto c = at::empty({2, 3});
  EXPECT_ANY_THROW(bf16_matmul_into(at::randn({2, 4}), random_bf16({4, 3}), c, false));
  EXPECT_ANY_THROW(bf16_matmul_into(random_bf16({2, 4}), random_bf16({5, 3}), c, false));
  auto c_bf16 = at::empty({2, 3}, at::kBFloat16);
  EXPECT_ANY_THROW(bf16_matmul_into(random_bf16({2, 4}), random_bf16({4, 3}), c_bf16, false));
}

// float_matmul_into (oneDNN's sgemm where the process has it) against at::mm: a strided step of a
// [B, T, ·] tensor into a strided step, transposed views, accumulating and not.
TEST(FloatMatmul, EqualsAtMmForStepsAndTransposedViews) {
  at::manual_seed(4);
  const int64_t B = 6, T = 4, K = 40, N = 24;
  const auto steps = at::randn({B, T, K});
  const auto weight = at::randn({N, K});
  const auto a = steps.select(1, 2), b = weight.t();
  auto gates = at::randn({B, T, N});
  const auto before = gates.clone();
  auto step = gates.select(1, 2);
  float_matmul_into(a, b, step, /*accumulate=*/true);
  EXPECT_TRUE(at::allclose(gates.select(1, 2), before.select(1, 2) + at::mm(a, b), 1e-5, 1e-5));
  for (const int64_t t : {0, 1, 3}) EXPECT_TRUE(at::equal(gates.select(1, t), before.select(1, t))) << t;
  auto c = at::full({B, N}, 7.0f);
  float_matmul_into(a, b, c, /*accumulate=*/false);
  EXPECT_TRUE(at::allclose(c, at::mm(a, b), 1e-5, 1e-5));
  const auto transposed_a = at::randn({K, B});
  float_matmul_into(transposed_a.t(), b, c, /*accumulate=*/false);
  EXPECT_TRUE(at::allclose(c, at::mm(transposed_a.t(), b), 1e-5, 1e-5));
  EXPECT_ANY_THROW(float_matmul_into(random_bf16({B, K}), b, c, false));
}

// float_matmul: the same values as at::matmul, and a differentiable result where autograd records.
TEST(FloatMatmul, FallsBackToAtMatmulWhereAGradientIsRecorded) {
  at::manual_seed(5);
  const auto a = at::randn({35, 20}), w = at::randn({100, 20});
  EXPECT_TRUE(at::allclose(float_matmul(a, w.t()), at::matmul(a, w.t()), 1e-5, 1e-5));
  const auto trained = w.clone().requires_grad_();
  const auto y = float_matmul(a, trained.t());
  ASSERT_TRUE(y.requires_grad());
  y.sum().backward();
  EXPECT_TRUE(at::allclose(trained.grad(), a.sum(0).expand({100, 20}), 1e-4, 1e-4));
}

std::atomic<int> handled_terminations{0};
extern "C" void count_termination(int) { handled_terminations.fetch_add(1); }

// Debian's oneDNN sgemm corrupts the heap when a signal handler runs on a thread inside it
// (nn/bf16_matmul.cpp, StopSignalsHeld): under a stream of SIGTERMs with a handler, as a training
// run that a user stops, the products must keep their values and the process its heap. Without
// the signals held back this loop aborted ("corrupted size vs. prev_size", as a stopped training
// run did in 5 of 12 tries).
TEST(FloatMatmul, SurvivesStopSignalsWithAHandler) {
  if (!float_matmul_is_direct()) GTEST_SKIP() << "oneDNN's sgemm is not called directly in this process";
  at::manual_seed(6);
  struct Case {
    at::Tensor a, b, expected;
  };
  std::vector<Case> cases;
  for (const auto& [m, k, n] : {std::tuple{700, 256, 80}, std::tuple{80, 300, 256}, std::tuple{512, 64, 256},
                                std::tuple{256, 700, 64}, std::tuple{300, 80, 80}}) {
    const auto a = at::randn({m, k}), b = at::randn({n, k}).t();
    cases.push_back({a, b, at::mm(a, b)});
  }
  set_intra_op_threads(at::get_num_threads());  // as mixseq's commands start: the pool's workers hold them back too
  const auto previous = std::signal(SIGTERM, count_termination);
  std::atomic<bool> done{false};
  std::thread sender([&] {
    while (!done) {
      kill(getpid(), SIGTERM);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  handled_terminations = 0;
  bool equal = true;
  for (int i = 0; i < 3000 && equal; ++i) {
    auto& c = cases[i % cases.size()];
    auto out = at::empty_like(c.expected);
    float_matmul_into(c.a, c.b, out, /*accumulate=*/false);
    equal = at::allclose(out, c.expected, 1e-4, 1e-3);
  }
  done = true;
  sender.join();
  std::signal(SIGTERM, previous);
  EXPECT_TRUE(equal);
  EXPECT_GT(handled_terminations.load(), 100) << "the signals should reach the handler between products";
}

}  // namespace
}  // namespace mixseq
