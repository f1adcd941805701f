// libFuzzer target for the Hugging Face JSON side files (engine/loader/hf/hf_config.cpp):
// config.json (parse_hf_config: architecture, shapes, RoPE scaling, refusals by name),
// tokenizer_config.json and generation_config.json. Every input goes through all three; each must
// parse or throw std::runtime_error (nlohmann's own errors included), never crash.
// Built with PAGEDCHAT_FUZZ (clang); see tests/fuzz/CMakeLists.txt.
#include <cstdint>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/loader/hf/hf_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // nlohmann::json::exception derives from std::exception, not std::runtime_error: one escaping
  // a parser is a bug (the loader reports runtime_errors with the file's name).
  try {
    (void)pagedchat::parse_hf_config(text, "config.json");
  } catch (const std::runtime_error&) {
  }
  try {
    (void)pagedchat::parse_tokenizer_config(text, "tokenizer_config.json");
  } catch (const std::runtime_error&) {
  }
  try {
    (void)pagedchat::parse_generation_config(text, "generation_config.json");
  } catch (const std::runtime_error&) {
  }
  return 0;
}
