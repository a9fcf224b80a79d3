#include "option_checks.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "mixseq/util/error.h"

namespace mixseq::cli {
namespace {

// 1000000 rather than the 1e+06 an ostream prints, for the bounds in messages.
std::string format_bound(double value) {
  if (std::abs(value) < 9.0e15 && value == std::floor(value)) return std::to_string(static_cast<int64_t>(value));
  return str_cat(value);
}

// A validator that parses the value as a finite number and hands it to `complaint`, which returns
// what is wrong with it ("" when nothing is).
CLI::Validator number_check(std::string description, std::function<std::string(double)> complaint) {
  return CLI::Validator(
      [complaint](std::string& input) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(input, value)) return "'" + input + "' is not a number";
        if (!std::isfinite(value)) return input + " is not a finite number";
        const std::string problem = complaint(value);
        return problem.empty() ? "" : input + " is out of range; it must be " + problem;
      },
      std::move(description));
}

}  // namespace

CLI::Validator finite_number() {
  return number_check("FINITE", [](double) { return std::string(); });
}

CLI::Validator at_least(double minimum) {
  return number_check(">= " + format_bound(minimum), [minimum](double value) {
    return value >= minimum ? std::string() : "at least " + format_bound(minimum);
  });
}

CLI::Validator above(double minimum) {
  return number_check("> " + format_bound(minimum), [minimum](double value) {
    return value > minimum ? std::string() : "above " + format_bound(minimum);
  });
}

CLI::Validator in_range(double minimum, double maximum) {
  return number_check(format_bound(minimum) + ".." + format_bound(maximum), [minimum, maximum](double value) {
    return value >= minimum && value <= maximum
               ? std::string()
               : "in " + format_bound(minimum) + ".." + format_bound(maximum);
  });
}

void add_device_options(CLI::App* command, std::string& device, std::string& precision) {
  command->add_option("--device", device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  command->add_option("--precision", precision,
                      "auto (bf16 where native, else fp32), fp32, bf16, fp16 (GPU) or tf32 (GPU)")
      ->capture_default_str();
}

}  // namespace mixseq::cli
