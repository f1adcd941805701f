#include "engine/loader/gguf/gguf_tokenizer.h"

#include <sentencepiece_processor.h>

#include <stdexcept>

#include "engine/loader/gguf/gguf_reader.h"
#include "sentencepiece_model.pb.h"  // generated from engine/gguf/sentencepiece_model.proto

namespace pagedchat {
namespace {

constexpr int64_t kMaxVocab = 1 << 22;
using PieceType = spm::ModelProto::SentencePiece;

// A special id from the file: absent, negative or uint32 -1 (llama.cpp's "none") -> -1.
int read_special_id(const GgufFile& f, const std::string& key, int fallback, std::size_t n) {
  const std::optional<int64_t> v = f.get_int(key);
  if (!v) return fallback;
  if (*v < 0 || *v == 0xFFFFFFFFll) return -1;
  if (uint64_t(*v) >= n)
    throw std::runtime_error("'" + f.name() + "': key '" + key + "' is " + std::to_string(*v) +
                             ", outside the vocabulary of " + std::to_string(n) + " tokens");
  return int(*v);
}

}  // namespace

SpmVocab read_gguf_vocab(const GgufFile& f) {
  const std::string& file = f.name();
  const std::optional<std::string> model = f.get_string("tokenizer.ggml.model");
  if (!model)
    throw std::runtime_error("'" + file + "' holds no tokenizer (no key 'tokenizer.ggml.model'); "
                             "pass a sentencepiece .model with --tokenizer");
  if (*model != "llama")
    throw std::runtime_error("'" + file + "': tokenizer.ggml.model is '" + *model +
                             "', which is not supported (only 'llama', i.e. sentencepiece vocabularies)");
  const GgufValue* tokens = f.get_array("tokenizer.ggml.tokens", GgufType::kString);
  if (!tokens || tokens->strings.empty())
    throw std::runtime_error("'" + file + "': key 'tokenizer.ggml.tokens' is missing or empty");
  const std::size_t n = tokens->strings.size();
  if (int64_t(n) > kMaxVocab)
    throw std::runtime_error("'" + file + "': " + std::to_string(n) + " tokens is more than the limit of " +
                             std::to_string(kMaxVocab));
  SpmVocab v;
  v.pieces = tokens->strings;
  for (std::size_t i = 0; i < n; ++i)
    if (v.pieces[i].empty() || !is_valid_utf8(v.pieces[i]))
      throw std::runtime_error("'" + file + "': token " + std::to_string(i) + " of 'tokenizer.ggml.tokens' is " +
                               (v.pieces[i].empty() ? "empty" : "not valid UTF-8"));
  v.unk_id = read_special_id(f, "tokenizer.ggml.unknown_token_id", 0, n);
  v.bos_id = read_special_id(f, "tokenizer.ggml.bos_token_id", 1, n);
  v.eos_id = read_special_id(f, "tokenizer.ggml.eos_token_id", 2, n);
  v.pad_id = read_special_id(f, "tokenizer.ggml.padding_token_id", -1, n);

  if (const GgufValue* scores = f.get_array("tokenizer.ggml.scores", GgufType::kFloat32)) {
    if (scores->floats.size() != n)
      throw std::runtime_error("'" + file + "': 'tokenizer.ggml.scores' has " + std::to_string(scores->floats.size()) +
                               " values for " + std::to_string(n) + " tokens");
    v.scores.assign(scores->floats.begin(), scores->floats.end());
  } else {
    v.scores.assign(n, 0.0f);
  }
  if (const GgufValue* types = f.get_array("tokenizer.ggml.token_type", GgufType::kInt32)) {
    if (types->ints.size() != n)
      throw std::runtime_error("'" + file + "': 'tokenizer.ggml.token_type' has " + std::to_string(types->ints.size()) +
                               " values for " + std::to_string(n) + " tokens");
    for (std::size_t i = 0; i < n; ++i) {
      const int64_t t = types->ints[i];
      if (t < 1 || t > 6)
        throw std::runtime_error("'" + file + "': token " + std::to_string(i) + " has type " + std::to_string(t) +
                                 " (1 to 6 allowed in 'tokenizer.ggml.token_type')");
      v.types.push_back(int(t));
    }
  } else {  // no types: the special ids say which tokens are special
    v.types.assign(n, PieceType::NORMAL);
    for (int id : {v.bos_id, v.eos_id, v.pad_id})
      if (id >= 0) v.types[id] = PieceType::CONTROL;
    if (v.unk_id >= 0) v.types[v.unk_id] = PieceType::UNKNOWN;
  }
  v.add_bos = f.get_bool("tokenizer.ggml.add_bos_token").value_or(true);
  v.add_space_prefix = f.get_bool("tokenizer.ggml.add_space_prefix").value_or(true);
  v.remove_extra_whitespaces = f.get_bool("tokenizer.ggml.remove_extra_whitespaces").value_or(false);
  return v;
}

std::string build_sentencepiece_proto(const SpmVocab& v) {
  if (v.scores.size() != v.pieces.size() || v.types.size() != v.pieces.size())
    throw std::invalid_argument("vocabulary: pieces, scores and types differ in size");
  spm::ModelProto m;
  bool has_bytes = false;
  for (std::size_t i = 0; i < v.pieces.size(); ++i) {
    if (!PieceType::Type_IsValid(v.types[i]))
      throw std::invalid_argument("vocabulary: token " + std::to_string(i) + " has type " + std::to_string(v.types[i]));
    PieceType* p = m.add_pieces();
    p->set_piece(v.pieces[i]);
    p->set_score(v.scores[i]);
    p->set_type(PieceType::Type(v.types[i]));
    has_bytes = has_bytes || v.types[i] == PieceType::BYTE;
  }
  spm::TrainerSpec* t = m.mutable_trainer_spec();
  t->set_model_type(spm::TrainerSpec::BPE);
  t->set_vocab_size(int(v.pieces.size()));
  t->set_byte_fallback(has_bytes);
  // sentencepiece finds its special tokens by piece text: name them after the ids.
  auto special = [&](int id, void (spm::TrainerSpec::*set_id)(int32_t),
                     void (spm::TrainerSpec::*set_piece)(const std::string&)) {
    (t->*set_id)(id);
    if (id >= 0 && std::size_t(id) < v.pieces.size()) (t->*set_piece)(v.pieces[id]);
  };
  special(v.unk_id, &spm::TrainerSpec::set_unk_id, &spm::TrainerSpec::set_unk_piece);
  special(v.bos_id, &spm::TrainerSpec::set_bos_id, &spm::TrainerSpec::set_bos_piece);
  special(v.eos_id, &spm::TrainerSpec::set_eos_id, &spm::TrainerSpec::set_eos_piece);
  special(v.pad_id, &spm::TrainerSpec::set_pad_id, &spm::TrainerSpec::set_pad_piece);
  spm::NormalizerSpec* n = m.mutable_normalizer_spec();
  n->set_name("identity");
  n->set_add_dummy_prefix(v.add_space_prefix);
  n->set_remove_extra_whitespaces(v.remove_extra_whitespaces);
  n->set_escape_whitespaces(true);
  return m.SerializeAsString();
}

std::unique_ptr<Tokenizer> load_gguf_tokenizer(const GgufFile& f) {
  return Tokenizer::from_serialized_proto(build_sentencepiece_proto(read_gguf_vocab(f)), f.name());
}

std::string read_gguf_chat_template(const GgufFile& f) {
  return f.get_string("tokenizer.chat_template").value_or("");
}

SpmVocab vocab_from_sentencepiece(const sentencepiece::SentencePieceProcessor& sp, const std::string& name) {
  // The ModelProto for what the public API does not tell: model type, user-defined pieces,
  // normalizer flags. Our subset parses it (other fields are skipped).
  spm::ModelProto m;
  if (!m.ParseFromString(sp.serialized_model_proto()) || m.pieces_size() != sp.GetPieceSize())
    throw std::runtime_error("tokenizer '" + name + "': cannot read its sentencepiece model");
  if (m.trainer_spec().model_type() != spm::TrainerSpec::BPE)
    throw std::runtime_error("tokenizer '" + name + "' is not a sentencepiece BPE model; GGUF 'llama' "
                             "vocabularies are BPE, so it would tokenize differently");
  SpmVocab v;
  const int n = sp.GetPieceSize();
  for (int i = 0; i < n; ++i) {
    v.pieces.push_back(sp.IdToPiece(i));
    v.scores.push_back(sp.GetScore(i));
    int type = PieceType::NORMAL;
    if (sp.IsUnknown(i)) type = PieceType::UNKNOWN;
    else if (sp.IsControl(i)) type = PieceType::CONTROL;
    else if (sp.IsByte(i)) type = PieceType::BYTE;
    else if (sp.IsUnused(i)) type = PieceType::UNUSED;
    else if (m.pieces(i).type() == PieceType::USER_DEFINED) type = PieceType::USER_DEFINED;
    v.types.push_back(type);
  }
  v.unk_id = sp.unk_id();
  v.bos_id = sp.bos_id();
  v.eos_id = sp.eos_id();
  v.pad_id = sp.pad_id();
  v.add_bos = true;
  v.add_space_prefix = m.normalizer_spec().add_dummy_prefix();
  v.remove_extra_whitespaces = m.normalizer_spec().remove_extra_whitespaces();
  if (m.normalizer_spec().name() != "identity" && !m.normalizer_spec().name().empty())
    throw std::runtime_error("tokenizer '" + name + "' normalizes text with '" + m.normalizer_spec().name() +
                             "'; GGUF 'llama' vocabularies carry no normalization rules");
  return v;
}

}  // namespace pagedchat
