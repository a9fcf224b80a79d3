// The one place where the LibTorch versions mixseq builds against differ: Debian's 1.13 (CPU)
// and the PyTorch 2.x LibTorch of the GPU machine. Everything else calls these wrappers.
#pragma once

#include <ATen/autocast_mode.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Allocator.h>
#include <torch/version.h>

#if TORCH_VERSION_MAJOR >= 2
#include <ATen/ops/scaled_dot_product_attention.h>
#endif

#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#define MIXSEQ_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace mixseq::compat {

// Autocast became per-device-type in 2.4 (set_autocast_enabled(device, on)); 1.13 has one
// setter per device (set_cpu_enabled, set_enabled for CUDA).
inline void set_autocast(c10::DeviceType device, bool enabled, at::ScalarType dtype) {
#if MIXSEQ_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_enabled(device, enabled);
  at::autocast::set_autocast_dtype(device, dtype);
#else
  if (device == c10::DeviceType::CPU) {
    at::autocast::set_cpu_enabled(enabled);
    at::autocast::set_autocast_cpu_dtype(dtype);
  } else {
    at::autocast::set_enabled(enabled);
    at::autocast::set_autocast_gpu_dtype(dtype);
  }
#endif
}

inline bool is_autocast_enabled(c10::DeviceType device) {
#if MIXSEQ_TORCH_AT_LEAST(2, 4)
  return at::autocast::is_autocast_enabled(device);
#else
  return device == c10::DeviceType::CPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
#endif
}

// The lower precision autocast computes in on `device` (1.13: one getter per device).
inline at::ScalarType autocast_dtype(c10::DeviceType device) {
#if MIXSEQ_TORCH_AT_LEAST(2, 4)
  return at::autocast::get_autocast_dtype(device);
#else
  return device == c10::DeviceType::CPU ? at::autocast::get_autocast_cpu_dtype()
                                        : at::autocast::get_autocast_gpu_dtype();
#endif
}

// at::scaled_dot_product_attention, PyTorch's fused attention (flash / memory-efficient kernels
// on the GPU), came in 2.0; 1.13 has only mixseq's plain path (nn/scaled_dot_product_attention.h).
inline constexpr bool has_fused_attention() { return TORCH_VERSION_MAJOR >= 2; }

// q [B, H, T, Dh], k and v [B, H, S, Dh], keep [B or 1, 1, T or 1, S] bool (true: may attend;
// undefined: all) -> [B, H, T, Dh], softmax(q k^T / sqrt(Dh)) v. Undefined where
// has_fused_attention() is false.
inline at::Tensor fused_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                  const at::Tensor& keep, double dropout_p) {
#if TORCH_VERSION_MAJOR >= 2
  return at::scaled_dot_product_attention(q, k, v, keep.defined() ? c10::optional<at::Tensor>(keep) : c10::nullopt,
                                          dropout_p, /*is_causal=*/false);
#else
  return {};
#endif
}

// The index of StatType::AGGREGATE (all pools together) in the CUDA caching allocator's per-pool
// statistics arrays. The enum moved from c10::cuda::CUDACachingAllocator (1.13) to
// c10::CachingDeviceAllocator (2.x); AGGREGATE is its first value in both.
inline constexpr size_t aggregate_allocator_stat = 0;

// The key of a parameter in torch::optim::Optimizer::state(). LibTorch 1.13 keys that map by the
// text of the parameter's TensorImpl address (c10::guts::to_string, which prints it through an
// ostringstream), PyTorch 2.x by the address itself. Chosen by the map's key type rather than by
// version number, so `optimizer_state_key(state_, p)` is right wherever the change happened.
template <typename StateMap>
typename StateMap::key_type optimizer_state_key(const StateMap& /*state*/, const at::Tensor& parameter) {
  if constexpr (std::is_same_v<typename StateMap::key_type, std::string>) {
    std::ostringstream text;
    text << parameter.unsafeGetTensorImpl();
    return text.str();
  } else {
    return parameter.unsafeGetTensorImpl();
  }
}

// Loading an optimizer's state: LibTorch 1.13 keeps the options its parameter groups were built
// with; later versions copy the saved options over them (torch/optim/serialize.h,
// `current_options = saved_options`), so on the GPU machine a resume silently took the checkpoint's
// betas, weight decay or amsgrad over the run's configuration. `keeping_param_group_options(
// optimizer, load)` runs `load` and gives every group back the options it had before, on both: the
// configuration decides, and the learning rate is the schedule's at every step anyway.
template <typename Optimizer, typename Load>
void keeping_param_group_options(Optimizer& optimizer, Load&& load) {
  std::vector<decltype(optimizer.param_groups()[0].options().clone())> built;
  for (auto& group : optimizer.param_groups()) built.push_back(group.options().clone());
  load();
  for (size_t i = 0; i < built.size(); ++i) optimizer.param_groups()[i].set_options(std::move(built[i]));
}

// PyTorch 2.x's c10d NCCL group wants shutdown() before it is destroyed: without it the
// destructor warns that destroy_process_group() was not called and may leak its communicators
// (seen at the exit of every NCCL run on the GPU machine); 1.13's group has no shutdown(). Chosen
// by whether the member exists, as above. Never throws: it runs from a destructor.
namespace detail {
template <typename Group, typename = void>
struct has_shutdown : std::false_type {};
template <typename Group>
struct has_shutdown<Group, std::void_t<decltype(std::declval<Group&>().shutdown())>> : std::true_type {};
}  // namespace detail

template <typename Group>
void shut_down(Group& group) noexcept {
  if constexpr (detail::has_shutdown<Group>::value) {
    try {
      group.shutdown();
    } catch (...) {  // the program is leaving the group either way
    }
  }
}

// LibTorch's CPU allocator replaced by `allocate` (whose DataPtrs carry their data pointer as
// context and `deleter` as deleter, as c10's own do, so raw_allocate works too) for every CPU
// tensor made afterwards. True where done: LibTorch 1.x, whose c10::Allocator has the one pure
// virtual `allocate(size_t) const`. PyTorch 2.x changed that interface (allocate lost its const
// and copy_data came in 2.3), and mixseq cannot build against it here: there nothing is replaced
// and the answer is false.
using CpuAllocateFn = c10::DataPtr (*)(size_t bytes);

#if TORCH_VERSION_MAJOR < 2
namespace detail {
class ForwardingCpuAllocator final : public c10::Allocator {
 public:
  ForwardingCpuAllocator(CpuAllocateFn allocate, c10::DeleterFnPtr deleter) : allocate_(allocate), deleter_(deleter) {}
  c10::DataPtr allocate(size_t bytes) const override { return allocate_(bytes); }
  c10::DeleterFnPtr raw_deleter() const override { return deleter_; }

 private:
  CpuAllocateFn allocate_;
  c10::DeleterFnPtr deleter_;
};
}  // namespace detail
#endif

inline bool set_cpu_allocator(CpuAllocateFn allocate, c10::DeleterFnPtr deleter) {
#if TORCH_VERSION_MAJOR < 2
  static detail::ForwardingCpuAllocator allocator(allocate, deleter);  // lives as long as the process: c10 keeps it
  c10::SetAllocator(c10::DeviceType::CPU, &allocator, /*priority=*/1);
  return true;
#else
  (void)allocate;
  (void)deleter;
  return false;
#endif
}

}  // namespace mixseq::compat
