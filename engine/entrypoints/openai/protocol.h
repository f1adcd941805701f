// The OpenAI API's request bodies as this server reads them (vLLM's
// vllm/entrypoints/openai/protocol.py: CompletionRequest, ChatCompletionRequest), checked field by
// field, and its error shape. Field names and ranges follow the OpenAI API reference
// (https://platform.openai.com/docs/api-reference) with vLLM's extra sampling fields (top_k,
// min_p, repetition_penalty, min_tokens, ignore_eos, stop_token_ids, include_stop_str_in_output,
// add_generation_prompt, continue_final_message, chat_template_kwargs).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "engine/sample/sampling_defaults.h"
#include "engine/sample/sampling_params.h"

namespace pagedchat::openai {

/// An error the API reports: the HTTP status and OpenAI's error object
/// {"error": {"message", "type", "param", "code"}}.
class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string message, std::string param = {}, std::string type = {});
  int status() const { return status_; }
  const std::string& param() const { return param_; }
  /// OpenAI's type for the status when none was given: 400 "invalid_request_error", 401
  /// "authentication_error", 404 "not_found_error", 413 "invalid_request_error", 503
  /// "service_unavailable", 500 "internal_server_error".
  const std::string& type() const { return type_; }
  nlohmann::json to_json() const;

 private:
  int status_;
  std::string param_, type_;
};

/// What one request may ask for (docs/security.md). Each bound keeps one client from taking the
/// engine thread or the batch from the others; beyond it the request gets a 400 naming the field
/// and the limit. The defaults follow what OpenAI's API accepts, with room: OpenAI takes 4 stop
/// strings and 2048 prompts per call.
struct RequestLimits {
  int max_stop_strings = 64;         ///< entries in `stop`
  int max_stop_string_bytes = 1024;  ///< bytes in one stop string
  int max_stop_token_ids = 1024;     ///< entries in `stop_token_ids`
  int max_sequences = 1024;          ///< prompts × n in one /v1/completions call (n alone for chat)
  int max_images = 16;               ///< "image_url" parts in one chat call
  /// Hosts whose http(s) image URLs are fetched (--allowed-media-domains; exact host names);
  /// empty: only data: URLs.
  std::vector<std::string> allowed_media_domains;
};

/// The deepest nesting of arrays and objects in a JSON text (strings and escapes skipped), counted
/// without parsing; stops counting at `limit` + 1. For any text, valid JSON or not.
int json_nesting_depth(const std::string& text, int limit);

/// A body parsed as JSON; ApiError 400 for malformed JSON, a non-object, or arrays and objects
/// nested deeper than `max_depth` (checked before parsing, so that nothing downstream recurses
/// deeper: every later walk of the request is bounded by it).
nlohmann::json parse_body(const std::string& body, int max_depth = 64);

/// The sampling fields both endpoints share, read into SamplingParams (ranges checked by
/// SamplingParams::validate() when the request is queued; types checked here).
struct SamplingRequest {
  SamplingParams params;
  SamplingFieldsSet set;          ///< fields the request gave (they win over the model's defaults)
  std::optional<int> max_tokens;  ///< unset = what the context leaves (vLLM's default)
};

/// POST /v1/completions. `prompt`: a string, an array of strings, an array of token ids, or an
/// array of arrays of token ids; each prompt is one engine request with `n` completions.
struct CompletionRequest {
  std::string model;  ///< "" when the request names none (the served model)
  std::vector<std::variant<std::string, std::vector<int>>> prompts;
  SamplingRequest sampling;
  bool stream = false;
  bool include_usage = false;  ///< stream_options.include_usage
  bool echo = false;
  std::optional<int> logprobs;  ///< 0..20: the top alternatives per token
};

/// POST /v1/chat/completions.
struct ChatCompletionRequest {
  std::string model;                ///< "" when the request names none (the served model)
  nlohmann::ordered_json messages;  ///< content parts joined into one string (images: kImageMarker)
  /// The bytes of each "image_url" part's data: URL, in the order of their markers in `messages`
  /// (engine/multimodal/mm_prompt.h), and each part's name for errors ("messages[1].content[0]").
  std::vector<std::vector<uint8_t>> images;
  std::vector<std::string> image_params;
  /// Per image: its http(s) URL when it is to be fetched (a host RequestLimits allows; `images`
  /// then holds nothing for it until OpenAIServing fetches it), else "".
  std::vector<std::string> image_urls;
  SamplingRequest sampling;
  bool stream = false;
  bool include_usage = false;
  bool logprobs = false;
  int top_logprobs = 0;  ///< 0..20, needs logprobs
  bool add_generation_prompt = true;
  bool continue_final_message = false;
  std::optional<bool> enable_thinking;    ///< chat_template_kwargs.enable_thinking
  std::string chat_template_kwargs_json;  ///< the other chat_template_kwargs, as a JSON object text
  std::string chat_template;              ///< a Jinja template for this call (vLLM's field); used only where trusted
  nlohmann::json tools = nlohmann::json::array();  ///< the functions the model may call (checked)
  /// "auto" (calls in the reply are parsed into tool_calls; the default with tools), "none",
  /// "required" (at least one call, by constrained decoding) or "function" (tool_choice_name's).
  std::string tool_choice = "none";
  std::string tool_choice_name;     ///< the function tool_choice names
  bool parallel_tool_calls = true;  ///< false: only the first call is returned
};

/// Throw ApiError 400 naming the field for a wrong type or value, or for a value beyond `limits`.
/// `raw_body`: the text `body` was parsed from, if at hand: a structured output's JSON Schema is
/// read from it again in its own order (properties are generated in the order the schema lists
/// them; nlohmann::json sorts keys).
CompletionRequest parse_completion_request(const nlohmann::json& body, const RequestLimits& limits = {},
                                           const std::string* raw_body = nullptr);
ChatCompletionRequest parse_chat_completion_request(const nlohmann::json& body, const RequestLimits& limits = {},
                                                    const std::string* raw_body = nullptr);

}  // namespace pagedchat::openai
