#include "engine/entrypoints/openai/serving.h"

#include "engine/entrypoints/openai/media_fetch.h"
#include "engine/multimodal/image_decode.h"
#include "engine/multimodal/mm_prompt.h"
#include "engine/vision/vision_encoder.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>

namespace pagedchat::openai {

using json = nlohmann::json;

namespace serving_detail {
// Per choice (prompt index * n + completion index): what a response or a stream accumulates.
struct ChoiceState {
  std::string text;
  json logprobs;  // accumulated (collect) in the endpoint's shape
  std::optional<FinishReason> finish_reason;
  StopReason stop_reason;
  int num_tokens = 0;
  std::size_t text_offset = 0;
  bool role_sent = false;
  std::unique_ptr<ChatReplyStream> reply;  ///< streamed chat: reasoning and calls apart
};
}  // namespace serving_detail
using serving_detail::ChoiceState;

namespace {

long long unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Characters (code points) of UTF-8 text, as OpenAI's text_offset counts them.
std::size_t code_points(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// OpenAI's tool_calls: [{"id", "type": "function", "function": {"name", "arguments"}}], with
// "index" (from `first`) in a streamed delta.
json tool_calls_json(const std::vector<ToolCall>& calls, int first, bool streamed) {
  json list = json::array();
  for (std::size_t i = 0; i < calls.size(); ++i) {
    json c = {{"id", calls[i].id},
              {"type", "function"},
              {"function", {{"name", calls[i].name}, {"arguments", calls[i].arguments}}}};
    if (streamed) c["index"] = first + int(i);
    list.push_back(std::move(c));
  }
  return list;
}

// Streamed calls' deltas: index always; id, type and name in a call's first delta.
json tool_call_deltas_json(const std::vector<ToolCallDelta>& calls) {
  json list = json::array();
  for (const ToolCallDelta& d : calls) {
    json c = {{"index", d.index}};
    if (!d.id.empty()) {
      c["id"] = d.id;
      c["type"] = "function";
      c["function"] = {{"name", d.name}, {"arguments", d.arguments}};
    } else {
      c["function"] = {{"arguments", d.arguments}};
    }
    list.push_back(std::move(c));
  }
  return list;
}

// finish_reason as OpenAI writes it: "stop", "length", "abort", or null while unfinished.
json finish_reason_json(const std::optional<FinishReason>& r) {
  if (r) return std::string(to_string(*r));
  return nullptr;
}

json stop_reason_json(const StopReason& r) {
  if (const auto* s = std::get_if<std::string>(&r)) return *s;
  if (const auto* i = std::get_if<int>(&r)) return *i;
  return nullptr;
}

// The tokens of one logprob position sorted by rank (the sampled one may lie beyond the top-N).
std::vector<std::pair<int, const Logprob*>> by_rank(const std::map<int, Logprob>& m) {
  std::vector<std::pair<int, const Logprob*>> v;
  for (const auto& [id, lp] : m) v.emplace_back(id, &lp);
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second->rank < b.second->rank; });
  return v;
}

json bytes_of(const std::string& s) {
  json b = json::array();
  for (unsigned char c : s) b.push_back(int(c));
  return b;
}

// Logprobs of the new tokens of `c`, in the shape of each endpoint:
//   chat: {"content": [{"token", "logprob", "bytes", "top_logprobs": [{"token", "logprob", "bytes"}]}]}
//   completions: {"tokens", "token_logprobs", "top_logprobs": [{token: logprob}], "text_offset"}
json logprobs_json(const Generation& g, const CompletionOutput& c, std::size_t& text_offset) {
  if (!g.logprobs || !c.logprobs) return nullptr;
  const int top = *g.logprobs;
  if (g.kind == Generation::Kind::kChat) {
    json content = json::array();
    for (std::size_t i = 0; i < c.logprobs->size() && i < c.token_ids.size(); ++i) {
      const auto& m = (*c.logprobs)[i];
      auto it = m.find(c.token_ids[i]);
      if (it == m.end()) continue;
      json tops = json::array();
      for (const auto& [id, lp] : by_rank(m))
        if (lp->rank <= top)
          tops.push_back(
              {{"token", lp->decoded_token}, {"logprob", lp->logprob}, {"bytes", bytes_of(lp->decoded_token)}});
      content.push_back({{"token", it->second.decoded_token},
                         {"logprob", it->second.logprob},
                         {"bytes", bytes_of(it->second.decoded_token)},
                         {"top_logprobs", tops}});
    }
    return json{{"content", content}};
  }
  json tokens = json::array(), token_logprobs = json::array(), tops = json::array(), offsets = json::array();
  for (std::size_t i = 0; i < c.logprobs->size() && i < c.token_ids.size(); ++i) {
    const auto& m = (*c.logprobs)[i];
    auto it = m.find(c.token_ids[i]);
    if (it == m.end()) continue;
    tokens.push_back(it->second.decoded_token);
    token_logprobs.push_back(it->second.logprob);
    json alt = json::object();
    for (const auto& [id, lp] : by_rank(m))
      if (lp->rank <= top || id == c.token_ids[i]) alt[lp->decoded_token] = lp->logprob;
    tops.push_back(alt);
    offsets.push_back(text_offset);
    text_offset += code_points(it->second.decoded_token);
  }
  return json{{"tokens", tokens}, {"token_logprobs", token_logprobs}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

void append_logprobs(const Generation& g, json& acc, const json& add) {
  if (add.is_null()) return;
  if (acc.is_null()) {
    acc = add;
    return;
  }
  if (g.kind == Generation::Kind::kChat) {
    for (const auto& x : add["content"]) acc["content"].push_back(x);
  } else {
    for (const char* k : {"tokens", "token_logprobs", "top_logprobs", "text_offset"})
      for (const auto& x : add[k]) acc[k].push_back(x);
  }
}

int prompt_index(const Generation& g, const std::string& request_id) {
  for (std::size_t i = 0; i < g.request_ids.size(); ++i)
    if (g.request_ids[i] == request_id) return static_cast<int>(i);
  return -1;
}

json usage_json(const Generation& g, const std::vector<ChoiceState>& choices, int cached) {
  long long prompt = 0, completion = 0;
  for (const auto& p : g.prompt_token_ids) prompt += static_cast<long long>(p.size());
  for (const auto& c : choices) completion += c.num_tokens;
  json u = {{"prompt_tokens", prompt}, {"completion_tokens", completion}, {"total_tokens", prompt + completion}};
  u["prompt_tokens_details"] = {{"cached_tokens", cached}};
  return u;
}

}  // namespace

std::string default_served_model_name(const std::string& model_path) {
  if (model_path.rfind("random:", 0) == 0) return model_path;
  std::string p = model_path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const std::size_t slash = p.find_last_of('/');
  const std::string name = slash == std::string::npos ? p : p.substr(slash + 1);
  return name.empty() ? std::string("model") : name;
}

OpenAIServing::OpenAIServing(AsyncEngineClient& llm, std::string served_model_name, const std::string& chat_template,
                             std::function<void(const std::string&)> log)
    : llm_(llm),
      model_name_(std::move(served_model_name)),
      template_([&] {
        std::string warning;
        ChatTemplate t = resolve_chat_template(chat_template, llm.engine().chat_template(), "'" + model_name_ + "'",
                                               &warning);
        if (!warning.empty() && log) log(warning);
        return t;
      }()),
      log_(std::move(log)) {
  model_path_ = llm_.engine().engine_config().model;
  if (llm_.engine().has_tokenizer()) template_stops_ = chat_stop_conditions(template_, llm_.engine().tokenizer());
  if (template_.name() == "none" && log_)
    log_(
        "the model has no chat template: /v1/chat/completions joins the message contents as they are "
        "(give --chat-template NAME or a .jinja file for a chat format)");
  id_salt_ = std::random_device{}();
  id_salt_ = (id_salt_ << 32) ^ std::random_device{}();
}

json OpenAIServing::models() const {
  const int max_len = llm_.engine().engine_config().max_model_len;
  return json{{"object", "list"},
              {"data", json::array({json{{"id", model_name_},
                                         {"object", "model"},
                                         {"created", unix_now()},
                                         {"owned_by", "pagedchat"},
                                         {"root", model_name_},
                                         {"max_model_len", max_len}}})}};
}

std::string OpenAIServing::next_id(const char* prefix) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%08llx", id_salt_, counter_.fetch_add(1) + 1);
  return std::string(prefix) + buf;
}

// vLLM's rules: max_tokens defaults to what the context leaves (or the model's max_new_tokens when
// smaller); a prompt that leaves no room, or a max_tokens beyond it, is a 400.
SamplingParams OpenAIServing::sampling_for(const SamplingRequest& s, int prompt_len, const char* param) const {
  const int max_model_len = llm_.engine().engine_config().max_model_len;
  SamplingParams p = s.params;
  apply_sampling_defaults(llm_.engine().sampling_defaults(), p, s.set);
  const int room = max_model_len - prompt_len;
  if (room <= 0)
    throw ApiError(400,
                   "This model's maximum context length is " + std::to_string(max_model_len) +
                       " tokens. However, your request has " + std::to_string(prompt_len) +
                       " input tokens. Please reduce the length of the input.",
                   param);
  if (s.max_tokens) {
    if (*s.max_tokens > room)
      throw ApiError(400,
                     "This model's maximum context length is " + std::to_string(max_model_len) +
                         " tokens. However, you requested " + std::to_string(int64_t{prompt_len} + *s.max_tokens) +
                         " tokens (" + std::to_string(prompt_len) + " in the prompt, " + std::to_string(*s.max_tokens) +
                         " in the completion). Please reduce the length of the prompt or completion.",
                     "max_tokens");
    p.max_tokens = *s.max_tokens;
  } else {
    const auto& d = llm_.engine().sampling_defaults();
    p.max_tokens = d.max_new_tokens ? std::min(*d.max_new_tokens, room) : room;
  }
  try {
    p.validate();
    p.validate_for_vocab(llm_.engine().model_config().vocab_size);
  } catch (const std::invalid_argument& e) {
    // "invalid sampling params: top_p must be ..." names the field first.
    std::string field, what = e.what();
    const std::string prefix = "invalid sampling params: ";
    if (what.rfind(prefix, 0) == 0) field = what.substr(prefix.size(), what.find(' ', prefix.size()) - prefix.size());
    throw ApiError(400, what, field);
  }
  return p;
}

std::vector<int> OpenAIServing::encode_bounded(const TemplatedText& text, const ChatEncodeOptions* chat,
                                               const char* param) const {
  const LLMEngine& engine = llm_.engine();
  const Tokenizer& tok = engine.tokenizer();
  auto encode = [&](const TemplatedText& t) {
    if (chat) return encode_rendered_prompt(tok, t, *chat);
    return tok.encode(t.text, engine.model_config().add_bos);
  };
  const std::size_t max_len = static_cast<std::size_t>(engine.engine_config().max_model_len);
  // 16 bytes a token is several times what text averages in any vocabulary; a prefix is cut at
  // a character boundary. A prefix can end mid-word, so it may count a token or two more than
  // the same bytes inside the whole text: a margin keeps the refusal exact for prompts near the
  // limit (they are tokenized whole and checked as usual).
  const std::size_t probe = max_len * 16 + 4096;
  if (text.text.size() > probe) {
    std::size_t cut = probe;
    while (cut > 0 && (static_cast<unsigned char>(text.text[cut]) & 0xC0) == 0x80) --cut;
    const std::size_t counted = encode(prefix_of(text, cut)).size();
    if (counted > max_len + 16)
      throw ApiError(400,
                     "This model's maximum context length is " + std::to_string(max_len) +
                         " tokens. However, your request has more than " + std::to_string(counted) +
                         " input tokens (counted in its first " + std::to_string(cut) + " of " +
                         std::to_string(text.text.size()) + " bytes). Please reduce the length of the input.",
                     param);
  }
  return encode(text);
}

Generation OpenAIServing::new_generation(Generation::Kind kind, const std::string& model, const SamplingRequest& s,
                                         bool stream, bool include_usage) {
  if (!model.empty() && model != model_name_ && model != model_path_) {
    // The name as JSON escapes it (a NUL, a newline, bad UTF-8), so the message shows it whole.
    const std::string quoted = nlohmann::json(model).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    throw ApiError(404, "The model `" + quoted.substr(1, quoted.size() - 2) + "` does not exist.", "model");
  }
  Generation g;
  g.kind = kind;
  g.id = next_id(kind == Generation::Kind::kChat ? "chatcmpl-" : "cmpl-");
  g.created = unix_now();
  g.model = model_name_;
  g.n = s.params.n;
  g.stream = stream;
  g.include_usage = include_usage;
  return g;
}

Generation OpenAIServing::start_completion(const CompletionRequest& r) {
  Generation g = new_generation(Generation::Kind::kCompletion, r.model, r.sampling, r.stream, r.include_usage);
  g.logprobs = r.logprobs;
  const LLMEngine& engine = llm_.engine();
  for (std::size_t i = 0; i < r.prompts.size(); ++i) {
    if (const auto* text = std::get_if<std::string>(&r.prompts[i])) {
      if (!engine.has_tokenizer())
        throw ApiError(400, "this model has no tokenizer: send the prompt as token ids", "prompt");
      if (text->empty()) throw ApiError(400, "'prompt' must not be empty", "prompt");
      TemplatedText plain;
      plain.text = *text;
      g.prompt_token_ids.push_back(encode_bounded(plain, nullptr, "prompt"));
      if (r.echo) g.echo_texts.push_back(*text);
    } else {
      g.prompt_token_ids.push_back(std::get<std::vector<int>>(r.prompts[i]));
      if (r.echo)
        g.echo_texts.push_back(engine.has_tokenizer() ? engine.tokenizer().decode(g.prompt_token_ids.back()) : "");
    }
  }
  std::vector<SamplingParams> params;
  for (const auto& ids : g.prompt_token_ids)
    params.push_back(sampling_for(r.sampling, static_cast<int>(ids.size()), "prompt"));
  if (r.logprobs)
    for (auto& p : params) p.logprobs = *r.logprobs;
  g.outputs = std::make_shared<RequestStream>();
  RequestOptions options;
  options.fair_share_key = g.id;  // the call's prompts share one fair share of the batch
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::string rid = g.id + "-" + std::to_string(i);
    try {
      llm_.add_request(rid, g.prompt_token_ids[i], params[i], options, g.outputs);
    } catch (const std::exception& e) {
      abort(g);
      throw ApiError(400, e.what(), "prompt");
    }
    g.request_ids.push_back(rid);
  }
  return g;
}

