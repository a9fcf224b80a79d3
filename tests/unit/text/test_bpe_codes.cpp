#include "mixseq/text/bpe_codes.h"

#include <gtest/gtest.h>

#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

using test::error_of;


TEST(BpeCodes, LoadsVersion02AndSavesItBack) {
  test::TempDir dir;
  const auto path = dir.write("codes", "#version: 0.2\ne s</w>\nl o\r\n\n\n");  // CRLF and trailing empty lines
  const auto codes = BpeCodes::load(path);
  EXPECT_EQ(codes.version(), BpeCodes::Version::k0_2);
  ASSERT_EQ(codes.merges().size(), 2u);
  EXPECT_EQ(codes.merges()[0].left, "e");
  EXPECT_EQ(codes.merges()[0].right, "s</w>");
  EXPECT_EQ(codes.merges()[1].right, "o");
  EXPECT_EQ(codes.source(), path);
  codes.save(dir.path("saved"));
  EXPECT_EQ(dir.read("saved"), "#version: 0.2\ne s</w>\nl o\n");
}

TEST(BpeCodes, FileWithoutHeaderIsVersion01) {
  test::TempDir dir;
  const auto codes = BpeCodes::load(dir.write("codes", "e s\ns </w>\n"));
  EXPECT_EQ(codes.version(), BpeCodes::Version::k0_1);
  EXPECT_EQ(codes.merges().size(), 2u);
}

TEST(BpeCodes, MalformedLineNamesFileAndLine) {
  test::TempDir dir;
  for (const std::string bad : {"a  b", "ab", "a b c", ""}) {
    const auto path = dir.write("codes", "#version: 0.2\na b\n" + bad + "\nc d\n");
    EXPECT_NE(error_of([&] { BpeCodes::load(path); }).find(path + ":3: invalid BPE merge"), std::string::npos) << bad;
  }
}

TEST(BpeCodes, MergeLimitChecksOnlyTheLinesItKeeps) {
  test::TempDir dir;
  const auto path = dir.write("codes", "#version: 0.2\na b\nc d\nnot a merge\n");
  EXPECT_EQ(BpeCodes::load(path, 2).merges().size(), 2u);  // apply_bpe.py --merges 2 reads only these
  EXPECT_EQ(BpeCodes::load(path, 0).merges().size(), 0u);
  EXPECT_NE(error_of([&] { BpeCodes::load(path); }).find(path + ":4:"), std::string::npos);
}

TEST(BpeCodes, MissingFileAndByteLevelCodesAreErrors) {
  test::TempDir dir;
  EXPECT_NE(error_of([&] { BpeCodes::load(dir.path("missing")); }).find("cannot open"), std::string::npos);
  const auto path = dir.write("codes", "#version: 0.2 byte\na b\n");
  EXPECT_NE(error_of([&] { BpeCodes::load(path); }).find("byte-level"), std::string::npos);
}

}  // namespace
}  // namespace mixseq
