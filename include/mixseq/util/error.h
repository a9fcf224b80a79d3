// Errors. Every mixseq failure throws mixseq::Error with a message that says what is wrong,
// the actual values and, where there is one, the fix. Problems in an input file are reported
// as "<path>:<line>: <what>", so that an editor can jump to them.
#pragma once

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

namespace mixseq {

class Error : public std::runtime_error {
 public:
  // A NUL byte in the message (quoted from a file: a label "sho\0rt") is written "\0": what()
  // is read as a C string, which would end the message there.
  explicit Error(const std::string& message) : std::runtime_error(without_nul(message)) {}
  explicit Error(const char* message) : std::runtime_error(message) {}

 private:
  static std::string without_nul(const std::string& message) {
    if (message.find('\0') == std::string::npos) return message;
    std::string printable;
    for (const char c : message) printable += c == '\0' ? std::string("\\0") : std::string(1, c);
    return printable;
  }
};

// Concatenates anything that has an operator<<, e.g. str_cat("n=", 3, "; x=", 0.5).
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

// An Error about one line of one input file ("train.de:12: empty line").
template <typename... Args>
Error input_error(const std::string& path, int64_t line, const Args&... what) {
  return Error(str_cat(path, ":", line, ": ", what...));
}

}  // namespace mixseq

// Throws mixseq::Error(str_cat(...)) when `cond` is false.
#define MIXSEQ_CHECK(cond, ...)                                   \
  do {                                                            \
    if (!(cond)) throw ::mixseq::Error(::mixseq::str_cat(__VA_ARGS__)); \
  } while (false)
