// Internal: how the interpreter's parts report failures and share one render's budget.
#pragma once

#include <cstddef>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "engine/text/jinja/jinja.h"

namespace pagedchat::jinja::detail {

struct DictObj;

/// Thrown by values, filters and built-ins, which do not know where in the template they run;
/// the interpreter turns it into an Error at the position of the expression being evaluated.
struct Failure {
  Error::Kind kind;
  std::string message;
};

[[noreturn]] inline void fail(std::string message) { throw Failure{Error::Kind::kRender, std::move(message)}; }
[[noreturn]] inline void fail_limit(std::string message) { throw Failure{Error::Kind::kLimit, std::move(message)}; }

/// The state of one render that every part charges against.
struct Ctx {
  explicit Ctx(const Limits& l, std::time_t when) : limits(l), now(when) {}

  Limits limits;
  std::size_t steps = 0;
  std::size_t depth = 0;
  std::time_t now;
  /// Every namespace the render created: their attributes are cleared at the end, which breaks
  /// any reference cycle a template built through them (ns.self = ns).
  std::vector<std::shared_ptr<DictObj>> namespaces;

  void step() {
    if (++steps > limits.max_steps) exceeded_steps();
  }
  /// Work proportional to `bytes` bytes copied.
  void charge_bytes(std::size_t bytes) {
    steps += bytes / 32;
    if (steps > limits.max_steps) exceeded_steps();
  }
  /// Work proportional to `items` list items handled.
  void charge_items(std::size_t items) {
    steps += items;
    if (steps > limits.max_steps) exceeded_steps();
  }
  void check_string_size(std::size_t bytes) const {
    if (bytes > limits.max_output_bytes) {
      fail_limit("a string of the render would be longer than max_output_bytes (" +
                 std::to_string(limits.max_output_bytes) + " bytes)");
    }
  }
  void check_items(std::size_t items) const {
    if (items > limits.max_items) {
      fail_limit("a list or dict would have more than max_items (" + std::to_string(limits.max_items) + ") items");
    }
  }

 private:
  [[noreturn]] void exceeded_steps() const {
    fail_limit("the render took more than max_steps (" + std::to_string(limits.max_steps) +
               ") evaluation steps (an endless loop?)");
  }
};

/// One level of nested evaluation, `units` deep (a macro call weighs more: its C++ frames take
/// more stack than an expression's), and one step.
class DepthGuard {
 public:
  DepthGuard(Ctx& c, std::size_t units = 1) : c_(c), units_(units) {
    c_.step();
    if (c_.depth + units_ > c_.limits.max_depth) {
      fail_limit("templates nested or recursing deeper than max_depth (" + std::to_string(c_.limits.max_depth) +
                 ") levels");
    }
    c_.depth += units_;
  }
  ~DepthGuard() { c_.depth -= units_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;

 private:
  Ctx& c_;
  std::size_t units_;
};

/// Depth units of a macro or caller() call.
constexpr std::size_t kCallDepthUnits = 4;

}  // namespace pagedchat::jinja::detail
