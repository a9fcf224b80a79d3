#include "mixseq/util/config.h"

#include <gtest/gtest.h>

#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

using test::error_of;

struct InnerOptions {
  int64_t hidden_size = 1024;
  double dropout = 0.2;
  void visit(ConfigVisitor& v) {
    v.field("hidden_size", hidden_size, "units per layer");
    v.field("dropout", dropout, "dropout probability");
  }
};

struct RootOptions {
  std::string arch = "gnmt";
  bool shared_embeddings = true;
  std::vector<double> betas = {0.9, 0.999};
  InnerOptions inner;
  void visit(ConfigVisitor& v) {
    v.choice("arch", arch, {"gnmt", "transformer"}, "model family");
    v.field("shared_embeddings", shared_embeddings, "one embedding matrix");
    v.field("betas", betas, "Adam betas");
    v.section("inner", inner);
  }
  ConfigFields fields() {
    return [this](ConfigVisitor& v) { visit(v); };
  }
};


TEST(Config, ReadsYamlAndKeepsDefaultsForMissingKeys) {
  RootOptions options;
  read_config_yaml("arch: transformer\ninner:\n  hidden_size: 512\nbetas: [0.9, 0.98]\n", "t.yaml", options.fields());
  EXPECT_EQ(options.arch, "transformer");
  EXPECT_EQ(options.inner.hidden_size, 512);
  EXPECT_DOUBLE_EQ(options.inner.dropout, 0.2);
  EXPECT_TRUE(options.shared_embeddings);
  EXPECT_EQ(options.betas, (std::vector<double>{0.9, 0.98}));
}

TEST(Config, UnknownKeysNameFileLineAndNearestKey) {
  RootOptions options;
  const auto typo = error_of([&] { read_config_yaml("arch: gnmt\ninner:\n  hiden_size: 5\n", "t.yaml", options.fields()); });
  EXPECT_EQ(typo, "t.yaml:3: unknown key 'inner.hiden_size'; did you mean 'hidden_size'?");
  const auto far = error_of([&] { read_config_yaml("zzz: 1\n", "t.yaml", options.fields()); });
  EXPECT_EQ(far, "t.yaml:1: unknown key 'zzz'; known: arch, shared_embeddings, betas, inner");
}

// YAML keys may be lists, maps or empty; yaml-cpp's conversion error escaped every caller
// (fuzz_config; tests/fuzz/corpus/config/crash_list_key).
TEST(Config, KeysThatAreNotNamesAreErrors) {
  RootOptions options;
  EXPECT_EQ(error_of([&] { read_config_yaml("arch: gnmt\n? [a, b]\n: c\n", "t.yaml", options.fields()); }),
            "t.yaml:2: a key at the top level is a list; keys are names");
  EXPECT_EQ(error_of([&] { read_config_yaml("inner:\n  ? {a: 1}\n  : 2\n", "t.yaml", options.fields()); }),
            "t.yaml:2: a key in section 'inner' is a map; keys are names");
  EXPECT_EQ(error_of([&] { read_config_yaml("~: 2\n", "t.yaml", options.fields()); }),
            "t.yaml:1: a key at the top level is empty; keys are names");
}

// yaml-cpp keeps a key set twice and reads the first, and ignores a second document: a config
// with "num_layers: 2" then "num_layers: 3", or a second "model:" section, trained what it did not say.
TEST(Config, KeysSetTwiceAndSecondDocumentsAreErrors) {
  RootOptions options;
  EXPECT_EQ(error_of([&] {
              read_config_yaml("inner:\n  hidden_size: 2\n  hidden_size: 3\n", "t.yaml", options.fields());
            }),
            "t.yaml:3: 'inner.hidden_size' is set twice (also at line 2); YAML reads only one of them: keep one");
  EXPECT_EQ(error_of([&] { read_config_yaml("inner:\n  dropout: 0.1\narch: gnmt\ninner:\n  hidden_size: 3\n", "t.yaml",
                                            options.fields()); }),
            "t.yaml:4: 'inner' is set twice (also at line 1); YAML reads only one of them: keep one");
  EXPECT_EQ(error_of([&] { read_config_yaml("arch: gnmt\n---\narch: transformer\n", "t.yaml", options.fields()); }),
            "t.yaml:3: a second YAML document (after \"---\"), which would be ignored; a config is one document");
  // The same key in different maps, and a document that ends with "---" alone, are fine.
  read_config_yaml("arch: transformer\ninner:\n  hidden_size: 7\n---\n", "t.yaml", options.fields());
  EXPECT_EQ(options.arch, "transformer");
  EXPECT_EQ(options.inner.hidden_size, 7);
}

