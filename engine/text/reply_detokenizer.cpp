#include "engine/text/reply_detokenizer.h"

#include <algorithm>
#include <string_view>

namespace pagedchat {

namespace {
// `s` as a JSON string (quotes, backslashes and control characters escaped).
std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[(c >> 4) & 0xf];
      out += kHex[c & 0xf];
    } else {
      out += c;
    }
  }
  return out + "\"";
}
}  // namespace

std::optional<HarmonyTokens> HarmonyTokens::of(const Tokenizer& t) {
  auto id = [&](std::string_view piece) {
    const std::optional<int> i = t.piece_to_id(piece);
    return i ? *i : -1;
  };
  HarmonyTokens h;
  h.start = id("<|start|>");
  h.channel = id("<|channel|>");
  h.message = id("<|message|>");
  h.end = id("<|end|>");
  if (h.start < 0 || h.channel < 0 || h.message < 0 || h.end < 0) return std::nullopt;
  h.return_ = id("<|return|>");
  h.call = id("<|call|>");
  h.constrain = id("<|constrain|>");
  return h;
}

std::optional<ChannelTokens> ChannelTokens::of(const Tokenizer& t) {
  const std::optional<int> open = t.piece_to_id("<|channel>"), close = t.piece_to_id("<channel|>");
  if (!open || !close) return std::nullopt;
  ChannelTokens c{*open, *close};
  if (const auto id = t.piece_to_id("<|tool_call>")) c.call_open = *id;
  if (const auto id = t.piece_to_id("<tool_call|>")) c.call_close = *id;
  if (const auto id = t.piece_to_id("<|\"|>")) c.quote = *id;
  return c;
}

ReplyDetokenizer::ReplyDetokenizer(const Tokenizer& tokenizer, const std::vector<int>& prompt_ids)
    : tokenizer_(tokenizer), harmony_(HarmonyTokens::of(tokenizer)) {
  // Where the prompt leaves the reply: after its last marker. A prompt without one (a plain
  // completion) gets plain text.
  std::size_t last = prompt_ids.size();
  if (harmony_) {
    for (std::size_t i = prompt_ids.size(); i-- > 0 && last == prompt_ids.size();)
      if (is_marker(prompt_ids[i])) last = i;
    if (last == prompt_ids.size()) harmony_.reset();
  }
  if (!harmony_) {
    plain_.emplace(tokenizer, prompt_ids);
    channel_ = ChannelTokens::of(tokenizer);
    if (!channel_) return;
    // A call's marks are kept only in a chat (a prompt with Gemma's "<|turn>"); a plain completion
    // drops them as it drops every control token.
    const std::optional<int> turn = tokenizer.piece_to_id("<|turn>");
    if (!turn || std::find(prompt_ids.begin(), prompt_ids.end(), *turn) == prompt_ids.end())
      channel_->call_open = channel_->call_close = channel_->quote = -1;
    // A prompt that ends inside a channel (after its "<|channel>", no "<channel|>" since): the
    // reply continues its name line or its content.
    std::size_t open = prompt_ids.size();
    for (std::size_t i = prompt_ids.size(); i-- > 0;) {
      if (prompt_ids[i] == channel_->close) break;
      if (prompt_ids[i] == channel_->open) {
        open = i;
        break;
      }
    }
    if (open < prompt_ids.size()) {
      naming_ = true;
      name_ = tokenizer.decode_bytes(std::vector<int>(prompt_ids.begin() + std::ptrdiff_t(open) + 1, prompt_ids.end()),
                                     true);
      if (name_.find('\n') != std::string::npos) {
        name_complete();
        name_.clear();  // content the prompt already holds
        pending_ = reasoning_ ? "<think>\n" : "";
      }
    }
    return;
  }
  const HarmonyTokens& h = *harmony_;
  const int m = prompt_ids[last];
  if (m == h.end || m == h.return_ || m == h.call) {
    state_ = State::kBetween;
    return;
  }
  // Inside a header (after <|start|>, <|channel|> or <|constrain|>: its ids since its <|start|>,
  // to the prompt's end) or at its <|message|> (the header's ids before it).
  std::size_t begin = last;
  while (begin > 0 && prompt_ids[begin] != h.start) --begin;
  header_ids_.assign(prompt_ids.begin() + std::ptrdiff_t(begin) + (prompt_ids[begin] == h.start),
                     m == h.message ? prompt_ids.begin() + std::ptrdiff_t(last) : prompt_ids.end());
  if (m == h.message) pending_ = start_content();  // the prompt opened the message: its content follows
}

bool ReplyDetokenizer::is_marker(int id) const {
  const HarmonyTokens& h = *harmony_;
  return id == h.start || id == h.channel || id == h.message || id == h.end || id == h.return_ || id == h.call ||
         id == h.constrain;
}

