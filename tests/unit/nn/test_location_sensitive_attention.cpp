#include "mixseq/nn/location_sensitive_attention.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

namespace mixseq {
namespace {

// Small sizes: Q 2, E 2, A 2, K 2 filters of kernel 3, S 4 source positions, B 2 (the second of
// length 3). Every weight is set to known values; the energies, softmax and context are then
// computed by hand with loops over plain numbers and compared.
TEST(LocationSensitiveAttention, StepEqualsAHandComputedCase) {
  LocationSensitiveAttentionOptions o;
  o.query_dim = 2;
  o.memory_dim = 2;
  o.attention_dim = 2;
  o.location_filters = 2;
  o.location_kernel = 3;
  LocationSensitiveAttention attention(o);
  const double Wq[2][2] = {{0.5, -0.25}, {0.1, 0.3}};       // [A, Q]
  const double Wm[2][2] = {{0.2, 0.4}, {-0.3, 0.6}};        // [A, E]
  const double v[2] = {0.7, -1.1};                          // [1, A]
  double Wc[2][2][3];                                       // [K, 2, kernel]
  for (int k = 0; k < 2; ++k)
    for (int c = 0; c < 2; ++c)
      for (int j = 0; j < 3; ++j) Wc[k][c][j] = 0.1 * (k + 1) - 0.05 * c + 0.03 * j;
  const double Wd[2][2] = {{0.9, -0.2}, {0.4, 0.8}};        // [A, K]
  {
    torch::NoGradGuard no_grad;
    const auto set = [](torch::Tensor& p, std::vector<double> values) {
      p.copy_(torch::tensor(values, torch::kDouble).view(p.sizes()).to(torch::kFloat));
    };
    set(attention->query_layer->weight, {Wq[0][0], Wq[0][1], Wq[1][0], Wq[1][1]});
    set(attention->memory_layer->weight, {Wm[0][0], Wm[0][1], Wm[1][0], Wm[1][1]});
    set(attention->v->weight, {v[0], v[1]});
    std::vector<double> conv;
    for (auto& k : Wc)
      for (auto& c : k)
        for (double w : c) conv.push_back(w);
    set(attention->location_conv->weight, conv);
    set(attention->location_dense->weight, {Wd[0][0], Wd[0][1], Wd[1][0], Wd[1][1]});
  }
  const int B = 2, S = 4;
  const double q[B][2] = {{1.0, -2.0}, {0.5, 0.25}};
  double h[B][S][2], prev[B][S], cum[B][S];
  for (int b = 0; b < B; ++b)
    for (int s = 0; s < S; ++s) {
      h[b][s][0] = 0.3 * s - 0.2 * b;
      h[b][s][1] = -0.1 * s + 0.5 * b + 0.2;
      prev[b][s] = s == b + 1 ? 0.6 : 0.4 / 3.0;
      cum[b][s] = 0.25 * (s + 1) + b;
    }
  const int lengths[B] = {4, 3};

  std::vector<double> q_v, h_v, cat_v;
  for (auto& row : q) q_v.insert(q_v.end(), row, row + 2);
  for (auto& b : h)
    for (auto& s : b) h_v.insert(h_v.end(), s, s + 2);
  for (int b = 0; b < B; ++b) {
    cat_v.insert(cat_v.end(), prev[b], prev[b] + S);
    cat_v.insert(cat_v.end(), cum[b], cum[b] + S);
  }
  const auto query = torch::tensor(q_v).view({B, 2}).to(torch::kFloat);
  const auto memory = torch::tensor(h_v).view({B, S, 2}).to(torch::kFloat);
  const auto weights_cat = torch::tensor(cat_v).view({B, 2, S}).to(torch::kFloat);
  const auto pad_mask = torch::tensor(std::vector<int64_t>{0, 0, 0, 0, 0, 0, 0, 1}).view({B, S}).to(torch::kBool);
  const auto processed = attention->process_memory(memory);
  const auto [context, weights] = attention->forward(query, memory, processed, weights_cat, pad_mask);

  for (int b = 0; b < B; ++b) {
    double e[S];
    for (int s = 0; s < S; ++s) {
      double f[2];  // location features: conv of [prev; cum] with zero padding 1
      for (int k = 0; k < 2; ++k) {
        f[k] = 0;
        for (int j = 0; j < 3; ++j) {
          const int at = s + j - 1;
          if (at < 0 || at >= S) continue;
          f[k] += Wc[k][0][j] * prev[b][at] + Wc[k][1][j] * cum[b][at];
        }
      }
      e[s] = 0;
      for (int a = 0; a < 2; ++a) {
        const double pq = Wq[a][0] * q[b][0] + Wq[a][1] * q[b][1];
        const double pm = Wm[a][0] * h[b][s][0] + Wm[a][1] * h[b][s][1];
        const double loc = Wd[a][0] * f[0] + Wd[a][1] * f[1];
        e[s] += v[a] * std::tanh(pq + pm + loc);
      }
    }
    double z = 0, a[S];
    for (int s = 0; s < lengths[b]; ++s) z += std::exp(e[s]);
    double c[2] = {0, 0};
    for (int s = 0; s < S; ++s) {
      a[s] = s < lengths[b] ? std::exp(e[s]) / z : 0.0;
      c[0] += a[s] * h[b][s][0];
      c[1] += a[s] * h[b][s][1];
      EXPECT_NEAR(weights[b][s].item<double>(), a[s], 1e-6) << "b " << b << " s " << s;
    }
    EXPECT_NEAR(context[b][0].item<double>(), c[0], 1e-6);
    EXPECT_NEAR(context[b][1].item<double>(), c[1], 1e-6);
    // The energies themselves, before masking.
    const auto energies = attention->energies(query, processed, weights_cat);
    for (int s = 0; s < S; ++s) EXPECT_NEAR(energies[b][s].item<double>(), e[s], 1e-6);
  }
  EXPECT_EQ(weights[1][3].item<float>(), 0.0f);  // masked past the length
}

}  // namespace
}  // namespace mixseq
