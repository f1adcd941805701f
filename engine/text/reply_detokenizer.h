// ReplyDetokenizer: the text of a generated reply, token by token, in the engine's one reasoning
// convention: a reply that reasons shows its reasoning between "<think>" and "</think>", then the
// answer (what Qwen3 and DeepSeek-R1 write themselves, and what the app's and the CLI's reasoning
// split read). Most vocabularies need nothing more than IncrementalDetokenizer.
//
// Harmony (gpt-oss; OpenAI's "harmony" response format) writes its reply as messages whose
// structure is control tokens the plain text would drop: "<|channel|>analysis<|message|>…<|end|>"
// (the reasoning), "<|start|>assistant<|channel|>final<|message|>…<|return|>" (the answer),
// "<|channel|>commentary to=functions.NAME<|message|>…<|call|>" (a tool call). When the vocabulary
// has the Harmony markers, this turns them into the engine's conventions: analysis content as
// "<think>…</think>\n\n", a call to a function as "<tool_call>\n{"name": NAME, "arguments": ARGS}
// \n</tool_call>\n" (the Hermes form the server's tool-call parser reads), final and other
// commentary content as text, headers dropped. Content is detokenized per message with
// IncrementalDetokenizer (UTF-8 held back across tokens as there).
//
// Gemma 4 writes its reasoning as a channel: "<|channel>thought\n…<channel|>" then the answer
// (its template puts an empty one, "<|channel>thought\n<channel|>", in the prompt when thinking
// is off). When the vocabulary has both markers, the channel becomes "<think>\n…</think>\n\n" (a
// channel of another name is shown as text, without its name line).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/text/tokenizer.h"

namespace pagedchat {

/// The ids of Harmony's marker tokens in a vocabulary.
struct HarmonyTokens {
  int start = -1, channel = -1, message = -1, end = -1, return_ = -1, call = -1, constrain = -1;
  /// The markers of `t` (whether control tokens, as OpenAI's tokenizer has them, or user-defined,
  /// as some converters write them), or nullopt when it lacks <|start|>, <|channel|>, <|message|>
  /// or <|end|> (<|return|>, <|call|> and <|constrain|> are optional: -1 when absent).
  static std::optional<HarmonyTokens> of(const Tokenizer& t);
};

/// The ids of Gemma 4's channel markers "<|channel>" and "<channel|>" in a vocabulary, and of its
/// tool-call marks "<|tool_call>", "<tool_call|>" and "<|\"|>" (-1 when absent), which a chat's
/// reply (a prompt with "<|turn>") keeps as text, whether or not the vocabulary marks them as
/// control tokens, for the server's gemma4 tool-call parser.
struct ChannelTokens {
  int open = -1, close = -1;
  int call_open = -1, call_close = -1, quote = -1;
  /// Both markers of `t`, or nullopt when it lacks either.
  static std::optional<ChannelTokens> of(const Tokenizer& t);
};

class ReplyDetokenizer {
 public:
  /// Harmony parsing when `tokenizer` has its markers and the prompt holds one (the reply starts
  /// where the prompt's last marker leaves it: in a header after "<|start|>assistant", or in a
  /// message's content after its "<|message|>"); plain detokenization (with the prompt's last ids
  /// as left context) otherwise.
  ReplyDetokenizer(const Tokenizer& tokenizer, const std::vector<int>& prompt_ids);
  /// Appends one generated id; returns the new text (possibly empty).
  std::string add_token(int id);
  /// Returns what is still held back (an incomplete UTF-8 sequence; Harmony: stray text after a
  /// message). `complete`: the reply ended as the model meant it to (an end-of-generation or stop
  /// token), so an open reasoning block is closed; otherwise (cut at max_tokens) it stays open.
  std::string flush(bool complete = false);
  /// True when the reply is parsed as Harmony messages.
  bool harmony() const { return harmony_.has_value(); }
  /// True when the reply's Gemma 4 channels are parsed.
  bool channels() const { return channel_.has_value(); }

 private:
  enum class State { kHeader, kContent, kBetween, kStray };
  std::string harmony_token(int id);
  bool is_marker(int id) const;
  std::string start_content();  // the header is complete: the message's content follows
  std::string end_message();    // flushes the message's content, closes a reasoning block
  std::string drop_header();    // forgets a header (stray text is returned, to be shown)

  const Tokenizer& tokenizer_;
  std::optional<IncrementalDetokenizer> plain_;
  std::optional<HarmonyTokens> harmony_;
  State state_ = State::kHeader;  // a reply starts after "<|start|>assistant": in its header
  std::vector<int> header_ids_;   // the header's ids since <|start|> (markers included)
  std::optional<IncrementalDetokenizer> content_;
  bool reasoning_ = false;  // the current message is analysis (inside <think>)
  bool call_ = false;       // the current message is a call to a function (inside <tool_call>)
  std::string pending_;     // text due before the next token's (a prompt that opened a message)
  // Gemma 4's channels (plain detokenization otherwise): inside "<|channel>" until its name line
  // ends (name_ collects it), then in the channel until "<channel|>".
  std::string channel_token(int id);
  void name_complete();  // name_ holds the name line: reasoning_ when it is "thought"
  std::optional<ChannelTokens> channel_;
  bool naming_ = false;
  std::string name_;
};

}  // namespace pagedchat
