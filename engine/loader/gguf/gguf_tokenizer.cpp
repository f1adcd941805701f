#include "engine/loader/gguf/gguf_tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <stdexcept>

#include "engine/loader/gguf/gguf_bpe_pre.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/load_util.h"
#include "engine/text/sentencepiece_tokenizer.h"
#include "sentencepiece_model.pb.h"  // generated from engine/gguf/sentencepiece_model.proto

namespace pagedchat {
namespace {

using load::kMaxVocab;
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
    throw std::runtime_error("'" + file +
                             "' holds no tokenizer (no key 'tokenizer.ggml.model'); "
                             "pass a sentencepiece .model with --tokenizer");
  if (*model != "llama")
    throw std::runtime_error("'" + file + "': tokenizer.ggml.model is '" + *model +
                             "', not 'llama' (a sentencepiece vocabulary)");
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
    // sentencepiece needs exactly one UNKNOWN piece, at unk_id. GGUF files are not always so
    // tidy (Phi-3's types <unk> CONTROL and its [PAD] rows UNKNOWN); llama.cpp treats UNKNOWN and
    // CONTROL alike (never produced from text, matched only with parse_special, decoded as ""),
    // so other UNKNOWN pieces become CONTROL and the unk_id piece UNKNOWN.
    int type = v.types[i];
    if (int(i) == v.unk_id)
      type = PieceType::UNKNOWN;
    else if (type == PieceType::UNKNOWN)
      type = PieceType::CONTROL;
    p->set_type(PieceType::Type(type));
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

namespace {

std::string lower(std::string s) {
  for (char& ch : s)
    if (ch >= 'A' && ch <= 'Z') ch = char(ch - 'A' + 'a');
  return s;
}

std::vector<int> extra_eos_ids(const GgufFile& f, std::size_t n) {
  std::vector<int> ids;
  for (const char* key : {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"})
    if (const int id = read_special_id(f, key, -1, n); id >= 0) ids.push_back(id);
  return ids;
}

std::unique_ptr<Tokenizer> load_gguf_spm(const GgufFile& f) {
  const SpmVocab v = read_gguf_vocab(f);
  SentencePieceOptions o;
  o.add_bos = v.add_bos;
  o.extra_eos = extra_eos_ids(f, v.pieces.size());
  // llama.cpp b4747 (llama_vocab::impl::load, "per token attributes"): Phi-3 models strip the
  // whitespace after their special tokens, except <unk>, <s> and <|endoftext|>; </s> does too.
  const std::string name = lower(f.get_string("general.name").value_or(""));
  if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
    for (std::size_t i = 0; i < v.pieces.size(); ++i) {
      const int t = v.types[i];
      const std::string& p = v.pieces[i];
      const bool special = t == PieceType::CONTROL || t == PieceType::USER_DEFINED || t == PieceType::UNKNOWN;
      if ((special || p == "</s>") && p != "<unk>" && p != "<s>" && p != "<|endoftext|>")
        o.strips.push_back({int(i), false, true});
    }
  }
  return SentencePieceTokenizer::from_serialized_proto(build_sentencepiece_proto(v), f.name(), o);
}

}  // namespace

bpe::BpeConfig read_gguf_bpe(const GgufFile& f) {
  const std::string& file = f.name();
  auto fail = [&](const std::string& msg) -> void { throw std::runtime_error("'" + file + "': " + msg); };
  const GgufValue* tokens = f.get_array("tokenizer.ggml.tokens", GgufType::kString);
  if (!tokens || tokens->strings.empty()) fail("key 'tokenizer.ggml.tokens' is missing or empty");
  const std::size_t n = tokens->strings.size();
  if (int64_t(n) > kMaxVocab)
    fail(std::to_string(n) + " tokens is more than the limit of " + std::to_string(kMaxVocab));
  for (std::size_t i = 0; i < n; ++i)
    if (tokens->strings[i].empty() || !is_valid_utf8(tokens->strings[i]))
      fail("token " + std::to_string(i) + " of 'tokenizer.ggml.tokens' is " +
           (tokens->strings[i].empty() ? "empty" : "not valid UTF-8"));
  std::vector<int> types(n, PieceType::NORMAL);
  if (const GgufValue* tt = f.get_array("tokenizer.ggml.token_type", GgufType::kInt32)) {
    if (tt->ints.size() != n)
      fail("'tokenizer.ggml.token_type' has " + std::to_string(tt->ints.size()) + " values for " + std::to_string(n) +
           " tokens");
    for (std::size_t i = 0; i < n; ++i) {
      if (tt->ints[i] < 1 || tt->ints[i] > 6)
        fail("token " + std::to_string(i) + " has type " + std::to_string(tt->ints[i]) +
             " (1 to 6 allowed in 'tokenizer.ggml.token_type')");
      types[i] = int(tt->ints[i]);
    }
  }
  const GgufValue* merges = f.get_array("tokenizer.ggml.merges", GgufType::kString);
  if (!merges) fail("key 'tokenizer.ggml.merges' is missing: a 'gpt2' (BPE) vocabulary needs its merges");
  // Gemma 4's SPM-style BPE ("gemma4"): spaces become "▁" before the merges, the text splits
  // only at newline runs (a run that is a token stays one), no GPT-2 byte characters, unknown
  // characters fall back to <0xAB> byte tokens, BOS always added (ik_llama.cpp llama-vocab.cpp,
  // LLAMA_VOCAB_PRE_TYPE_GEMMA4).
  const bool spm_style = f.get_string("tokenizer.ggml.model").value_or("") == "gemma4";
  const std::string pre_name = spm_style ? "gemma4" : f.get_string("tokenizer.ggml.pre").value_or("");
  std::optional<GgufBpePre> pre = spm_style ? std::nullopt : gguf_bpe_pre(pre_name);
  if (spm_style) {
    pre.emplace();
    pre->type = "GEMMA4";
    pre->regexes = {"[^\\n]+|[\\n]+"};
    pre->add_bos = true;
    pre->clean_spaces = false;
  }
  if (!pre) {
    std::string known;
    for (const std::string& k : gguf_bpe_pre_names()) known += (known.empty() ? "" : ", ") + k;
    fail("tokenizer.ggml.pre is '" + pre_name +
         "', a pre-tokenizer type llama.cpp b4747 does not know (known: " + known + ")");
  }

  bpe::BpeConfig c;
  c.path = file;
  c.pieces = tokens->strings;
  c.vocab.resize(n);
  c.attrs.resize(n, bpe::TokenAttr::kNormal);
  for (std::size_t i = 0; i < n; ++i) {
    const int t = types[i];
    if (t == PieceType::NORMAL) {
      c.vocab[i] = c.pieces[i];
      continue;
    }
    if (t == PieceType::BYTE && spm_style) {  // <0xAB>: the byte fallback's tokens
      c.vocab[i] = c.pieces[i];
      continue;
    }
    if (t == PieceType::UNUSED || t == PieceType::BYTE) {
      c.attrs[i] = bpe::TokenAttr::kUnused;
      continue;
    }
    AddedToken a;
    a.id = int(i);
    a.content = c.pieces[i];
    a.special = t != PieceType::USER_DEFINED;
    c.attrs[i] = a.special ? bpe::TokenAttr::kControl : bpe::TokenAttr::kUserDefined;
    // llama.cpp b4747: jina-v2-de/-es/-code vocabularies strip the whitespace before <mask>.
    if (a.content == "<mask>" && pre_name.find("jina-v2-") != std::string::npos) a.lstrip = true;
    c.added.push_back(std::move(a));
  }
  c.merges.reserve(merges->strings.size());
  for (std::size_t i = 0; i < merges->strings.size(); ++i) {
    const std::string& m = merges->strings[i];
    const std::size_t sp = m.size() > 1 ? m.find(' ', 1) : std::string::npos;  // llama.cpp: find(' ', 1)
    if (sp == std::string::npos || sp + 1 >= m.size())
      fail("merge " + std::to_string(i) + " of 'tokenizer.ggml.merges' is \"" + m + "\", not \"left right\"");
    c.merges.emplace_back(m.substr(0, sp), m.substr(sp + 1));
  }
  c.merges_where = "'" + file + "': tokenizer.ggml.merges";
  c.model.ignore_merges = pre->ignore_merges;
  c.model.byte_fallback = spm_style;
  c.model.whole_newline_runs = spm_style;
  if (spm_style) {
    bpe::Normalizer space;
    space.type = bpe::Normalizer::Type::kReplace;
    space.pattern.literal = " ";
    space.content = "\xE2\x96\x81";
    c.normalizer = space;
  }

  if (pre->nfc) {
    bpe::Normalizer nfc;
    nfc.type = bpe::Normalizer::Type::kNFC;
    c.normalizer = nfc;
  }
  bpe::PreTokenizer seq;
  seq.type = bpe::PreTokenizer::Type::kSequence;
  for (std::size_t i = 0; i < pre->regexes.size(); ++i) {
    bpe::PreTokenizer split;
    split.type = bpe::PreTokenizer::Type::kSplit;
    split.behavior = bpe::SplitBehavior::kIsolated;
    split.pattern.regex = std::make_shared<bpe::Regex>(
        pre->regexes[i], "'" + file + "': pre-tokenizer '" + pre_name + "' expression " + std::to_string(i));
    seq.children.push_back(std::move(split));
  }
  if (spm_style) {
    c.pre_tokenizer = std::move(seq);
    bpe::Decoder dec, space, bytes, fuse;
    space.type = bpe::Decoder::Type::kReplace;
    space.pattern.literal = "\xE2\x96\x81";
    space.content = " ";
    bytes.type = bpe::Decoder::Type::kByteFallback;
    fuse.type = bpe::Decoder::Type::kFuse;
    dec.type = bpe::Decoder::Type::kSequence;
    dec.children = {space, bytes, fuse};
    c.decoder = dec;
  } else {
    bpe::PreTokenizer bytes;
    bytes.type = bpe::PreTokenizer::Type::kByteLevel;
    bytes.add_prefix_space = false;
    bytes.use_regex = false;
    seq.children.push_back(std::move(bytes));
    c.pre_tokenizer = std::move(seq);
    bpe::Decoder dec;
    dec.type = bpe::Decoder::Type::kByteLevel;
    c.decoder = dec;
  }

  c.bos_id = pre->no_bos ? -1 : read_special_id(f, "tokenizer.ggml.bos_token_id", -1, n);
  c.eos_id = read_special_id(f, "tokenizer.ggml.eos_token_id", -1, n);
  (void)read_special_id(f, "tokenizer.ggml.unknown_token_id", -1, n);  // checked: inside the vocabulary
  (void)read_special_id(f, "tokenizer.ggml.padding_token_id", -1, n);
  c.eos_ids = extra_eos_ids(f, n);
  c.add_bos = spm_style || f.get_bool("tokenizer.ggml.add_bos_token").value_or(pre->add_bos);
  c.clean_spaces = pre->clean_spaces;
  return c;
}

std::unique_ptr<Tokenizer> load_gguf_tokenizer(const GgufFile& f) {
  const std::optional<std::string> model = f.get_string("tokenizer.ggml.model");
  if (!model)
    throw std::runtime_error("'" + f.name() +
                             "' holds no tokenizer (no key 'tokenizer.ggml.model'); "
                             "pass a tokenizer with --tokenizer");
  if (*model == "llama") return load_gguf_spm(f);
  if (*model == "gpt2" || *model == "gemma4") return std::make_unique<bpe::BpeTokenizer>(read_gguf_bpe(f));
  static const std::pair<const char*, const char*> kRefused[] = {{"bert", "WordPiece"},
                                                                 {"t5", "Unigram"},
                                                                 {"rwkv", "RWKV"},
                                                                 {"no_vocab", "no vocabulary"},
                                                                 {"none", "no vocabulary"}};
  for (const auto& [name, what] : kRefused)
    if (*model == name)
      throw std::runtime_error(
          "'" + f.name() + "': tokenizer.ggml.model is '" + *model + "' (" + what +
          "), which is not supported (supported: 'llama' = sentencepiece, 'gpt2' and 'gemma4' = BPE)");
  throw std::runtime_error(
      "'" + f.name() + "': tokenizer.ggml.model is '" + *model +
      "', an unknown tokenizer model (supported: 'llama' = sentencepiece, 'gpt2' and 'gemma4' = BPE)");
}

std::string read_gguf_chat_template(const GgufFile& f) { return f.get_string("tokenizer.chat_template").value_or(""); }

SpmVocab vocab_from_sentencepiece(const sentencepiece::SentencePieceProcessor& sp, const std::string& name) {
  // The ModelProto for what the public API does not tell: model type, user-defined pieces,
  // normalizer flags. Our subset parses it (other fields are skipped).
  spm::ModelProto m;
  if (!m.ParseFromString(sp.serialized_model_proto()) || m.pieces_size() != sp.GetPieceSize())
    throw std::runtime_error("tokenizer '" + name + "': cannot read its sentencepiece model");
  if (m.trainer_spec().model_type() != spm::TrainerSpec::BPE)
    throw std::runtime_error("tokenizer '" + name +
                             "' is not a sentencepiece BPE model; GGUF 'llama' "
                             "vocabularies are BPE, so it would tokenize differently");
  SpmVocab v;
  const int n = sp.GetPieceSize();
  for (int i = 0; i < n; ++i) {
    v.pieces.push_back(sp.IdToPiece(i));
    v.scores.push_back(sp.GetScore(i));
    int type = PieceType::NORMAL;
    if (sp.IsUnknown(i))
      type = PieceType::UNKNOWN;
    else if (sp.IsControl(i))
      type = PieceType::CONTROL;
    else if (sp.IsByte(i))
      type = PieceType::BYTE;
    else if (sp.IsUnused(i))
      type = PieceType::UNUSED;
    else if (m.pieces(i).type() == PieceType::USER_DEFINED)
      type = PieceType::USER_DEFINED;
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