// A model loader reads one section of a whole training config: the other root keys are not its
// business, but a typo inside its section still is.
TEST(Config, SectionsReadAloneSkipOtherRootKeysOnly) {
  InnerOptions inner;
  const ConfigFields fields = [&](ConfigVisitor& v) { v.section("inner", inner); };
  read_config_yaml_sections("arch: transformer\ninner:\n  hidden_size: 512\ntrain: {seed: 3}\n", "t.yaml", fields);
  EXPECT_EQ(inner.hidden_size, 512);
  EXPECT_EQ(error_of([&] { read_config_yaml_sections("arch: gnmt\ninner:\n  hiden_size: 5\n", "t.yaml", fields); }),
            "t.yaml:3: unknown key 'inner.hiden_size'; did you mean 'hidden_size'?");
}

TEST(Config, BadValuesAndChoicesAreErrors) {
  RootOptions options;
  EXPECT_EQ(error_of([&] { read_config_yaml("inner: {hidden_size: big}", "t.yaml", options.fields()); }),
            "t.yaml:1: inner.hidden_size must be an integer, not 'big'");
  EXPECT_EQ(error_of([&] { read_config_yaml("arch: gmnt", "t.yaml", options.fields()); }),
            "t.yaml:1: arch is 'gmnt'; did you mean 'gnmt'?");
  EXPECT_EQ(error_of([&] { read_config_yaml("inner: 3", "t.yaml", options.fields()); }),
            "t.yaml:1: inner must be a section of keys");
  EXPECT_NE(error_of([&] { read_config_yaml("arch: [", "t.yaml", options.fields()); }).find("not valid YAML"),
            std::string::npos);
}

// YAML reads ".nan" and ".inf" as numbers; `train --optim.lr .nan` must not train with them.
TEST(Config, NonFiniteNumbersAreErrors) {
  RootOptions options;
  EXPECT_EQ(error_of([&] { read_config_yaml("inner: {dropout: .nan}", "t.yaml", options.fields()); }),
            "t.yaml:1: inner.dropout must be a finite number, not '.nan'");
  EXPECT_EQ(error_of([&] { read_config_yaml("betas: [0.9, .inf]", "t.yaml", options.fields()); }),
            "t.yaml:1: betas must be a list of finite numbers, not '[0.9, .inf]'");
  EXPECT_EQ(error_of([&] { apply_config_override("inner.dropout", "-.inf", options.fields()); }),
            "command line: --inner.dropout must be a finite number, not '-.inf'");
}

// `train -c <directory>` read an empty config and said "data.dir is empty" (issue 11).
TEST(Config, ADirectoryIsNoConfigFile) {
  test::TempDir dir;
  RootOptions options;
  EXPECT_EQ(error_of([&] { read_config_file(dir.root().string(), options.fields()); }),
            "config file '" + dir.root().string() + "' is a directory; give a YAML file, such as configs/gnmt_tiny.yaml");
}

