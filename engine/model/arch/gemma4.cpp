// Gemma 4 (text part of E2B, E4B and 31B; GGUF "gemma4"): local (sliding-window) and global layers
// as the file's attention.sliding_window_pattern says, each kind with its own head size
// (key_length_swa / key_length), rotated dims (rope.dimension_count_swa / rope.dimension_count) and
// RoPE base (rope.freq_base_swa / rope.freq_base); global layers divide their frequencies by
// rope_freqs (proportional RoPE: 1e30 = the pair does not rotate); per-layer KV heads and MLP
// widths (head_count_kv and feed_forward_length as arrays); per-head q/k RMSNorm and a weightless
// RMSNorm on V; a layer without attn_v uses its K projection as V (attention_k_eq_v); attention
// scale 1; sandwich norms and a GELU(tanh) MLP as Gemma 3; the last attention.shared_kv_layers
// layers compute only q and read the KV of the last earlier layer of their kind (vLLM's KV
// sharing; they own no KV-cache blocks); per-layer embeddings (embedding_length_per_layer_input,
// engine/model/decoder_model.h); layer_output_scale; final_logit_softcapping (default 30).
// Sources: transformers modeling_gemma4.py / modeling_gemma3n.py (kv_shared_layer_index: the last
// non-shared layer of the same type; per_layer_projection_scale, the 1/sqrt(2) mix) read, not
// copied; ik_llama.cpp src/llama-hparams.cpp (LLM_ARCH_GEMMA4), src/llama-load-tensors.cpp
// (create_gemma4_tensors) and src/graphs/build_gemma4.cpp for the GGUF keys, tensor names and
// defaults. 26B-A4B: each layer's experts run beside its dense MLP (MoeConfig::parallel_dense).
// Hugging Face folders (Gemma4ForCausalLM, Gemma4ForConditionalGeneration's text model):
// transformers configuration_gemma4.py / modeling_gemma4.py / convert_gemma4_weights.py and
// llama.cpp's conversion/gemma.py and gguf-py tensor_mapping.py for the keys, names and layouts
// (docs/hf-layouts.md), read, not copied.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/load_util.h"
#include "engine/model/arch/registry.h"

