#include "cli/input_file.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace pagedchat::cli {

std::string read_input_file(const std::string& path, const std::string& what) {
  std::ostringstream s;
  if (path == "-") {
    s << std::cin.rdbuf();
    return s.str();
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + what + " '" + path + "'");
  s << f.rdbuf();
  if (f.bad()) throw std::runtime_error("cannot read " + what + " '" + path + "'");
  return s.str();
}

}  // namespace pagedchat::cli
