#include "mixseq/util/output_file.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "test_support.h"

namespace mixseq {
namespace {

namespace fs = std::filesystem;

void write_through(const std::string& path, const std::string& text) {
  OutputFile file(path);
  file.stream() << text;
  file.commit();
}

TEST(OutputFile, ReplacesAFileOnlyOnCommit) {
  test::TempDir dir;
  const std::string path = dir.write("out.txt", "old\n");
  {
    OutputFile file(path);
    file.stream() << "new\n";
    EXPECT_EQ(dir.read("out.txt"), "old\n");
    file.commit();
  }
  EXPECT_EQ(dir.read("out.txt"), "new\n");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  {
    OutputFile abandoned(path);
    abandoned.stream() << "never\n";
  }
  EXPECT_EQ(dir.read("out.txt"), "new\n");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(OutputFile, MakesTheFoldersOfANewFile) {
  test::TempDir dir;
  write_through(dir.path("a/b/out.txt"), "x\n");
  EXPECT_EQ(dir.read("a/b/out.txt"), "x\n");
}

// create_folder: missing folders are made, an existing one is left be, and a file in the way is
// named in the error (std::filesystem says only "cannot create directories: Not a directory").
TEST(CreateFolder, MakesTheMissingFoldersAndNamesAFileInTheWay) {
  test::TempDir dir;
  create_folder(dir.path("a/b/c"));
  EXPECT_TRUE(fs::is_directory(dir.path("a/b/c")));
  const std::string kept = dir.write("a/b/c/kept.txt", "x\n");
  create_folder(dir.path("a/b/c"));
  EXPECT_EQ(dir.read("a/b/c/kept.txt"), "x\n");
  dir.write("file", "y\n");
  for (const std::string& target : {dir.path("file"), dir.path("file/sub/deeper")}) {
    const auto message = test::error_of([&] { create_folder(target); });
    EXPECT_EQ(message, "cannot create the folder '" + target + "': '" + dir.path("file") + "' is not a folder");
  }
  EXPECT_EQ(dir.read("file"), "y\n");
}

TEST(OutputFile, ReplacesTheTargetOfASymbolicLinkAndKeepsTheLink) {
  test::TempDir dir;
  fs::create_directories(dir.path("data"));  // TempDir::write makes no folders
  dir.write("data/target.txt", "old\n");
  fs::create_symlink("data/target.txt", dir.path("first"));  // relative to the link's folder
  fs::create_symlink(dir.path("first"), dir.path("second"));
  write_through(dir.path("second"), "new\n");
  EXPECT_TRUE(fs::is_symlink(dir.path("second")));
  EXPECT_TRUE(fs::is_symlink(dir.path("first")));
  EXPECT_EQ(dir.read("data/target.txt"), "new\n");
  EXPECT_FALSE(fs::exists(dir.path("data/target.txt.tmp")));
}

TEST(OutputFile, CreatesTheMissingTargetOfADanglingLink) {
  test::TempDir dir;
  fs::create_symlink("later/file.txt", dir.path("link"));
  write_through(dir.path("link"), "made\n");
  EXPECT_TRUE(fs::is_symlink(dir.path("link")));
  EXPECT_EQ(dir.read("later/file.txt"), "made\n");
}

TEST(OutputFile, KeepsThePermissionsOfTheFileItReplaces) {
  test::TempDir dir;
  const std::string path = dir.write("private.txt", "old\n");
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
  write_through(path, "new\n");
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
}

TEST(OutputFile, WritesIntoAFifoRatherThanReplacingIt) {
  test::TempDir dir;
  const std::string fifo = dir.path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Opened read-write, a fifo neither blocks its writer's open nor this test when nothing comes.
  const int reader = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  write_through(fifo, "through the pipe\n");
  char received[64] = {};
  const ssize_t size = ::read(reader, received, sizeof received - 1);
  ::close(reader);
  EXPECT_EQ(std::string(received, size > 0 ? static_cast<size_t>(size) : 0), "through the pipe\n");
  EXPECT_EQ(fs::symlink_status(fifo).type(), fs::file_type::fifo);
}

TEST(OutputFile, FollowsALinkToAFifoAndWritesIntoIt) {
  test::TempDir dir;
  const std::string fifo = dir.path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_symlink("fifo", dir.path("link"));
  const int reader = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  write_through(dir.path("link"), "linked\n");
  char received[64] = {};
  const ssize_t size = ::read(reader, received, sizeof received - 1);
  ::close(reader);
  EXPECT_EQ(std::string(received, size > 0 ? static_cast<size_t>(size) : 0), "linked\n");
  EXPECT_TRUE(fs::is_symlink(dir.path("link")));
}

// /dev/fd/N names an open file, here /dev/full, which takes no byte. (Never /dev/full by name: code
// that wrongly replaced its output would replace the device itself when run as root.)
TEST(OutputFile, WritesIntoAnOpenFileNamedByDevFdAndReportsItsErrors) {
  const int full = ::open("/dev/full", O_WRONLY);
  if (full < 0) GTEST_SKIP() << "needs /dev/full";
  const std::string path = "/dev/fd/" + std::to_string(full);
  const std::string error = test::error_of([&] { write_through(path, "lost\n"); });
  ::close(full);
  EXPECT_EQ(error, "cannot write '" + path + "': No space left on device");
}

// As `mixseq ... -o /dev/stdout > file` does: the shell's file is written, not replaced.
TEST(OutputFile, WritesIntoARegularFileNamedByDevFd) {
  test::TempDir dir;
  const std::string file = dir.path("redirected.txt");
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  struct stat before;
  ASSERT_EQ(::fstat(fd, &before), 0);
  write_through("/dev/fd/" + std::to_string(fd), "into the open file\n");
  ::close(fd);
  struct stat after;
  ASSERT_EQ(::stat(file.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(dir.read("redirected.txt"), "into the open file\n");
}

TEST(OutputFile, AFullDiskIsAnErrorNamingTheFileAndLeavesTheOldOne) {
  test::TempDir dir;
  const std::string path = dir.write("out.txt", "old\n");
  const std::string error = test::error_of([&] {
    const test::FileSizeLimit full_disk(4096);
    write_through(path, std::string(100000, 'x'));
  });
  EXPECT_EQ(error, "cannot write '" + path + "': File too large; '" + path + "' is left as it was");
  EXPECT_EQ(dir.read("out.txt"), "old\n");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(OutputFile, AFullStandardOutputIsAnError) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "needs /dev/full";
  // In a child process, whose standard output is /dev/full.
  EXPECT_EXIT(
      {
        if (std::freopen("/dev/full", "w", stdout) == nullptr) std::_Exit(2);
        const std::string error = test::error_of([] { write_through("-", "lost\n"); });
        std::_Exit(error == "cannot write to standard output: No space left on device" ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(OutputFile, ADirectoryOrALinkLoopIsAnErrorThatSaysSo) {
  test::TempDir dir;
  EXPECT_NE(test::error_of([&] { OutputFile file(dir.root().string()); }).find("it is a directory"),
            std::string::npos);
  fs::create_symlink("b", dir.path("a"));
  fs::create_symlink("a", dir.path("b"));
  EXPECT_NE(test::error_of([&] { OutputFile file(dir.path("a")); }).find("symbolic links to follow (a loop?)"),
            std::string::npos);
}

TEST(OutputFile, SameRegularFileFollowsLinksAndOtherSpellings) {
  test::TempDir dir;
  write_through(dir.path("a"), "a\n");
  write_through(dir.path("b"), "b\n");
  fs::create_symlink("a", dir.path("link"));
  fs::create_hard_link(dir.path("a"), dir.path("hard"));
  EXPECT_TRUE(same_regular_file(dir.path("a"), dir.path("a")));
  EXPECT_TRUE(same_regular_file(dir.path("a"), (dir.root() / "." / "a").string()));
  EXPECT_TRUE(same_regular_file(dir.path("link"), dir.path("a")));
  EXPECT_TRUE(same_regular_file(dir.path("hard"), dir.path("a")));
  EXPECT_FALSE(same_regular_file(dir.path("a"), dir.path("b")));
  EXPECT_FALSE(same_regular_file(dir.path("a"), dir.path("missing")));
  EXPECT_FALSE(same_regular_file(dir.path("missing"), dir.path("missing")));  // nothing to replace
  EXPECT_FALSE(same_regular_file("-", "-"));
  EXPECT_FALSE(same_regular_file("/dev/null", "/dev/null"));  // not a regular file: written into, never replaced
}

TEST(OutputFile, AnOutputThatIsAnInputIsRefusedNamingBothFlags) {
  test::TempDir dir;
  write_through(dir.path("ck.pt"), "checkpoint\n");
  fs::create_symlink("ck.pt", dir.path("link.pt"));
  refuse_output_over_inputs({"--output", dir.path("other.pt")}, {{"--checkpoint", dir.path("ck.pt")}});
  const auto error = test::error_of([&] {
    refuse_output_over_inputs({"--output", dir.path("link.pt")},
                              {{"--input", "-"}, {"--checkpoint", dir.path("ck.pt")}});
  });
  EXPECT_NE(error.find("--output '" + dir.path("link.pt") + "' is the same file as --checkpoint ('" +
                       dir.path("ck.pt") + "'), which this command reads"),
            std::string::npos)
      << error;
}

// A folder of files that belong together is replaced as one: nothing moves before commit(), and
// a run that fails leaves the folder as it was (a folder it made is removed again).
TEST(StagedFolder, ReplacesTheFolderOnlyOnCommitAndTheManifestLast) {
  test::TempDir dir;
  const std::string folder = dir.path("data");
  {
    StagedFolder staged(folder);
    test::write_file(staged.path("a.bin"), "new a");
    test::write_file(staged.path("dataset.json"), "new manifest");
    EXPECT_FALSE(std::filesystem::exists(dir.path("data/a.bin")));
    EXPECT_EQ(staged.final_path("a.bin"), (std::filesystem::path(folder) / "a.bin").string());
  }  // no commit: a failed run
  EXPECT_FALSE(std::filesystem::exists(folder));  // it made the folder, and removed it again

  test::write_file(dir.path("data/a.bin"), "old a");
  test::write_file(dir.path("data/b.bin"), "old b");
  test::write_file(dir.path("data/dataset.json"), "old manifest");
  test::write_file(dir.path("data/notes.txt"), "someone's notes");
  {
    StagedFolder staged(folder);
    test::write_file(staged.path("a.bin"), "new a");
  }  // failed again: the old folder is whole
  EXPECT_EQ(test::read_file(dir.path("data/a.bin")), "old a");
  EXPECT_EQ(test::read_file(dir.path("data/dataset.json")), "old manifest");
  {
    StagedFolder staged(folder);
    test::write_file(staged.path("a.bin"), "new a");
    test::write_file(staged.path("c.bin"), "new c");
    EXPECT_NE(test::error_of([&] { staged.commit("dataset.json"); }).find("the manifest"), std::string::npos);
    test::write_file(staged.path("dataset.json"), "new manifest");
    staged.commit("dataset.json");
  }
  EXPECT_EQ(test::read_file(dir.path("data/a.bin")), "new a");
  EXPECT_EQ(test::read_file(dir.path("data/c.bin")), "new c");
  EXPECT_EQ(test::read_file(dir.path("data/dataset.json")), "new manifest");
  EXPECT_EQ(test::read_file(dir.path("data/b.bin")), "old b");  // files it did not write stay
  EXPECT_EQ(test::read_file(dir.path("data/notes.txt")), "someone's notes");
  size_t entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) entries += entry.is_regular_file() ? 1 : 100;
  EXPECT_EQ(entries, 5u);  // and no staging folder
}

}  // namespace
}  // namespace mixseq
