// EXAONE 4 (LG AI Research's Korean-English models, 1.2B and 32B; GGUF "exaone4", transformers
// Exaone4ForCausalLM): post-norm-only blocks (no input norm: x += post_attention_norm(attn(x)),
// x += post_ffw_norm(mlp(x))), per-head q/k RMSNorm, SiLU MLP. Hybrid attention when the model has
// a sliding window: 3 sliding layers then 1 global one (layer l global iff (l + 1) % 4 == 0, or as
// attention.sliding_window_pattern lists), RoPE on the sliding layers only (global layers are
// NoPE); without a window (1.2B) every layer is global with RoPE. llama.cpp's rule for 64-layer
// files that carry no window (the 32B: window 4096) is kept.
// Sources: transformers modeling_exaone4.py (Exaone4Attention: rope only when sliding or when the
// model has no sliding layers); llama.cpp (LLM_ARCH_EXAONE4 hparams).
#include "engine/model/arch/registry.h"

namespace pagedchat {

namespace {

void exaone4_hparams(const GgufKeys& k, ModelConfig& c) {
  std::optional<int64_t> window = k.get_int("attention.sliding_window");
  if (!window && c.n_layers == 64) window = 4096;
  if (!window || *window == 0) return;  // every layer global, with RoPE
  if (*window < 1 || *window > (1 << 24))
    k.fail(k.prefix + "attention.sliding_window is " + std::to_string(*window) + ", outside [1, 16777216]");
  const std::optional<std::vector<int64_t>> pattern = k.get_per_layer("attention.sliding_window_pattern", c.n_layers);
  c.layer_specs.assign(std::size_t(c.n_layers), c.layer(0));
  for (int l = 0; l < c.n_layers; ++l) {
    LayerSpec& s = c.layer_specs[std::size_t(l)];
    const bool sliding = pattern ? (*pattern)[std::size_t(l)] != 0 : (l + 1) % 4 != 0;
    s.sliding_window = sliding ? int(*window) : 0;
    s.use_rope = sliding;
  }
}

}  // namespace

const ModelFamily kExaone4Family = [] {
  ModelFamily f;
  f.gguf_name = "exaone4";
  f.hf_names = {"Exaone4ForCausalLM"};
  f.description = "EXAONE 4";
  f.qk_norm = true;
  f.pre_norm = false;
  f.post_norm = true;
  f.rope_freqs = true;
  f.gguf_hparams = exaone4_hparams;
  return f;
}();

}  // namespace pagedchat
