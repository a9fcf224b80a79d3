#include "mixseq/distributed/process_group.h"

#include <ATen/ATen.h>
#ifdef MIXSEQ_WITH_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef MIXSEQ_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <csignal>
#include <cstdlib>
#include <vector>

#include "mixseq/util/error.h"
#include "util/torch_compat.h"

namespace mixseq {

namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

bool is_loopback(const std::string& address) {
  return address == "localhost" || address == "::1" || address.rfind("127.", 0) == 0;
}

#ifdef MIXSEQ_WITH_GLOO
// The network device Gloo binds to: GLOO_SOCKET_IFNAME when set (as in PyTorch), the loopback
// device when the rendezvous is on this host (every rank on one node), else the interface the
// host name resolves to.
std::shared_ptr<::gloo::transport::Device> gloo_device(const LaunchEnvironment& env) {
  if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"); interface != nullptr && *interface != '\0')
    return c10d::ProcessGroupGloo::createDeviceForInterface(interface);
  if (is_loopback(env.master_addr)) return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return c10d::ProcessGroupGloo::createDefaultDevice();
}
#endif

}  // namespace

struct PendingCollective::State {
  c10::intrusive_ptr<c10d::Work> work;
  std::string what;  // "all-reduce on rank 1 of 2 (gloo)", for errors
  std::chrono::milliseconds timeout;
};

PendingCollective::PendingCollective(std::shared_ptr<State> state) : state_(std::move(state)) {}

void PendingCollective::wait() {
  try {
    state_->work->wait(state_->timeout);
  } catch (const std::exception& e) {
    throw Error(str_cat("distributed: ", state_->what, " failed: ", first_line(e.what()),
                        "\nA peer rank has exited or stopped responding (timeout ", state_->timeout.count() / 1000,
                        " s, distributed.timeout); this rank stops too. The last complete checkpoint stays valid."));
  }
}

// The c10d group of one backend; Gloo's and NCCL's classes share the collective signatures but
// not a base class across LibTorch versions (ProcessGroup in 1.13, Backend in 2.x).
struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
#ifdef MIXSEQ_WITH_GLOO
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
#endif
#ifdef MIXSEQ_WITH_NCCL
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl;
#endif
  std::chrono::milliseconds timeout;
  std::string where;  // "rank 1 of 2 (gloo)"
  int64_t started = 0;

  // Starts `call(group)`, the collective `operation` ("all-reduce") on this rank's group.
  template <typename Call>
  PendingCollective start(const std::string& operation, const Call& call) {
    ++started;
    auto state = std::make_shared<PendingCollective::State>();
    state->what = str_cat(operation, " on ", where);
    state->timeout = timeout;
    try {
#ifdef MIXSEQ_WITH_NCCL
      if (nccl) state->work = call(*nccl);
#endif
#ifdef MIXSEQ_WITH_GLOO
      if (!state->work) state->work = call(*gloo);
#endif
    } catch (const std::exception& e) {
      throw Error(str_cat("distributed: ", state->what, " failed to start: ", first_line(e.what())));
    }
    return PendingCollective(std::move(state));
  }
};

ProcessGroup::ProcessGroup(const LaunchEnvironment& env, const c10::Device& device, const ProcessGroupOptions& options)
    : impl_(std::make_unique<Impl>()),
      rank_(env.rank),
      world_size_(env.world_size),
      backend_(options.backend),
      device_(device) {
  if (backend_ == "auto") backend_ = device.is_cuda() ? "nccl" : "gloo";
  MIXSEQ_CHECK(backend_ == "gloo" || backend_ == "nccl", "distributed.backend '", backend_,
               "' is not one of auto, gloo, nccl");
  MIXSEQ_CHECK(backend_ == "gloo" || device.is_cuda(), "distributed.backend nccl needs a CUDA device, not ",
               device.str());
  impl_->timeout = std::chrono::seconds(options.timeout);
  impl_->where = str_cat("rank ", rank_, " of ", world_size_, " (", backend_, ")");
  // Gloo's TCP pairs write with writev(2), which raises SIGPIPE when the peer's socket is gone;
  // its default action ends this rank without a word. Ignored (as Python ignores it under
  // torchrun), the write fails with EPIPE and the pending collective's wait() names the cause.
  std::signal(SIGPIPE, SIG_IGN);

  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<uint16_t>(env.master_port);
  store_options.isServer = env.rank == 0;
  store_options.numWorkers = static_cast<size_t>(env.world_size);
  store_options.waitWorkers = true;
  store_options.timeout = impl_->timeout;
  try {
    impl_->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
    if (backend_ == "gloo") {
#ifdef MIXSEQ_WITH_GLOO
      auto gloo_options = c10d::ProcessGroupGloo::Options::create(impl_->timeout);
      gloo_options->devices.push_back(gloo_device(env));
      impl_->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, env.rank, env.world_size, gloo_options);
#else
      throw Error("distributed.backend gloo: this mixseq was built without Gloo (its LibTorch ships no Gloo headers); use nccl");
#endif
    } else {
#ifdef MIXSEQ_WITH_NCCL
      auto nccl_options = c10d::ProcessGroupNCCL::Options::create();
      nccl_options->timeout = impl_->timeout;
      impl_->nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(impl_->store, env.rank, env.world_size, nccl_options);
#else
      throw Error("distributed.backend nccl: this mixseq was built without NCCL; use gloo");
#endif
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(str_cat("distributed: rank ", env.rank, " of ", env.world_size, " could not join the ", backend_,
                        " process group at ", env.master_addr, ":", env.master_port, " (launcher ", env.launcher,
                        ", timeout ", options.timeout, " s): ", first_line(e.what())));
  }
}

ProcessGroup::~ProcessGroup() {
#ifdef MIXSEQ_WITH_NCCL
  if (impl_->nccl) compat::shut_down(*impl_->nccl);
#endif
}

int64_t ProcessGroup::collectives_started() const { return impl_->started; }

PendingCollective ProcessGroup::all_reduce_sum_async(at::Tensor tensor) {
  std::vector<at::Tensor> tensors{std::move(tensor)};
  return impl_->start("all-reduce", [&](auto& group) { return group.allreduce(tensors, c10d::AllreduceOptions{}); });
}

void ProcessGroup::all_reduce_max(at::Tensor tensor) {
  std::vector<at::Tensor> tensors{std::move(tensor)};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::MAX;
  impl_->start("all-reduce (max)", [&](auto& group) { return group.allreduce(tensors, options); }).wait();
}

void ProcessGroup::broadcast(at::Tensor tensor, int64_t root) {
  std::vector<at::Tensor> tensors{std::move(tensor)};
  c10d::BroadcastOptions options;
  options.rootRank = root;
  impl_->start("broadcast", [&](auto& group) { return group.broadcast(tensors, options); }).wait();
}

std::vector<double> ProcessGroup::sum(const std::vector<double>& values) {
  auto tensor = at::tensor(values, at::kDouble).to(device_);
  all_reduce_sum(tensor);
  tensor = tensor.cpu();
  return {tensor.data_ptr<double>(), tensor.data_ptr<double>() + tensor.numel()};
}

}  // namespace mixseq
