#include "mixseq/util/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <map>
#include <sstream>
#include <type_traits>

#include "mixseq/util/config_keys.h"
#include "mixseq/util/error.h"
#include "mixseq/util/nearest_name.h"

namespace mixseq {
namespace {

std::string join_path(const std::vector<std::string>& prefix, const char* key) {
  std::string path;
  for (const auto& part : prefix) path += part + ".";
  return path + key;
}

// Walks the fields and tracks the dotted path of each; subclasses see every field with its path.
class PathVisitor : public ConfigVisitor {
 protected:
  void enter(const char* key) override { prefix_.emplace_back(key); }
  void leave() override { prefix_.pop_back(); }
  std::string path(const char* key) const { return join_path(prefix_, key); }
  std::vector<std::string> prefix_;
};

bool all_finite(double value) { return std::isfinite(value); }
bool all_finite(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(), [](double value) { return std::isfinite(value); });
}

// YAML reads ".nan" and ".inf" as numbers; no setting means anything with them. Errors quote
// `as_given` when there is one (the command line's text, before brackets were added), else the node.
template <typename T>
T convert(const YAML::Node& node, const std::string& where, const std::string& path, const char* expected,
          const std::string* as_given = nullptr) {
  const auto complaint = [&](const char* what) {
    std::ostringstream text;
    text << node;
    // (an empty command-line value was shown as YAML's null, '~')
    return Error(str_cat(where, ": ", path, " must be ", what, ", not ",
                         as_given == nullptr ? "'" + text.str() + "'"
                         : as_given->empty() ? std::string("an empty value")
                                             : "'" + *as_given + "'"));
  };
  T value;
  try {
    value = node.as<T>();
  } catch (const YAML::Exception&) {
    throw complaint(expected);
  }
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, std::vector<double>>) {
    if (!all_finite(value)) throw complaint(std::is_same_v<T, double> ? "a finite number" : "a list of finite numbers");
  }
  return value;
}

std::string where(const std::string& source, const YAML::Node& node) {
  return node.Mark().is_null() ? source : str_cat(source, ":", node.Mark().line + 1);
}

void check_choice(const std::string& value, const std::vector<std::string>& choices, const std::string& where,
                  const std::string& path) {
  MIXSEQ_CHECK(std::find(choices.begin(), choices.end(), value) != choices.end(), where, ": ", path, " is '", value,
               "'", did_you_mean(value, choices));
}

class YamlReader : public PathVisitor {
 public:
  YamlReader(const YAML::Node& root, std::string source) : source_(std::move(source)) { levels_.push_back({root, {}}); }

  void field(const char* key, int64_t& value, const char* help) override { read(key, value, "an integer"); }
  void field(const char* key, double& value, const char* help) override { read(key, value, "a number"); }
  void field(const char* key, bool& value, const char* help) override { read(key, value, "true or false"); }
  void field(const char* key, std::string& value, const char* help) override { read(key, value, "a string"); }
  void field(const char* key, std::vector<double>& value, const char* help) override {
    read(key, value, "a list of numbers");
  }
  void field(const char* key, std::vector<int64_t>& value, const char* help) override {
    read(key, value, "a list of integers");
  }
  void choice(const char* key, std::string& value, const std::vector<std::string>& choices,
              const char* help) override {
    if (const auto node = read(key, value, "a string")) check_choice(value, choices, where(source_, node), path(key));
  }

  // Checks the root level for unknown keys.
  void finish() { check_unknown_keys(); }

 protected:
  void enter(const char* key) override {
    const YAML::Node node = lookup(key);
    MIXSEQ_CHECK(!node || node.IsMap() || node.IsNull(), where(source_, node), ": ", path(key),
                 " must be a section of keys");
    PathVisitor::enter(key);
    levels_.push_back({node && node.IsMap() ? node : YAML::Node(), {}});
  }
  void leave() override {
    check_unknown_keys();
    levels_.pop_back();
    PathVisitor::leave();
  }

 private:
  struct Level {
    YAML::Node node;                // the map for this section (null when the file leaves it out)
    std::vector<std::string> keys;  // every key the struct knows at this level
  };

  YAML::Node lookup(const char* key) {
    levels_.back().keys.emplace_back(key);
    const YAML::Node& map = levels_.back().node;
    return map && map.IsMap() ? map[key] : YAML::Node();
  }