std::vector<MultiModalPlaceholder> OpenAIServing::place_images(const ChatCompletionRequest& r,
                                                               const TemplatedText& prompt,
                                                               const ChatEncodeOptions& enc,
                                                               std::vector<int>& ids) const {
  const LLMEngine& engine = llm_.engine();
  const VisionEncoder* vision = engine.vision_encoder();
  if (!vision)
    throw ApiError(400,
                   "this model reads no images: the server was started without its image projector (--mmproj), "
                   "or its Hugging Face folder's vision tower could not be read (the server's log says why)",
                   r.image_params.front());
  std::vector<std::shared_ptr<const RgbImage>> pictures;
  for (std::size_t k = 0; k < r.images.size(); ++k) {
    try {
      // Fitted to the encoder's size at once: only one full-size picture is held at a time.
      if (k < r.image_urls.size() && !r.image_urls[k].empty()) {
        std::vector<uint8_t> fetched;
        try {
          fetched = fetch_media(r.image_urls[k]);
        } catch (const MediaFetchError& e) {
          throw ApiError(400, "'" + r.image_params[k] + "': " + e.what(), r.image_params[k]);
        }
        pictures.push_back(std::make_shared<const RgbImage>(vision->fit(decode_image(fetched))));
        continue;
      }
      pictures.push_back(std::make_shared<const RgbImage>(vision->fit(decode_image(r.images[k]))));
    } catch (const ImageError& e) {
      throw ApiError(400, "'" + r.image_params[k] + "': " + e.what(), r.image_params[k]);
    } catch (const std::invalid_argument& e) {  // a size the encoder does not take
      throw ApiError(400, "'" + r.image_params[k] + "': " + e.what(), r.image_params[k]);
    }
  }
  ImagePrompt placed;
  try {
    placed = encode_image_prompt(engine.tokenizer(), *vision, prompt, pictures, enc.bos_id,
                                 image_placeholder_id(engine.tokenizer()));
  } catch (const std::invalid_argument& e) {  // the template left out a message's image
    throw ApiError(400, std::string("the chat template did not place every image: ") + e.what(), "messages");
  }
  const int max_len = engine.engine_config().max_model_len;
  if (static_cast<int>(placed.token_ids.size()) > max_len)
    throw ApiError(400,
                   "This model's maximum context length is " + std::to_string(max_len) +
                       " tokens. However, your messages with their images take " +
                       std::to_string(placed.token_ids.size()) +
                       " input tokens. Please reduce the length of the input.",
                   "messages");
  ids = std::move(placed.token_ids);
  return std::move(placed.images);
}

