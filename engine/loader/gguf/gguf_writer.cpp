#include "engine/loader/gguf/gguf_writer.h"

#include <sentencepiece_processor.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "engine/loader/gguf/dequant.h"
#include "engine/loader/gguf/gguf_reader.h"

namespace pagedchat {
namespace {

constexpr uint64_t kAlignment = 32;  // GGUF_DEFAULT_ALIGNMENT

// Little-endian serialization of the GGUF header, metadata and tensor infos.
class Bytes {
 public:
  template <typename T>
  void put(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    s_.append(b, sizeof(T));
  }
  void str(const std::string& v) {
    put<uint64_t>(v.size());
    s_ += v;
  }
  void key(const std::string& k, GgufType t) {
    str(k);
    put<uint32_t>(uint32_t(t));
    ++n_kv_;
  }
  void kv_u32(const std::string& k, uint32_t v) { key(k, GgufType::kUint32); put(v); }
  void kv_f32(const std::string& k, float v) { key(k, GgufType::kFloat32); put(v); }
  void kv_bool(const std::string& k, bool v) { key(k, GgufType::kBool); put<uint8_t>(v ? 1 : 0); }
  void kv_str(const std::string& k, const std::string& v) { key(k, GgufType::kString); str(v); }
  template <typename T>
  void kv_array(const std::string& k, GgufType elem, const std::vector<T>& v) {
    key(k, GgufType::kArray);
    put<uint32_t>(uint32_t(elem));
    put<uint64_t>(v.size());
    for (const T& x : v) {
      if constexpr (std::is_same_v<T, std::string>) str(x);
      else put(x);
    }
  }
  std::string& data() { return s_; }
  uint64_t n_kv() const { return n_kv_; }

 private:
  std::string s_;
  uint64_t n_kv_ = 0;
};

// One tensor to write: `rows` rows of `cols` float32 values; row r comes from src + src_row(r) * cols.
struct OutTensor {
  std::string name;
  const float* src = nullptr;
  uint64_t rows = 0, cols = 0;  // rows == 0: a vector of cols values
  GgmlType type = GgmlType::F32;
  std::vector<uint64_t> row_order;  // empty: identity
  uint64_t offset = 0, n_bytes = 0;
};

// GGUF llama rows for Q/K: interleaved pairs. HF (rotate-half) row h*hd + a*hd/2 + i goes to
// h*hd + 2i + a (convert_hf_to_gguf.py's permute).
std::vector<uint64_t> neox_to_interleaved_rows(uint64_t rows, uint64_t hd) {
  std::vector<uint64_t> order(rows);
  for (uint64_t r = 0; r < rows; ++r) {
    const uint64_t h = r / hd, j = r % hd;
    order[r] = h * hd + (j % 2 == 0 ? j / 2 : j / 2 + hd / 2);
  }
  return order;
}

void put_vocab(Bytes& b, const SpmVocab& v) {
  b.kv_str("tokenizer.ggml.model", "llama");
  b.kv_array("tokenizer.ggml.tokens", GgufType::kString, v.pieces);
  b.kv_array("tokenizer.ggml.scores", GgufType::kFloat32, v.scores);
  b.kv_array("tokenizer.ggml.token_type", GgufType::kInt32, std::vector<int32_t>(v.types.begin(), v.types.end()));
  if (v.unk_id >= 0) b.kv_u32("tokenizer.ggml.unknown_token_id", uint32_t(v.unk_id));
  if (v.bos_id >= 0) b.kv_u32("tokenizer.ggml.bos_token_id", uint32_t(v.bos_id));
  if (v.eos_id >= 0) b.kv_u32("tokenizer.ggml.eos_token_id", uint32_t(v.eos_id));
  if (v.pad_id >= 0) b.kv_u32("tokenizer.ggml.padding_token_id", uint32_t(v.pad_id));
  b.kv_bool("tokenizer.ggml.add_bos_token", v.add_bos);
  b.kv_bool("tokenizer.ggml.add_eos_token", false);
  b.kv_bool("tokenizer.ggml.add_space_prefix", v.add_space_prefix);
  b.kv_bool("tokenizer.ggml.remove_extra_whitespaces", v.remove_extra_whitespaces);
}

// Header + metadata + tensor infos + padding, then each tensor's data (converted row by row).
void write_file(const std::string& path, Bytes& meta, std::vector<OutTensor>& tensors) {
  Bytes head;
  head.data() = "GGUF";
  head.put<uint32_t>(3);
  head.put<uint64_t>(tensors.size());
  head.put<uint64_t>(meta.n_kv());
  head.data() += meta.data();
  uint64_t offset = 0;
  for (auto& t : tensors) {
    t.n_bytes = ggml_row_bytes(t.type, t.cols) * (t.rows ? t.rows : 1);
    t.offset = offset;
    offset = (offset + t.n_bytes + kAlignment - 1) / kAlignment * kAlignment;
    head.str(t.name);
    head.put<uint32_t>(t.rows ? 2 : 1);
    head.put<uint64_t>(t.cols);  // ne[0]: the fastest-varying dimension
    if (t.rows) head.put<uint64_t>(t.rows);
    head.put<uint32_t>(uint32_t(t.type));
    head.put<uint64_t>(t.offset);
  }
  std::string& out = head.data();
  out.resize((out.size() + kAlignment - 1) / kAlignment * kAlignment, '\0');

  const std::string tmp = path + ".tmp";
  std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error("cannot create '" + tmp + "': " + std::strerror(errno));
  f.write(out.data(), std::streamsize(out.size()));
  uint64_t written = 0;
  std::vector<uint8_t> row;
  for (const auto& t : tensors) {
    f.write(std::string(t.offset - written, '\0').data(), std::streamsize(t.offset - written));
    row.resize(ggml_row_bytes(t.type, t.cols));
    for (uint64_t r = 0; r < (t.rows ? t.rows : 1); ++r) {
      const float* src = t.src + (t.row_order.empty() ? r : t.row_order[r]) * t.cols;
      switch (t.type) {
        case GgmlType::F32: std::memcpy(row.data(), src, row.size()); break;
        case GgmlType::F16: quantize_f16(src, row.data(), t.cols); break;
        case GgmlType::Q8_0:
          try {
            quantize_q8_0(src, row.data(), t.cols);
          } catch (const std::invalid_argument& e) {
            throw std::runtime_error("'" + path + "': tensor '" + t.name + "' row " + std::to_string(r) + ": " + e.what());
          }
          break;
        default: throw std::logic_error("unexpected output type");
      }
      f.write(reinterpret_cast<const char*>(row.data()), std::streamsize(row.size()));
    }
    written = t.offset + t.n_bytes;
  }
  f.close();
  if (!f) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write '" + tmp + "' (disk full?)");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(err));
  }
}

}  // namespace

