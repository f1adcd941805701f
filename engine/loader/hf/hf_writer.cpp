#include "engine/loader/hf/hf_writer.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <list>
#include <set>
#include <stdexcept>

#include <sentencepiece_processor.h>
#include <nlohmann/json.hpp>

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
    if (!names.insert(e.name).second)
      throw std::invalid_argument("write_safetensors: duplicate tensor '" + e.name + "'");
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

void write_hf_folder(const LoadedModel& model, const std::string& tokenizer_path, const std::string& dir,
                     const std::string& dtype) {
  if (dtype != "f32" && dtype != "bf16")
    throw std::invalid_argument("dtype '" + dtype + "' is not supported for a Hugging Face folder (f32 or bf16)");
  const StDtype out_type = dtype == "f32" ? StDtype::kF32 : StDtype::kBF16;
  const ModelConfig& c = model.config;
  const ModelWeights& w = model.weights;
  auto refuse = [&](const std::string& why) {
    throw std::runtime_error("cannot write '" + dir + "' as a Hugging Face folder: " + why);
  };
  // The transformers class of the family, and what its config.json can say.
  std::string architecture, model_type;
  if (c.architecture == "llama")
    architecture = "LlamaForCausalLM", model_type = "llama";
  else if (c.architecture == "qwen2")
    architecture = "Qwen2ForCausalLM", model_type = "qwen2";
  else if (c.architecture == "qwen3")
    architecture = "Qwen3ForCausalLM", model_type = "qwen3";
  else
    refuse("architecture '" + c.architecture + "' has no transformers class here");
  if (c.architecture == "qwen2" && !c.attention_qkv_bias) refuse("a qwen2 model without q/k/v biases");
  if (c.architecture == "qwen2" && c.attention_out_bias) refuse("Qwen2ForCausalLM has no o_proj bias");
  if (c.qk_norm != (c.architecture == "qwen3")) refuse("q/k norms belong to Qwen3ForCausalLM only");
  if (!c.rope_freq_factors.empty())
    refuse("its RoPE frequency factors (GGUF rope_freqs.weight) have no rope_scaling parameters to write");
  // Llama and Qwen3 declare q/k/v and o biases together (attention_bias); a missing one is zero.
  const bool attention_bias = c.architecture == "qwen2" ? false : (c.attention_qkv_bias || c.attention_out_bias);
  const bool qkv_bias = c.architecture == "qwen2" || attention_bias;
  const bool tok_json = tokenizer_path.size() >= 5 &&
                        tokenizer_path.compare(tokenizer_path.size() - 5, 5, ".json") == 0;

  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec)) throw std::runtime_error("cannot create folder '" + dir + "'");
  const fs::path d(dir);
  // The tokenizer first, so a bad path fails before anything is written.
  sentencepiece::SentencePieceProcessor sp;
  if (!tokenizer_path.empty() && !tok_json && !sp.Load(tokenizer_path).ok())
    throw std::runtime_error("cannot load sentencepiece tokenizer '" + tokenizer_path + "'");
  if (tok_json && !fs::is_regular_file(tokenizer_path, ec))
    throw std::runtime_error("cannot read tokenizer '" + tokenizer_path + "'");

  // Rows of an [heads * head_dim, in] projection (or of its bias), permuted per head from
  // interleaved pairs (2i, 2i+1) to halves (i, i + head_dim/2): new row j*half + i = old row 2i + j.
  const bool permute = c.rope_style == RopeStyle::kInterleaved;
  const int hd = c.head_dim, half = hd / 2;
  const std::vector<float> zeros(std::size_t(std::max(c.dim, (c.n_heads + 2 * c.n_kv_heads) * hd)), 0.0f);
  std::list<std::vector<float>> dequantized;  // float32 copies of matrices stored otherwise (stable addresses)
  auto as_f32 = [&](const WeightTensor& t, uint64_t rows, uint64_t cols) -> const float* {
    if (t.dtype == kernels::DType::kF32) return t.f32();
    return dequantized.emplace_back(to_float(t, std::size_t(rows * cols))).data();
  };
  auto tensor = [&](std::string name, const float* src, uint64_t rows, uint64_t cols, bool permute_heads) {
    if (!src) src = zeros.data();  // an absent bias of a model whose config declares them: zero
    Entry e{std::move(name), out_type, cols ? std::vector<uint64_t>{rows, cols} : std::vector<uint64_t>{rows}, {}};
    e.fill = [=](std::vector<uint8_t>& b) {
      const uint64_t width = cols ? cols : 1;
      b.resize(rows * width * dtype_size(out_type));
      for (uint64_t r = 0; r < rows; ++r) {
        uint64_t from = r;
        if (permute_heads && permute) {
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
  entries.push_back(tensor("model.embed_tokens.weight", as_f32(w.token_embedding, vocab, dim), vocab, dim, false));
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const LayerWeights& lw = w.layers[l];
    entries.push_back(tensor(p + "input_layernorm.weight", lw.rms_att, dim, 0, false));
    entries.push_back(tensor(p + "self_attn.q_proj.weight", as_f32(lw.wq, q, dim), q, dim, true));
    entries.push_back(tensor(p + "self_attn.k_proj.weight", as_f32(lw.wk, kv, dim), kv, dim, true));
    entries.push_back(tensor(p + "self_attn.v_proj.weight", as_f32(lw.wv, kv, dim), kv, dim, false));
    entries.push_back(tensor(p + "self_attn.o_proj.weight", as_f32(lw.wo, dim, q), dim, q, false));
    if (qkv_bias) {
      entries.push_back(tensor(p + "self_attn.q_proj.bias", lw.bq, q, 0, true));
      entries.push_back(tensor(p + "self_attn.k_proj.bias", lw.bk, kv, 0, true));
      entries.push_back(tensor(p + "self_attn.v_proj.bias", lw.bv, kv, 0, false));
    }
    if (attention_bias) entries.push_back(tensor(p + "self_attn.o_proj.bias", lw.bo, dim, 0, false));
    if (c.qk_norm) {
      entries.push_back(tensor(p + "self_attn.q_norm.weight", lw.q_norm, uint64_t(hd), 0, false));
      entries.push_back(tensor(p + "self_attn.k_norm.weight", lw.k_norm, uint64_t(hd), 0, false));
    }
    entries.push_back(tensor(p + "post_attention_layernorm.weight", lw.rms_ffn, dim, 0, false));
    entries.push_back(tensor(p + "mlp.gate_proj.weight", as_f32(lw.w1, hidden, dim), hidden, dim, false));
    entries.push_back(tensor(p + "mlp.up_proj.weight", as_f32(lw.w3, hidden, dim), hidden, dim, false));
    entries.push_back(tensor(p + "mlp.down_proj.weight", as_f32(lw.w2, dim, hidden), dim, hidden, false));
  }
  entries.push_back(tensor("model.norm.weight", w.rms_final, dim, 0, false));
  const bool tied = c.shared_classifier || w.wcls == w.token_embedding;
  if (!tied) entries.push_back(tensor("lm_head.weight", as_f32(w.wcls, vocab, dim), vocab, dim, false));
  write_entries((d / "model.safetensors").string(), entries);

  json eos = c.eos_id;
  if (!c.extra_eos_ids.empty()) {
    eos = json::array({c.eos_id});
    for (int id : c.extra_eos_ids) eos.push_back(id);
  }
  json rope_scaling = nullptr;
  if (c.rope_scaling.type == RopeScalingType::kLinear)
    rope_scaling = {{"rope_type", "linear"}, {"factor", c.rope_scaling.factor}};
  else if (c.rope_scaling.type == RopeScalingType::kLlama3)
    rope_scaling = {{"rope_type", "llama3"},
                    {"factor", c.rope_scaling.factor},
                    {"low_freq_factor", c.rope_scaling.low_freq_factor},
                    {"high_freq_factor", c.rope_scaling.high_freq_factor},
                    {"original_max_position_embeddings", c.rope_scaling.original_max_position_embeddings}};
  json config = {{"architectures", {architecture}},
                 {"model_type", model_type},
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
                 {"rope_scaling", rope_scaling},
                 {"tie_word_embeddings", tied},
                 {"vocab_size", c.vocab_size},
                 {"bos_token_id", c.bos_id},
                 {"eos_token_id", eos},
                 {"torch_dtype", dtype == "f32" ? "float32" : "bfloat16"}};
  if (c.architecture == "llama") config["mlp_bias"] = false;
  if (c.architecture != "qwen2") config["attention_bias"] = attention_bias;
  if (c.architecture != "llama") config["use_sliding_window"] = false;
  write_json(d / "config.json", config);
  write_json(d / "generation_config.json",
             {{"_from_model_config", true}, {"bos_token_id", c.bos_id}, {"eos_token_id", eos}});

  if (tok_json) {
    // A byte-level BPE tokenizer.json (Llama 3, Qwen): copied with the tokenizer_config.json
    // (special tokens, chat template) beside it, when there is one.
    const fs::path src_config = fs::path(tokenizer_path).parent_path() / "tokenizer_config.json";
    for (const auto& [from, to] : {std::pair{fs::path(tokenizer_path), d / "tokenizer.json"},
                                   std::pair{src_config, d / "tokenizer_config.json"}}) {
      if (!fs::is_regular_file(from, ec) || fs::equivalent(from, to, ec)) continue;
      if (!fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec))
        throw std::runtime_error("cannot copy '" + from.string() + "' to '" + to.string() + "': " + ec.message());
    }
    return;
  }
  json tc = {{"tokenizer_class", "LlamaTokenizer"},
             {"add_bos_token", true},
             {"add_eos_token", false},
             {"model_max_length", c.max_seq_len},
             {"clean_up_tokenization_spaces", false},
             {"legacy", true}};
  if (!tokenizer_path.empty()) {
    auto piece = [&](int id) { return id >= 0 && id < sp.GetPieceSize() ? json(sp.IdToPiece(id)) : json(nullptr); };
    tc["bos_token"] = piece(sp.bos_id());
    tc["eos_token"] = piece(sp.eos_id());
    tc["unk_token"] = piece(sp.unk_id());
    tc["pad_token"] = nullptr;
    const fs::path dst = d / "tokenizer.model";
    if (!fs::equivalent(tokenizer_path, dst, ec) &&
        !fs::copy_file(tokenizer_path, dst, fs::copy_options::overwrite_existing, ec))
      throw std::runtime_error("cannot copy '" + tokenizer_path + "' to '" + dst.string() + "': " + ec.message());
  }
  write_json(d / "tokenizer_config.json", tc);
}

}  // namespace pagedchat