  template <typename T>
  YAML::Node read(const char* key, T& value, const char* expected) {
    const YAML::Node node = lookup(key);
    if (node && !node.IsNull()) value = convert<T>(node, where(source_, node), path(key), expected);
    return node;
  }

  void check_unknown_keys() {
    const Level& level = levels_.back();
    if (!level.node || !level.node.IsMap()) return;
    for (const auto& entry : level.node) {
      // YAML allows lists, maps and nothing as keys ("? [a, b]"); as<std::string>() would throw
      // yaml-cpp's own exception past every caller (found by fuzz_config).
      if (!entry.first.IsScalar()) {
        std::string section;
        for (const auto& part : prefix_) section += (section.empty() ? "" : ".") + part;
        throw Error(str_cat(where(source_, entry.first), ": a key ",
                            section.empty() ? "at the top level" : "in section '" + section + "'", " is ",
                            entry.first.IsSequence() ? "a list" : entry.first.IsMap() ? "a map" : "empty",
                            "; keys are names"));
      }
      const auto key = entry.first.as<std::string>();
      if (std::find(level.keys.begin(), level.keys.end(), key) == level.keys.end())
        throw Error(str_cat(where(source_, entry.first), ": unknown key '", join_path(prefix_, key.c_str()), "'",
                            did_you_mean(key, level.keys)));
    }
  }

  std::string source_;
  std::vector<Level> levels_;
};

class OverrideApplier : public PathVisitor {
 public:
  OverrideApplier(std::string target, std::string text) : target_(std::move(target)), text_(std::move(text)) {}
  bool applied() const { return applied_; }

  void field(const char* key, int64_t& value, const char* help) override { set(key, value, "an integer"); }
  void field(const char* key, double& value, const char* help) override { set(key, value, "a number"); }
  void field(const char* key, bool& value, const char* help) override { set(key, value, "true or false"); }
  void field(const char* key, std::string& value, const char* help) override {
    if (path(key) == target_) value = text_, applied_ = true;
  }
  void field(const char* key, std::vector<double>& value, const char* help) override {
    // "0.9,0.98" as well as "[0.9, 0.98]"
    const bool bracketed = !text_.empty() && text_.front() == '[';
    set(key, value, "a list of numbers", bracketed ? text_ : "[" + text_ + "]");
  }
  void field(const char* key, std::vector<int64_t>& value, const char* help) override {
    // "2000,10000" as well as "[2000, 10000]"; "" or "[]" is the empty list
    const bool bracketed = !text_.empty() && text_.front() == '[';
    set(key, value, "a list of integers", bracketed ? text_ : "[" + text_ + "]");
  }
  void choice(const char* key, std::string& value, const std::vector<std::string>& choices,
              const char* help) override {
    if (path(key) != target_) return;
    check_choice(text_, choices, "command line", "--" + target_);
    value = text_, applied_ = true;
  }

 private:
  template <typename T>
  void set(const char* key, T& value, const char* expected, const std::string& yaml = {}) {
    if (path(key) != target_) return;
    YAML::Node node;
    try {
      node = YAML::Load(yaml.empty() ? text_ : yaml);
    } catch (const YAML::Exception&) {
      throw Error(str_cat("command line: --", target_, " must be ", expected, ", not '", text_, "'"));
    }
    value = convert<T>(node, "command line", "--" + target_, expected, &text_);
    applied_ = true;
  }

  std::string target_, text_;
  bool applied_ = false;
};

class PathLister : public PathVisitor {
 public:
  std::vector<std::pair<std::string, std::string>> paths;
  void field(const char* key, int64_t&, const char* help) override { paths.emplace_back(path(key), help); }
  void field(const char* key, double&, const char* help) override { paths.emplace_back(path(key), help); }
  void field(const char* key, bool&, const char* help) override { paths.emplace_back(path(key), help); }
  void field(const char* key, std::string&, const char* help) override { paths.emplace_back(path(key), help); }
  void field(const char* key, std::vector<double>&, const char* help) override { paths.emplace_back(path(key), help); }
  void field(const char* key, std::vector<int64_t>&, const char* help) override { paths.emplace_back(path(key), help); }
  void choice(const char* key, std::string&, const std::vector<std::string>&, const char* help) override {
    paths.emplace_back(path(key), help);
  }
};

class YamlWriter : public ConfigVisitor {
 public:
  YamlWriter() { out_ << YAML::BeginMap; }
  std::string finish() {
    out_ << YAML::EndMap;
    return std::string(out_.c_str()) + "\n";
  }

