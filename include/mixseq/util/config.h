// Typed configuration. Every options struct lists its fields once, in a member
//
//   void visit(ConfigVisitor& v) {
//     v.field("hidden_size", hidden_size, "LSTM units per layer");
//     v.choice("precision", precision, {"fp32", "bf16"}, "arithmetic of the forward pass");
//     v.section("gnmt", gnmt);                        // a nested options struct
//   }
//
// and from that one list mixseq reads YAML files (unknown keys are errors that name the file,
// the line and the nearest known key), applies command-line overrides written as the YAML path
// ("--model.gnmt.hidden_size 512"), and writes the resolved configuration back as YAML for the
// log and the checkpoint. Structs keep their defaults for keys a file leaves out.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace mixseq {

class ConfigVisitor {
 public:
  virtual ~ConfigVisitor() = default;
  virtual void field(const char* key, int64_t& value, const char* help) = 0;
  virtual void field(const char* key, double& value, const char* help) = 0;
  virtual void field(const char* key, bool& value, const char* help) = 0;
  virtual void field(const char* key, std::string& value, const char* help) = 0;
  virtual void field(const char* key, std::vector<double>& value, const char* help) = 0;
  virtual void field(const char* key, std::vector<int64_t>& value, const char* help) = 0;
  // A string that must be one of `choices`.
  virtual void choice(const char* key, std::string& value, const std::vector<std::string>& choices,
                      const char* help) = 0;

  template <typename Section>
  void section(const char* key, Section& options) {
    enter(key);
    options.visit(*this);
    leave();
  }

 protected:
  virtual void enter(const char* key) = 0;
  virtual void leave() = 0;
};

// The fields of a root options struct, e.g. [&](ConfigVisitor& v) { config.visit(v); }.
using ConfigFields = std::function<void(ConfigVisitor&)>;

// Reads YAML text into the fields; `source` names it in errors ("train.yaml:12: ...").
void read_config_yaml(const std::string& yaml, const std::string& source, const ConfigFields& fields);
void read_config_file(const std::string& path, const ConfigFields& fields);

// As read_config_yaml, for a reader that needs only some sections of a larger configuration (a
// model loader reads the "model" section of the training config stored in a checkpoint): keys
// at the root that `fields` does not name are skipped, unknown keys inside the sections it
// names are still errors.
void read_config_yaml_sections(const std::string& yaml, const std::string& source, const ConfigFields& fields);

// Sets the field at a dotted path ("model.gnmt.hidden_size") from its text form, as it comes
// from the command line; an unknown path or a bad value throws mixseq::Error naming both.
void apply_config_override(const std::string& path, const std::string& value, const ConfigFields& fields);

// One such setting ("--train.precision bf16" on the command line, a pair from the library's train()).
struct ConfigOverride {
  std::string path;
  std::string value;
};

// Applies each in order (a later one for the same path wins).
void apply_config_overrides(const std::vector<ConfigOverride>& overrides, const ConfigFields& fields);

// The resolved configuration as YAML, one "key: value  # help" per field.
std::string config_to_yaml(const ConfigFields& fields);

// Every dotted path with its help, for --help listings.
std::vector<std::pair<std::string, std::string>> config_paths(const ConfigFields& fields);

}  // namespace mixseq
