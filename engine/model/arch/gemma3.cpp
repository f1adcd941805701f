// Gemma 3 (text part of 1B-27B; GGUF "gemma3", transformers Gemma3ForCausalLM): 5 sliding-window
// layers then 1 global one (layer l is global iff (l + 1) % 6 == 0 — a rule in code, not in the
// file, unless the file lists attention.sliding_window_pattern), local RoPE base 10000 without the
// global layers' frequency scaling, global base rope.freq_base (with rope_scaling), per-head q/k
// RMSNorm, "sandwich" norms (pre and post of attention and MLP), GELU(tanh) gated MLP, embeddings
// scaled by sqrt(hidden_size), attention scale 1/sqrt(head_dim) — except the 27B (62 layers),
// whose query_pre_attn_scalar is hidden_size / num_heads. GGUF norm weights already hold
// Gemma's (1 + w). Sources: transformers modeling_gemma3.py; ik_llama.cpp src/llama-hparams.cpp
// (LLM_ARCH_GEMMA3) and src/graphs/build_gemma3.cpp.
#include <cmath>

#include "engine/model/arch/registry.h"

namespace pagedchat {

namespace {

void gemma3_hparams(const GgufKeys& k, ModelConfig& c) {
  const std::optional<int64_t> window = k.get_int("attention.sliding_window");
  if (!window) k.fail("a gemma3 model needs " + k.prefix + "attention.sliding_window");
  if (*window < 1 || *window > (1 << 24))
    k.fail(k.prefix + "attention.sliding_window is " + std::to_string(*window) + ", outside [1, 16777216]");
  const std::optional<std::vector<int64_t>> pattern = k.get_per_layer("attention.sliding_window_pattern", c.n_layers);
  c.layer_specs.assign(std::size_t(c.n_layers), LayerSpec{});
  for (int l = 0; l < c.n_layers; ++l) {
    LayerSpec& s = c.layer_specs[std::size_t(l)];
    const bool sliding = pattern ? (*pattern)[std::size_t(l)] != 0 : (l + 1) % 6 != 0;
    s.sliding_window = sliding ? int(*window) : 0;
    s.rope_theta = sliding ? 10000.0 : c.rope_theta;
    s.rope_scaled = !sliding;
  }
  c.activation = MlpActivation::kGeluTanh;
  c.embedding_scale = std::sqrt(float(c.hidden_size));
  if (c.n_layers == 62) c.attention_scale = 1.0f / std::sqrt(float(c.hidden_size / c.n_heads));
}

}  // namespace

const ModelFamily kGemma3Family = [] {
  ModelFamily f;
  f.gguf_name = "gemma3";
  f.hf_names = {"Gemma3ForCausalLM"};
  f.description = "Gemma 3";
  f.qk_norm = true;
  f.pre_norm = true;
  f.post_norm = true;
  f.activation = MlpActivation::kGeluTanh;
  f.gguf_hparams = gemma3_hparams;
  return f;
}();

}  // namespace pagedchat