namespace pagedchat {

namespace {

int64_t key_in(const GgufKeys& k, const std::string& key, int64_t value, int64_t lo, int64_t hi) {
  if (value < lo || value > hi)
    k.fail(k.prefix + key + " is " + std::to_string(value) + ", outside [" + std::to_string(lo) + ", " +
           std::to_string(hi) + "]");
  return value;
}

/// What Gemma 4's per-layer rules need, read from a GGUF file or a config.json.
struct Gemma4Layers {
  std::vector<bool> local;        ///< per layer: sliding window (else global)
  int window = 0;                 ///< of the local layers
  int head_dim_local = 0;         ///< the global layers' is ModelConfig::head_dim
  int rotary_dim_local = 0;       ///< the global layers' is ModelConfig::rotary_dim
  double theta_local = 10000.0;   ///< the global layers' is ModelConfig::rope_theta
  int shared = 0;                 ///< the last `shared` layers read an earlier layer's KV
  std::vector<int64_t> kv_heads;  ///< per layer
  std::vector<int64_t> ffn;       ///< per layer MLP width; empty: the model's
};

/// The layer specs of `g`: windows, head sizes, RoPE, KV heads, MLP widths and the KV-sharing
/// rule (transformers' kv_shared_layer_index: a shared layer reads the last layer before the
/// shared ones of its own kind). `fail` throws.
void set_gemma4_layers(const Gemma4Layers& g, ModelConfig& c, const std::function<void(const std::string&)>& fail) {
  const int n = c.n_layers;
  c.expand_layer_specs();
  const int first_shared = n - g.shared;
  for (int l = 0; l < n; ++l) {
    LayerSpec& s = c.layer_specs[std::size_t(l)];
    const bool local = g.local[std::size_t(l)];
    s.sliding_window = local ? g.window : 0;
    s.head_dim = local ? g.head_dim_local : 0;
    s.rotary_dim = local ? g.rotary_dim_local : 0;
    s.rope_theta = local ? g.theta_local : double(c.rope_theta);
    s.rope_scaled = !local;  // rope_freqs (proportional RoPE) on global layers only
    s.n_kv_heads = int(g.kv_heads[std::size_t(l)]);
    if (s.n_kv_heads < 1 || c.n_heads % s.n_kv_heads != 0)
      fail("layer " + std::to_string(l) + "'s KV head count " + std::to_string(s.n_kv_heads) +
           " does not divide the head count " + std::to_string(c.n_heads));
    if (!g.ffn.empty()) s.intermediate_size = int(g.ffn[std::size_t(l)]);
    if (l >= first_shared) {
      int src = first_shared - 1;
      while (src >= 0 && g.local[std::size_t(src)] != local) --src;
      if (src < 0)
        fail("layer " + std::to_string(l) + " shares the KV of an earlier " + (local ? "local" : "global") +
             " layer, but the first " + std::to_string(first_shared) + " layer(s) hold none");
      if (g.kv_heads[std::size_t(src)] != s.n_kv_heads)
        fail("layer " + std::to_string(l) + " has " + std::to_string(s.n_kv_heads) + " KV heads, the layer " +
             std::to_string(src) + " whose KV it reads has " + std::to_string(g.kv_heads[std::size_t(src)]));
      s.kv_source_layer = src;
    }
  }
}

/// What every Gemma 4 is, whatever its file: a weightless V norm, attention scale 1, embeddings
/// times sqrt(hidden), GELU-tanh, the final softcap and the per-layer embedding width.
void set_gemma4_model(ModelConfig& c, double cap, int per_layer) {
  c.v_norm = true;
  c.attention_scale = 1.0f;
  c.embedding_scale = std::sqrt(float(c.hidden_size));
  c.activation = MlpActivation::kGeluTanh;
  c.final_logit_softcap = float(cap);
  c.per_layer_input_size = per_layer;
}

void gemma4_hparams(const GgufKeys& k, ModelConfig& c) {
  const int n = c.n_layers;
  const int window = gguf_sliding_window(k);
  const std::optional<std::vector<int64_t>> pattern = k.get_per_layer("attention.sliding_window_pattern", n);
  if (!pattern)
    k.fail("a gemma4 model needs " + k.prefix + "attention.sliding_window_pattern (local or global per layer)");
  const std::optional<int64_t> hd_swa = k.get_int("attention.key_length_swa");
  if (!hd_swa) k.fail("a gemma4 model needs " + k.prefix + "attention.key_length_swa (the local layers' head size)");
  key_in(k, "attention.key_length_swa", *hd_swa, 2, 1 << 16);
  if (*hd_swa % 2 != 0) k.fail(k.prefix + "attention.key_length_swa " + std::to_string(*hd_swa) + " is odd");
  if (const auto v = k.get_int("attention.value_length_swa"); v && *v != *hd_swa)
    k.fail(k.prefix + "attention.value_length_swa " + std::to_string(*v) + " differs from key_length_swa " +
           std::to_string(*hd_swa) + " (not supported)");
  const int64_t rot_swa = k.get_int("rope.dimension_count_swa").value_or(*hd_swa);
  if (rot_swa < 2 || rot_swa > *hd_swa || rot_swa % 2 != 0)
    k.fail(k.prefix + "rope.dimension_count_swa is " + std::to_string(rot_swa) +
           ", not an even number of dims up to the local head size " + std::to_string(*hd_swa));
  const double theta_swa = k.get_float("rope.freq_base_swa").value_or(double(c.rope_theta));
  if (!(theta_swa > 0) || !std::isfinite(theta_swa))
    k.fail(k.prefix + "rope.freq_base_swa is " + std::to_string(theta_swa) + ", not a positive RoPE base");
  const int64_t shared = k.get_int("attention.shared_kv_layers").value_or(0);
  key_in(k, "attention.shared_kv_layers", shared, 0, n - 1);
  const int64_t per_layer = k.get_int("embedding_length_per_layer_input").value_or(0);
  key_in(k, "embedding_length_per_layer_input", per_layer, 0, 1 << 16);
  // Per-layer KV heads and MLP widths (scalars repeat; the common loader checked their ranges).
  const std::vector<int64_t> kv_heads =
      k.get_per_layer("attention.head_count_kv", n).value_or(std::vector<int64_t>(std::size_t(n), c.n_heads));
  const std::optional<std::vector<int64_t>> ffn = k.get_per_layer("feed_forward_length", n);
  // ik_llama.cpp's default (its converter does not write the key; Gemma 4 checkpoints cap at 30).
  const double cap = k.get_float("final_logit_softcapping").value_or(30.0);
  if (!(cap >= 0) || !std::isfinite(cap))
    k.fail(k.prefix + "final_logit_softcapping is " + std::to_string(cap) + ", not a non-negative number");

  Gemma4Layers g;
  for (int l = 0; l < n; ++l) g.local.push_back((*pattern)[std::size_t(l)] != 0);
  g.window = window;
  g.head_dim_local = int(*hd_swa);
  g.rotary_dim_local = int(rot_swa);
  g.theta_local = theta_swa;
  g.shared = int(shared);
  g.kv_heads = kv_heads;
  if (ffn) g.ffn = *ffn;
  set_gemma4_layers(g, c, [&k](const std::string& what) { k.fail(what); });
  // 26B-A4B: every layer's experts beside its dense MLP (softmax over all experts, top-k, renormalised).
  if (k.get_int("expert_count").value_or(0) > 0) {
    gguf_expert_hparams(k, c);
    c.moe.parallel_dense = true;
    if (c.intermediate_size <= 0) k.fail("a gemma4 mixture of experts needs " + k.prefix + "feed_forward_length");
    for (LayerSpec& s : c.layer_specs) s.moe = true;
  }
  set_gemma4_model(c, cap, int(per_layer));
  // Image positions take the padding token's per-layer row (transformers' pad_token_id, 0 in Gemma
  // 4's vocabulary). Whether an image's tokens attend both ways is not in the file: transformers
  // gives "Larger Gemma 4 models" (26B-A4B, 31B: use_bidirectional_attention "vision") Gemma 3's
  // bidirectional image mask and the smaller ones (E2B, E4B: the models with per-layer
  // embeddings) a causal one, so that is the rule here. ik_llama.cpp's mtmd decodes every Gemma 4
  // image non-causally.
  c.per_layer_embed_pad_id = int(k.file.get_int("tokenizer.ggml.padding_token_id").value_or(0));
  c.bidirectional_images = per_layer == 0;
}

// Gemma4TextConfig's defaults (transformers configuration_gemma4.py) for keys a config.json may
// leave out.
constexpr const char* kGemma4TextDefaults = R"({
  "vocab_size": 262144, "rms_norm_eps": 1e-6, "max_position_embeddings": 131072, "head_dim": 256,
  "global_head_dim": 512, "sliding_window": 512, "hidden_activation": "gelu_pytorch_tanh",
  "tie_word_embeddings": true, "attention_bias": false, "attention_k_eq_v": false,
  "num_kv_shared_layers": 0, "hidden_size_per_layer_input": 256, "vocab_size_per_layer_input": 262144,
  "use_double_wide_mlp": false, "enable_moe_block": false, "rope_theta": 1000000.0,
  "rope_local_base_freq": 10000.0})";