  void field(const char* key, int64_t& value, const char* help) override { write(key, value, help); }
  void field(const char* key, double& value, const char* help) override { write(key, shortest(value), help); }
  void field(const char* key, bool& value, const char* help) override { write(key, value, help); }
  void field(const char* key, std::string& value, const char* help) override { write(key, value, help); }
  void field(const char* key, std::vector<double>& value, const char* help) override {
    out_ << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const double number : value) out_ << shortest(number);
    out_ << YAML::EndSeq << YAML::Comment(help);
  }
  void field(const char* key, std::vector<int64_t>& value, const char* help) override {
    out_ << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const int64_t number : value) out_ << number;
    out_ << YAML::EndSeq << YAML::Comment(help);
  }
  void choice(const char* key, std::string& value, const std::vector<std::string>&, const char* help) override {
    write(key, value, help);
  }

 protected:
  void enter(const char* key) override { out_ << YAML::Key << key << YAML::Value << YAML::BeginMap; }
  void leave() override { out_ << YAML::EndMap; }

 private:
  template <typename T>
  void write(const char* key, const T& value, const char* help) {
    out_ << YAML::Key << key << YAML::Value << value;
    if (help && *help) out_ << YAML::Comment(help);
  }
  // The shortest text that reads back as the same double ("0.1", not "0.10000000000000001").
  static std::string shortest(double value) {
    char text[32];
    const auto result = std::to_chars(text, text + sizeof text, value);
    return std::string(text, result.ptr);
  }
  YAML::Emitter out_;
};

// A YamlWriter that leaves out the fields and sections at some dotted paths.
class ExcludingYamlWriter : public YamlWriter {
 public:
  explicit ExcludingYamlWriter(const std::vector<std::string>& excluded) : excluded_(excluded) {}

  void field(const char* key, int64_t& value, const char* help) override { pass(key, value, help); }
  void field(const char* key, double& value, const char* help) override { pass(key, value, help); }
  void field(const char* key, bool& value, const char* help) override { pass(key, value, help); }
  void field(const char* key, std::string& value, const char* help) override { pass(key, value, help); }
  void field(const char* key, std::vector<double>& value, const char* help) override { pass(key, value, help); }
  void field(const char* key, std::vector<int64_t>& value, const char* help) override { pass(key, value, help); }
  void choice(const char* key, std::string& value, const std::vector<std::string>& choices,
              const char* help) override {
    if (!left_out(key)) YamlWriter::choice(key, value, choices, help);
  }

 protected:
  void enter(const char* key) override {
    if (skipped_depth_ > 0 || left_out(key)) {
      ++skipped_depth_;
    } else {
      YamlWriter::enter(key);
    }
    prefix_.emplace_back(key);
  }
  void leave() override {
    prefix_.pop_back();
    if (skipped_depth_ > 0) {
      --skipped_depth_;
    } else {
      YamlWriter::leave();
    }
  }

 private:
  bool left_out(const char* key) const { return skipped_depth_ > 0 || within_any(join_path(prefix_, key), excluded_); }
  template <typename T>
  void pass(const char* key, T& value, const char* help) {
    if (!left_out(key)) YamlWriter::field(key, value, help);
  }

  const std::vector<std::string>& excluded_;
  std::vector<std::string> prefix_;
  int skipped_depth_ = 0;  // > 0 inside a section that is left out
};

// A key set twice in one map (yaml-cpp keeps both and reads the first: "num_layers: 2" then
// "num_layers: 3" trained 2 layers, and a second "model:" section was never read) is an error
// naming both lines.
void refuse_duplicate_keys(const YAML::Node& node, const std::string& source, const std::string& prefix) {
  if (node.IsSequence()) {
    for (const auto& item : node) refuse_duplicate_keys(item, source, prefix);
    return;
  }
  if (!node.IsMap()) return;
  std::map<std::string, int> first_lines;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) continue;  // a key that is no name: read_config_yaml says so
    const std::string key = entry.first.Scalar();
    const int line = entry.first.Mark().line + 1;
    const auto [first, inserted] = first_lines.emplace(key, line);
    MIXSEQ_CHECK(inserted, source, ":", line, ": '", prefix, key, "' is set twice (also at line ", first->second,
                 "); YAML reads only one of them: keep one");
    refuse_duplicate_keys(entry.second, source, prefix + key + ".");
  }
}

