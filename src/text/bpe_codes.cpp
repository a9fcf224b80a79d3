#include "mixseq/text/bpe_codes.h"

#include <utility>

#include "mixseq/util/error.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/output_file.h"
#include "subword_nmt_text.h"

namespace mixseq {
namespace {

constexpr std::string_view kVersionPrefix = "#version:";

// apply_bpe.py: version = the last whitespace-separated field of the header, trailing ".0"s dropped.
BpeCodes::Version parse_version(const LineReader& reader, std::string_view header) {
  std::string_view field = strip_subword_nmt(header.substr(kVersionPrefix.size()));
  if (field.find(' ') != std::string_view::npos) field = field.substr(field.rfind(' ') + 1);
  if (field == "byte")
    reader.fail("byte-level BPE codes (\"#version: 0.2 byte\") are not supported; learn codes with `mixseq bpe learn`");
  std::string version(field);
  for (size_t dot; (dot = version.rfind('.')) != std::string::npos && dot + 1 < version.size() &&
                   version.find_first_not_of('0', dot + 1) == std::string::npos;)
    version.resize(dot);
  if (version == "0.1") return BpeCodes::Version::k0_1;
  if (version == "0.2") return BpeCodes::Version::k0_2;
  reader.fail("unsupported BPE codes version '", field, "'; supported: 0.1, 0.2");
}

}  // namespace

BpeCodes::BpeCodes(std::vector<BpeMerge> merges, Version version, std::string source)
    : merges_(std::move(merges)), version_(version), source_(std::move(source)) {}

BpeCodes BpeCodes::load(const std::string& path, int64_t max_merges) {
  MIXSEQ_CHECK(max_merges >= -1, "max_merges must be -1 (all) or >= 0, got ", max_merges);
  LineReader reader(path);
  Version version = Version::k0_1;
  // apply_bpe.py reads the rest of the file and splits it on "\n" after dropping trailing "\n"s:
  // empty lines at the end are ignored, empty lines inside are errors.
  std::vector<std::pair<std::string, int64_t>> lines;  // (text, line number)
  int64_t trailing_empty_lines = 0;
  for (std::string line; reader.next(line);) {
    if (reader.line_number() == 1 && line.compare(0, kVersionPrefix.size(), kVersionPrefix) == 0) {
      version = parse_version(reader, line);
      continue;
    }
    trailing_empty_lines = line.empty() ? trailing_empty_lines + 1 : 0;
    lines.emplace_back(std::move(line), reader.line_number());
  }
  lines.resize(lines.size() - trailing_empty_lines);
  if (max_merges >= 0 && static_cast<size_t>(max_merges) < lines.size()) lines.resize(max_merges);

  std::vector<BpeMerge> merges;
  merges.reserve(lines.size());
  for (const auto& [text, line_number] : lines) {
    const std::string_view merge = strip_subword_nmt(text);
    const size_t space = merge.find(' ');
    if (space == std::string_view::npos || merge.find(' ', space + 1) != std::string_view::npos)
      throw input_error(reader.path(), line_number, "invalid BPE merge '", text,
                        "': a line must hold exactly two symbols separated by one space");
    merges.push_back({std::string(merge.substr(0, space)), std::string(merge.substr(space + 1))});
  }
  return BpeCodes(std::move(merges), version, path);
}

void BpeCodes::save(const std::string& path) const {
  OutputFile out(path);
  if (version_ == Version::k0_2) out.stream() << "#version: 0.2\n";
  for (const auto& merge : merges_) out.stream() << merge.left << ' ' << merge.right << '\n';
  out.commit();
}

}  // namespace mixseq
