// gpt-oss (OpenAI gpt-oss-20b / -120b; GGUF "gpt-oss", transformers GptOssForCausalLM): every layer
// a mixture of experts with biases (router bias; top-k of the router logits, then a softmax over
// the k selected — MoeConfig::softmax_before_topk false; gate / up / down biases per expert) and
// the clamped SwiGLU (MlpActivation::kSwigluOai); attention with q/k/v/o biases, a learned sink
// logit per head in each softmax (attn_sinks), sliding window (attention.sliding_window, 128) on
// the even layers and full attention on the odd ones, NEOX RoPE with YaRN scaling (factor 32 from
// 4096 in the released files; gguf_model.cpp reads rope.scaling.*); post_attention_norm is the
// feed-forward's pre-norm. Expert matrices are MXFP4 (kernels/quant/dtype.h). The chat format is
// Harmony (the file's own template; <|return|> and <|call|> end a reply).
// Sources: transformers modeling_gpt_oss.py and configuration_gpt_oss.py (read, not copied);
// ik_llama.cpp src/llama-hparams.cpp (LLM_ARCH_OPENAI_MOE), src/llama-load-tensors.cpp and its
// gpt-oss graph for the GGUF names and the layer pattern (il % 2 == 0 slides); the OpenAI Harmony
// format description for the end-of-reply tokens.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/model/arch/registry.h"

namespace pagedchat {

namespace {

void gpt_oss_hparams(const GgufKeys& k, ModelConfig& c) {
  gguf_expert_hparams(k, c);
  c.moe.softmax_before_topk = false;  // softmax over the selected logits (sums to 1: no renormalising)
  c.moe.norm_topk_prob = false;
  c.moe.biases = true;
  c.activation = MlpActivation::kSwigluOai;
  c.attention_sinks = true;
  c.intermediate_size = 0;  // no dense MLP
  const int window = gguf_sliding_window(k);
  // Which layers slide: the file's pattern when it has one, else gpt-oss's rule (even layers).
  const std::optional<std::vector<int64_t>> pattern = k.get_per_layer("attention.sliding_window_pattern", c.n_layers);
  c.expand_layer_specs();
  for (int l = 0; l < c.n_layers; ++l) {
    LayerSpec& s = c.layer_specs[std::size_t(l)];
    s.moe = true;
    s.sliding_window = (pattern ? (*pattern)[std::size_t(l)] != 0 : l % 2 == 0) ? window : 0;
  }
}

}  // namespace

const ModelFamily kGptOssFamily = [] {
  ModelFamily f;
  f.gguf_name = "gpt-oss";
  f.description = "gpt-oss";
  f.qkv_bias = TensorRule::kRequired;
  f.out_bias = TensorRule::kOptional;
  f.moe = true;
  f.ffn_norm_name = "post_attention_norm";
  f.activation = MlpActivation::kSwigluOai;
  f.gguf_hparams = gpt_oss_hparams;
  f.end_of_generation_tokens = {"<|return|>", "<|call|>"};
  return f;
}();

}  // namespace pagedchat