Generation OpenAIServing::start_chat(const ChatCompletionRequest& r) {
  Generation g = new_generation(Generation::Kind::kChat, r.model, r.sampling, r.stream, r.include_usage);
  const LLMEngine& engine = llm_.engine();
  if (!engine.has_tokenizer()) throw ApiError(400, "this model has no tokenizer, so it cannot chat");
  if (r.logprobs) g.logprobs = r.top_logprobs;
  const Tokenizer& tok = engine.tokenizer();
  ChatEncodeOptions enc = chat_encode_options(tok, engine.model_config().add_bos, engine.model_config().bos_id);
  enc.continue_final_message = r.continue_final_message;
  enc.enable_thinking = r.enable_thinking;
  enc.extra_variables_json = r.chat_template_kwargs_json;
  // The call's own template (vLLM's request field), where the server trusts clients with one.
  std::optional<ChatTemplate> own;
  ChatStopConditions own_stops;
  if (!r.chat_template.empty()) {
    if (!trust_request_template_)
      throw ApiError(400,
                     "'chat_template' in a request is not accepted by this server (start it with "
                     "--trust-request-chat-template, or give --chat-template when starting it)",
                     "chat_template");
    try {
      own = ChatTemplate::from_jinja(r.chat_template, "the request's chat_template");
    } catch (const std::exception& e) {
      throw ApiError(400, e.what(), "chat_template");
    }
    own_stops = chat_stop_conditions(*own, tok);
  }
  const ChatTemplate& tmpl = own ? *own : template_;
  g.reply.reasoning = tmpl.reasoning_controls().reasons;
  g.reply.parallel_tool_calls = r.parallel_tool_calls;
  if (r.tool_choice == "auto" && !r.tools.empty()) {
    g.reply.tool_format = tool_call_format_of(tmpl.source(), tmpl.family());
    g.reply.tools = r.tools;
  } else if (r.tool_choice == "required" || r.tool_choice == "function") {
    g.reply.forced = r.tool_choice;
    g.reply.forced_name = r.tool_choice_name;
  }
  const ChatStopConditions& stops = own ? own_stops : template_stops_;
  const bool add_generation_prompt = r.add_generation_prompt && !r.continue_final_message;
  std::string warning;
  TemplatedText prompt;
  ChatRenderOptions render_options = chat_render_options(tok, add_generation_prompt, enc);
  if (own) render_options.fallback_to_builtin = false;  // the client's template says what it says
  try {
    prompt = tmpl.render(r.messages, render_options, &warning);
  } catch (const std::exception& e) {
    // The client's template variables may be what the template refused (its raise_exception on
    // an unknown option): blame them when the conversation renders without them.
    const char* param = own ? "chat_template" : "messages";
    if (!enc.extra_variables_json.empty()) {
      ChatEncodeOptions plain = enc;
      plain.extra_variables_json.clear();
      try {
        ChatRenderOptions o = chat_render_options(tok, add_generation_prompt, plain);
        o.fallback_to_builtin = render_options.fallback_to_builtin;
        (void)tmpl.render(r.messages, o);
        param = "chat_template_kwargs";
      } catch (const std::exception&) {
      }
    }
    throw ApiError(400, e.what(), param);
  }
  std::vector<int> ids;
  RequestOptions options;
  try {
    ids = encode_bounded(prompt, &enc, "messages");
  } catch (const ApiError&) {
    throw;
  } catch (const std::exception& e) {
    throw ApiError(400, e.what(), "messages");
  }
  if (!r.images.empty()) options.images = place_images(r, prompt, enc, ids);
  if (!warning.empty() && log_) log_(warning);
  g.reply.reasoning_opened = g.reply.reasoning && prompt_opens_reasoning(prompt);
  SamplingParams p = sampling_for(r.sampling, static_cast<int>(ids.size()), "messages");
  p.stop.insert(p.stop.end(), stops.stop.begin(), stops.stop.end());
  p.stop_token_ids.insert(p.stop_token_ids.end(), stops.stop_token_ids.begin(), stops.stop_token_ids.end());
  if (r.logprobs) p.logprobs = r.top_logprobs;
  // A hybrid model's next turn resumes from the state checkpoint of what it repeats: as
  // chat_stable_prefix finds it, what these messages + a reply + a user message rendered without
  // a generation prompt share with this prompt.
  if (engine.model_config().num_recurrent_layers() > 0 && add_generation_prompt && r.images.empty()) {
    ChatRenderOptions plain = render_options;
    plain.add_generation_prompt = false;
    nlohmann::ordered_json next = r.messages;
    next.push_back({{"role", "assistant"}, {"content", "ok"}});
    next.push_back({{"role", "user"}, {"content", "ok"}});
    try {
      const std::vector<int> base = encode_rendered_prompt(tok, tmpl.render(next, plain), enc);
      options.stable_prefix_tokens = static_cast<int>(
          std::mismatch(base.begin(), base.end(), ids.begin(), ids.end()).first - base.begin());
    } catch (const std::exception&) {
      // A template that refuses that shape: no hint (the prompt's end is checkpointed).
    }
  }
  g.prompt_token_ids.push_back(std::move(ids));
  g.outputs = std::make_shared<RequestStream>();
  const std::string rid = g.id;
  try {
    llm_.add_request(rid, g.prompt_token_ids[0], p, options, g.outputs);
  } catch (const std::exception& e) {
    throw ApiError(400, e.what(), "messages");
  }
  g.request_ids.push_back(rid);
  return g;
}

