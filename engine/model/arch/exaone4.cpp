// EXAONE 4 (LG AI Research's Korean-English models, 1.2B and 32B; GGUF "exaone4", transformers
// Exaone4ForCausalLM): post-norm-only blocks (no input norm: x += post_attention_norm(attn(x)),
// x += post_ffw_norm(mlp(x))), per-head q/k RMSNorm, SiLU MLP. Hybrid attention when the model has
// a sliding window: 3 sliding layers then 1 global one (layer l global iff (l + 1) % 4 == 0, or as
// attention.sliding_window_pattern lists), RoPE on the sliding layers only (global layers are
// NoPE); without a window (1.2B) every layer is global with RoPE. llama.cpp's rule for 64-layer
// files that carry no window (the 32B: window 4096) is kept.
// Sources: transformers modeling_exaone4.py (Exaone4Attention: rope only when sliding or when the
// model has no sliding layers); llama.cpp (LLM_ARCH_EXAONE4 hparams).
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/loader/load_util.h"
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
  c.expand_layer_specs();
  for (int l = 0; l < c.n_layers; ++l) {
    LayerSpec& s = c.layer_specs[std::size_t(l)];
    const bool sliding = pattern ? (*pattern)[std::size_t(l)] != 0 : (l + 1) % 4 != 0;
    s.sliding_window = sliding ? int(*window) : 0;
    s.use_rope = sliding;
  }
}

// config.json (modeling_exaone4.py): with a sliding_window, layer_types says which layers slide
// (else sliding_window_pattern); RoPE only on those (all layers when there is no window).
void exaone4_hf_hparams(const HfKeys& k, ModelConfig& c) {
  const int64_t window = k.get_int("sliding_window", 0, 1 << 24).value_or(0);
  if (window <= 0) return;
  c.expand_layer_specs();
  const nlohmann::json* lt = k.has("layer_types") ? &k.values["layer_types"] : nullptr;
  if (lt && (!lt->is_array() || lt->size() != std::size_t(c.n_layers)))
    k.fail("'layer_types' is not a list of " + std::to_string(c.n_layers) + " layer kinds");
  // sliding_window_pattern: a period (every period-th layer global) or, as the 32B's config.json
  // spells it, a string repeated over the layers ("LLLG": L local, G global).
  std::string pattern = "LLLG";
  if (k.has("sliding_window_pattern")) {
    const nlohmann::json& p = k.values["sliding_window_pattern"];
    if (p.is_string() && !p.get<std::string>().empty() &&
        p.get<std::string>().find_first_not_of("LG") == std::string::npos) {
      pattern = p.get<std::string>();
    } else {
      const int64_t period = *k.get_int("sliding_window_pattern", 1, load::kMaxLayers);
      pattern.assign(std::size_t(period - 1), 'L');
      pattern += 'G';
    }
  }
  for (int l = 0; l < c.n_layers; ++l) {
    bool sliding = pattern[std::size_t(l) % pattern.size()] == 'L';
    if (lt) {
      const nlohmann::json& t = (*lt)[std::size_t(l)];
      if (!t.is_string() || (t != "sliding_attention" && t != "full_attention"))
        k.fail("'layer_types' [" + std::to_string(l) + "] is " + load::brief(t) +
               ", not \"sliding_attention\" or \"full_attention\"");
      sliding = t == "sliding_attention";
    }
    c.layer_specs[std::size_t(l)].sliding_window = sliding ? int(window) : 0;
    c.layer_specs[std::size_t(l)].use_rope = sliding;
  }
}

void exaone4_hf_write(const ModelConfig& c, nlohmann::json& config) {
  const int window = hf_sliding_window(c);
  config["sliding_window"] = window > 0 ? nlohmann::json(window) : nlohmann::json(nullptr);
  config["layer_types"] = hf_layer_types(c);
}

}  // namespace

const ModelFamily kExaone4Family = [] {
  ModelFamily f;
  f.gguf_name = "exaone4";
  f.hf_classes = {{"Exaone4ForCausalLM", "exaone4"}};
  f.description = "EXAONE 4";
  f.qk_norm = true;
  f.pre_norm = false;
  f.post_norm = true;
  f.rope_freqs = true;
  f.gguf_hparams = exaone4_hparams;
  f.hf_own_keys = {"layer_types"};
  f.hf_hparams = exaone4_hf_hparams;
  f.hf_write_config = exaone4_hf_write;
  return f;
}();

}  // namespace pagedchat
