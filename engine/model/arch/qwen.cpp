// The Qwen families: Qwen2 / Qwen2.5 (GGUF "qwen2", q/k/v biases), Qwen3 (GGUF "qwen3", per-head
// q/k RMSNorm, no biases) and Qwen3-MoE (GGUF "qwen3moe": Qwen3 attention, every layer a mixture of
// experts — softmax router, top-k renormalised (norm_topk_prob, which llama.cpp hard-codes for
// this architecture), SiLU-gated experts, no shared expert). GGUF files keep Hugging Face's row
// order and rotate halves (rope type NEOX).
// Sources: transformers modeling_qwen2.py, modeling_qwen3.py, modeling_qwen3_moe.py
// (Qwen3MoeSparseMoeBlock); ik_llama.cpp src/llama-hparams.cpp (LLM_ARCH_QWEN3MOE) and
// src/graphs/build_qwen3moe.cpp.
#include "engine/model/arch/registry.h"

namespace pagedchat {

const ModelFamily kQwen2Family = [] {
  ModelFamily f;
  f.gguf_name = "qwen2";
  f.hf_names = {"Qwen2ForCausalLM"};
  f.description = "Qwen2";
  f.qkv_bias = TensorRule::kRequired;
  return f;
}();

const ModelFamily kQwen3Family = [] {
  ModelFamily f;
  f.gguf_name = "qwen3";
  f.hf_names = {"Qwen3ForCausalLM"};
  f.description = "Qwen3";
  f.qk_norm = true;
  return f;
}();

namespace {

void qwen3moe_hparams(const GgufKeys& k, ModelConfig& c) {
  MoeConfig& m = c.moe;
  const std::optional<int64_t> n = k.get_int("expert_count"), used = k.get_int("expert_used_count"),
                               width = k.get_int("expert_feed_forward_length");
  if (!n || !used) k.fail("a qwen3moe model needs " + k.prefix + "expert_count and " + k.prefix + "expert_used_count");
  if (*n < 1 || *n > 4096) k.fail(k.prefix + "expert_count is " + std::to_string(*n) + ", outside [1, 4096]");
  if (*used < 1 || *used > *n)
    k.fail(k.prefix + "expert_used_count is " + std::to_string(*used) + ", outside [1, expert_count " +
           std::to_string(*n) + "]");
  m.num_experts = int(*n);
  m.num_experts_per_tok = int(*used);
  // The expert width; older files leave it out and the dense width is the experts' (llama.cpp:
  // n_ff_exp defaults to n_ff).
  m.expert_intermediate_size = int(width.value_or(c.intermediate_size));
  if (m.expert_intermediate_size < 1 || m.expert_intermediate_size > (1 << 20))
    k.fail(k.prefix + "expert_feed_forward_length is " + std::to_string(m.expert_intermediate_size));
  m.softmax_before_topk = true;
  m.norm_topk_prob = true;
  c.intermediate_size = 0;  // no dense MLP
  c.layer_specs.assign(std::size_t(c.n_layers), c.layer(0));
  for (LayerSpec& s : c.layer_specs) s.moe = true;
}

}  // namespace

const ModelFamily kQwen3MoeFamily = [] {
  ModelFamily f;
  f.gguf_name = "qwen3moe";
  f.hf_names = {"Qwen3MoeForCausalLM"};
  f.description = "Qwen3-MoE";
  f.qk_norm = true;
  f.moe = true;
  f.gguf_hparams = qwen3moe_hparams;
  return f;
}();

}  // namespace pagedchat