void OpenAIServing::abort(const Generation& g) {
  for (const std::string& id : g.request_ids) llm_.abort(id);
}

json OpenAIServing::collect(Generation& g, const std::function<bool()>& gone) {
  std::vector<ChoiceState> choices(g.request_ids.size() * g.n);
  int cached = 0;
  std::string request_error;
  while (!g.outputs->done()) {
    if (gone && gone()) {
      abort(g);
      throw ApiError(499, "the client closed the connection");
    }
    auto out = g.outputs->next(std::chrono::milliseconds(100));
    if (!out) continue;
    const int pi = prompt_index(g, out->request_id);
    if (pi < 0) continue;
    if (out->finished) cached += out->num_cached_tokens;
    for (const CompletionOutput& c : out->outputs) {
      if (c.index < 0 || c.index >= g.n) continue;
      ChoiceState& s = choices[pi * g.n + c.index];
      s.text += c.text;
      s.num_tokens += static_cast<int>(c.token_ids.size());
      append_logprobs(g, s.logprobs, logprobs_json(g, c, s.text_offset));
      if (c.finish_reason) {
        s.finish_reason = c.finish_reason;
        s.stop_reason = c.stop_reason;
      }
      if (!c.error.empty() && request_error.empty()) request_error = c.error;
    }
  }
  if (const std::string err = g.outputs->error(); !err.empty()) throw ApiError(500, err);
  // A completion the engine ended because its parameters leave no token to draw: the request's
  // fault, answered as vLLM answers a request it cannot serve.
  if (!request_error.empty()) throw ApiError(400, request_error);
  json arr = json::array();
  for (std::size_t i = 0; i < choices.size(); ++i) {
    ChoiceState& s = choices[i];
    json c = {{"index", i},
              {"logprobs", s.logprobs},
              {"finish_reason", finish_reason_json(s.finish_reason)},
              {"stop_reason", stop_reason_json(s.stop_reason)}};
    if (g.kind == Generation::Kind::kChat) {
      ChatReply reply = parse_chat_reply(g.reply, s.text);
      json message = {{"role", "assistant"}, {"content", reply.content}};
      if (reply.reasoning) message["reasoning_content"] = *reply.reasoning;
      if (!reply.calls.empty()) {
        if (reply.content.empty()) message["content"] = nullptr;
        message["tool_calls"] = tool_calls_json(reply.calls, 0, false);
        // OpenAI's reason for calls the model chose; a named function's call ends as "stop".
        if (s.finish_reason == FinishReason::kStop && g.reply.forced != "function") c["finish_reason"] = "tool_calls";
      }
      c["message"] = std::move(message);
    } else {
      const std::size_t pi = i / g.n;
      c["text"] = (pi < g.echo_texts.size() ? g.echo_texts[pi] : std::string()) + s.text;
    }
    arr.push_back(std::move(c));
  }
  return json{
      {"id", g.id},           {"object", g.kind == Generation::Kind::kChat ? "chat.completion" : "text_completion"},
      {"created", g.created}, {"model", g.model},
      {"choices", arr},       {"usage", usage_json(g, choices, cached)}};
}

