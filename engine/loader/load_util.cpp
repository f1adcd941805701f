#include "engine/loader/load_util.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace pagedchat::load {

std::string shape_str(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

void fail_in(const std::string& name, const std::string& what) { throw std::runtime_error("'" + name + "': " + what); }

std::string brief(const nlohmann::json& value) {
  const std::string s = value.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

int json_nesting_depth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;  // the escaped character, whatever it is
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    }
  }
  return deepest;
}

nlohmann::json parse_json(std::string_view text, const std::string& name) {
  if (json_nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth)
    fail_in(name, "nests arrays and objects deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number beyond a double
    fail_in(name, std::string("not valid JSON: ") + e.what());
  }
}

}  // namespace pagedchat::load
