// libFuzzer target for the OpenAI-compatible server's request bodies
// (engine/entrypoints/openai/protocol.cpp): parse_body, then both endpoints' field checks
// (parse_completion_request, parse_chat_completion_request) and SamplingParams' checks, as
// the server runs them on a POST body. Each must succeed or throw ApiError, whose JSON error
// object, serialized as the server writes it (invalid UTF-8 replaced: a body's bytes may reach the
// message), must parse back; anything else is a bug.
// Built with PAGEDCHAT_FUZZ (clang); see tests/fuzz/CMakeLists.txt.
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "engine/entrypoints/openai/protocol.h"

namespace {

/// The error response body as api_server.cpp writes it; it must be valid JSON.
void check_error(const pagedchat::openai::ApiError& e) {
  const std::string body = e.to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (!nlohmann::json::parse(body).contains("error")) std::abort();
}

template <typename Parse>
void check(const nlohmann::json& body, Parse parse) {
  try {
    auto request = parse(body);
    try {
      request.sampling.params.validate();
      request.sampling.params.validate_for_vocab(32000);
    } catch (const std::invalid_argument&) {
      // Out of range: the server answers 400 with this message.
    }
  } catch (const pagedchat::openai::ApiError& e) {
    check_error(e);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  nlohmann::json body;
  try {
    body = pagedchat::openai::parse_body(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const pagedchat::openai::ApiError& e) {
    check_error(e);
    return 0;
  }
  // The server's limits (RequestLimits{}: its defaults).
  check(body, [](const nlohmann::json& b) { return pagedchat::openai::parse_completion_request(b); });
  check(body, [](const nlohmann::json& b) { return pagedchat::openai::parse_chat_completion_request(b); });
  return 0;
}