TEST(Config, CommandLineOverridesUseTheYamlPath) {
  RootOptions options;
  apply_config_override("inner.dropout", "0.3", options.fields());
  apply_config_override("betas", "0.8,0.9", options.fields());
  apply_config_override("shared_embeddings", "false", options.fields());
  EXPECT_DOUBLE_EQ(options.inner.dropout, 0.3);
  EXPECT_EQ(options.betas, (std::vector<double>{0.8, 0.9}));
  EXPECT_FALSE(options.shared_embeddings);
  EXPECT_EQ(error_of([&] { apply_config_override("inner.dropuot", "1", options.fields()); }),
            "unknown option --inner.dropuot; did you mean 'inner.dropout'?");
  EXPECT_EQ(error_of([&] { apply_config_override("inner.hidden_size", "1.5", options.fields()); }),
            "command line: --inner.hidden_size must be an integer, not '1.5'");
  EXPECT_EQ(error_of([&] { apply_config_override("inner.dropout", "", options.fields()); }),
            "command line: --inner.dropout must be a number, not an empty value");  // it said "not '~'"
  EXPECT_NE(error_of([&] { apply_config_override("arch", "rnn", options.fields()); }).find("--arch is 'rnn'"),
            std::string::npos);
}

// Lists of integers (a Transformer-XL's adaptive-softmax cutoffs): from YAML, from the command
// line with or without brackets, the empty list, and back to YAML.
TEST(Config, ListsOfIntegers) {
  std::vector<int64_t> cutoffs = {20000, 40000};
  const ConfigFields fields = [&](ConfigVisitor& v) { v.field("cutoffs", cutoffs, "cluster boundaries"); };
  read_config_yaml("cutoffs: [2000, 10000]\n", "t.yaml", fields);
  EXPECT_EQ(cutoffs, (std::vector<int64_t>{2000, 10000}));
  EXPECT_EQ(error_of([&] { read_config_yaml("cutoffs: [2000, 1.5]\n", "t.yaml", fields); }),
            "t.yaml:1: cutoffs must be a list of integers, not '[2000, 1.5]'");
  EXPECT_EQ(error_of([&] { read_config_yaml("cutoffs: 7000\n", "t.yaml", fields); }),
            "t.yaml:1: cutoffs must be a list of integers, not '7000'");
  apply_config_override("cutoffs", "19997,39997,199997", fields);
  EXPECT_EQ(cutoffs, (std::vector<int64_t>{19997, 39997, 199997}));
  apply_config_override("cutoffs", "[3]", fields);
  EXPECT_EQ(cutoffs, (std::vector<int64_t>{3}));
  EXPECT_EQ(error_of([&] { apply_config_override("cutoffs", "3,x", fields); }),
            "command line: --cutoffs must be a list of integers, not '3,x'");
  apply_config_override("cutoffs", "", fields);
  EXPECT_TRUE(cutoffs.empty());
  EXPECT_NE(config_to_yaml(fields).find("cutoffs: []"), std::string::npos) << config_to_yaml(fields);
  cutoffs = {5, 6};
  const std::string yaml = config_to_yaml(fields);
  EXPECT_NE(yaml.find("cutoffs: [5, 6]"), std::string::npos) << yaml;
  cutoffs.clear();
  read_config_yaml(yaml, "written", fields);
  EXPECT_EQ(cutoffs, (std::vector<int64_t>{5, 6}));
}

TEST(Config, WritesYamlThatReadsBackToTheSameValues) {
  RootOptions options;
  options.arch = "transformer";
  options.inner.hidden_size = 7;
  options.betas = {0.5};
  const std::string yaml = config_to_yaml(options.fields());
  EXPECT_NE(yaml.find("hidden_size: 7"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("dropout: 0.2  #"), std::string::npos) << yaml;  // shortest round-trip digits
  EXPECT_NE(yaml.find("betas: [0.5]"), std::string::npos) << yaml;
  RootOptions again;
  read_config_yaml(yaml, "written", again.fields());
  EXPECT_EQ(again.arch, "transformer");
  EXPECT_EQ(again.inner.hidden_size, 7);
  EXPECT_EQ(again.betas, (std::vector<double>{0.5}));
  EXPECT_EQ(config_paths(options.fields()).size(), 5u);
  EXPECT_EQ(config_paths(options.fields())[3].first, "inner.hidden_size");
}

}  // namespace
}  // namespace mixseq
