#include "engine/loader/gguf/gguf_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <list>
#include <stdexcept>
#include <vector>

#include "engine/loader/gguf/gguf_file_writer.h"
#include "engine/loader/gguf/quantize.h"
#include "engine/model/arch/registry.h"
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

std::string layer_text(const LayerSpec& s) {
  std::string t = s.sliding_window > 0 ? "sliding (window " + std::to_string(s.sliding_window) + ")" : "global";
  if (!s.use_rope) {
    t += ", no RoPE";
  } else {
    char base[32];
    std::snprintf(base, sizeof base, "%.9g", s.rope_theta);
    t += std::string(", RoPE base ") + base + (s.rope_scaled ? "" : " unscaled");
  }
  return t + (s.moe ? ", experts" : ", dense MLP");
}

// The family's own rules (engine/model/arch/<family>.cpp's gguf_hparams) applied to the keys
// about to be written, as the GGUF loader will apply them: "" when they give the model's per-layer
// specs and family options, else what differs (a rule in code that no key overrides, a value no
// key holds).
std::string family_rule_mismatch(const ModelConfig& c, const ModelFamily& fam, const GgufMetaWriter& meta) {
  std::string bytes = "GGUF";
  auto put = [&](auto v) { bytes.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(uint32_t(3));
  put(uint64_t(0));
  put(uint64_t(meta.count()));
  bytes += meta.bytes();
  const GgufFile f = GgufFile::parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "metadata");
  const std::string a(fam.gguf_name);
  ModelConfig r;  // the common keys, as the loader reads them before the family's hook
  r.architecture = a;
  r.hidden_size = c.hidden_size;
  r.intermediate_size = c.intermediate_size;
  r.n_layers = c.n_layers;
  r.n_heads = c.n_heads;
  r.n_kv_heads = c.n_kv_heads;
  r.vocab_size = c.vocab_size;
  r.max_seq_len = c.max_seq_len;
  r.head_dim = c.head_dim;
  r.rotary_dim = c.rotary_dim;
  r.rope_theta = c.rope_theta;
  r.activation = fam.activation;
  try {
    if (fam.gguf_hparams) fam.gguf_hparams(GgufKeys{f, a + "."}, r);
  } catch (const std::exception& e) {
    return std::string("its keys would not load: ") + e.what();
  }
  const bool scaled = c.rope_scaling.type != RopeScalingType::kNone || !c.rope_freq_factors.empty();
  bool any_moe = false, any_dense = false;
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerSpec x = c.layer(l), y = r.layer(l);
    const bool same = x.sliding_window == y.sliding_window && x.use_rope == y.use_rope && x.moe == y.moe &&
                      (!x.use_rope || (x.rope_theta == y.rope_theta && (!scaled || x.rope_scaled == y.rope_scaled)));
    if (!same)
      return "layer " + std::to_string(l) + " is " + layer_text(x) + ", but a " + a + " GGUF makes it " +
             layer_text(y) + " (no key llama.cpp reads for " + a + " says otherwise)";
    (x.moe ? any_moe : any_dense) = true;
  }
  if (any_moe) {
    const MoeConfig &m = c.moe, &n = r.moe;
    if (m.num_experts != n.num_experts || m.num_experts_per_tok != n.num_experts_per_tok ||
        m.expert_intermediate_size != n.expert_intermediate_size)
      return "the experts' counts or width do not read back";
    if (m.softmax_before_topk != n.softmax_before_topk)
      return std::string("the router takes the softmax ") + (m.softmax_before_topk ? "before" : "after") +
             " the top-k, a " + a + " GGUF " + (n.softmax_before_topk ? "before" : "after");
    if (m.norm_topk_prob != n.norm_topk_prob)
      return std::string("norm_topk_prob is ") + (m.norm_topk_prob ? "true" : "false") + ", but a " + a +
             " GGUF renormalises the top-k weights " + (n.norm_topk_prob ? "always" : "never");
    if (m.shared_expert_intermediate_size != n.shared_expert_intermediate_size ||
        m.shared_expert_gated != n.shared_expert_gated)
      return "a shared expert a " + a + " GGUF has no place for";
  }
  if (any_dense && c.intermediate_size != r.intermediate_size) return "the dense MLP width does not read back";
  if (c.activation != r.activation) return "the MLP activation differs from what a " + a + " GGUF implies";
  if (c.embedding_scale != r.embedding_scale)
    return "an embedding scale of " + std::to_string(c.embedding_scale) + " (a " + a + " GGUF implies " +
           std::to_string(r.embedding_scale) + ")";
  auto scale = [&](float s) { return s != 0.0f ? s : 1.0f / std::sqrt(float(c.head_dim)); };
  if (scale(c.attention_scale) != scale(r.attention_scale))
    return "an attention scale of " + std::to_string(scale(c.attention_scale)) + " (a " + a + " GGUF implies " +
           std::to_string(scale(r.attention_scale)) + "; no key holds it)";
  if (c.final_logit_softcap != r.final_logit_softcap)
    return "a final logit softcap of " + std::to_string(c.final_logit_softcap) + ", which a " + a +
           " GGUF has no key for";
  return {};
}

}  // namespace

