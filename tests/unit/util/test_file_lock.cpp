#include "mixseq/util/file_lock.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "test_support.h"

namespace mixseq {
namespace {

TEST(FileLock, SecondLockIsRefusedAndNamesTheHolder) {
  test::TempDir dir;
  const auto path = dir.path("train.lock");
  {
    const FileLock first(path);
    ASSERT_TRUE(first.held());
    const FileLock second(path);  // another open file, so refused even in the same process
    EXPECT_FALSE(second.held());
    EXPECT_EQ(second.holder_pid(), ::getpid());
  }
  EXPECT_TRUE(FileLock(path).held());  // released with its holder
}

TEST(FileLock, TheKernelReleasesTheLockOfAKilledProcess) {
  test::TempDir dir;
  const auto path = dir.path("train.lock");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const FileLock lock(path);
    const char held = lock.held() ? 'y' : 'n';
    if (::write(ready[1], &held, 1) != 1) ::_exit(2);
    ::pause();  // until SIGKILL: no destructor runs
    ::_exit(0);
  }
  char held = 0;
  ASSERT_EQ(::read(ready[0], &held, 1), 1);
  ASSERT_EQ(held, 'y');
  const FileLock refused(path);
  EXPECT_FALSE(refused.held());
  EXPECT_EQ(refused.holder_pid(), child);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(FileLock(path).held());
  ::close(ready[0]);
  ::close(ready[1]);
}

}  // namespace
}  // namespace mixseq
