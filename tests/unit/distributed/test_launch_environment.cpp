#include "mixseq/distributed/launch_environment.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "test_support.h"

namespace mixseq {
namespace {

// An environment made of exactly these variables.
EnvironmentLookup environment(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](const char* name) -> const char* {
    const auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  };
}

TEST(LaunchEnvironment, NoLauncherMeansOneProcess) {
  const auto env = detect_launch_environment(environment({{"HOME", "/root"}}));
  EXPECT_EQ(env.launcher, "none");
  EXPECT_EQ(env.world_size, 1);
  EXPECT_FALSE(env.distributed());
}

TEST(LaunchEnvironment, TorchrunVariables) {
  const auto env = detect_launch_environment(environment({{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"},
                                                          {"MASTER_ADDR", "node07"}, {"MASTER_PORT", "6000"}}));
  EXPECT_EQ(env.launcher, "torchrun");
  EXPECT_EQ(env.rank, 5);
  EXPECT_EQ(env.world_size, 8);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.master_addr, "node07");
  EXPECT_EQ(env.master_port, 6000);
  EXPECT_TRUE(env.distributed());
}

TEST(LaunchEnvironment, ALauncherWithOneRankIsStillDistributed) {
  const auto env = detect_launch_environment(environment({{"RANK", "0"}, {"WORLD_SIZE", "1"}}));
  EXPECT_EQ(env.world_size, 1);
  EXPECT_TRUE(env.distributed());
  EXPECT_EQ(env.master_addr, "127.0.0.1");
}

TEST(LaunchEnvironment, OpenMpiOnOneNodeMeetsOnThisHost) {
  const auto env = detect_launch_environment(environment({{"OMPI_COMM_WORLD_RANK", "2"},
                                                          {"OMPI_COMM_WORLD_SIZE", "4"},
                                                          {"OMPI_COMM_WORLD_LOCAL_RANK", "2"},
                                                          {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}));
  EXPECT_EQ(env.launcher, "openmpi");
  EXPECT_EQ(env.rank, 2);
  EXPECT_EQ(env.world_size, 4);
  EXPECT_EQ(env.local_rank, 2);
  EXPECT_EQ(env.local_world_size, 4);
  EXPECT_EQ(env.master_addr, "127.0.0.1");
  EXPECT_EQ(env.master_port, 29500);
}

TEST(LaunchEnvironment, OpenMpiOverSeveralNodesNeedsMasterAddr) {
  const std::map<std::string, std::string> two_nodes = {{"OMPI_COMM_WORLD_RANK", "0"},
                                                        {"OMPI_COMM_WORLD_SIZE", "4"},
                                                        {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                                                        {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}};
  EXPECT_NE(test::error_of([&] { detect_launch_environment(environment(two_nodes)); }).find("needs MASTER_ADDR"),
            std::string::npos);
  auto with_master = two_nodes;
  with_master["MASTER_ADDR"] = "10.0.0.1";
  EXPECT_EQ(detect_launch_environment(environment(with_master)).master_addr, "10.0.0.1");
}

TEST(LaunchEnvironment, MpichVariables) {
  const auto env = detect_launch_environment(
      environment({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "2"}}));
  EXPECT_EQ(env.launcher, "mpich");
  EXPECT_EQ(env.rank, 1);
  EXPECT_EQ(env.world_size, 2);
  EXPECT_EQ(env.local_rank, 1);
}

TEST(LaunchEnvironment, SlurmStepMeetsOnTheLaunchNode) {
  const auto env = detect_launch_environment(environment({{"SLURM_PROCID", "3"},
                                                          {"SLURM_STEP_NUM_TASKS", "4"},
                                                          {"SLURM_LOCALID", "1"},
                                                          {"SLURM_STEP_NUM_NODES", "2"},
                                                          {"SLURM_LAUNCH_NODE_IPADDR", "10.1.2.3"}}));
  EXPECT_EQ(env.launcher, "slurm");
  EXPECT_EQ(env.rank, 3);
  EXPECT_EQ(env.world_size, 4);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.master_addr, "10.1.2.3");
}

TEST(LaunchEnvironment, SlurmBatchScriptWithoutSrunIsOneProcess) {
  // sbatch sets SLURM_PROCID and SLURM_NTASKS for the script itself; only srun starts ranks.
  const auto env = detect_launch_environment(environment({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "8"}}));
  EXPECT_EQ(env.world_size, 1);
  EXPECT_FALSE(env.distributed());
}

TEST(LaunchEnvironment, TorchrunVariablesWinOverTheLauncherOnes) {
  const auto env = detect_launch_environment(environment(
      {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "10.0.0.1"}, {"OMPI_COMM_WORLD_RANK", "0"},
       {"OMPI_COMM_WORLD_SIZE", "4"}}));
  EXPECT_EQ(env.launcher, "torchrun");
  EXPECT_EQ(env.rank, 1);
}

TEST(LaunchEnvironment, ExplicitRanksWithoutMasterAddrAreAnError) {
  EXPECT_NE(test::error_of([] {
              detect_launch_environment(environment({{"RANK", "0"}, {"WORLD_SIZE", "2"}}));
            }).find("needs MASTER_ADDR"),
            std::string::npos);
}

TEST(LaunchEnvironment, BadValuesAreClearErrors) {
  EXPECT_NE(test::error_of([] {
              detect_launch_environment(environment({{"RANK", "two"}, {"WORLD_SIZE", "4"}}));
            }).find("RANK='two' is not an integer"),
            std::string::npos);
  EXPECT_NE(test::error_of([] {
              detect_launch_environment(environment({{"RANK", "4"}, {"WORLD_SIZE", "4"}}));
            }).find("RANK=4 is not below WORLD_SIZE=4"),
            std::string::npos);
  EXPECT_NE(test::error_of([] {
              detect_launch_environment(
                  environment({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"MASTER_PORT", "70000"}}));
            }).find("MASTER_PORT=70000 is not a TCP port"),
            std::string::npos);
}

}  // namespace
}  // namespace mixseq