void write_gguf(const LoadedModel& model, const Tokenizer& tokenizer, const std::string& path, const std::string& type,
                const std::string& chat_template, std::stop_token stop) {
  write_gguf(model, gguf_vocab_of(tokenizer, model.config.vocab_size), path, type, chat_template, std::move(stop));
}

void write_gguf(const LoadedModel& model, const GgufVocab& vocab, const std::string& path, const std::string& type,
                const std::string& chat_template, std::stop_token stop) {
  if (type != "f32" && type != "f16" && type != "q8_0" && type != "q4_k_m")
    throw std::invalid_argument("GGUF output type '" + type + "' is not one of f32, f16, q8_0, q4_k_m");
  const ModelConfig& c = model.config;
  auto refuse = [&](const std::string& why) { throw std::runtime_error("cannot write '" + path + "': " + why); };
  if (gguf_vocab_size(vocab) != std::size_t(c.vocab_size))
    refuse("the tokenizer has " + std::to_string(gguf_vocab_size(vocab)) + " pieces, the model a vocabulary of " +
           std::to_string(c.vocab_size));
  if (c.num_recurrent_layers() > 0 || c.attn_output_gate || c.nextn_predict_layers > 0)
    refuse("converting " + c.architecture +
           " models (Gated DeltaNet layers, gated attention, MTP blocks) is not supported yet; use the file as it is");
  if (c.mrope_sections[0] > 0 || c.deepstack_layers > 0)
    refuse("converting " + c.architecture + " models (M-RoPE, deepstack) is not supported yet; use the file as it is");
  const ModelWeights& w = model.weights;
  if (!w.token_embedding || !w.final_norm || !w.lm_head || int(w.layers.size()) != c.n_layers)
    refuse("the model has no weights");
  const ModelFamily* fam = find_family_by_gguf_name(c.architecture);
  if (!fam) refuse("architecture '" + c.architecture + "' cannot be written (" + supported_gguf_architectures() + ")");
  const std::string a(fam->gguf_name);
  // What the family's GGUF tensors and graph can hold (engine/model/arch/<family>.cpp).
  if (c.qk_norm != fam->qk_norm)
    refuse(c.qk_norm ? "q/k norms are not part of a " + a + " GGUF (llama.cpp's " + a + " graph has none)"
                     : "a " + a + " GGUF needs q/k norms, which this model lacks");
  if (c.pre_norm != fam->pre_norm || c.post_norm != fam->post_norm)
    refuse("the model's norm placement is not " + std::string(fam->description) + "'s");
  if (c.activation != fam->activation)
    refuse("the model's MLP activation is not " + std::string(fam->description) + "'s");
  if (fam->rope_style == RopeStyle::kNeox && c.rope_style != RopeStyle::kNeox)
    refuse("a " + a + " model with interleaved RoPE pairs (its GGUF rotates halves)");
  if (fam->qkv_bias == TensorRule::kNever && c.attention_qkv_bias)
    refuse("llama.cpp's " + a + " graph has no attention biases (q/k/v)");
  if (fam->out_bias == TensorRule::kNever && c.attention_out_bias)
    refuse("llama.cpp's " + a + " graph has no attention biases (attn_output.bias)");
  const bool qkv_bias = c.attention_qkv_bias || fam->qkv_bias == TensorRule::kRequired;  // absent: zeros
  bool any_moe = false, any_dense = false;
  for (int l = 0; l < c.n_layers; ++l) (c.layer(l).moe ? any_moe : any_dense) = true;
  if (any_moe && !fam->moe) refuse("mixture-of-experts layers in a " + a + " model");
  bool per_layer_shapes = false;
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerSpec s = c.layer(l);
    per_layer_shapes |= s.head_dim > 0 || s.n_kv_heads > 0 || s.rotary_dim > 0 || s.intermediate_size > 0 ||
                        s.shares_kv() || model.weights.layers.at(std::size_t(l)).output_scale != nullptr;
  }
  if (per_layer_shapes || c.v_norm || c.per_layer_input_size > 0)
    refuse(
        "Gemma 4's per-layer shapes, shared KV layers, V norm and per-layer embeddings are not written "
        "(convert keeps the file)");
  if (c.attention_sinks || c.moe.biases || c.activation == MlpActivation::kSwigluOai)
    refuse("gpt-oss's attention sinks, expert biases and clamped SwiGLU are not written (convert keeps the file)");
  const uint64_t half_rot = uint64_t(c.rotary_dims()) / 2;
  // Llama 3 frequency scaling travels as rope_freqs.weight (divisors of theta^(-2i/d)).
  std::vector<float> rope_freqs;
  std::vector<float> longrope_short, longrope_long;
  if (c.rope_scaling.type == RopeScalingType::kLlama3) {
    if (!fam->rope_freqs)
      refuse("Llama 3 RoPE scaling on " + a + " (llama.cpp reads rope_freqs.weight for llama and exaone4 only)");
    if (!c.rope_freq_factors.empty()) refuse("both rope_scaling llama3 and rope_freqs factors");
    for (double d : llama3_rope_divisors(c.rotary_dims(), c.rope_theta, c.rope_scaling)) rope_freqs.push_back(float(d));
  }
  if (c.rope_scaling.type == RopeScalingType::kLinear && fam->longrope)
    refuse("linear RoPE scaling on " + a + " (its GGUF has LongRoPE factors only)");
  if (!c.rope_freq_factors.empty()) {
    if (fam->rope_freqs) {
      rope_freqs = c.rope_freq_factors;
    } else if (fam->longrope) {
      if (c.rope_freq_factors_long.size() != c.rope_freq_factors.size())
        refuse("LongRoPE short factors without long ones (a " + a + " GGUF has both)");
      longrope_short = c.rope_freq_factors;
      longrope_long = c.rope_freq_factors_long;
    } else {
      refuse("RoPE frequency factors on " + a);
    }
  }
  for (const std::vector<float>* v : {&rope_freqs, &longrope_short, &longrope_long})
    if (!v->empty() && v->size() != half_rot)
      refuse("RoPE frequency factors of " + std::to_string(v->size()) + " entries for " + std::to_string(half_rot) +
             " rotated pairs");
  // LongRoPE's attention factor: rope_attn_factor is its square (as the loader reads
  // rope.scaling.attn_factor); the float32 value whose square that is.
  float attn_factor = 1.0f;
  const bool yarn = c.rope_scaling.type == RopeScalingType::kYarn;
  if (yarn) {
    const double m = yarn_mscale(c.rope_scaling.factor);
    if (c.rope_attn_factor != float(m * m))
      refuse("a YaRN attention factor other than its mscale (rope.scaling.attn_factor) is not written");
    if (!c.rope_scaling.yarn_truncate) refuse("YaRN without truncated correction dims has no GGUF key");
  } else if (c.rope_attn_factor != 1.0f) {
    if (!fam->longrope) refuse("a RoPE attention factor on " + a + " (only LongRoPE families have one)");
    attn_factor = float(std::sqrt(double(c.rope_attn_factor)));
    for (float f : {attn_factor, std::nextafter(attn_factor, 0.0f), std::nextafter(attn_factor, 100.0f)})
      if (float(double(f) * double(f)) == c.rope_attn_factor) attn_factor = f;
    if (float(double(attn_factor) * double(attn_factor)) != c.rope_attn_factor)
      refuse("the RoPE attention factor " + std::to_string(c.rope_attn_factor) + " is no float32 value squared");
  }

  GgufMetaWriter meta;
  meta.kv_str("general.architecture", a);
  meta.kv_str("general.type", "model");
  meta.kv_str("general.name", "pagedchat");
  meta.kv_u32(a + ".block_count", uint32_t(c.n_layers));
  meta.kv_u32(a + ".context_length", uint32_t(c.max_seq_len));
  meta.kv_u32(a + ".embedding_length", uint32_t(c.hidden_size));
  if (c.intermediate_size > 0) meta.kv_u32(a + ".feed_forward_length", uint32_t(c.intermediate_size));
  meta.kv_u32(a + ".attention.head_count", uint32_t(c.n_heads));
  meta.kv_u32(a + ".attention.head_count_kv", uint32_t(c.n_kv_heads));
  meta.kv_f32(a + ".rope.freq_base", c.rope_theta);
  meta.kv_f32(a + ".attention.layer_norm_rms_epsilon", c.norm_eps);
  if (a == "qwen3" || a == "qwen3moe" || a == "gemma3" || a == "exaone4" || c.head_dim * c.n_heads != c.hidden_size) {
    meta.kv_u32(a + ".attention.key_length", uint32_t(c.head_dim));
    meta.kv_u32(a + ".attention.value_length", uint32_t(c.head_dim));
  }
  if (a == "llama" || a == "smollm3" || a == "exaone4") meta.kv_u32(a + ".vocab_size", uint32_t(c.vocab_size));
  if (a == "llama" || a == "smollm3" || a == "phi3" || c.rotary_dim != 0)
    meta.kv_u32(a + ".rope.dimension_count", uint32_t(c.rotary_dims()));
  if (c.rope_scaling.type == RopeScalingType::kLinear) {
    meta.kv_str(a + ".rope.scaling.type", "linear");
    meta.kv_f32(a + ".rope.scaling.factor", float(c.rope_scaling.factor));
  }
  if (yarn) {
    meta.kv_str(a + ".rope.scaling.type", "yarn");
    meta.kv_f32(a + ".rope.scaling.factor", float(c.rope_scaling.factor));
    meta.kv_u32(a + ".rope.scaling.original_context_length", uint32_t(c.rope_scaling.original_max_position_embeddings));
    if (c.rope_scaling.beta_fast != 32.0)
      meta.kv_f32(a + ".rope.scaling.yarn_beta_fast", float(c.rope_scaling.beta_fast));
    if (c.rope_scaling.beta_slow != 1.0)
      meta.kv_f32(a + ".rope.scaling.yarn_beta_slow", float(c.rope_scaling.beta_slow));
  } else if (c.rope_attn_factor != 1.0f) {
    meta.kv_f32(a + ".rope.scaling.attn_factor", attn_factor);
  }
  if (!longrope_short.empty())
    meta.kv_u32(a + ".rope.scaling.original_context_length", uint32_t(c.rope_long_threshold));
  if (any_moe) {
    meta.kv_u32(a + ".expert_count", uint32_t(c.moe.num_experts));
    meta.kv_u32(a + ".expert_used_count", uint32_t(c.moe.num_experts_per_tok));
    meta.kv_u32(a + ".expert_feed_forward_length", uint32_t(c.moe.expert_intermediate_size));
  }
  // Sliding windows: one window size per file (attention.sliding_window) and, for the families
  // whose rule for which layers slide is code, the layers themselves where they differ from it
  // (attention.sliding_window_pattern, one bool per layer, as llama.cpp writes it).
  int window = 0;
  std::vector<bool> slides;
  for (int l = 0; l < c.n_layers; ++l) {
    const int lw = c.layer(l).sliding_window;
    if (lw > 0 && window > 0 && lw != window)
      refuse("layers with different sliding windows (" + std::to_string(window) + ", " + std::to_string(lw) +
             "): a GGUF has one attention.sliding_window");
    if (lw > 0) window = lw;
    slides.push_back(lw > 0);
  }
  const bool default_pattern = [&] {
    for (int l = 0; l < c.n_layers; ++l)
      if (slides[std::size_t(l)] != ((l + 1) % 6 != 0)) return false;
    return true;
  }();
  auto put_pattern = [&] {
    GgufValue v;
    v.type = GgufType::kArray;
    v.elem_type = GgufType::kBool;
    for (bool b : slides) v.uints.push_back(b ? 1 : 0);
    meta.kv_value(a + ".attention.sliding_window_pattern", v);
  };
  if (a == "gemma3") {
    meta.kv_u32(a + ".attention.sliding_window", uint32_t(window > 0 ? window : c.max_seq_len));
    if (!default_pattern) put_pattern();
  } else if (a == "exaone4") {
    if (window > 0) {
      meta.kv_u32(a + ".attention.sliding_window", uint32_t(window));
      put_pattern();
    } else if (c.n_layers == 64) {
      meta.kv_u32(a + ".attention.sliding_window", 0);  // not llama.cpp's 4096 for 64-layer files
    }
  } else if (a == "phi3" && window > 0) {
    meta.kv_u32(a + ".attention.sliding_window", uint32_t(window));
  }
  // llama_ftype: ALL_F32 0, MOSTLY_F16 1, MOSTLY_Q8_0 7, MOSTLY_Q4_K_M 15.
  meta.kv_u32("general.file_type", type == "f32" ? 0 : type == "f16" ? 1 : type == "q8_0" ? 7 : 15);
  if (const std::string why = family_rule_mismatch(c, *fam, meta); !why.empty()) refuse(why);
  put_gguf_vocab(meta, vocab);
  if (!chat_template.empty()) meta.kv_str("tokenizer.chat_template", chat_template);
  meta.kv_u32("general.quantization_version", 2);  // GGML_QNT_VERSION, as gguf-py writes it

  const uint64_t dim = c.hidden_size, hidden = c.intermediate_size, hd = c.head_dim, q = uint64_t(c.n_heads) * hd,
                 kv = uint64_t(c.n_kv_heads) * hd, vocab_n = c.vocab_size;
  const bool permute = fam->rope_style == RopeStyle::kInterleaved && c.rope_style == RopeStyle::kNeox;
  const std::vector<float> zeros(std::max(q, std::max(kv, dim)), 0.0f);
  std::vector<GgufTensorOut> ts;
  std::list<std::vector<float>> permuted;  // permuted bias copies (stable addresses)
  const bool tied = w.lm_head == w.token_embedding;
  auto out_type = [&](const std::string& name, uint64_t cols) {
    if (type == "f16") return GgmlType::F16;
    if (type == "q8_0") return cols % 32 == 0 ? GgmlType::Q8_0 : GgmlType::F16;
    if (type == "q4_k_m") {  // llama.cpp's mix of Q4_K and Q6_K (quantize.h)
      const std::string t = q4_k_m_tensor_type(name, cols, c.n_layers, tied);
      return t == "q4_K"   ? GgmlType::Q4_K
             : t == "q6_K" ? GgmlType::Q6_K
             : t == "q5_0" ? GgmlType::Q5_0
             : t == "q8_0" ? GgmlType::Q8_0
                           : GgmlType::F16;
    }
    return GgmlType::F32;
  };
  auto matrix = [&](const std::string& name, const WeightTensor& wt, uint64_t rows, uint64_t cols,
                    bool rope_rows = false) {
    GgufTensorOut o{name, nullptr, rows, cols, out_type(name, cols), {}};
    if (wt.dtype == kernels::DType::kF32) {
      o.src = wt.f32();
    } else {  // converted row by row while writing
      o.typed_src = wt.data;
      o.src_dtype = wt.dtype;
    }
    if (rope_rows && permute) o.row_order = neox_to_interleaved_rows(rows, hd);
    ts.push_back(std::move(o));
  };
  // A matrix from parts [{tensor, rows}] one after the other (a fused matrix: Phi-3's attn_qkv and
  // ffn_up), or, with experts > 0, a 3-D tensor of `experts` [rows, cols] matrices.
  auto parts = [&](const std::string& name, const std::vector<std::pair<WeightTensor, uint64_t>>& from, uint64_t rows,
                   uint64_t cols, uint64_t experts = 0, bool keep_f32 = false) {
    GgufTensorOut o{name, nullptr, rows, cols, keep_f32 ? GgmlType::F32 : out_type(name, cols), {}};
    o.experts = experts;
    for (const auto& [t, n] : from) o.parts.push_back({t.data, t.dtype, n});
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
  if (!rope_freqs.empty()) vec("rope_freqs.weight", rope_freqs.data(), half_rot);
  if (!longrope_short.empty()) {
    vec("rope_factors_long.weight", longrope_long.data(), half_rot);
    vec("rope_factors_short.weight", longrope_short.data(), half_rot);
  }
  matrix("token_embd.weight", w.token_embedding, vocab_n, dim);
  vec("output_norm.weight", w.final_norm, dim);
  if (w.lm_head != w.token_embedding) matrix("output.weight", w.lm_head, vocab_n, dim);  // else tied (absent)
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const LayerWeights& lw = w.layers[l];
    if (c.pre_norm) vec(p + "attn_norm.weight", lw.attn_norm, dim);
    if (fam->fused_qkv) {
      parts(p + "attn_qkv.weight", {{lw.q_proj, q}, {lw.k_proj, kv}, {lw.v_proj, kv}}, q + 2 * kv, dim);
    } else {
      matrix(p + "attn_q.weight", lw.q_proj, q, dim, true);
      matrix(p + "attn_k.weight", lw.k_proj, kv, dim, true);
      matrix(p + "attn_v.weight", lw.v_proj, kv, dim);
    }
    matrix(p + "attn_output.weight", lw.o_proj, dim, q);
    if (qkv_bias) {
      vec(p + "attn_q.bias", lw.bq, q, true);
      vec(p + "attn_k.bias", lw.bk, kv, true);
      vec(p + "attn_v.bias", lw.bv, kv);
    }
    if (c.attention_out_bias) vec(p + "attn_output.bias", lw.bo, dim);
    if (c.qk_norm) {
      vec(p + "attn_q_norm.weight", lw.q_norm, hd);
      vec(p + "attn_k_norm.weight", lw.k_norm, hd);
    }
    if (c.post_norm) vec(p + "post_attention_norm.weight", lw.post_attention_norm, dim);
    if (c.pre_norm) vec(p + "ffn_norm.weight", lw.ffn_norm, dim);
    if (c.layer(l).moe) {
      const uint64_t E = c.moe.num_experts, ef = c.moe.expert_intermediate_size;
      if (lw.moe.gate.size() != E || lw.moe.up.size() != E || lw.moe.down.size() != E)
        refuse("layer " + std::to_string(l) + " has not " + std::to_string(E) + " experts");
      auto experts = [&](const std::vector<WeightTensor>& v, uint64_t rows) {
        std::vector<std::pair<WeightTensor, uint64_t>> from;
        for (const WeightTensor& e : v) from.emplace_back(e, rows);
        return from;
      };
      // The router stays float32 (as llama.cpp's converter keeps ffn_gate_inp).
      parts(p + "ffn_gate_inp.weight", {{lw.moe.router, E}}, E, dim, 0, true);
      parts(p + "ffn_gate_exps.weight", experts(lw.moe.gate, ef), ef, dim, E);
      parts(p + "ffn_down_exps.weight", experts(lw.moe.down, dim), dim, ef, E);
      parts(p + "ffn_up_exps.weight", experts(lw.moe.up, ef), ef, dim, E);
    } else if (fam->fused_gate_up) {
      parts(p + "ffn_up.weight", {{lw.gate_proj, hidden}, {lw.up_proj, hidden}}, 2 * hidden, dim);
      matrix(p + "ffn_down.weight", lw.down_proj, dim, hidden);
    } else {
      matrix(p + "ffn_gate.weight", lw.gate_proj, hidden, dim);
      matrix(p + "ffn_down.weight", lw.down_proj, dim, hidden);
      matrix(p + "ffn_up.weight", lw.up_proj, hidden, dim);
    }
    if (c.post_norm) vec(p + "post_ffw_norm.weight", lw.post_ffw_norm, dim);
  }
  write_gguf_file(path, meta, ts, std::move(stop));
}

void write_gguf_vocab(const GgufVocab& vocab, const std::string& path) {
  GgufMetaWriter meta;
  meta.kv_str("general.architecture", "llama");
  meta.kv_str("general.name", "vocab only");
  put_gguf_vocab(meta, vocab);
  write_gguf_file(path, meta, {});
}

}  // namespace pagedchat
