// Where this process sits in a data-parallel job, read from the variables its launcher sets:
//   torchrun / explicit   RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT
//   mpirun (Open MPI)     OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK
//   mpirun (MPICH, Intel) PMI_RANK, PMI_SIZE, MPI_LOCALRANKID
//   srun (SLURM)          SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_LOCALID, SLURM_LAUNCH_NODE_IPADDR
// in that order of precedence. MASTER_ADDR and MASTER_PORT, when set, always name the
// rendezvous (rank 0's c10d TCPStore); otherwise it is SLURM's launch node, or this host
// when every rank runs on one node (mpirun on one machine). A multi-node mpirun without
// MASTER_ADDR is an error that says so.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>

namespace mixseq {

struct LaunchEnvironment {
  std::string launcher = "none";  // torchrun | openmpi | mpich | slurm | none
  int64_t rank = 0;
  int64_t world_size = 1;
  int64_t local_rank = 0;  // rank among the processes of this node: picks the GPU
  int64_t local_world_size = 1;  // processes on this node, where the launcher says (else 1)
  std::string master_addr = "127.0.0.1";
  int64_t master_port = 29500;

  // Started by a launcher, even as its only rank (world size 1 still runs the c10d path, as
  // DistributedDataParallel does under torchrun --nproc_per_node 1).
  bool distributed() const { return launcher != "none"; }
};

// `lookup` returns a variable's value or nullptr (std::getenv by default).
using EnvironmentLookup = std::function<const char*(const char*)>;

LaunchEnvironment detect_launch_environment(const EnvironmentLookup& lookup = [](const char* name) {
  return static_cast<const char*>(std::getenv(name));
});

}  // namespace mixseq
