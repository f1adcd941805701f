// Chat templates: turn a conversation (system / user / assistant messages) into the prompt a chat
// model was trained on.
//
// A model's own template (GGUF `tokenizer.chat_template`, tokenizer_config.json `chat_template`,
// chat_template.jinja) is Jinja; it is rendered by the sandboxed interpreter in engine/text/jinja/
// exactly as Hugging Face's renderers do (checked against @huggingface/jinja). The built-in
// templates (chat_template_names()) are written in the same Jinja and rendered the same way; they
// serve `--chat-template NAME`, models without a template, and as the fallback when a model's
// template fails to parse or to run. Message contents stay marked as data in the rendered
// prompt (TemplatedText), so the tokenizer matches special tokens only in what the template wrote.
//
//   name         format (S system, U user, A assistant; <bos>/<eos> = the tokenizer's BOS/EOS text)
//   llama-2      <bos>[INST] <<SYS>>\nS\n<</SYS>>\n\nU [/INST] A <eos><bos>[INST] U [/INST]
//   mistral      <bos>[INST] S\n\nU [/INST] A<eos>[INST] U [/INST]   (mistral-common's v1; the
//                space it writes after a special token is sentencepiece's "▁" prefix)
//   chatml       <|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n
//                (Qwen3: the <think>…</think> part of earlier replies is left out; enable_thinking
//                false closes an empty <think></think> after the generation prompt)
//   zephyr       <|system|>\nS<eos>\n<|user|>\nU<eos>\n<|assistant|>\nA<eos>\n<|assistant|>\n
//   vicuna       <bos>S USER: U ASSISTANT: A<eos>USER: U ASSISTANT:
//   llama3
//   <bos><|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|>…<|start_header_id|>assistant<|end_header_id|>\n\n
//   deepseek-r1  <bos>S<｜User｜>U<｜Assistant｜>A<｜end▁of▁sentence｜><｜User｜>U<｜Assistant｜><think>\n
//   phi3         <|system|>\nS<|end|>\n<|user|>\nU<|end|>\n<|assistant|>\nA<|end|>\n<|assistant|>\n
//   gemma <bos><start_of_turn>user\nS\n\nU<end_of_turn>\n<start_of_turn>model\nA<end_of_turn>\n<start_of_turn>model\n
//   none         SUAU...   (the contents concatenated as they are: plain continuation)
#pragma once

#include <memory>
#include <optional>

#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/text/reasoning_controls.h"
#include "engine/text/templated_text.h"

namespace pagedchat {

class Tokenizer;
namespace jinja {
class Template;
}

/// One message of a conversation. `role` is "system", "user" or "assistant" (a model's own
/// template may take others, such as "tool").
struct ChatMessage {
  ChatMessage() = default;
  ChatMessage(std::string r, std::string c, std::string fields = {})
      : role(std::move(r)), content(std::move(c)), fields_json(std::move(fields)) {}
  std::string role;
  std::string content;
  /// Further fields the template reads, as OpenAI's messages carry them: an assistant turn's
  /// "tool_calls", a tool result's "tool_call_id" and "name"; a JSON object's text ("" = none).
  std::string fields_json;
};

/// Thrown when a conversation cannot be rendered: an unknown template name, no messages, a role
/// or role order the template refuses (a template's raise_exception), or a template error.
class ChatTemplateError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Thrown by fit_chat when even the newest user message (with the system message) does not fit.
class ChatTooLongError : public std::length_error {
 public:
  ChatTooLongError(const std::string& what, int tokens, int max_len, bool conversation = false)
      : std::length_error(what), num_tokens(tokens), max_model_len(max_len), whole_conversation(conversation) {}
  int num_tokens;  ///< prompt tokens of the shortest conversation that could be sent
  int max_model_len;
  /// The whole conversation did not fit and ContextOverflow::kStopAtLimit forbade dropping turns
  /// (num_tokens: the whole conversation's); false: even the newest message alone does not fit.
  bool whole_conversation;
};

/// What fit_chat does when a conversation outgrows the context (LM Studio's "context overflow
/// policy" and its names): drop the oldest turns (a rolling window), keep the system message and
/// the first turn and drop the ones after it (truncate the middle), or drop nothing and refuse.
enum class ContextOverflow { kRollingWindow, kTruncateMiddle, kStopAtLimit };

/// How a conversation is rendered besides its messages.
struct ChatRenderOptions {
  /// End with the header the assistant's reply follows ("<|im_start|>assistant\n").
  bool add_generation_prompt = true;
  /// The last message must be an assistant message; the prompt ends right after its content,
  /// without the end of its turn, so that the model continues it (add_generation_prompt is then
  /// ignored). As transformers' continue_final_message.
  bool continue_final_message = false;
  /// Passed to the template as `enable_thinking` when set (Qwen3: false = no reasoning).
  std::optional<bool> enable_thinking;
  /// The text of the tokenizer's special tokens, as the template variables bos_token/eos_token
  /// (undefined in the template when unset).
  std::optional<std::string> bos_token;
  std::optional<std::string> eos_token;
  /// When a model's template fails while running, render with its family's built-in instead (a
  /// warning says so). Off: the failure is thrown (pagedchat-cli template shows the template's
  /// own behaviour).
  bool fallback_to_builtin = true;
  /// Extra template variables as a JSON object text (e.g. {"tools": [...]}), or "" for none.
  std::string extra_variables_json;
};

/// A chat template: a built-in one or a model's Jinja template, parsed once. Copies share it.
class ChatTemplate {
 public:
  /// The built-in template `name` (chat_template_names()). Throws ChatTemplateError listing the
  /// names for an unknown one.
  static ChatTemplate builtin(const std::string& name);
  /// A model's (or a user's) Jinja template; `origin` names where it came from in messages (e.g.
  /// "the chat template of 'model.gguf'"). Throws ChatTemplateError with the parse error's line
  /// and column when it does not parse.
  static ChatTemplate from_jinja(const std::string& source, const std::string& origin);

