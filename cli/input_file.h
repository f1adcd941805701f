// Reading a command's input file for pagedchat-cli.
#pragma once

#include <string>

namespace pagedchat::cli {

/// The bytes of `path` as they are ("-" = standard input). `what` names the file in the error
/// ("the messages file"). Throws std::runtime_error "cannot read <what> '<path>'".
std::string read_input_file(const std::string& path, const std::string& what = "the file");

}  // namespace pagedchat::cli