std::string ReplyDetokenizer::start_content() {
  const HarmonyTokens& h = *harmony_;
  std::string channel;
  bool in_channel = false;
  for (int x : header_ids_) {
    if (x == h.channel) {
      in_channel = true;
      channel.clear();
    } else if (is_marker(x) || tokenizer_.is_control(x)) {
      in_channel = false;
    } else if (in_channel) {
      channel += tokenizer_.decode_bytes({x}, true);
    }
  }
  if (const std::size_t sp = channel.find_first_of(" \t\n"); sp != std::string::npos) channel.resize(sp);  // " to=..."
  // A call's recipient, "to=functions.NAME", in the role part or after the channel's name.
  std::string header;
  for (int x : header_ids_)
    header += is_marker(x) || tokenizer_.is_control(x) ? " " : tokenizer_.decode_bytes({x}, true);
  std::string recipient;
  if (const std::size_t to = header.find("to="); to != std::string::npos) {
    recipient = header.substr(to + 3);
    recipient.resize(std::min(recipient.size(), recipient.find_first_of(" \t\n<")));
  }
  header_ids_.clear();
  state_ = State::kContent;
  content_.emplace(tokenizer_, std::vector<int>{});
  reasoning_ = channel == "analysis";
  call_ = recipient.starts_with("functions.") && recipient.size() > 10 && !reasoning_;
  if (call_) return "<tool_call>\n{\"name\": " + json_string(recipient.substr(10)) + ", \"arguments\": ";
  return reasoning_ ? "<think>\n" : std::string();
}

std::string ReplyDetokenizer::end_message() {
  std::string out;
  if (content_) out = content_->flush();
  content_.reset();
  if (reasoning_) out += "</think>\n\n";
  if (call_) out += "}\n</tool_call>\n";
  reasoning_ = call_ = false;
  return out;
}

void ReplyDetokenizer::name_complete() {
  const std::size_t nl = name_.find('\n');
  reasoning_ = name_.substr(0, nl) == "thought";
  name_ = nl == std::string::npos ? std::string() : name_.substr(nl + 1);  // text after the name line
  naming_ = false;
}

std::string ReplyDetokenizer::channel_token(int id) {
  const ChannelTokens& c = *channel_;
  if (id == c.open) {  // a channel: its name line follows
    std::string out = plain_->flush();
    if (reasoning_) out += "</think>\n\n";
    reasoning_ = false;
    naming_ = true;
    name_.clear();
    return out;
  }
  if (id == c.close) {
    std::string out = naming_ ? std::string() : plain_->flush();
    if (reasoning_) out += "</think>\n\n";
    reasoning_ = naming_ = false;
    return out;
  }
  if (!naming_ && id >= 0 && (id == c.call_open || id == c.call_close || id == c.quote))
    return plain_->flush() + tokenizer_.id_to_piece(id);  // a call's marks stay in the text
  if (!naming_) return plain_->add_token(id);
  name_ += tokenizer_.decode_bytes({id}, true);
  if (name_.find('\n') == std::string::npos) return {};
  name_complete();
  std::string out = (reasoning_ ? "<think>\n" : "") + name_;
  name_.clear();
  return out;
}

std::string ReplyDetokenizer::add_token(int id) {
  if (plain_ && channel_) {
    std::string out = std::move(pending_);
    pending_.clear();
    return out + channel_token(id);
  }
  if (plain_) return plain_->add_token(id);
  std::string out = std::move(pending_);
  pending_.clear();
  return out + harmony_token(id);
}

std::string ReplyDetokenizer::drop_header() {
  // Ids after <|end|> without a <|start|> are no header but stray text: shown, not lost.
  std::string out = state_ == State::kStray && !header_ids_.empty() ? tokenizer_.decode(header_ids_) : std::string();
  header_ids_.clear();
  return out;
}

std::string ReplyDetokenizer::harmony_token(int id) {
  const HarmonyTokens& h = *harmony_;
  if (id == h.end || id == h.return_ || id == h.call) {  // the message ends
    std::string out = state_ == State::kContent ? end_message() : drop_header();
    state_ = State::kBetween;
    return out;
  }
  if (id == h.start) {  // a new message: its header follows
    std::string out = state_ == State::kContent ? end_message() : drop_header();
    state_ = State::kHeader;
    return out;
  }
  if (state_ == State::kContent) return content_->add_token(id);
  if (id != h.message) {
    // Header ids (role, " to=functions.NAME", <|channel|> NAME, <|constrain|> json); ids between
    // messages (no <|start|> first) are stray text, held the same way.
    header_ids_.push_back(id);
    if (state_ == State::kBetween) state_ = State::kStray;
    return {};
  }
  // <|message|>: the header is complete; its channel is the text after <|channel|>.
  return start_content();
}

std::string ReplyDetokenizer::flush(bool complete) {
  if (plain_ && channel_) {
    // A complete reply closes an open reasoning channel; a name line cut short is dropped.
    std::string out = std::move(pending_) + plain_->flush();
    pending_.clear();
    if (reasoning_ && complete) {
      out += "</think>\n\n";
      reasoning_ = false;
    }
    return out;
  }
  if (plain_) return plain_->flush();
  // A reply cut inside a message keeps its reasoning open (still thinking) unless it is complete
  // (ended by an end-of-generation or stop token); a header cut before its <|message|> is dropped,
  // stray text shown.
  std::string out = std::move(pending_);
  pending_.clear();
  if (state_ == State::kContent && complete) {
    out += end_message();
    state_ = State::kBetween;
  } else if (content_) {
    out += content_->flush();
  }
  out += drop_header();
  return out;
}

}  // namespace pagedchat