// Gemma 4's config.json (Gemma4ForCausalLM, or the text_config of Gemma4ForConditionalGeneration;
// transformers configuration_gemma4.py / modeling_gemma4.py): layer_types, head_dim (local) and
// global_head_dim, num_global_key_value_heads with attention_k_eq_v (global layers without
// v_proj), rope_parameters per layer type (the global layers' "proportional" RoPE: the first
// partial_rotary_factor * global_head_dim / 2 pairs rotate with frequencies over the whole head,
// the others not — GGUF writes the same as rope_freqs 1 / 1e30), num_kv_shared_layers,
// use_double_wide_mlp (twice the MLP width on the shared layers), hidden_size_per_layer_input,
// the 26B-A4B's experts (enable_moe_block, num_experts, top_k_experts, moe_intermediate_size).
// Norm weights are stored as they multiply (no 1 + w, unlike Gemma 3).
void gemma4_hf_hparams(const HfKeys& k, ModelConfig& c) {
  const int n = c.n_layers;
  auto fail = [&k](const std::string& what) { k.fail(what); };
  const nlohmann::json act = k.values["hidden_activation"];
  if (!act.is_string() || act.get<std::string>() != "gelu_pytorch_tanh")
    k.fail("hidden_activation " + load::brief(act) + " is not supported (only \"gelu_pytorch_tanh\")");
  if (k.get_bool("attention_bias").value_or(false))
    k.fail("'attention_bias' true is not supported for Gemma 4 (no attention bias terms)");
  if (k.has("use_bidirectional_attention") && k.values["use_bidirectional_attention"] == "all")
    k.fail("'use_bidirectional_attention' \"all\" is not supported (text attention is causal)");
  // A key set to null counts as absent (the defaults above fill only keys not there at all).
  auto required_int = [&k](const char* key, int64_t lo, int64_t hi) {
    const std::optional<int64_t> v = k.get_int(key, lo, hi);
    if (!v) k.fail(std::string("a Gemma 4 model needs '") + key + "'");
    return *v;
  };
  const int window = int(required_int("sliding_window", 1, 1 << 24));
  // layer_types; absent: transformers' default, 5 local then 1 global, the last layer global.
  std::vector<bool> local;
  if (std::optional<std::vector<bool>> given = hf_sliding_layers(k, n)) {
    local = std::move(*given);
  } else {
    for (int l = 0; l < n; ++l) local.push_back((l + 1) % 6 != 0 && l != n - 1);
  }
  const int hd_local = c.head_dim;
  const int hd_global = int(required_int("global_head_dim", 2, load::kMaxDim));
  if (hd_global % 2 != 0) k.fail("'global_head_dim' " + std::to_string(hd_global) + " is odd (RoPE needs pairs)");
  const bool k_eq_v = k.get_bool("attention_k_eq_v").value_or(false);
  int kv_global = c.n_kv_heads;
  if (k_eq_v) {
    const std::optional<int64_t> g = k.get_int("num_global_key_value_heads", 1, c.n_heads);
    if (!g) k.fail("'attention_k_eq_v' true needs 'num_global_key_value_heads' (the global layers' KV heads)");
    kv_global = int(*g);
  }
  // RoPE: rope_parameters was adopted into rope_theta / rope_scaling / partial_rotary_factor (the
  // global layers') and rope_local_base_freq (the local layers').
  const double theta_local = k.get_number("rope_local_base_freq").value_or(10000.0);
  if (!(theta_local > 1))
    k.fail("the local layers' rope_theta " + std::to_string(theta_local) + " must be greater than 1");
  double partial = 1.0;
  // transformers' default rope_parameters (Gemma4TextConfig): the global layers' proportional
  // RoPE with factor 0.25, where config.json gives none for them.
  const bool full_given = k.has("rope_parameters") && k.values["rope_parameters"].is_object() &&
                          k.values["rope_parameters"].contains("full_attention");
  if (!full_given && !k.has("rope_scaling") && !k.has("partial_rotary_factor")) {
    partial = 0.25;
  } else if (k.has("rope_scaling")) {
    const HfKeys rs = k.nested(k.values["rope_scaling"]);
    const nlohmann::json type = rs.values.value("rope_type", nlohmann::json("default"));
    if (type != "proportional" && type != "default")
      k.fail("the global layers' rope_type " + load::brief(type) +
             " is not supported (\"proportional\" or \"default\")");
    if (const auto f = rs.get_number("factor"); f && *f != 1.0)
      k.fail("a RoPE scaling factor " + std::to_string(*f) + " on the global layers is not supported");
    partial = rs.get_number("partial_rotary_factor").value_or(k.get_number("partial_rotary_factor").value_or(1.0));
  } else if (const auto prf = k.get_number("partial_rotary_factor"); prf && *prf != 1.0) {
    k.fail("'partial_rotary_factor' " + std::to_string(*prf) + " without proportional RoPE is not supported");
  }
  if (!(partial > 0 && partial <= 1))
    k.fail("'partial_rotary_factor' " + std::to_string(partial) + " is outside (0, 1]");
  // transformers' _compute_proportional_rope_parameters: rope_angles = int(factor * head_dim // 2)
  // pairs rotate with theta^(-2i / head_dim); the rest get frequency 0 (a divisor of 1e30 here, as
  // llama.cpp's converters write rope_freqs).
  const int pairs = hd_global / 2, angles = int(partial * hd_global / 2.0);
  if (angles < 1) k.fail("'partial_rotary_factor' " + std::to_string(partial) + " rotates no pair of the global heads");
  c.rope_freq_factors.clear();
  if (angles < pairs) {
    c.rope_freq_factors.assign(std::size_t(pairs), 1e30f);
    std::fill(c.rope_freq_factors.begin(), c.rope_freq_factors.begin() + angles, 1.0f);
  }
  const int shared = int(k.get_int("num_kv_shared_layers", 0, n - 1).value_or(0));
  const bool double_wide = k.get_bool("use_double_wide_mlp").value_or(false);
  const int per_layer = int(k.get_int("hidden_size_per_layer_input", 0, 1 << 16).value_or(0));
  if (per_layer > 0) {
    const int64_t pl_vocab = k.get_int("vocab_size_per_layer_input", 1, load::kMaxVocab).value_or(c.vocab_size);
    if (pl_vocab != c.vocab_size)
      k.fail("'vocab_size_per_layer_input' " + std::to_string(pl_vocab) + " differs from vocab_size " +
             std::to_string(c.vocab_size) + " (not supported)");
  }
  double cap = 0;
  if (const auto v = k.get_number("final_logit_softcapping")) {
    if (!(*v > 0)) k.fail("'final_logit_softcapping' " + std::to_string(*v) + " must be positive");
    cap = *v;
  }

  c.head_dim = hd_global;
  c.rotary_dim = 0;  // the whole global head (the proportional part through rope_freq_factors)
  c.rope_scaling = RopeScaling{};
  Gemma4Layers g;
  g.local = local;
  g.window = window;
  g.head_dim_local = hd_local;
  g.rotary_dim_local = hd_local;
  g.theta_local = theta_local;
  g.shared = shared;
  for (int l = 0; l < n; ++l) {
    g.kv_heads.push_back(local[std::size_t(l)] ? c.n_kv_heads : kv_global);
    if (c.intermediate_size > 0)
      g.ffn.push_back(int64_t(c.intermediate_size) * (double_wide && l >= n - shared ? 2 : 1));
  }
  c.n_kv_heads = std::max(c.n_kv_heads, kv_global);
  set_gemma4_layers(g, c, fail);
  for (int l = 0; l < n; ++l) {  // a shared layer has neither K nor V of its own
    LayerSpec& s = c.layer_specs[std::size_t(l)];
    s.k_eq_v = k_eq_v && !local[std::size_t(l)] && !s.shares_kv();
  }
  if (!g.ffn.empty()) c.intermediate_size = int(*std::max_element(g.ffn.begin(), g.ffn.end()));
  if (k.get_bool("enable_moe_block").value_or(false)) {
    const std::optional<int64_t> count = k.get_int("num_experts", 1, 4096);
    const std::optional<int64_t> top_k = k.get_int("top_k_experts", 1, 4096);
    std::optional<int64_t> width = k.get_int("moe_intermediate_size", 1, 4 * load::kMaxDim);
    if (!width) width = k.get_int("expert_intermediate_size", 1, 4 * load::kMaxDim);  // an older name
    if (!count || !top_k || !width)
      k.fail("'enable_moe_block' true needs 'num_experts', 'top_k_experts' and 'moe_intermediate_size'");
    if (*top_k > *count)
      k.fail("'top_k_experts' " + std::to_string(*top_k) + " is above 'num_experts' " + std::to_string(*count));
    if (c.intermediate_size <= 0) k.fail("a Gemma 4 mixture of experts needs 'intermediate_size' (its dense MLP)");
    c.moe.num_experts = int(*count);
    c.moe.num_experts_per_tok = int(*top_k);
    c.moe.expert_intermediate_size = int(*width);
    c.moe.softmax_before_topk = true;
    c.moe.norm_topk_prob = true;
    c.moe.parallel_dense = true;
    for (LayerSpec& s : c.layer_specs) s.moe = true;
  }
  set_gemma4_model(c, cap, per_layer);
  c.per_layer_embed_pad_id = int(k.get_int("pad_token_id", 0, load::kMaxVocab).value_or(0));
  c.bidirectional_images = k.has("use_bidirectional_attention") && k.values["use_bidirectional_attention"] == "vision";
}

}  // namespace

