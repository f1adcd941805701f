// Chat templates: turn a conversation (system / user / assistant messages) into the prompt a chat
// model was trained on, as text for display and as token ids with BOS/EOS as their ids.
//
// The engine does not run Jinja. It carries a small registry of the formats Llama-family chat
// models use, written out by hand from their canonical sources (cited per format in
// chat_template.cpp), and recognizes a model's Jinja template by signature substrings.
//
//   name      format (S system, U user, A assistant; "<s>"/"</s>" = BOS/EOS ids)
//   llama-2   <s>[INST] <<SYS>>\nS\n<</SYS>>\n\nU [/INST] A </s><s>[INST] U [/INST]
//   mistral   <s> [INST] S\n\nU [/INST] A</s> [INST] U [/INST]
//   chatml    <s><|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n
//   zephyr    <s><|system|>\nS</s>\n<|user|>\nU</s>\n<|assistant|>\nA</s>\n<|user|>\nU</s>\n<|assistant|>\n
//   vicuna    <s>S USER: U ASSISTANT: A</s>USER: U ASSISTANT:
//   none      <s>SUAU...   (the contents concatenated as they are, no separators: plain continuation)
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace pagedchat {

class Tokenizer;

/// One message of a conversation. `role` is "system", "user" or "assistant".
struct ChatMessage {
  std::string role;
  std::string content;
};

/// A piece of a rendered prompt: text to tokenize, or a special token.
struct PromptPiece {
  enum class Kind { kText, kBos, kEos };
  Kind kind = Kind::kText;
  std::string text;  ///< for kText only
};

/// A conversation rendered with a chat template.
struct RenderedPrompt {
  std::string template_name;
  /// The prompt as text, BOS/EOS written as "<s>"/"</s>" (for tests and display). It always
  /// starts with "<s>": the BOS that Llama-family tokenizers prepend is part of the prompt.
  std::string text;
  /// What encode_chat tokenizes: text runs and special tokens, in order.
  std::vector<PromptPiece> pieces;
};

/// Thrown by fit_chat when even the newest user message (with the system message) does not fit.
class ChatTooLongError : public std::length_error {
 public:
  ChatTooLongError(const std::string& what, int num_tokens, int max_model_len)
      : std::length_error(what), num_tokens(num_tokens), max_model_len(max_model_len) {}
  int num_tokens;      ///< prompt tokens of the shortest conversation that could be sent
  int max_model_len;
};

/// The registered template names: "llama-2", "mistral", "chatml", "zephyr", "vicuna", "none".
const std::vector<std::string>& chat_template_names();

/// Stop strings worth adding to a chat request with template `name`: turn markers the model may
/// write as text when it does not end its reply with EOS (e.g. "<|im_end|>" for chatml, whose
/// markers are plain text to a Llama tokenizer). Empty for "none". Throws like render_chat.
const std::vector<std::string>& chat_template_stop_strings(const std::string& name);

/// Recognizes a model's Jinja chat template (tokenizer_config.json "chat_template", GGUF
/// "tokenizer.chat_template") by signature substrings, checked in this order:
///   a registered name as the whole text -> that name;   "<|im_start|>" -> chatml;
///   "<|user|>" and "<|assistant|>" without Phi-3's "<|end|>" -> zephyr;
///   "<<SYS>>" -> llama-2;   "[INST]" -> mistral;   "USER:" or "ASSISTANT:" -> vicuna;
///   "" (no template, e.g. a llama2.c checkpoint) -> none.
/// An unknown non-empty template also gives "none" (plain continuation keeps a model usable; a
/// guessed chat format would silently mis-prompt it), and `reason`, when given, receives a
/// sentence saying so for a warning. `reason` is cleared when the template was recognized.
std::string detect_chat_template(const std::string& jinja, std::string* reason = nullptr);

/// The template to use: `override_name` when set to a registered name, else ("" or "auto") the
/// one detected in `model_template_text` (`reason` as in detect_chat_template). Throws
/// std::invalid_argument listing the names for an unknown override.
std::string resolve_chat_template(const std::string& override_name, const std::string& model_template_text,
                                  std::string* reason = nullptr);

/// Renders `messages` with template `name`; with `add_generation_prompt` it ends with the header
/// the assistant's reply follows (a no-op for llama-2, mistral and none, whose user turn already
/// ends there). Throws std::invalid_argument for an unknown name (listing the names), no
/// messages, an unknown role, or a role order the template does not allow: llama-2, mistral and
/// vicuna take an optional first system message, then user/assistant alternating from a user
/// message; chatml, zephyr and none take the roles in any order.
/// With `continue_final_message` the last message must be an assistant message, and the prompt
/// ends right after its content, without the end of its turn (EOS, "<|im_end|>", ...): the model
/// continues that reply (a cut-off answer). add_generation_prompt is then ignored.
RenderedPrompt render_chat(const std::string& name, const std::vector<ChatMessage>& messages,
                           bool add_generation_prompt, bool continue_final_message = false);

/// Token ids of render_chat(name, messages, add_generation_prompt): each text run is encoded by
/// `tokenizer` on its own without BOS (sentencepiece adds its "▁" dummy prefix, as Meta's
/// llama reference and mistral-common encode each segment; for mistral the one space its format
/// writes after a special token is that prefix), and BOS/EOS become `bos_id`/`eos_id` (left out
/// when negative). The ids start with exactly one BOS; text such as "<s>" inside a message is
/// encoded as plain text, never as a special token.
std::vector<int> encode_chat(const Tokenizer& tokenizer, const std::string& name,
                             const std::vector<ChatMessage>& messages, bool add_generation_prompt, int bos_id,
                             int eos_id, bool continue_final_message = false);

/// A chat request's prompt, fitted into the context.
struct ChatPrompt {
  std::vector<int> token_ids;
  int max_tokens = 0;            ///< the request's max_tokens, clamped to what the context leaves
  int num_dropped_messages = 0;  ///< oldest non-system messages left out to make room
};

/// Room fit_chat keeps for the reply before it drops old turns: min(max_tokens, max_model_len / 4),
/// at least 1.
int chat_reply_reserve(int max_tokens, int max_model_len);

/// Encodes `messages` with a generation prompt (encode_chat), dropping the oldest turns (a user
/// message and the replies after it; a leading system message is always kept) until the prompt
/// leaves chat_reply_reserve() tokens of `max_model_len`. When only the newest turn is left and
/// it is still longer, it is sent anyway if it leaves at least one token. Throws
/// ChatTooLongError when it does not; std::invalid_argument as render_chat. With
/// `continue_final_message` the prompt ends inside the last (assistant) message (render_chat).
ChatPrompt fit_chat(const Tokenizer& tokenizer, const std::string& name, const std::vector<ChatMessage>& messages,
                    int bos_id, int eos_id, int max_model_len, int max_tokens, bool continue_final_message = false);

}  // namespace pagedchat
