#include "engine/loader/load_util.h"

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

}  // namespace pagedchat::load