struct EventSource::State {
  std::vector<ChoiceState> choices;
  int cached = 0;
  std::string request_error;  // the first completion the engine ended itself (CompletionOutput::error)
  json head;
};

EventSource::EventSource(OpenAIServing& serving, Generation& g)
    : serving_(serving), g_(g), state_(std::make_unique<State>()) {
  const bool chat = g.kind == Generation::Kind::kChat;
  state_->choices.resize(g.request_ids.size() * g.n);
  state_->head = {{"id", g.id},
                  {"object", chat ? "chat.completion.chunk" : "text_completion"},
                  {"created", g.created},
                  {"model", g.model}};
  auto send = [this](json list) {
    json chunk = state_->head;
    chunk["choices"] = std::move(list);
    if (g_.include_usage) chunk["usage"] = nullptr;
    ready_.push_back(chunk.dump(-1, ' ', false, json::error_handler_t::replace));
  };
  if (chat)  // the role first, one chunk per choice, as OpenAI and vLLM send it
    for (std::size_t i = 0; i < state_->choices.size(); ++i)
      send(json::array({{{"index", i},
                         {"delta", {{"role", "assistant"}, {"content", ""}}},
                         {"logprobs", nullptr},
                         {"finish_reason", nullptr}}}));
  if (!g.echo_texts.empty())
    for (std::size_t i = 0; i < state_->choices.size(); ++i)
      send(json::array(
          {{{"index", i}, {"text", g.echo_texts[i / g.n]}, {"logprobs", nullptr}, {"finish_reason", nullptr}}}));
}

