#include "mixseq/distributed/launch_environment.h"

#include <string_view>

#include "mixseq/util/error.h"

namespace mixseq {

namespace {

// The variables one launcher sets for rank, world size and local rank.
struct LauncherVariables {
  const char* launcher;
  const char* rank;
  const char* world_size;
  const char* local_rank;
  const char* local_world_size;
};

constexpr LauncherVariables kLaunchers[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"mpich", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
    // srun sets SLURM_STEP_NUM_TASKS for its job step; a batch script alone (no srun) has none.
    {"slurm", "SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
};

int64_t integer_variable(const EnvironmentLookup& lookup, const char* name, int64_t fallback, int64_t min) {
  const char* text = lookup(name);
  if (text == nullptr || *text == '\0') return fallback;
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  MIXSEQ_CHECK(used > 0 && used == std::string_view(text).size() && value >= min, "environment variable ", name,
               "='", text, "' is not an integer >= ", min);
  return value;
}

}  // namespace

LaunchEnvironment detect_launch_environment(const EnvironmentLookup& lookup) {
  LaunchEnvironment env;
  const LauncherVariables* found = nullptr;
  for (const auto& launcher : kLaunchers) {
    if (lookup(launcher.rank) != nullptr && lookup(launcher.world_size) != nullptr) {
      found = &launcher;
      break;
    }
  }
  if (found == nullptr) return env;
  env.launcher = found->launcher;
  env.world_size = integer_variable(lookup, found->world_size, 1, 1);
  env.rank = integer_variable(lookup, found->rank, 0, 0);
  env.local_rank = integer_variable(lookup, found->local_rank, 0, 0);
  env.local_world_size = integer_variable(lookup, found->local_world_size, 1, 1);
  MIXSEQ_CHECK(env.rank < env.world_size, "environment variable ", found->rank, "=", env.rank,
               " is not below ", found->world_size, "=", env.world_size);
  env.master_port = integer_variable(lookup, "MASTER_PORT", env.master_port, 1);
  MIXSEQ_CHECK(env.master_port <= 65535, "environment variable MASTER_PORT=", env.master_port, " is not a TCP port");

  if (const char* addr = lookup("MASTER_ADDR"); addr != nullptr && *addr != '\0') {
    env.master_addr = addr;
  } else if (const char* launch_node = lookup("SLURM_LAUNCH_NODE_IPADDR");
             env.launcher == std::string("slurm") && launch_node != nullptr && *launch_node != '\0') {
    env.master_addr = launch_node;  // srun starts from a node of the allocation
  } else {
    const bool one_node =
        env.world_size == 1 || env.local_world_size == env.world_size ||
        (env.launcher == std::string("slurm") && integer_variable(lookup, "SLURM_STEP_NUM_NODES", 0, 0) == 1);
    MIXSEQ_CHECK(one_node, "a ", env.world_size, "-process ", env.launcher,
                 " job over several nodes needs MASTER_ADDR (the address of rank 0's node) in the environment "
                 "of every rank (with mpirun: mpirun -x MASTER_ADDR=node01 -x MASTER_PORT=29500 ...)");
  }
  return env;
}

}  // namespace mixseq
