// OpenAIServing: the OpenAI API's completions and chat completions on an AsyncEngineClient,
// independent of HTTP (vLLM's serving_completion.py / serving_chat.py). A call is started first
// (prompts rendered and tokenized, every request checked and queued: errors are thrown as ApiError
// before any byte is sent), then either collected into one response object or streamed as
// server-sent events.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/async_engine_client.h"
#include "engine/entrypoints/openai/protocol.h"
#include "engine/text/chat_template.h"

namespace pagedchat::openai {

/// One API call in flight: one engine request per prompt (n completions each), one output stream.
struct Generation {
  enum class Kind { kCompletion, kChat } kind = Kind::kCompletion;
  std::string id;         ///< "cmpl-…" / "chatcmpl-…"
  long long created = 0;  ///< Unix seconds
  std::string model;
  int n = 1;
  std::vector<std::string> request_ids;  ///< engine ids, one per prompt
  std::vector<std::vector<int>> prompt_token_ids;
  std::vector<std::string> echo_texts;  ///< completions with echo: each prompt's text
  bool stream = false;
  bool include_usage = false;
  std::optional<int> logprobs;  ///< top alternatives per token (chat: top_logprobs)
  std::shared_ptr<RequestStream> outputs;
};

/// Writes one server-sent event's data (a JSON text or "[DONE]"); false when the client is gone.
using EventWriter = std::function<bool(const std::string& data)>;

class OpenAIServing {
 public:
  /// `chat_template`: as resolve_chat_template()'s override ("auto" = the model's own). Throws
  /// ChatTemplateError for an unknown name or an unreadable .jinja file. `log` receives warnings.
  /// `llm`: AsyncLLM (pagedchat-cli serve) or the app's engine worker; its model must stay loaded
  /// while this object lives.
  OpenAIServing(AsyncEngineClient& llm, std::string served_model_name, const std::string& chat_template = "auto",
                std::function<void(const std::string&)> log = {});

  const std::string& served_model_name() const { return model_name_; }
  /// GET /v1/models.
  nlohmann::json models() const;

  /// Queue the requests of a call; ApiError 400 (bad value, prompt too long for max_model_len),
  /// 404 (another model's name). Every request queued before a failure is aborted.
  Generation start_completion(const CompletionRequest& request);
  Generation start_chat(const ChatCompletionRequest& request);

  /// Waits for every output and returns the response object. ApiError 500 when the engine failed.
  nlohmann::json collect(Generation& g);
  /// Streams chunks through `write`, then "[DONE]". When `write` fails (client gone) the call's
  /// requests are aborted (their blocks freed) and false is returned.
  bool stream(Generation& g, const EventWriter& write);
  /// Aborts every request of `g` still running.
  void abort(const Generation& g);

 private:
  SamplingParams sampling_for(const SamplingRequest& s, int prompt_len) const;
  /// A Generation's identity (id, time, model, n); ApiError 404 for another model's name.
  Generation new_generation(Generation::Kind kind, const std::string& model, const SamplingRequest& s, bool stream,
                            bool include_usage);
  std::string next_id(const char* prefix);

  AsyncEngineClient& llm_;
  std::string model_name_;
  ChatTemplate template_;
  ChatStopConditions template_stops_;
  std::function<void(const std::string&)> log_;
  std::atomic<unsigned long long> counter_{0};
  unsigned long long id_salt_ = 0;
};

}  // namespace pagedchat::openai