EventSource::~EventSource() = default;

void EventSource::abort() { serving_.abort(g_); }

std::optional<std::string> EventSource::next(std::chrono::milliseconds timeout) {
  const bool chat = g_.kind == Generation::Kind::kChat;
  State& st = *state_;
  // Outputs that make no chunk (a token with no text yet, a model without a tokenizer) still count
  // against the timeout: the caller must get control back to notice a client gone.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (ready_.empty() && !engine_done_) {
    if (g_.outputs->done()) {  // the tail: an error, the usage, [DONE]
      engine_done_ = true;
      if (const std::string err = g_.outputs->error(); !err.empty()) {
        ready_.push_back(ApiError(500, err).to_json().dump());
      } else if (!st.request_error.empty()) {
        ready_.push_back(ApiError(400, st.request_error).to_json().dump());
      } else if (g_.include_usage) {
        json chunk = st.head;
        chunk["choices"] = json::array();
        chunk["usage"] = usage_json(g_, st.choices, st.cached);
        ready_.push_back(chunk.dump());
      }
      ready_.push_back("[DONE]");
      break;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                            std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    auto out = g_.outputs->next(left);
    if (!out) return std::nullopt;
    const int pi = prompt_index(g_, out->request_id);
    if (pi < 0) continue;
    if (out->finished) st.cached += out->num_cached_tokens;
    json list = json::array();
    for (const CompletionOutput& c : out->outputs) {
      if (c.index < 0 || c.index >= g_.n) continue;
      const int index = pi * g_.n + c.index;
      ChoiceState& s = st.choices[index];
      s.num_tokens += static_cast<int>(c.token_ids.size());
      if (!c.error.empty() && st.request_error.empty()) st.request_error = c.error;
      const json lp = logprobs_json(g_, c, s.text_offset);
      ChatReplyDelta delta;
      if (chat) {
        // Reasoning apart; with tools, the text that may be a call is held back until it is known.
        if (!s.reply) s.reply = std::make_unique<ChatReplyStream>(g_.reply);
        delta = s.reply->feed(c.text);
        if (c.finish_reason) {
          ChatReplyDelta rest = s.reply->finish();
          delta.reasoning += rest.reasoning;
          delta.content += rest.content;
          for (ToolCallDelta& t : rest.tool_calls) delta.tool_calls.push_back(std::move(t));
        }
      }
      if ((chat ? delta.empty() : c.text.empty()) && !c.finish_reason && lp.is_null()) continue;
      json item = {{"index", index}, {"logprobs", lp}, {"finish_reason", finish_reason_json(c.finish_reason)}};
      if (c.finish_reason) item["stop_reason"] = stop_reason_json(c.stop_reason);
      if (chat) {
        item["delta"] = json::object();
        if (!delta.reasoning.empty()) item["delta"]["reasoning_content"] = delta.reasoning;
        if (!delta.content.empty()) item["delta"]["content"] = delta.content;
        if (!delta.tool_calls.empty()) item["delta"]["tool_calls"] = tool_call_deltas_json(delta.tool_calls);
        if (c.finish_reason == FinishReason::kStop && s.reply->num_calls() > 0 && g_.reply.forced != "function")
          item["finish_reason"] = "tool_calls";
      } else {
        item["text"] = c.text;
      }
      list.push_back(std::move(item));
    }
    if (list.empty()) continue;
    json chunk = st.head;
    chunk["choices"] = std::move(list);
    if (g_.include_usage) chunk["usage"] = nullptr;
    ready_.push_back(chunk.dump(-1, ' ', false, json::error_handler_t::replace));
  }
  if (ready_.empty()) {
    finished_ = true;
    return std::nullopt;
  }
  std::string data = std::move(ready_.front());
  ready_.pop_front();
  if (ready_.empty() && engine_done_) finished_ = true;
  return data;
}

bool OpenAIServing::stream(Generation& g, const EventWriter& write) {
  EventSource events(*this, g);
  while (!events.finished()) {
    std::optional<std::string> data = events.next(std::chrono::milliseconds(500));
    if (data && !write(*data)) {
      abort(g);
      return false;
    }
  }
  return true;
}

}  // namespace pagedchat::openai
