// Phi-3 and Phi-4-mini (GGUF "phi3", transformers Phi3ForCausalLM): fused attn_qkv [q | k | v] and
// fused ffn_up [gate | up], partial rotary (rope.dimension_count < head size: Phi-4-mini rotates 96
// of 128 dims, NEOX pairs within them), LongRoPE (rope_factors_short / rope_factors_long divide the
// frequencies — the long set when the context exceeds rope.scaling.original_context_length, as
// llama.cpp chooses by n_ctx — and rope.scaling.attn_factor scales q and k), an optional sliding
// window on every layer (attention.sliding_window; Phi-4-mini's 262144 is never reached).
// Sources: transformers modeling_phi3.py; ik_llama.cpp src/llama-hparams.cpp (LLM_ARCH_PHI3),
// src/graphs/build_phi3.cpp.
#include "engine/model/arch/registry.h"

namespace pagedchat {

namespace {

void phi3_hparams(const GgufKeys& k, ModelConfig& c) {
  if (const std::optional<int64_t> w = k.get_int("attention.sliding_window")) {
    if (*w < 1 || *w > (1 << 24))
      k.fail(k.prefix + "attention.sliding_window is " + std::to_string(*w) + ", outside [1, 16777216]");
    // A window no sequence can exceed is full attention (one KV-cache group, nothing to free).
    if (*w < c.max_seq_len) {
      c.layer_specs.assign(std::size_t(c.n_layers), c.layer(0));
      for (LayerSpec& s : c.layer_specs) s.sliding_window = int(*w);
    }
  }
}

}  // namespace

const ModelFamily kPhi3Family = [] {
  ModelFamily f;
  f.gguf_name = "phi3";
  f.hf_names = {"Phi3ForCausalLM"};
  f.description = "Phi-3";
  f.fused_qkv = true;
  f.fused_gate_up = true;
  f.longrope = true;
  f.gguf_hparams = phi3_hparams;
  return f;
}();

}  // namespace pagedchat