SpmVocab vocab_of(const Tokenizer& tokenizer) {
  const std::string& src = tokenizer.path();
  if (tokenizer.kind() != "sentencepiece")
    throw std::runtime_error("tokenizer '" + src + "' is a " + tokenizer.kind() +
                             " tokenizer: writing its vocabulary to GGUF is not supported yet (only sentencepiece "
                             "vocabularies)");
  if (is_gguf_file(src)) return read_gguf_vocab(GgufFile::open(src));
  sentencepiece::SentencePieceProcessor sp;
  if (const auto st = sp.Load(src); !st.ok())
    throw std::runtime_error("cannot read the vocabulary of tokenizer '" + src +
                             "' (neither a sentencepiece .model nor a GGUF file): " + st.ToString());
  return vocab_from_sentencepiece(sp, src);
}

void write_gguf(const LoadedModel& model, const Tokenizer& tokenizer, const std::string& path, const std::string& type,
                const std::string& chat_template) {
  write_gguf(model, vocab_of(tokenizer), path, type, chat_template);
}

void write_gguf(const LoadedModel& model, const SpmVocab& vocab, const std::string& path, const std::string& type,
                const std::string& chat_template) {
  if (type != "f32" && type != "f16" && type != "q8_0")
    throw std::invalid_argument("GGUF output type '" + type + "' is not one of f32, f16, q8_0");
  const ModelConfig& c = model.config;
  if (int(vocab.pieces.size()) != c.vocab_size)
    throw std::runtime_error("cannot write '" + path + "': the tokenizer has " + std::to_string(vocab.pieces.size()) +
                             " pieces, the model a vocabulary of " + std::to_string(c.vocab_size));
  const ModelWeights& w = model.weights;
  if (c.architecture != "llama" || c.attention_qkv_bias || c.attention_out_bias || c.qk_norm ||
      c.rope_scaling.type != RopeScalingType::kNone || !c.rope_freq_factors.empty())
    throw std::runtime_error("cannot write '" + path + "': only plain Llama models so far");
  if (!w.token_embedding || !w.rms_final || !w.wcls || int(w.layers.size()) != c.n_layers)
    throw std::runtime_error("cannot write '" + path + "': the model has no weights");

  Bytes meta;
  meta.kv_str("general.architecture", "llama");
  meta.kv_str("general.name", "pagedchat");
  meta.kv_u32("general.file_type", type == "f32" ? 0 : type == "f16" ? 1 : 7);  // llama_ftype ALL_F32, MOSTLY_F16/Q8_0
  if (type == "q8_0") meta.kv_u32("general.quantization_version", 2);
  meta.kv_u32("llama.context_length", uint32_t(c.max_seq_len));
  meta.kv_u32("llama.embedding_length", uint32_t(c.dim));
  meta.kv_u32("llama.block_count", uint32_t(c.n_layers));
  meta.kv_u32("llama.feed_forward_length", uint32_t(c.hidden_dim));
  meta.kv_u32("llama.attention.head_count", uint32_t(c.n_heads));
  meta.kv_u32("llama.attention.head_count_kv", uint32_t(c.n_kv_heads));
  meta.kv_u32("llama.rope.dimension_count", uint32_t(c.head_dim));
  meta.kv_f32("llama.rope.freq_base", c.rope_theta);
  meta.kv_f32("llama.attention.layer_norm_rms_epsilon", c.norm_eps);
  meta.kv_u32("llama.vocab_size", uint32_t(c.vocab_size));
  put_vocab(meta, vocab);
  if (!chat_template.empty()) meta.kv_str("tokenizer.chat_template", chat_template);

  const uint64_t dim = c.dim, hidden = c.hidden_dim, hd = c.head_dim, q = uint64_t(c.n_heads) * hd,
                 kv = uint64_t(c.n_kv_heads) * hd, vocab_n = c.vocab_size;
  const bool neox = c.rope_style == RopeStyle::kNeox;
  std::vector<OutTensor> ts;
  auto matrix = [&](const std::string& name, const float* src, uint64_t rows, uint64_t cols, bool rope_rows = false) {
    GgmlType t = GgmlType::F32;
    if (type == "f16") t = GgmlType::F16;
    if (type == "q8_0") t = cols % 32 == 0 ? GgmlType::Q8_0 : GgmlType::F16;
    OutTensor o{name, src, rows, cols, t, {}, 0, 0};
    if (rope_rows && neox) o.row_order = neox_to_interleaved_rows(rows, hd);
    ts.push_back(std::move(o));
  };
  auto norm = [&](const std::string& name, const float* src) { ts.push_back({name, src, 0, dim, GgmlType::F32, {}, 0, 0}); };
  matrix("token_embd.weight", w.token_embedding, vocab_n, dim);
  norm("output_norm.weight", w.rms_final);
  if (w.wcls != w.token_embedding) matrix("output.weight", w.wcls, vocab_n, dim);  // else tied (absent)
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const LayerWeights& lw = w.layers[l];
    norm(p + "attn_norm.weight", lw.rms_att);
    matrix(p + "attn_q.weight", lw.wq, q, dim, true);
    matrix(p + "attn_k.weight", lw.wk, kv, dim, true);
    matrix(p + "attn_v.weight", lw.wv, kv, dim);
    matrix(p + "attn_output.weight", lw.wo, dim, q);
    norm(p + "ffn_norm.weight", lw.rms_ffn);
    matrix(p + "ffn_gate.weight", lw.w1, hidden, dim);
    matrix(p + "ffn_down.weight", lw.w2, dim, hidden);
    matrix(p + "ffn_up.weight", lw.w3, hidden, dim);
  }
  write_file(path, meta, ts);
}

void write_gguf_vocab(const SpmVocab& vocab, const std::string& path) {
  Bytes meta;
  meta.kv_str("general.architecture", "llama");
  meta.kv_str("general.name", "vocab only");
  put_vocab(meta, vocab);
  std::vector<OutTensor> none;
  write_file(path, meta, none);
}

}  // namespace pagedchat
