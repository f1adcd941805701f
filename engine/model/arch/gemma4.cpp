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
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/model/arch/registry.h"

namespace pagedchat {

namespace {

int64_t key_in(const GgufKeys& k, const std::string& key, int64_t value, int64_t lo, int64_t hi) {
  if (value < lo || value > hi)
    k.fail(k.prefix + key + " is " + std::to_string(value) + ", outside [" + std::to_string(lo) + ", " +
           std::to_string(hi) + "]");
  return value;
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

  c.expand_layer_specs();
  const int first_shared = n - int(shared);
  for (int l = 0; l < n; ++l) {
    LayerSpec& s = c.layer_specs[std::size_t(l)];
    const bool local = (*pattern)[std::size_t(l)] != 0;
    s.sliding_window = local ? window : 0;
    s.head_dim = local ? int(*hd_swa) : 0;
    s.rotary_dim = local ? int(rot_swa) : 0;
    s.rope_theta = local ? theta_swa : double(c.rope_theta);
    s.rope_scaled = !local;  // rope_freqs (proportional RoPE) on global layers only
    s.n_kv_heads = int(kv_heads[std::size_t(l)]);
    if (s.n_kv_heads < 1 || c.n_heads % s.n_kv_heads != 0)
      k.fail("layer " + std::to_string(l) + "'s head_count_kv " + std::to_string(s.n_kv_heads) +
             " does not divide head_count " + std::to_string(c.n_heads));
    if (ffn) s.intermediate_size = int((*ffn)[std::size_t(l)]);
    if (l >= first_shared) {
      // transformers' kv_shared_layer_index: the last layer before the shared ones of the same kind.
      int src = first_shared - 1;
      while (src >= 0 && ((*pattern)[std::size_t(src)] != 0) != local) --src;
      if (src < 0)
        k.fail("layer " + std::to_string(l) + " shares the KV of an earlier " + (local ? "local" : "global") +
               " layer, but the first " + std::to_string(first_shared) + " layers have none");
      if (kv_heads[std::size_t(src)] != s.n_kv_heads)
        k.fail("layer " + std::to_string(l) + " has " + std::to_string(s.n_kv_heads) + " KV heads, the layer " +
               std::to_string(src) + " whose KV it reads has " + std::to_string(kv_heads[std::size_t(src)]));
      s.kv_source_layer = src;
    }
  }
  // 26B-A4B: every layer's experts beside its dense MLP (softmax over all experts, top-k, renormalised).
  if (k.get_int("expert_count").value_or(0) > 0) {
    gguf_expert_hparams(k, c);
    c.moe.parallel_dense = true;
    if (c.intermediate_size <= 0) k.fail("a gemma4 mixture of experts needs " + k.prefix + "feed_forward_length");
    for (LayerSpec& s : c.layer_specs) s.moe = true;
  }
  c.v_norm = true;
  c.attention_scale = 1.0f;
  c.embedding_scale = std::sqrt(float(c.hidden_size));
  c.activation = MlpActivation::kGeluTanh;
  c.final_logit_softcap = float(cap);
  c.per_layer_input_size = int(per_layer);
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
  // Gemma 4's chat format ends a turn with <turn|>; a tool call waits at <|tool_response>
  // (ik_llama.cpp's end-of-generation list for the gemma4 vocabulary).
  f.end_of_generation_tokens = {"<turn|>", "<|tool_response>"};
  return f;
}();

}  // namespace pagedchat
