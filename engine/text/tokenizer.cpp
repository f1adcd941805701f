#include "engine/text/tokenizer.h"

#include <sentencepiece_processor.h>

#include <filesystem>
#include <stdexcept>

namespace pagedchat {

Tokenizer::Tokenizer(const std::string& model_path)
    : path_(model_path), sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(model_path, ec))
    throw std::runtime_error("tokenizer file '" + model_path + "' does not exist or is not a file");
  const auto status = sp_->Load(model_path);
  if (!status.ok())
    throw std::runtime_error("'" + model_path + "' is not a sentencepiece model: " + status.ToString());
}

std::unique_ptr<Tokenizer> Tokenizer::from_serialized_proto(const std::string& proto, const std::string& name) {
  std::unique_ptr<Tokenizer> t(new Tokenizer());
  t->path_ = name;
  t->sp_ = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto status = t->sp_->LoadFromSerializedProto(proto);
  if (!status.ok()) throw std::runtime_error("the tokenizer of '" + name + "' is not usable: " + status.ToString());
  return t;
}

Tokenizer::~Tokenizer() = default;

std::vector<int> Tokenizer::encode(std::string_view text, bool add_bos) const {
  std::vector<int> ids;
  const auto status = sp_->Encode(text, &ids);
  if (!status.ok()) throw std::runtime_error("tokenizer '" + path_ + "' failed to encode: " + status.ToString());
  if (add_bos && sp_->bos_id() >= 0) ids.insert(ids.begin(), sp_->bos_id());
  return ids;
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
  std::string text;
  const int n = sp_->GetPieceSize();
  for (int id : ids)
    if (id < 0 || id >= n) throw std::out_of_range("token id " + std::to_string(id) + " outside the vocabulary");
  const auto status = sp_->Decode(ids, &text);
  if (!status.ok()) throw std::runtime_error("tokenizer '" + path_ + "' failed to decode: " + status.ToString());
  return text;
}

std::string Tokenizer::id_to_piece(int id) const { return sp_->IdToPiece(id); }
int Tokenizer::vocab_size() const { return sp_->GetPieceSize(); }
int Tokenizer::bos_id() const { return sp_->bos_id(); }
int Tokenizer::eos_id() const { return sp_->eos_id(); }

// ---------------------------------------------------------------------------------------------
// IncrementalDetokenizer: decode a window [prefix_offset, end) and the window [prefix_offset,
// read_offset) that was already emitted; the difference is the new text. The window keeps a few
// tokens of left context so sentencepiece's handling of a leading "▁" is the same in both decodes.
// New text that ends in U+FFFD (an incomplete byte-fallback sequence) is held back.

namespace {
constexpr size_t kPromptContext = 5;  // tokens of prompt kept as left context (as vLLM does)
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool ends_with_replacement(const std::string& s) {
  return s.size() >= kReplacement.size() && s.compare(s.size() - kReplacement.size(), kReplacement.size(), kReplacement) == 0;
}
}  // namespace

IncrementalDetokenizer::IncrementalDetokenizer(const Tokenizer& tokenizer, const std::vector<int>& prompt_ids)
    : tokenizer_(tokenizer) {
  const size_t keep = std::min(prompt_ids.size(), kPromptContext);
  ids_.assign(prompt_ids.end() - keep, prompt_ids.end());
  prefix_offset_ = 0;
  read_offset_ = ids_.size();
}

std::string IncrementalDetokenizer::add_token(int id) {
  ids_.push_back(id);
  const std::vector<int> prefix(ids_.begin() + prefix_offset_, ids_.begin() + read_offset_);
  const std::vector<int> window(ids_.begin() + prefix_offset_, ids_.end());
  const std::string prefix_text = tokenizer_.decode(prefix);
  const std::string new_text = tokenizer_.decode(window);
  if (new_text.size() > prefix_text.size() && !ends_with_replacement(new_text) &&
      new_text.compare(0, prefix_text.size(), prefix_text) == 0) {
    std::string delta = new_text.substr(prefix_text.size());
    prefix_offset_ = read_offset_;
    read_offset_ = ids_.size();
    text_ += delta;
    return delta;
  }
  return {};
}

std::string IncrementalDetokenizer::flush() {
  if (read_offset_ == ids_.size()) return {};
  const std::vector<int> prefix(ids_.begin() + prefix_offset_, ids_.begin() + read_offset_);
  const std::vector<int> window(ids_.begin() + prefix_offset_, ids_.end());
  const std::string prefix_text = tokenizer_.decode(prefix);
  const std::string new_text = tokenizer_.decode(window);
  std::string delta;
  if (new_text.size() > prefix_text.size() && new_text.compare(0, prefix_text.size(), prefix_text) == 0)
    delta = new_text.substr(prefix_text.size());
  prefix_offset_ = read_offset_ = ids_.size();
  text_ += delta;
  return delta;
}

}  // namespace pagedchat
