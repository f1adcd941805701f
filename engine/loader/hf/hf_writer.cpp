#include "engine/loader/hf/hf_writer.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <sentencepiece_processor.h>

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace pagedchat {
namespace {

/// A tensor to write whose bytes are produced on demand (one tensor in memory at a time).
struct Entry {
  std::string name;
  StDtype dtype;
  std::vector<uint64_t> shape;
  std::function<void(std::vector<uint8_t>&)> fill;  ///< appends exactly nbytes
};

uint64_t numel(const std::vector<uint64_t>& shape) {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

void write_entries(const std::string& path, const std::vector<Entry>& entries) {
  json header = json::object();
  header["__metadata__"] = {{"format", "pt"}};
  uint64_t offset = 0;
  std::set<std::string> names;
  for (const Entry& e : entries) {
    if (!names.insert(e.name).second) throw std::invalid_argument("write_safetensors: duplicate tensor '" + e.name + "'");
    const uint64_t nbytes = numel(e.shape) * dtype_size(e.dtype);
    header[e.name] = {{"dtype", dtype_name(e.dtype)}, {"shape", e.shape}, {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
  }
  std::string text = header.dump();
  text.append((8 - (8 + text.size()) % 8) % 8, ' ');
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot create '" + path + "'");
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = uint8_t(uint64_t(text.size()) >> (8 * i));
  out.write(reinterpret_cast<const char*>(len), 8);
  out.write(text.data(), std::streamsize(text.size()));
  std::vector<uint8_t> bytes;
  for (const Entry& e : entries) {
    bytes.clear();
    e.fill(bytes);
    if (bytes.size() != numel(e.shape) * dtype_size(e.dtype))
      throw std::logic_error("write_safetensors: tensor '" + e.name + "' produced a wrong number of bytes");
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  out.close();
  if (!out) throw std::runtime_error("cannot write '" + path + "' (disk full?)");
}

void write_json(const fs::path& path, const json& j) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << j.dump(2) << "\n";
  out.close();
  if (!out) throw std::runtime_error("cannot write '" + path.string() + "'");
}

/// The shortest decimal that reads back as `f`, as a double (1e-5f is written 1e-05, not
/// 9.99999974737875e-06).
double short_double(float f) {
  char buf[32];
  for (int prec = 1; prec <= 9; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, double(f));
    if (std::strtof(buf, nullptr) == f) return std::strtod(buf, nullptr);
  }
  return double(f);
}

}  // namespace

void write_safetensors(const std::string& path, const std::vector<StTensorOut>& tensors) {
  std::vector<Entry> entries;
  for (const StTensorOut& t : tensors) {
    const uint64_t nbytes = numel(t.shape) * dtype_size(t.dtype);
    const auto* p = static_cast<const uint8_t*>(t.data);
    entries.push_back({t.name, t.dtype, t.shape, [p, nbytes](std::vector<uint8_t>& b) { b.assign(p, p + nbytes); }});
  }
  write_entries(path, entries);
}

void write_hf_folder(const LoadedModel& model, const std::string& tokenizer_model_path, const std::string& dir,
                     const std::string& dtype) {
  if (dtype != "f32" && dtype != "bf16")
    throw std::invalid_argument("dtype '" + dtype + "' is not supported for a Hugging Face folder (f32 or bf16)");
  const StDtype out_type = dtype == "f32" ? StDtype::kF32 : StDtype::kBF16;
  const ModelConfig& c = model.config;
  const LlamaWeights& w = model.weights;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec)) throw std::runtime_error("cannot create folder '" + dir + "'");
  const fs::path d(dir);
  // The tokenizer first, so a bad path fails before anything is written.
  sentencepiece::SentencePieceProcessor sp;
  if (!tokenizer_model_path.empty() && !sp.Load(tokenizer_model_path).ok())
    throw std::runtime_error("cannot load sentencepiece tokenizer '" + tokenizer_model_path + "'");

  // Rows of an [heads * head_dim, in] projection, permuted per head from interleaved pairs
  // (2i, 2i+1) to halves (i, i + head_dim/2): new row j*half + i = old row 2i + j.
  const bool permute = c.rope_style == RopeStyle::kInterleaved;
  const int hd = c.head_dim, half = hd / 2;
  auto tensor = [&](std::string name, const float* src, uint64_t rows, uint64_t cols, int permute_heads) {
    Entry e{std::move(name), out_type, cols ? std::vector<uint64_t>{rows, cols} : std::vector<uint64_t>{rows}, {}};
    e.fill = [=](std::vector<uint8_t>& b) {
      const uint64_t width = cols ? cols : 1;
      b.resize(rows * width * dtype_size(out_type));
      for (uint64_t r = 0; r < rows; ++r) {
        uint64_t from = r;
        if (permute_heads > 0) {
          const uint64_t h = r / hd, k = r % hd, i = k % half, j = k / half;
          from = h * hd + 2 * i + j;
        }
        const float* row = src + from * width;
        if (out_type == StDtype::kF32) {
          std::memcpy(b.data() + r * width * 4, row, width * 4);
        } else {
          uint8_t* o = b.data() + r * width * 2;
          for (uint64_t x = 0; x < width; ++x) {
            const uint16_t v = f32_to_bf16(row[x]);
            o[2 * x] = uint8_t(v & 0xff);
            o[2 * x + 1] = uint8_t(v >> 8);
          }
        }
      }
    };
    return e;
  };

  const uint64_t dim = c.dim, hidden = c.hidden_dim, vocab = c.vocab_size;
  const uint64_t q = uint64_t(c.n_heads) * hd, kv = uint64_t(c.n_kv_heads) * hd;
  std::vector<Entry> entries;
  entries.push_back(tensor("model.embed_tokens.weight", w.token_embedding, vocab, dim, 0));
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const LayerWeights& lw = w.layers[l];
    entries.push_back(tensor(p + "input_layernorm.weight", lw.rms_att, dim, 0, 0));
    entries.push_back(tensor(p + "self_attn.q_proj.weight", lw.wq, q, dim, permute ? c.n_heads : 0));
    entries.push_back(tensor(p + "self_attn.k_proj.weight", lw.wk, kv, dim, permute ? c.n_kv_heads : 0));
    entries.push_back(tensor(p + "self_attn.v_proj.weight", lw.wv, kv, dim, 0));
    entries.push_back(tensor(p + "self_attn.o_proj.weight", lw.wo, dim, q, 0));
    entries.push_back(tensor(p + "post_attention_layernorm.weight", lw.rms_ffn, dim, 0, 0));
    entries.push_back(tensor(p + "mlp.gate_proj.weight", lw.w1, hidden, dim, 0));
    entries.push_back(tensor(p + "mlp.up_proj.weight", lw.w3, hidden, dim, 0));
    entries.push_back(tensor(p + "mlp.down_proj.weight", lw.w2, dim, hidden, 0));
  }
  entries.push_back(tensor("model.norm.weight", w.rms_final, dim, 0, 0));
  const bool tied = c.shared_classifier || w.wcls == w.token_embedding;
  if (!tied) entries.push_back(tensor("lm_head.weight", w.wcls, vocab, dim, 0));
  write_entries((d / "model.safetensors").string(), entries);

  json eos = c.eos_id;
  if (!c.extra_eos_ids.empty()) {
    eos = json::array({c.eos_id});
    for (int id : c.extra_eos_ids) eos.push_back(id);
  }
  write_json(d / "config.json", {{"architectures", {"LlamaForCausalLM"}},
                                 {"model_type", "llama"},
                                 {"hidden_size", c.dim},
                                 {"intermediate_size", c.hidden_dim},
                                 {"num_hidden_layers", c.n_layers},
                                 {"num_attention_heads", c.n_heads},
                                 {"num_key_value_heads", c.n_kv_heads},
                                 {"head_dim", c.head_dim},
                                 {"hidden_act", "silu"},
                                 {"max_position_embeddings", c.max_seq_len},
                                 {"rms_norm_eps", short_double(c.norm_eps)},
                                 {"rope_theta", short_double(c.rope_theta)},
                                 {"rope_scaling", nullptr},
                                 {"attention_bias", false},
                                 {"mlp_bias", false},
                                 {"tie_word_embeddings", tied},
                                 {"vocab_size", c.vocab_size},
                                 {"bos_token_id", c.bos_id},
                                 {"eos_token_id", eos},
                                 {"torch_dtype", dtype == "f32" ? "float32" : "bfloat16"}});
  write_json(d / "generation_config.json", {{"_from_model_config", true}, {"bos_token_id", c.bos_id}, {"eos_token_id", eos}});

  json tc = {{"tokenizer_class", "LlamaTokenizer"}, {"add_bos_token", true}, {"add_eos_token", false},
             {"model_max_length", c.max_seq_len}, {"clean_up_tokenization_spaces", false}, {"legacy", true}};
  if (!tokenizer_model_path.empty()) {
    auto piece = [&](int id) { return id >= 0 && id < sp.GetPieceSize() ? json(sp.IdToPiece(id)) : json(nullptr); };
    tc["bos_token"] = piece(sp.bos_id());
    tc["eos_token"] = piece(sp.eos_id());
    tc["unk_token"] = piece(sp.unk_id());
    tc["pad_token"] = nullptr;
    const fs::path dst = d / "tokenizer.model";
    if (!fs::equivalent(tokenizer_model_path, dst, ec) &&
        !fs::copy_file(tokenizer_model_path, dst, fs::copy_options::overwrite_existing, ec))
      throw std::runtime_error("cannot copy '" + tokenizer_model_path + "' to '" + dst.string() + "': " + ec.message());
  }
  write_json(d / "tokenizer_config.json", tc);
}

}  // namespace pagedchat