  /// The built-in's name, or "jinja" for a model's own template.
  const std::string& name() const { return name_; }
  /// The built-in format this template is (for a Jinja template: recognized by its markers, see
  /// detect_chat_template); its end-of-turn markers stop a reply, and it is the fallback when the
  /// template fails.
  const std::string& family() const { return family_; }
  bool is_builtin() const { return name_ != "jinja"; }
  /// What to show: "llama3" for a built-in; "the model's (llama3)" style text is up to the UI.
  const std::string& origin() const { return origin_; }
  /// A Jinja template's text ("" for a built-in): its markers tell how its model writes tool
  /// calls (engine/entrypoints/openai/tool_calls.h).
  const std::string& source() const { return source_; }
  /// The reasoning switches its text has (enable_thinking, reasoning_effort) and whether the
  /// model reasons (reasoning_controls_of()).
  const ReasoningControls& reasoning_controls() const { return reasoning_; }
  /// Text that ends a reply of this format when the model writes it (e.g. "<|im_end|>",
  /// "<|eot_id|>", "[INST]"); empty for "none". See chat_stop_conditions().
  const std::vector<std::string>& end_of_turn_markers() const;

  /// Renders `messages`. A Jinja template that fails while running (an interpreter limit, an
  /// unsupported construct) is rendered with its family's built-in instead, and `warning` (when
  /// given) says so; a raise_exception() of the template itself is reported as it is. Throws
  /// ChatTemplateError naming the template (unknown role, a role order a built-in refuses, no
  /// messages, a template error the fallback cannot mend).
  TemplatedText render(const std::vector<ChatMessage>& messages, const ChatRenderOptions& options,
                       std::string* warning = nullptr) const;
  /// The same for messages as OpenAI's API and transformers take them: a JSON array of objects
  /// with "role" and "content" (a string, or null beside "tool_calls") and any further fields a
  /// template reads ("tool_calls", "name", "reasoning_content", ...); all of it is data. Built-in
  /// templates need string contents. Throws ChatTemplateError as above, naming the message.
  TemplatedText render(const nlohmann::ordered_json& messages, const ChatRenderOptions& options,
                       std::string* warning = nullptr) const;

