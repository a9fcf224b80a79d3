#include "mixseq/util/config_keys.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace mixseq {
namespace {

struct Inner {
  int64_t size = 4;
  double rate = 0.5;
  void visit(ConfigVisitor& v) {
    v.field("size", size, "a size");
    v.field("rate", rate, "a rate");
  }
};

struct Outer {
  std::string name = "x";
  Inner first, second;
  void visit(ConfigVisitor& v) {
    v.field("name", name, "a name");
    v.section("first", first);
    v.section("second", second);
  }
};

TEST(ConfigKeys, PathsWithinSections) {
  EXPECT_TRUE(within_any("lm", {"lm"}));
  EXPECT_TRUE(within_any("lm.tgt_len", {"criterion", "lm"}));
  EXPECT_FALSE(within_any("lmx.tgt_len", {"lm"}));
  EXPECT_FALSE(within_any("lm", {"lm.tgt_len"}));
  EXPECT_FALSE(within_any("data.dir", {"data.max_tokens"}));
  EXPECT_FALSE(within_any("anything", {}));
}

TEST(ConfigKeys, ListsTheLeafKeysAFileSetsWithTheirLines) {
  const auto keys = config_keys_in_yaml("name: y\nfirst:\n  size: 3\nsecond: {rate: 0.1, size: 2}\nlist: [1, 2]\n",
                                        "c.yaml");
  ASSERT_EQ(keys.size(), 5u);
  EXPECT_EQ(keys[0].path, "name");
  EXPECT_EQ(keys[0].where, "c.yaml:1");
  EXPECT_EQ(keys[1].path, "first.size");
  EXPECT_EQ(keys[1].where, "c.yaml:3");
  EXPECT_EQ(keys[2].path, "second.rate");
  EXPECT_EQ(keys[2].where, "c.yaml:4");
  EXPECT_EQ(keys[3].path, "second.size");
  EXPECT_EQ(keys[4].path, "list");
  EXPECT_TRUE(config_keys_in_yaml("", "empty.yaml").empty());
  EXPECT_EQ(test::error_of([] { config_keys_in_yaml("a: [1,\n", "bad.yaml"); }).rfind("bad.yaml:", 0), 0u);
}

// The YAML without some paths reads back into the same values for the others, and leaves the
// excluded ones at their defaults.
TEST(ConfigKeys, WritesYamlWithoutExcludedSectionsAndKeys) {
  Outer outer;
  outer.name = "z";
  outer.first.size = 9;
  outer.second.rate = 0.25;
  const auto yaml = config_to_yaml_excluding([&](ConfigVisitor& v) { outer.visit(v); }, {"second", "first.rate"});
  EXPECT_EQ(yaml.find("second"), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("rate"), std::string::npos) << yaml;
  Outer back;
  back.first.rate = 7;
  read_config_yaml(yaml, "excluded", [&](ConfigVisitor& v) { back.visit(v); });
  EXPECT_EQ(back.name, "z");
  EXPECT_EQ(back.first.size, 9);
  EXPECT_EQ(back.first.rate, 7);     // not in the text: kept
  EXPECT_EQ(back.second.rate, 0.5);  // the default
  EXPECT_EQ(config_to_yaml_excluding([&](ConfigVisitor& v) { outer.visit(v); }, {}),
            config_to_yaml([&](ConfigVisitor& v) { outer.visit(v); }));
}

}  // namespace
}  // namespace mixseq
