// OpenAIServing: the OpenAI API's completions and chat completions on an AsyncEngineClient,
// independent of HTTP (vLLM's serving_completion.py / serving_chat.py). A call is started first
// (prompts rendered and tokenized, every request checked and queued: errors are thrown as ApiError
// before any byte is sent), then either collected into one response object or streamed as
// server-sent events.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/async_engine_client.h"
#include "engine/entrypoints/openai/chat_reply.h"
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
  /// Chat: how the reply's text becomes reasoning_content, content and tool_calls.
  ChatReplyOptions reply;
};

/// Writes one server-sent event's data (a JSON text or "[DONE]"); false when the client is gone.
using EventWriter = std::function<bool(const std::string& data)>;

/// The name a model is served under by default: its file or folder name ("Qwen3-8B-Q4_K_M.gguf",
/// "Llama-3.2-1B-Instruct"), never the path (which would tell clients about the machine);
/// "random:..." specs as they are.
std::string default_served_model_name(const std::string& model_path);

class OpenAIServing;

/// The server-sent events of a streamed call, taken one at a time as they are ready (the HTTP
/// layer pulls them as it writes): the role chunks (chat), echoed prompts, a chunk per engine
/// output, the usage chunk when asked for, then "[DONE]". An engine failure (500) or a completion
/// the engine ended because no token satisfies its parameters (400, CompletionOutput::error) is
/// reported as an error object before "[DONE]", in place of the usage chunk.
class EventSource {
 public:
  EventSource(OpenAIServing& serving, Generation& g);
  ~EventSource();
  /// The next event's data; waits up to `timeout` for the engine. nullopt when none came in time,
  /// or when the stream is over (finished()).
  std::optional<std::string> next(std::chrono::milliseconds timeout);
  bool finished() const { return finished_; }
  /// Aborts the call's requests (the client is gone).
  void abort();

 private:
  struct State;
  OpenAIServing& serving_;
  Generation& g_;
  std::unique_ptr<State> state_;
  std::deque<std::string> ready_;
  bool engine_done_ = false, finished_ = false;
};

class OpenAIServing {
 public:
  /// `chat_template`: as resolve_chat_template()'s override ("auto" = the model's own). Throws
  /// ChatTemplateError for an unknown name or an unreadable .jinja file. `log` receives warnings.
  /// `llm`: AsyncLLM (pagedchat-cli serve) or the app's engine worker; its model must stay loaded
  /// while this object lives.
  OpenAIServing(AsyncEngineClient& llm, std::string served_model_name, const std::string& chat_template = "auto",
                std::function<void(const std::string&)> log = {});

  const std::string& served_model_name() const { return model_name_; }
  /// A request's own `chat_template` (vLLM's field) is rendered, in the template sandbox, only
  /// when this is set (pagedchat-cli serve --trust-request-chat-template); otherwise it is a 400.
  void set_trust_request_chat_template(bool trust) { trust_request_template_ = trust; }
  /// GET /v1/models.
  nlohmann::json models() const;

  /// Queue the requests of a call; ApiError 400 (bad value, prompt too long for max_model_len),
  /// 404 (another model's name). Every request queued before a failure is aborted.
  Generation start_completion(const CompletionRequest& request);
  Generation start_chat(const ChatCompletionRequest& request);

  /// Waits for every output and returns the response object. ApiError 500 when the engine failed,
  /// 400 when it ended a completion because no token satisfies the request's parameters.
  /// `gone` (checked about every 100 ms): the client is gone; the call's requests are aborted and
  /// ApiError 499 is thrown.
  nlohmann::json collect(Generation& g, const std::function<bool()>& gone = {});
  /// Streams chunks through `write`, then "[DONE]". When `write` fails (client gone) the call's
  /// requests are aborted (their blocks freed) and false is returned.
  bool stream(Generation& g, const EventWriter& write);
  /// Aborts every request of `g` still running.
  void abort(const Generation& g);

 private:
  friend class EventSource;
  /// `param`: the field a prompt-too-long error names ("prompt" or "messages").
  SamplingParams sampling_for(const SamplingRequest& s, int prompt_len, const char* param) const;
  /// Token ids of `text` (a completion prompt, or a rendered chat), refusing one that cannot fit
  /// the context before all of it is tokenized: a prefix of max_model_len × 16 bytes is
  /// tokenized first, and when it alone is more than the context holds the request is a 400.
  /// The images of a chat call placed in its prompt: `ids` becomes the prompt's ids with each
  /// image's positions (ApiError 400 for a model without a projector, a bad image naming its
  /// part, a prompt past max_model_len).
  std::vector<MultiModalPlaceholder> place_images(const ChatCompletionRequest& r, const TemplatedText& prompt,
                                                  const ChatEncodeOptions& enc, std::vector<int>& ids) const;
  std::vector<int> encode_bounded(const TemplatedText& text, const ChatEncodeOptions* chat, const char* param) const;
  /// A Generation's identity (id, time, model, n); ApiError 404 for another model's name.
  Generation new_generation(Generation::Kind kind, const std::string& model, const SamplingRequest& s, bool stream,
                            bool include_usage);
  std::string next_id(const char* prefix);

  AsyncEngineClient& llm_;
  std::string model_name_;
  std::string model_path_;  ///< also accepted as the model's name (older clients sent the path)
  ChatTemplate template_;
  ChatStopConditions template_stops_;
  std::function<void(const std::string&)> log_;
  bool trust_request_template_ = false;
  std::atomic<unsigned long long> counter_{0};
  unsigned long long id_salt_ = 0;
};

}  // namespace pagedchat::openai
