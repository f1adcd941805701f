#include "engine/text/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "sentencepiece_model.pb.h"  // pagedchat::spm (engine/loader/gguf/sentencepiece_model.proto)

namespace pagedchat {

namespace {
constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581, sentencepiece's whitespace symbol

int byte_of_piece(const std::string& p) {  // "<0xAB>" -> 0xAB
  if (p.size() != 6 || p.compare(0, 3, "<0x") != 0 || p[5] != '>') return -1;
  int v = 0;
  for (int i = 3; i < 5; ++i) {
    const char c = p[i];
    v = v * 16 + (c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                         : -1000);
  }
  return v >= 0 ? v : -1;
}

void append_unescaped(std::string& out, std::string_view piece) {
  for (std::size_t at; (at = piece.find(kSpace)) != std::string_view::npos;) {
    out.append(piece.substr(0, at));
    out += ' ';
    piece.remove_prefix(at + kSpace.size());
  }
  out.append(piece);
}
}  // namespace

SentencePieceTokenizer::SentencePieceTokenizer(std::string path,
                                               std::unique_ptr<sentencepiece::SentencePieceProcessor> sp,
                                               const SentencePieceOptions& options)
    : Tokenizer(std::move(path)), sp_(std::move(sp)) {
  spm::ModelProto m;  // for what the public API does not tell: user-defined pieces, add_dummy_prefix
  const bool have_proto = m.ParseFromString(sp_->serialized_model_proto()) && m.pieces_size() == sp_->GetPieceSize();
  strips_dummy_prefix_ = !have_proto || m.normalizer_spec().add_dummy_prefix();
  const int n = sp_->GetPieceSize();
  kinds_.resize(std::size_t(n));
  pieces_.resize(std::size_t(n));
  std::vector<AddedToken> added;
  for (int i = 0; i < n; ++i) {
    pieces_[i] = sp_->IdToPiece(i);
    Kind k = Kind::kNormal;
    if (sp_->IsUnknown(i))
      k = Kind::kUnknown;
    else if (sp_->IsControl(i))
      k = Kind::kControl;
    else if (sp_->IsByte(i))
      k = Kind::kByte;
    else if (sp_->IsUnused(i))
      k = Kind::kUnused;
    else if (have_proto && m.pieces(i).type() == spm::ModelProto::SentencePiece::USER_DEFINED)
      k = Kind::kUserDefined;
    kinds_[i] = k;
    if (k == Kind::kControl || k == Kind::kUnknown || k == Kind::kUserDefined) {
      AddedToken t;
      t.id = i;
      t.content = pieces_[i];
      t.special = k != Kind::kUserDefined;
      for (const auto& s : options.strips)
        if (s.id == i) {
          t.lstrip = s.lstrip;
          t.rstrip = s.rstrip;
        }
      added.push_back(std::move(t));
    }
  }
  set_added_tokens(std::move(added));
  bos_id_ = sp_->bos_id();
  eos_id_ = sp_->eos_id();
  add_bos_ = options.add_bos && bos_id_ >= 0;
  if (eos_id_ >= 0) eos_ids_.push_back(eos_id_);
  for (int id : options.extra_eos)
    if (id >= 0 && id < n && std::find(eos_ids_.begin(), eos_ids_.end(), id) == eos_ids_.end()) eos_ids_.push_back(id);
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::unique_ptr<SentencePieceTokenizer> SentencePieceTokenizer::load_file(const std::string& model_path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(model_path, ec))
    throw std::runtime_error("tokenizer file '" + model_path + "' does not exist or is not a file");
  auto sp = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto status = sp->Load(model_path);
  if (!status.ok()) throw std::runtime_error("'" + model_path + "' is not a sentencepiece model: " + status.ToString());
  return std::unique_ptr<SentencePieceTokenizer>(new SentencePieceTokenizer(model_path, std::move(sp), {}));
}

std::unique_ptr<SentencePieceTokenizer> SentencePieceTokenizer::from_serialized_proto(
    const std::string& proto, const std::string& name, const SentencePieceOptions& options) {
  auto sp = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto status = sp->LoadFromSerializedProto(proto);
  if (!status.ok()) throw std::runtime_error("the tokenizer of '" + name + "' is not usable: " + status.ToString());
  return std::unique_ptr<SentencePieceTokenizer>(new SentencePieceTokenizer(name, std::move(sp), options));
}

void SentencePieceTokenizer::encode_normalized(std::string_view text, const Segment&, std::vector<int>& out) const {
  std::vector<int> ids;
  const auto status = sp_->Encode(text, &ids);
  if (!status.ok()) throw std::runtime_error("tokenizer '" + path_ + "' failed to encode: " + status.ToString());
  out.insert(out.end(), ids.begin(), ids.end());
}

// One leading space is dropped from the whole decoded text when the model adds a dummy prefix:
// HF's Llama tokenizers (decoder Strip(" ", 1, 0) after Fuse) and llama.cpp (lstrip of the first
// piece) do that. libsentencepiece 0.1.97 instead strips the "▁" of every piece while its output
// is still empty, which loses the spaces of a text that starts with several (" Hello" decodes to
// "Hello"); later sentencepiece releases strip only the first one as well.
std::string SentencePieceTokenizer::decode_bytes_impl(const std::vector<int>& ids, bool with_special) const {
  std::string out;
  for (int id : ids) {
    const Kind k = kinds_[id];
    const std::string& p = pieces_[id];
    switch (k) {
      case Kind::kControl:
      case Kind::kUnknown:
        if (with_special) out += p;
        break;
      case Kind::kByte: {
        const int b = byte_of_piece(p);
        if (b >= 0) out += char(b);
        break;
      }
      case Kind::kUserDefined:
        out += p;
        break;
      case Kind::kUnused:
      case Kind::kNormal:
        append_unescaped(out, p);
        break;
    }
  }
  if (strips_dummy_prefix_ && !out.empty() && out[0] == ' ') out.erase(0, 1);
  return out;
}

std::string SentencePieceTokenizer::id_to_piece(int id) const {
  return id >= 0 && id < vocab_size() ? pieces_[id] : std::string();
}

std::string SentencePieceTokenizer::token_text(int id) const {
  if (id < 0 || id >= vocab_size()) return {};
  std::string out;
  if (kinds_[id] == Kind::kByte) {
    const int b = byte_of_piece(pieces_[id]);
    if (b >= 0) out += char(b);
  } else if (kinds_[id] == Kind::kNormal || kinds_[id] == Kind::kUnused) {
    append_unescaped(out, pieces_[id]);
  } else {
    out = pieces_[id];
  }
  return out;
}

std::optional<int> SentencePieceTokenizer::piece_to_id(std::string_view piece) const {
  const int id = sp_->PieceToId(piece);
  if (id >= 0 && id < vocab_size() && pieces_[id] == piece) return id;
  return std::nullopt;
}

bool SentencePieceTokenizer::is_control(int id) const {
  return id >= 0 && id < vocab_size() && (kinds_[id] == Kind::kControl || kinds_[id] == Kind::kUnknown);
}

int SentencePieceTokenizer::vocab_size() const { return int(kinds_.size()); }

}  // namespace pagedchat
