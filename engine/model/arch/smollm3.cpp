// SmolLM3 (GGUF "smollm3", transformers SmolLM3ForCausalLM): a Llama-shaped model whose every 4th
// layer has no rotary embedding (layer l skips RoPE iff (l + 1) % 4 == 0: transformers'
// no_rope_layers with no_rope_layer_interval 4; a rule in code, not in the GGUF). GGUF q/k rows
// are permuted as for llama (interleaved pairs).
// Sources: transformers modeling_smollm3.py; ik_llama.cpp src/llama-hparams.cpp
// (LLM_ARCH_SMOLLM3: n_no_rope_layer_step = 4).
#include <algorithm>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/loader/load_util.h"
#include "engine/model/arch/registry.h"

namespace pagedchat {

namespace {

void smollm3_hparams(const GgufKeys&, ModelConfig& c) {
  c.expand_layer_specs();
  for (int l = 0; l < c.n_layers; ++l) c.layer_specs[std::size_t(l)].use_rope = (l + 1) % 4 != 0;
}

// config.json (modeling_smollm3.py: use_rope = config.no_rope_layers[layer_idx]): RoPE on layer l
// iff no_rope_layers[l] is 1; without the list, every no_rope_layer_interval-th layer has none.
void smollm3_hf_hparams(const HfKeys& k, ModelConfig& c) {
  std::vector<bool> rope;
  if (k.has("no_rope_layers")) {
    const nlohmann::json& nr = k.values["no_rope_layers"];
    if (!nr.is_array() || nr.size() < std::size_t(c.n_layers))
      k.fail("'no_rope_layers' is not a list of at least " + std::to_string(c.n_layers) +
             " entries (num_hidden_layers)");
    for (int l = 0; l < c.n_layers; ++l) {
      const nlohmann::json& x = nr[std::size_t(l)];
      if (!x.is_number_integer() || (x.get<int64_t>() != 0 && x.get<int64_t>() != 1))
        k.fail("'no_rope_layers' [" + std::to_string(l) + "] is " + load::brief(x) + ", not 0 (NoPE) or 1 (RoPE)");
      rope.push_back(x.get<int64_t>() == 1);
    }
  } else {
    const int64_t interval = k.get_int("no_rope_layer_interval", 1, load::kMaxLayers).value_or(4);
    for (int l = 0; l < c.n_layers; ++l) rope.push_back((l + 1) % interval != 0);
  }
  c.expand_layer_specs();
  for (int l = 0; l < c.n_layers; ++l) c.layer_specs[std::size_t(l)].use_rope = rope[std::size_t(l)];
  // SmolLM3Config: with use_sliding_window, the NoPE layers slide.
  if (k.get_bool("use_sliding_window").value_or(false) && k.has("sliding_window") &&
      std::find(rope.begin(), rope.end(), false) != rope.end())
    k.fail("use_sliding_window is true: sliding-window attention on SmolLM3's NoPE layers is not supported");
}

void smollm3_hf_write(const ModelConfig& c, nlohmann::json& config) {
  nlohmann::json no_rope = nlohmann::json::array();
  for (int l = 0; l < c.n_layers; ++l) no_rope.push_back(c.layer(l).use_rope ? 1 : 0);
  config["mlp_bias"] = false;
  config["use_sliding_window"] = false;
  config["no_rope_layers"] = no_rope;
  config["no_rope_layer_interval"] = 4;
}

}  // namespace

const ModelFamily kSmolLM3Family = [] {
  ModelFamily f;
  f.gguf_name = "smollm3";
  f.hf_classes = {{"SmolLM3ForCausalLM", "smollm3", false, true}};
  f.description = "SmolLM3";
  f.rope_style = RopeStyle::kInterleaved;
  f.gguf_hparams = smollm3_hparams;
  f.hf_hparams = smollm3_hf_hparams;
  f.hf_write_config = smollm3_hf_write;
  return f;
}();

}  // namespace pagedchat
