#include "engine/text/bpe/bpe_tokenizer.h"

#include <algorithm>
#include <stdexcept>

namespace pagedchat::bpe {

namespace {
std::size_t vocab_size_of(const BpeConfig& c) {
  std::size_t n = std::max(c.vocab.size(), c.pieces.size());
  for (const AddedToken& t : c.added) n = std::max(n, std::size_t(t.id) + 1);
  return std::max(n, c.attrs.size());
}
}  // namespace

BpeTokenizer::BpeTokenizer(BpeConfig c)
    : Tokenizer(c.path),
      model_(c.vocab, c.merges, c.model, c.merges_where),
      normalizer_(std::move(c.normalizer)),
      pre_tokenizer_(std::move(c.pre_tokenizer)),
      decoder_(std::move(c.decoder)) {
  const std::size_t n = vocab_size_of(c);
  pieces_ = c.pieces.empty() ? std::move(c.vocab) : std::move(c.pieces);
  pieces_.resize(n);
  attrs_ = std::move(c.attrs);
  const bool derive = attrs_.empty();
  attrs_.resize(n, TokenAttr::kNormal);
  for (std::size_t i = 0; i < n; ++i)
    if (derive && pieces_[i].empty()) attrs_[i] = TokenAttr::kUnused;
  for (const AddedToken& t : c.added) {
    if (pieces_[t.id].empty() || derive) pieces_[t.id] = t.content;
    if (derive) attrs_[t.id] = t.special ? TokenAttr::kControl : TokenAttr::kUserDefined;
  }
  auto check = [&](int id, const char* what) {
    if (id >= int(n))
      throw std::runtime_error("'" + path_ + "': the " + std::string(what) + " id " + std::to_string(id) +
                               " is outside the vocabulary of " + std::to_string(n) + " tokens");
  };
  check(c.bos_id, "BOS");
  check(c.eos_id, "EOS");
  bos_id_ = c.bos_id;
  eos_id_ = c.eos_id;
  add_bos_ = c.add_bos && bos_id_ >= 0;
  clean_spaces_ = c.clean_spaces;
  if (eos_id_ >= 0) eos_ids_.push_back(eos_id_);
  for (int id : c.eos_ids) {
    check(id, "end-of-generation");
    if (id >= 0 && std::find(eos_ids_.begin(), eos_ids_.end(), id) == eos_ids_.end()) eos_ids_.push_back(id);
  }
  set_added_tokens(std::move(c.added));
}

std::string BpeTokenizer::normalize(std::string_view segment) const {
  return normalizer_ ? normalizer_->apply(std::string(segment)) : std::string(segment);
}

void BpeTokenizer::encode_normalized(std::string_view text, const Segment& seg, std::vector<int>& out) const {
  if (!pre_tokenizer_) {
    model_.encode_word(text, out);
    return;
  }
  thread_local std::vector<std::string> pieces;
  pieces.clear();
  pieces.emplace_back(text);
  pre_tokenizer_->apply(pieces, seg.at_start);
  for (const std::string& p : pieces)
    if (!p.empty()) model_.encode_word(p, out);
}

std::string BpeTokenizer::decode_bytes_impl(const std::vector<int>& ids, bool with_special) const {
  std::vector<Decoder::Token> tokens;
  tokens.reserve(ids.size());
  for (int id : ids) {
    switch (attrs_[id]) {
      case TokenAttr::kControl:
        if (with_special) tokens.push_back({pieces_[id], true});
        break;
      case TokenAttr::kUserDefined:
        tokens.push_back({pieces_[id], true});
        break;
      case TokenAttr::kUnused:
        break;
      case TokenAttr::kNormal:
        tokens.push_back({pieces_[id], false});
        break;
    }
  }
  if (decoder_) decoder_->apply(tokens, /*alone=*/false);
  std::string out;
  for (const auto& t : tokens) out += t.text;
  return out;
}

std::string BpeTokenizer::id_to_piece(int id) const {
  return id >= 0 && id < vocab_size() ? pieces_[id] : std::string();
}

std::string BpeTokenizer::token_text(int id) const {
  if (id < 0 || id >= vocab_size()) return {};
  if (attrs_[id] != TokenAttr::kNormal) return attrs_[id] == TokenAttr::kUnused ? std::string() : pieces_[id];
  std::vector<Decoder::Token> tokens{{pieces_[id], false}};
  if (decoder_) decoder_->apply(tokens, /*alone=*/true);
  std::string out;
  for (const auto& t : tokens) out += t.text;
  return out;
}

std::optional<int> BpeTokenizer::piece_to_id(std::string_view piece) const {
  for (const AddedToken& t : added_tokens())
    if (t.content == piece) return t.id;
  return model_.token_id(piece);
}

bool BpeTokenizer::is_control(int id) const {
  return id >= 0 && id < vocab_size() && attrs_[id] == TokenAttr::kControl;
}

}  // namespace pagedchat::bpe
