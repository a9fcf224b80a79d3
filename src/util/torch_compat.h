// The one place where the LibTorch versions mixseq builds against differ: Debian's 1.13 (CPU)
// and the PyTorch 2.x LibTorch of the GPU machine. Everything else calls these wrappers.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/version.h>

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

}  // namespace mixseq::compat
