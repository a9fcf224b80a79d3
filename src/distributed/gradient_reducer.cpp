#include "mixseq/distributed/gradient_reducer.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <optional>

#include "mixseq/util/error.h"

namespace mixseq {

struct GradientReducer::Bucket {
  std::vector<size_t> parameters;  // indices into parameters_
  std::vector<int64_t> offsets;    // of each parameter in `flat`
  at::Tensor flat;                 // [numel] the gradients, contiguous, reduced in place
  int64_t pending = 0;             // gradients not yet ready in this backward
  std::optional<PendingCollective> reduction;
};

GradientReducer::GradientReducer(std::vector<at::Tensor> parameters, ProcessGroup& group,
                                 const GradientReducerOptions& options)
    : parameters_(std::move(parameters)), group_(group), options_(options), bucket_of_(parameters_.size()) {
  MIXSEQ_CHECK(!parameters_.empty(), "gradient reducer: no parameters");
  MIXSEQ_CHECK(options_.bucket_cap_mb > 0, "distributed.bucket_cap_mb (", options_.bucket_cap_mb,
               ") must be positive");
  const auto device = parameters_.front().device();
  const auto dtype = parameters_.front().scalar_type();
  for (const auto& parameter : parameters_) {
    MIXSEQ_CHECK(parameter.device() == device && parameter.scalar_type() == dtype,
                 "gradient reducer: parameters on different devices or dtypes (", parameter.device(), " ",
                 parameter.scalar_type(), " vs ", device, " ", dtype, ")");
    group_.broadcast(parameter.detach(), 0);
  }

  // Reverse registration order: the output layers' gradients come first in backward.
  const auto cap_bytes = static_cast<int64_t>(options_.bucket_cap_mb * 1024 * 1024);
  const auto element_bytes = static_cast<int64_t>(parameters_.front().element_size());
  int64_t bucket_bytes = 0;
  for (size_t i = parameters_.size(); i-- > 0;) {
    if (buckets_.empty() || bucket_bytes >= cap_bytes) {
      buckets_.push_back(std::make_unique<Bucket>());
      bucket_bytes = 0;
    }
    auto& bucket = *buckets_.back();
    bucket.offsets.push_back(bucket_bytes / element_bytes);
    bucket.parameters.push_back(i);
    bucket_of_[i] = buckets_.size() - 1;
    bucket_bytes += parameters_[i].numel() * element_bytes;
  }
  for (auto& bucket : buckets_) {
    const auto& last = parameters_[bucket->parameters.back()];
    bucket->flat = at::zeros({bucket->offsets.back() + last.numel()}, last.options());
  }

  for (size_t i = 0; i < parameters_.size(); ++i) {
    auto accumulator = torch::autograd::impl::grad_accumulator(parameters_[i]);
    MIXSEQ_CHECK(accumulator != nullptr, "gradient reducer: parameter ", i, " does not require a gradient");
    accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [this, i](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
          gradient_ready(i);
          return outputs;
        }));
    accumulators_.push_back(std::move(accumulator));
  }
}

GradientReducer::~GradientReducer() = default;

int64_t GradientReducer::bucket_count() const { return static_cast<int64_t>(buckets_.size()); }

void GradientReducer::arm() {
  armed_ = true;
  stats_ = ReductionStats{};
  stats_.buckets = bucket_count();
  pending_gradients_ = static_cast<int64_t>(parameters_.size());
  for (auto& bucket : buckets_) {
    bucket->pending = static_cast<int64_t>(bucket->parameters.size());
    bucket->reduction.reset();
  }
}

void GradientReducer::gradient_ready(size_t parameter) {
  if (!armed_) return;  // an earlier micro-batch of the update: gradients only accumulate
  --pending_gradients_;
  auto& bucket = *buckets_[bucket_of_[parameter]];
  if (--bucket.pending == 0 && options_.overlap) start(bucket, /*from_hook=*/true);
}

void GradientReducer::start(Bucket& bucket, bool from_hook) {
  for (size_t k = 0; k < bucket.parameters.size(); ++k) {
    const auto& parameter = parameters_[bucket.parameters[k]];
    auto slot = bucket.flat.narrow(0, bucket.offsets[k], parameter.numel());
    const auto& grad = parameter.grad();
    if (grad.defined())
      slot.copy_(grad.reshape(-1));
    else
      slot.zero_();  // this rank's batch did not reach the parameter; others' may have
  }
  if (stats_.started_during_backward == 0 && from_hook) stats_.gradients_pending_at_first_start = pending_gradients_;
  if (from_hook) ++stats_.started_during_backward;
  stats_.bytes += bucket.flat.numel() * static_cast<int64_t>(bucket.flat.element_size());
  bucket.reduction.emplace(group_.all_reduce_sum_async(bucket.flat));
}

void GradientReducer::finish() {
  MIXSEQ_CHECK(armed_, "gradient reducer: finish() without arm()");
  armed_ = false;
  for (auto& bucket : buckets_)
    if (!bucket->reduction) start(*bucket, /*from_hook=*/false);
  const auto waiting = std::chrono::steady_clock::now();
  for (auto& bucket : buckets_) {
    bucket->reduction->wait();
    bucket->reduction.reset();
    for (size_t k = 0; k < bucket->parameters.size(); ++k) {
      auto& parameter = parameters_[bucket->parameters[k]];
      const auto summed = bucket->flat.narrow(0, bucket->offsets[k], parameter.numel()).view(parameter.sizes());
      if (parameter.grad().defined())
        parameter.mutable_grad().copy_(summed);
      else
        parameter.mutable_grad() = summed.clone();
    }
  }
  stats_.wait_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - waiting).count();
}

}  // namespace mixseq
