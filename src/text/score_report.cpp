#include "mixseq/text/score_report.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// A JSON string literal as json.dumps(ensure_ascii=False) writes it.
std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
          out += escaped;
        } else {
          out.push_back(c);
        }
    }
  }
  return out + "\"";
}

}  // namespace

std::string signature_version() { return "2.x+mixseq-" MIXSEQ_VERSION; }

std::string format_signature(const std::vector<SignatureField>& signature, bool short_keys) {
  std::string out;
  for (const auto& field : signature) {
    if (!out.empty()) out.push_back('|');
    out += (short_keys ? field.short_key : field.key) + ":" + field.value;
  }
  return out;
}

std::string format_decimal(double value, int decimals) {
  MIXSEQ_CHECK(decimals >= 0, "the number of decimals must be >= 0, got ", decimals);
  // printf rounds the exact binary value half-to-even, as Python's f'{x:.{n}f}' does.
  const int length = std::snprintf(nullptr, 0, "%.*f", decimals, value);
  std::string out(static_cast<size_t>(length), '\0');
  std::snprintf(out.data(), out.size() + 1, "%.*f", decimals, value);
  return out;
}

std::string format_score_line(const ScoreReport& report, int width, bool short_signature) {
  std::string line = report.name;
  if (!report.signature.empty()) line += "|" + format_signature(report.signature, short_signature);
  line += " = " + format_decimal(report.score, width);
  if (!report.verbose.empty()) line += " " + report.verbose;
  return line;
}

std::string format_score_json(const ScoreReport& report, int width) {
  // sacreBLEU stores float(f'{score:.{width}f}'), so the number is the rounded one.
  const double rounded = std::strtod(format_decimal(report.score, width).c_str(), nullptr);
  std::string out = "{\n";
  out += " \"name\": " + json_string(report.name) + ",\n";
  out += " \"score\": " + python_float_repr(rounded) + ",\n";
  out += " \"signature\": " + json_string(format_signature(report.signature, false));
  if (!report.verbose.empty()) out += ",\n \"verbose_score\": " + json_string(report.verbose);
  for (const auto& field : report.signature) out += ",\n " + json_string(field.key) + ": " + json_string(field.value);
  return out + "\n}";
}

std::string python_float_repr(double value) {
  // Shortest round-trip digits, then CPython's layout for repr (float_repr_style 'short'):
  // positional when the decimal exponent is in [-4, 16), scientific otherwise.
  MIXSEQ_CHECK(std::isfinite(value), "python_float_repr needs a finite value, got ", value);
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  const std::string text(buffer, result.ptr);  // "-d.ddde+XX"
  const size_t e = text.find('e');
  const bool negative = text[0] == '-';
  std::string digits;
  for (size_t i = negative ? 1 : 0; i < e; ++i)
    if (text[i] != '.') digits.push_back(text[i]);
  const int exponent = std::atoi(text.c_str() + e + 1);
  const int point = exponent + 1;  // digits are 0.d1d2... x 10^point
  std::string out = negative ? "-" : "";
  if (point <= -4 || point > 16) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char exp_text[16];
    std::snprintf(exp_text, sizeof exp_text, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + exp_text;
  }
  if (point <= 0) return out + "0." + std::string(static_cast<size_t>(-point), '0') + digits;
  if (static_cast<size_t>(point) >= digits.size())
    return out + digits + std::string(static_cast<size_t>(point) - digits.size(), '0') + ".0";
  return out + digits.substr(0, static_cast<size_t>(point)) + "." + digits.substr(static_cast<size_t>(point));
}

}  // namespace mixseq
