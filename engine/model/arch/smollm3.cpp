// SmolLM3 (GGUF "smollm3", transformers SmolLM3ForCausalLM): a Llama-shaped model whose every 4th
// layer has no rotary embedding (layer l skips RoPE iff (l + 1) % 4 == 0: transformers'
// no_rope_layers with no_rope_layer_interval 4; a rule in code, not in the GGUF). GGUF q/k rows
// are permuted as for llama (interleaved pairs).
// Sources: transformers modeling_smollm3.py; ik_llama.cpp src/llama-hparams.cpp
// (LLM_ARCH_SMOLLM3: n_no_rope_layer_step = 4).
#include "engine/model/arch/registry.h"

namespace pagedchat {

namespace {

void smollm3_hparams(const GgufKeys&, ModelConfig& c) {
  c.layer_specs.assign(std::size_t(c.n_layers), c.layer(0));
  for (int l = 0; l < c.n_layers; ++l) c.layer_specs[std::size_t(l)].use_rope = (l + 1) % 4 != 0;
}

}  // namespace

const ModelFamily kSmolLM3Family = [] {
  ModelFamily f;
  f.gguf_name = "smollm3";
  f.hf_names = {"SmolLM3ForCausalLM"};
  f.description = "SmolLM3";
  f.rope_style = RopeStyle::kInterleaved;
  f.gguf_hparams = smollm3_hparams;
  return f;
}();

}  // namespace pagedchat