const ModelFamily kGemma4Family = [] {
  ModelFamily f;
  f.gguf_name = "gemma4";
  f.description = "Gemma 4";
  f.qk_norm = true;
  f.pre_norm = true;
  f.post_norm = true;
  f.rope_freqs = true;
  f.moe = true;  // 26B-A4B; E2B / E4B / 31B are dense (no expert_count)
  f.per_layer_shapes = true;
  f.v_proj = TensorRule::kOptional;
  f.layer_output_scale = TensorRule::kOptional;
  f.activation = MlpActivation::kGeluTanh;
  f.gguf_hparams = gemma4_hparams;
  f.hf_classes = {{"Gemma4ForCausalLM", "gemma4_text"}, {"Gemma4ForConditionalGeneration", "gemma4", true}};
  f.hf_defaults = kGemma4TextDefaults;
  f.hf_own_keys = {"layer_types", "hidden_act", "rope_scaling", "partial_rotary_factor", "num_experts"};
  f.hf_hparams = gemma4_hf_hparams;
  // Gemma 4's chat format ends a turn with <turn|>; a tool call waits at <|tool_response>
  // (ik_llama.cpp's end-of-generation list for the gemma4 vocabulary).
  f.end_of_generation_tokens = {"<turn|>", "<|tool_response>"};
  return f;
}();

}  // namespace pagedchat