 private:
  std::string name_, family_, origin_, source_;
  std::shared_ptr<const jinja::Template> jinja_;
  /// Where a stored reply's reasoning goes for templates that take it apart from the answer: an
  /// assistant message's "<think>…</think>" (ReplyDetokenizer's form of a reasoning channel) goes
  /// to the template as this field, the rest as `content`. "thinking" for Harmony templates
  /// (gpt-oss: "<|channel|>" and "<|message|>" in the source), "reasoning_content" for Gemma 4's
  /// ("<|channel>" and "<channel|>"); empty: the content as stored.
  std::string reasoning_field_;
  /// The template joins a call's arguments into text (+ or ~): they are given as JSON text.
  bool arguments_as_text_ = false;
  ReasoningControls reasoning_;
  TemplatedText render_jinja(const nlohmann::ordered_json& messages, const ChatRenderOptions& options,
                             std::string* warning) const;
  TemplatedText render_split(const nlohmann::ordered_json& messages, const ChatRenderOptions& options,
                             std::string* warning) const;
  /// `messages` with each assistant reply's "<think>…</think>" blocks moved to reasoning_field_.
  nlohmann::ordered_json split_reasoning(const nlohmann::ordered_json& messages) const;
};

/// The registered built-in names: "llama-2", "mistral", "chatml", "zephyr", "vicuna", "llama3",
/// "deepseek-r1", "phi3", "gemma", "none".
const std::vector<std::string>& chat_template_names();

/// The built-in format a Jinja template writes, recognized by its markers, checked in this order:
///   a registered name as the whole text -> that name;   "<|start_header_id|>" -> llama3;
///   "<｜Assistant｜>" -> deepseek-r1;   "<|im_start|>" -> chatml;   "<start_of_turn>" -> gemma;
///   "<|user|>" with "<|end|>" -> phi3;   "<|user|>" and "<|assistant|>" -> zephyr;
///   "<<SYS>>" -> llama-2;   "[INST]" -> mistral;   "USER:" or "ASSISTANT:" -> vicuna;
///   "" (no template, e.g. a llama2.c checkpoint) -> none.
/// Anything else gives "none", and `reason` (when given) a sentence saying so for a warning;
/// `reason` is cleared otherwise.
std::string detect_chat_template(const std::string& jinja, std::string* reason = nullptr);

/// The template to use. `override_spec`: a built-in name, or the path of a .jinja file; "" or
/// "auto" = the model's own (`model_template_text`): rendered as Jinja; when it does not parse,
/// its family's built-in with a `warning`; none at all -> "none". A bare built-in name as the
/// model's template text (GGUF files may carry one) selects that built-in. `model_name` names the
/// model in messages. Throws ChatTemplateError for an unknown override (listing the names) or a
/// .jinja file that cannot be read or parsed.
ChatTemplate resolve_chat_template(const std::string& override_spec, const std::string& model_template_text,
                                   const std::string& model_name = "the model", std::string* warning = nullptr);

/// True for the names a caller's extra variables (chat_template_kwargs) may not set: the
/// conversation and generation flag the renderer passes, the BOS/EOS text, and the template
/// language's own globals (raise_exception, strftime_now, namespace, range, true/false/none).
/// The renderer ignores such variables; the server refuses them by name.
bool is_reserved_template_variable(std::string_view name);

/// What a chat request needs beside the template: the model's BOS rule and the render options.
struct ChatEncodeOptions {
  /// Prepended as an id when the rendered prompt does not start with it (the model's add_bos:
  /// templates that do not write the BOS, such as ChatML on a Llama tokenizer, still get one;
  /// never doubled). -1 = never.
  int bos_id = -1;
  bool continue_final_message = false;
  std::optional<bool> enable_thinking;
  std::string extra_variables_json;  ///< as ChatRenderOptions
  /// fit_chat also finds ChatPrompt::stable_prefix_tokens (one more render and encode: worth it
  /// for models with recurrent layers, whose prefix cache resumes only from checkpoints).
  bool find_stable_prefix = false;
  /// fit_chat: which turns go when the conversation does not fit.
  ContextOverflow context_overflow = ContextOverflow::kRollingWindow;
};

/// ChatEncodeOptions for a model: bos_id = its BOS when it adds one.
ChatEncodeOptions chat_encode_options(const Tokenizer& tokenizer, bool model_adds_bos, int model_bos_id);

/// The ChatRenderOptions that encode_chat uses: bos_token/eos_token from `tokenizer`'s BOS/EOS.
ChatRenderOptions chat_render_options(const Tokenizer& tokenizer, bool add_generation_prompt,
                                      const ChatEncodeOptions& options);

/// Token ids of a rendered prompt: tokenizer.encode_templated() and the BOS rule of `options`.
std::vector<int> encode_rendered_prompt(const Tokenizer& tokenizer, const TemplatedText& prompt,
                                        const ChatEncodeOptions& options);

/// Token ids of the rendered conversation: special tokens only where the template wrote them
/// (text such as "<|eot_id|>" inside a message stays text), the BOS rule of `options`, and
/// bos_token/eos_token taken from `tokenizer`. `prompt`, when given, receives the rendering.
/// Throws as ChatTemplate::render.
std::vector<int> encode_chat(const Tokenizer& tokenizer, const ChatTemplate& tmpl,
                             const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                             const ChatEncodeOptions& options, std::string* warning = nullptr,
                             TemplatedText* prompt = nullptr);

/// True when `prompt` ends inside an open reasoning block: its last non-space text is "<think>"
/// written by the template (DeepSeek-R1's generation prompt "<｜Assistant｜><think>\n"), so the
/// reply starts with reasoning and closes it with "</think>".
bool prompt_opens_reasoning(const TemplatedText& prompt);

/// A chat request's prompt, fitted into the context.
struct ChatPrompt {
  std::vector<int> token_ids;
  int max_tokens = 0;            ///< the request's max_tokens, clamped to what the context leaves
  int num_dropped_messages = 0;  ///< messages left out to make room (a run: see first_dropped_message)
  /// Index in fit_chat's `messages` of the first one left out (the run is [first, first + num)):
  /// after the system message (rolling window), or after the first turn (truncate middle).
  int first_dropped_message = 0;
  std::string warning;           ///< the template fell back to a built-in (ChatTemplate::render)
  bool opens_reasoning = false;  ///< the prompt ends in an open <think> (prompt_opens_reasoning)
  /// With ChatEncodeOptions::find_stable_prefix: chat_stable_prefix of the kept messages (else 0).
  int stable_prefix_tokens = 0;
  /// The rendered text of the kept messages (what token_ids encode): prompts with images are
  /// tokenized again from it (engine/multimodal/mm_prompt.h).
  TemplatedText rendered;
};

/// How many leading ids of `prompt_ids` (what encode_chat gives for `messages` with a generation
/// prompt) the next turn of the conversation repeats: the next turn renders the reply where this
/// one has the generation prompt ("<|im_start|>assistant\n<think>\n" for Qwen3.5, whose next
/// turn has "<|im_start|>assistant\n" and the answer without its reasoning). Found as the common
/// prefix of `prompt_ids` and `messages` + a reply + a user message encoded without a generation
/// prompt (a template refusing that shape: `messages` alone without one), so it is never more
/// than what the next turn shares. Throws as ChatTemplate::render.
int chat_stable_prefix(const Tokenizer& tokenizer, const ChatTemplate& tmpl, const std::vector<ChatMessage>& messages,
                       const ChatEncodeOptions& options, const std::vector<int>& prompt_ids);

/// Room fit_chat keeps for the reply before it drops old turns: min(max_tokens, max_model_len / 4),
/// at least 1.
int chat_reply_reserve(int max_tokens, int max_model_len);

/// Encodes `messages` with a generation prompt (encode_chat), dropping turns (a user message and
/// the replies after it) as options.context_overflow says until the prompt leaves
/// chat_reply_reserve() tokens of `max_model_len`: the oldest first (a leading system message is
/// always kept), or the oldest after the first turn (kTruncateMiddle; with one turn before the
/// newest, as kRollingWindow). When only the newest turn is left (with the kept head) and it is
/// still longer, it is sent anyway if it leaves at least one token. Throws ChatTooLongError when
/// it does not, and (whole_conversation) when kStopAtLimit would have to drop a turn;
/// ChatTemplateError as ChatTemplate::render.
ChatPrompt fit_chat(const Tokenizer& tokenizer, const ChatTemplate& tmpl, const std::vector<ChatMessage>& messages,
                    const ChatEncodeOptions& options, int max_model_len, int max_tokens);

/// How replies of `tmpl` end: each end-of-turn marker that is a single control token of
/// `tokenizer` becomes a stop token id (it is never text the stop-string check could see), the
/// others stop strings.
struct ChatStopConditions {
  std::vector<std::string> stop;
  std::vector<int> stop_token_ids;
};
ChatStopConditions chat_stop_conditions(const ChatTemplate& tmpl, const Tokenizer& tokenizer);

}  // namespace pagedchat