// The YAML text parsed; text that is not YAML is an error naming source and line, and so are
// keys set twice and a second document ("---"), which yaml-cpp ignores.
YAML::Node parse_yaml(const std::string& yaml, const std::string& source) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(yaml);
  } catch (const YAML::ParserException& e) {
    throw Error(str_cat(source, ":", e.mark.line + 1, ": not valid YAML: ", e.msg));
  }
  if (documents.empty()) return YAML::Node();
  for (size_t i = 1; i < documents.size(); ++i)
    MIXSEQ_CHECK(documents[i].IsNull(), source, ":", documents[i].Mark().line + 1,
                 ": a second YAML document (after \"---\"), which would be ignored; a config is one document");
  refuse_duplicate_keys(documents.front(), source, "");
  return documents.front();
}

// The whole text of a config file.
std::string read_config_text(const std::string& path) {
  // An ifstream opens a directory and reads nothing: the config was empty ("data.dir is empty").
  MIXSEQ_CHECK(!std::filesystem::is_directory(path), "config file '", path,
               "' is a directory; give a YAML file, such as configs/gnmt_tiny.yaml");
  std::ifstream in(path);
  MIXSEQ_CHECK(in.is_open(), "cannot open config file '", path, "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every leaf key a YAML map sets, with its dotted path and line.
void list_set_keys(const YAML::Node& map, const std::string& prefix, const std::string& source,
                   std::vector<ConfigKeyPlace>& keys) {
  for (const auto& entry : map) {
    const std::string path = prefix + entry.first.as<std::string>();
    if (entry.second.IsMap()) {
      list_set_keys(entry.second, path + ".", source, keys);
    } else {
      keys.push_back({path, str_cat(source, ":", entry.first.Mark().line + 1)});
    }
  }
}

}  // namespace

bool within_any(const std::string& path, const std::vector<std::string>& prefixes) {
  for (const auto& prefix : prefixes)
    if (path == prefix || (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
                           path[prefix.size()] == '.'))
      return true;
  return false;
}

std::string config_to_yaml_excluding(const ConfigFields& fields, const std::vector<std::string>& excluded) {
  ExcludingYamlWriter writer(excluded);
  fields(writer);
  return writer.finish();
}

std::vector<ConfigKeyPlace> config_keys_in_yaml(const std::string& yaml, const std::string& source) {
  const YAML::Node root = parse_yaml(yaml, source);
  std::vector<ConfigKeyPlace> keys;
  if (root && root.IsMap()) list_set_keys(root, "", source, keys);
  return keys;
}

std::vector<ConfigKeyPlace> config_keys_in_file(const std::string& path) {
  return config_keys_in_yaml(read_config_text(path), path);
}

namespace {

void read_yaml(const std::string& yaml, const std::string& source, const ConfigFields& fields, bool whole) {
  const YAML::Node root = parse_yaml(yaml, source);
  MIXSEQ_CHECK(!root || root.IsNull() || root.IsMap(), source, ": a configuration must be a map of keys");
  YamlReader reader(root, source);
  fields(reader);
  if (whole) reader.finish();  // sections read alone leave the root's other keys to their readers
}

}  // namespace

void read_config_yaml(const std::string& yaml, const std::string& source, const ConfigFields& fields) {
  read_yaml(yaml, source, fields, /*whole=*/true);
}

void read_config_yaml_sections(const std::string& yaml, const std::string& source, const ConfigFields& fields) {
  read_yaml(yaml, source, fields, /*whole=*/false);
}

void read_config_file(const std::string& path, const ConfigFields& fields) {
  read_config_yaml(read_config_text(path), path, fields);
}

void apply_config_override(const std::string& path, const std::string& value, const ConfigFields& fields) {
  OverrideApplier applier(path, value);
  fields(applier);
  if (applier.applied()) return;
  std::vector<std::string> known;
  for (const auto& entry : config_paths(fields)) known.push_back(entry.first);
  throw Error(str_cat("unknown option --", path, did_you_mean(path, known)));
}

void apply_config_overrides(const std::vector<ConfigOverride>& overrides, const ConfigFields& fields) {
  for (const auto& entry : overrides) apply_config_override(entry.path, entry.value, fields);
}

std::string config_to_yaml(const ConfigFields& fields) {
  YamlWriter writer;
  fields(writer);
  return writer.finish();
}

std::vector<std::pair<std::string, std::string>> config_paths(const ConfigFields& fields) {
  PathLister lister;
  fields(lister);
  return lister.paths;
}

}  // namespace mixseq
