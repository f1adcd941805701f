#include "engine/loader/gguf/gguf_writer.h"

#include <algorithm>
#include <list>
#include <stdexcept>
#include <vector>

#include "engine/loader/gguf/gguf_file_writer.h"
#include "engine/model/rope_frequencies.h"

namespace pagedchat {
namespace {

// GGUF llama rows for Q/K: interleaved pairs. HF (rotate-half) row h*hd + a*hd/2 + i goes to
// h*hd + 2i + a (convert_hf_to_gguf.py's LlamaModel.permute).
std::vector<uint64_t> neox_to_interleaved_rows(uint64_t rows, uint64_t hd) {
  std::vector<uint64_t> order(rows);
  for (uint64_t r = 0; r < rows; ++r) {
    const uint64_t h = r / hd, j = r % hd;
    order[r] = h * hd + (j % 2 == 0 ? j / 2 : j / 2 + hd / 2);
  }
  return order;
}

}  // namespace

void write_gguf(const LoadedModel& model, const Tokenizer& tokenizer, const std::string& path, const std::string& type,
                const std::string& chat_template) {
  write_gguf(model, gguf_vocab_of(tokenizer, model.config.vocab_size), path, type, chat_template);
}

void write_gguf(const LoadedModel& model, const GgufVocab& vocab, const std::string& path, const std::string& type,
                const std::string& chat_template) {
  if (type != "f32" && type != "f16" && type != "q8_0")
    throw std::invalid_argument("GGUF output type '" + type + "' is not one of f32, f16, q8_0");
  const ModelConfig& c = model.config;
  auto refuse = [&](const std::string& why) { throw std::runtime_error("cannot write '" + path + "': " + why); };
  if (gguf_vocab_size(vocab) != std::size_t(c.vocab_size))
    refuse("the tokenizer has " + std::to_string(gguf_vocab_size(vocab)) + " pieces, the model a vocabulary of " +
           std::to_string(c.vocab_size));
  const ModelWeights& w = model.weights;
  if (!w.token_embedding || !w.rms_final || !w.wcls || int(w.layers.size()) != c.n_layers)
    refuse("the model has no weights");
  const std::string a = c.architecture;
  const bool llama = a == "llama", qwen2 = a == "qwen2", qwen3 = a == "qwen3";
  if (!llama && !qwen2 && !qwen3) refuse("architecture '" + a + "' cannot be written (llama, qwen2, qwen3)");
  if (c.qk_norm != qwen3) refuse("q/k norms are written for qwen3 only (llama.cpp's graphs for the others have none)");
  if (!llama && c.rope_style != RopeStyle::kNeox) refuse("a " + a + " model with interleaved RoPE pairs");
  if (qwen2 && c.attention_out_bias) refuse("llama.cpp's qwen2 graph has no attn_output.bias");
  if (qwen3 && (c.attention_qkv_bias || c.attention_out_bias))
    refuse("llama.cpp's qwen3 graph has no attention biases");
  // Llama 3 frequency scaling travels as rope_freqs.weight (divisors of theta^(-2i/hd)).
  std::vector<float> rope_freqs(c.rope_freq_factors);
  if (c.rope_scaling.type == RopeScalingType::kLlama3) {
    if (!llama) refuse("Llama 3 RoPE scaling on " + a + " (llama.cpp reads rope_freqs.weight for llama only)");
    if (!rope_freqs.empty()) refuse("both rope_scaling llama3 and rope_freqs factors");
    for (double d : llama3_rope_divisors(c.head_dim, c.rope_theta, c.rope_scaling)) rope_freqs.push_back(float(d));
  }
  if (!rope_freqs.empty() && !llama) refuse("RoPE frequency factors on " + a);

  GgufMetaWriter meta;
  meta.kv_str("general.architecture", a);
  meta.kv_str("general.type", "model");
  meta.kv_str("general.name", "pagedchat");
  meta.kv_u32(a + ".block_count", uint32_t(c.n_layers));
  meta.kv_u32(a + ".context_length", uint32_t(c.max_seq_len));
  meta.kv_u32(a + ".embedding_length", uint32_t(c.dim));
  meta.kv_u32(a + ".feed_forward_length", uint32_t(c.hidden_dim));
  meta.kv_u32(a + ".attention.head_count", uint32_t(c.n_heads));
  meta.kv_u32(a + ".attention.head_count_kv", uint32_t(c.n_kv_heads));
  meta.kv_f32(a + ".rope.freq_base", c.rope_theta);
  meta.kv_f32(a + ".attention.layer_norm_rms_epsilon", c.norm_eps);
  if (qwen3 || c.head_dim * c.n_heads != c.dim) {
    meta.kv_u32(a + ".attention.key_length", uint32_t(c.head_dim));
    meta.kv_u32(a + ".attention.value_length", uint32_t(c.head_dim));
  }
  if (llama) {
    meta.kv_u32(a + ".vocab_size", uint32_t(c.vocab_size));
    meta.kv_u32(a + ".rope.dimension_count", uint32_t(c.head_dim));
  }
  if (c.rope_scaling.type == RopeScalingType::kLinear) {
    meta.kv_str(a + ".rope.scaling.type", "linear");
    meta.kv_f32(a + ".rope.scaling.factor", float(c.rope_scaling.factor));
  }
  meta.kv_u32("general.file_type", type == "f32" ? 0 : type == "f16" ? 1 : 7);  // llama_ftype ALL_F32, MOSTLY_F16/Q8_0
  put_gguf_vocab(meta, vocab);
  if (!chat_template.empty()) meta.kv_str("tokenizer.chat_template", chat_template);
  meta.kv_u32("general.quantization_version", 2);  // GGML_QNT_VERSION, as gguf-py writes it

  const uint64_t dim = c.dim, hidden = c.hidden_dim, hd = c.head_dim, q = uint64_t(c.n_heads) * hd,
                 kv = uint64_t(c.n_kv_heads) * hd, vocab_n = c.vocab_size;
  const bool permute = llama && c.rope_style == RopeStyle::kNeox;
  const std::vector<float> zeros(std::max(q, std::max(kv, dim)), 0.0f);
  std::vector<GgufTensorOut> ts;
  std::list<std::vector<float>> permuted;  // permuted bias copies (stable addresses)
  auto matrix = [&](const std::string& name, const WeightTensor& wt, uint64_t rows, uint64_t cols,
                    bool rope_rows = false) {
    GgmlType t = GgmlType::F32;
    if (type == "f16") t = GgmlType::F16;
    if (type == "q8_0") t = cols % 32 == 0 ? GgmlType::Q8_0 : GgmlType::F16;
    GgufTensorOut o{name, nullptr, rows, cols, t, {}};
    if (wt.dtype == kernels::DType::kF32) {
      o.src = wt.f32();
    } else {  // converted row by row while writing
      o.typed_src = wt.data;
      o.src_dtype = wt.dtype;
    }
    if (rope_rows && permute) o.row_order = neox_to_interleaved_rows(rows, hd);
    ts.push_back(std::move(o));
  };
  // A vector (norm, bias); a bias the config declares but this layer lacks is written as zeros.
  auto vec = [&](const std::string& name, const float* src, uint64_t n, bool rope_rows = false) {
    GgufTensorOut o{name, src ? src : zeros.data(), 0, n, GgmlType::F32, {}};
    if (rope_rows && permute) o.row_order = neox_to_interleaved_rows(n, hd);
    if (!o.row_order.empty()) {  // a vector is one row: permute its elements through a copy
      std::vector<float>& copy = permuted.emplace_back(n);
      for (uint64_t i = 0; i < n; ++i) copy[i] = o.src[o.row_order[i]];
      o.src = copy.data();
      o.row_order.clear();
    }
    ts.push_back(std::move(o));
  };
  if (!rope_freqs.empty()) {
    if (rope_freqs.size() != hd / 2) refuse("rope_freqs has " + std::to_string(rope_freqs.size()) + " entries");
    vec("rope_freqs.weight", rope_freqs.data(), hd / 2);
  }
  matrix("token_embd.weight", w.token_embedding, vocab_n, dim);
  vec("output_norm.weight", w.rms_final, dim);
  if (w.wcls != w.token_embedding) matrix("output.weight", w.wcls, vocab_n, dim);  // else tied (absent)
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const LayerWeights& lw = w.layers[l];
    vec(p + "attn_norm.weight", lw.rms_att, dim);
    matrix(p + "attn_q.weight", lw.wq, q, dim, true);
    matrix(p + "attn_k.weight", lw.wk, kv, dim, true);
    matrix(p + "attn_v.weight", lw.wv, kv, dim);
    matrix(p + "attn_output.weight", lw.wo, dim, q);
    if (c.attention_qkv_bias) {
      vec(p + "attn_q.bias", lw.bq, q, true);
      vec(p + "attn_k.bias", lw.bk, kv, true);
      vec(p + "attn_v.bias", lw.bv, kv);
    }
    if (c.attention_out_bias) vec(p + "attn_output.bias", lw.bo, dim);
    if (c.qk_norm) {
      vec(p + "attn_q_norm.weight", lw.q_norm, hd);
      vec(p + "attn_k_norm.weight", lw.k_norm, hd);
    }
    vec(p + "ffn_norm.weight", lw.rms_ffn, dim);
    matrix(p + "ffn_gate.weight", lw.w1, hidden, dim);
    matrix(p + "ffn_down.weight", lw.w2, dim, hidden);
    matrix(p + "ffn_up.weight", lw.w3, hidden, dim);
  }
  write_gguf_file(path, meta, ts);
}

void write_gguf_vocab(const GgufVocab& vocab, const std::string& path) {
  GgufMetaWriter meta;
  meta.kv_str("general.architecture", "llama");
  meta.kv_str("general.name", "vocab only");
  put_gguf_vocab(meta, vocab);
  write_gguf_file(path, meta, {});
}

}  // namespace pagedchat
