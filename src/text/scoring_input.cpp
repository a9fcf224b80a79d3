#include "mixseq/text/scoring_input.h"

#include <string_view>

#include "mixseq/util/utf8.h"
#include "mixseq/util/error.h"
#include "mixseq/util/line_reader.h"

namespace mixseq {
namespace {

// Python's universal newlines on a line LineReader split at "\n": "\r\n" is one line end,
// a lone "\r" ends a line as well.
void append_universal_newline_lines(std::string_view line, std::vector<std::string>& lines) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t start = 0;
  for (size_t pos; (pos = line.find('\r', start)) != std::string_view::npos; start = pos + 1)
    lines.emplace_back(rstrip_whitespace(line.substr(start, pos - start)));
  lines.emplace_back(rstrip_whitespace(line.substr(start)));
}

std::vector<std::string> read_stripped_lines(const std::string& path, std::string& display_name) {
  LineReader reader(path);
  reader.keep_carriage_returns = true;  // sacreBLEU's rules, applied below
  display_name = reader.path();
  std::vector<std::string> lines;
  for (std::string line; reader.next(line);) {
    if (path == "-") {
      append_universal_newline_lines(line, lines);
    } else {
      lines.emplace_back(rstrip_whitespace(line));
    }
  }
  return lines;
}

}  // namespace

ScoringInput read_scoring_input(const std::string& hypothesis_path, const std::vector<std::string>& reference_paths) {
  MIXSEQ_CHECK(!reference_paths.empty(), "no reference file given; name at least one before -i");
  int64_t from_stdin = hypothesis_path == "-" ? 1 : 0;
  for (const auto& path : reference_paths) from_stdin += path == "-" ? 1 : 0;
  MIXSEQ_CHECK(from_stdin <= 1, "the system output (-i) and the references read standard input ", from_stdin,
               " times between them; give all but one of them as files");
  ScoringInput input;
  std::string hypothesis_name;
  input.hypotheses = read_stripped_lines(hypothesis_path, hypothesis_name);
  MIXSEQ_CHECK(!input.hypotheses.empty(), "'", hypothesis_name, "' has no lines: nothing to score");

  std::vector<std::string> reference_names(reference_paths.size());
  bool counts_match = true;
  for (size_t r = 0; r < reference_paths.size(); ++r) {
    input.references.push_back(read_stripped_lines(reference_paths[r], reference_names[r]));
    counts_match = counts_match && input.references[r].size() == input.hypotheses.size();
  }
  if (!counts_match) {
    std::string counts = str_cat("'", hypothesis_name, "' has ", input.hypotheses.size(), " lines");
    for (size_t r = 0; r < reference_paths.size(); ++r)
      counts += str_cat(", '", reference_names[r], "' has ", input.references[r].size());
    throw Error(str_cat("the system output and the references have different line counts: ", counts,
                        "; every reference file needs one line per system output line"));
  }

  return input;
}

}  // namespace mixseq
