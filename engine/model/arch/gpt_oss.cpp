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
// format description for the end-of-reply tokens. Hugging Face folders: transformers
// configuration_gpt_oss.py, modeling_gpt_oss.py and integrations/mxfp4.py, llama.cpp's
// conversion/gpt_oss.py for the names and the MXFP4 block order (docs/hf-layouts.md section 1).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/loader/load_util.h"
#include "engine/model/arch/registry.h"
#include "engine/model/rope_frequencies.h"

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

// GptOssConfig's defaults (transformers configuration_gpt_oss.py) for keys a config.json may
// leave out.
constexpr const char* kGptOssDefaults = R"({
  "num_local_experts": 32, "num_experts_per_tok": 4, "sliding_window": 128, "head_dim": 64,
  "rms_norm_eps": 1e-5, "attention_bias": true, "swiglu_limit": 7.0, "tie_word_embeddings": false,
  "rope_theta": 150000.0, "max_position_embeddings": 131072})";

// gpt-oss's config.json (GptOssForCausalLM): num_local_experts / num_experts_per_tok, the expert
// width intermediate_size (no dense MLP), layer_types (default: even layers slide), sliding_window,
// rope_scaling yarn (factor, beta_fast / beta_slow, original_max_position_embeddings, truncate;
// attention_factor default 0.1 ln(factor) + 1), swiglu_limit (7; alpha 1.702 is fixed in
// transformers), and quantization_config mxfp4 (the experts as *_blocks / *_scales).
void gpt_oss_hf_hparams(const HfKeys& k, ModelConfig& c) {
  const int n = c.n_layers;
  MoeConfig& m = c.moe;
  const std::optional<int64_t> count = k.get_int("num_local_experts", 1, 4096);
  std::optional<int64_t> top_k = k.get_int("num_experts_per_tok", 1, 4096);
  if (!top_k) top_k = k.get_int("experts_per_token", 1, 4096);
  if (!count || !top_k) k.fail("a gpt-oss model needs 'num_local_experts' and 'num_experts_per_tok'");
  if (*top_k > *count)
    k.fail("'num_experts_per_tok' " + std::to_string(*top_k) + " is above 'num_local_experts' " +
           std::to_string(*count));
  if (c.intermediate_size <= 0) k.fail("a gpt-oss model needs 'intermediate_size' (the experts' width)");
  m.num_experts = int(*count);
  m.num_experts_per_tok = int(*top_k);
  m.expert_intermediate_size = c.intermediate_size;
  m.softmax_before_topk = false;
  m.norm_topk_prob = false;
  m.biases = true;
  c.intermediate_size = 0;  // no dense MLP
  if (const auto limit = k.get_number("swiglu_limit"); limit && *limit != 7.0)
    k.fail("'swiglu_limit' " + std::to_string(*limit) + " is not supported (only 7)");
  if (k.has("hidden_act") && k.values["hidden_act"] != "silu")
    k.fail("hidden_act " + load::brief(k.values["hidden_act"]) + " is not supported (only \"silu\")");
  if (!k.get_bool("attention_bias").value_or(true))
    k.fail("'attention_bias' false is not supported for gpt-oss (q/k/v/o biases)");
  if (k.has("quantization_config")) {
    const nlohmann::json& qc = k.values["quantization_config"];
    const nlohmann::json method = qc.is_object() ? qc.value("quant_method", nlohmann::json()) : qc;
    if (method != "mxfp4")
      k.fail("quantized checkpoints ('quantization_config' method " + load::brief(method) +
             ") are not supported (gpt-oss: only its own mxfp4 experts)");
  }
  const std::optional<int64_t> window_key = k.get_int("sliding_window", 1, 1 << 24);
  if (!window_key) k.fail("a gpt-oss model needs 'sliding_window'");
  const int window = int(*window_key);
  // layer_types; absent: transformers' default, the even layers slide.
  std::vector<bool> sliding;
  if (std::optional<std::vector<bool>> given = hf_sliding_layers(k, n)) {
    sliding = std::move(*given);
  } else {
    for (int l = 0; l < n; ++l) sliding.push_back(l % 2 == 0);
  }
  // YaRN (transformers modeling_rope_utils._compute_yarn_parameters).
  c.rope_scaling = RopeScaling{};
  c.rope_attn_factor = 1.0f;
  if (k.has("rope_scaling")) {
    const HfKeys rs = k.nested(k.values["rope_scaling"]);
    nlohmann::json type = rs.values.value("rope_type", rs.values.value("type", nlohmann::json("default")));
    if (type == "yarn") {
      RopeScaling& s = c.rope_scaling;
      s.type = RopeScalingType::kYarn;
      const std::optional<double> factor = rs.get_number("factor");
      if (!factor || !(*factor >= 1.0)) k.fail("rope_scaling yarn needs a 'factor' of at least 1");
      s.factor = *factor;
      const std::optional<int64_t> orig = rs.get_int("original_max_position_embeddings", 1, load::kMaxPositions);
      if (!orig) k.fail("rope_scaling yarn needs 'original_max_position_embeddings'");
      s.original_max_position_embeddings = int(*orig);
      s.beta_fast = rs.get_number("beta_fast").value_or(32.0);
      s.beta_slow = rs.get_number("beta_slow").value_or(1.0);
      if (!(s.beta_fast > 0) || !(s.beta_slow > 0))
        k.fail("rope_scaling yarn: beta_fast and beta_slow must be positive");
      s.yarn_truncate = rs.get_bool("truncate").value_or(true);
      const double mscale = rs.get_number("attention_factor").value_or(yarn_mscale(s.factor));
      if (!(mscale > 0) || mscale > 16) k.fail("rope_scaling yarn: 'attention_factor' is outside (0, 16]");
      c.rope_attn_factor = float(mscale * mscale);  // on cos and sin of q and k: every score by its square
    } else if (type != "default") {
      k.fail("rope_scaling type " + load::brief(type) + " is not supported for gpt-oss (yarn or none)");
    }
  }
  c.activation = MlpActivation::kSwigluOai;
  c.attention_sinks = true;
  c.expand_layer_specs();
  for (int l = 0; l < n; ++l) {
    LayerSpec& spec = c.layer_specs[std::size_t(l)];
    spec.moe = true;
    spec.sliding_window = sliding[std::size_t(l)] ? window : 0;
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
  f.hf_classes = {{"GptOssForCausalLM", "gpt_oss", false, /*attention_bias=*/true}};
  f.hf_defaults = kGptOssDefaults;
  f.hf_own_keys = {"layer_types", "hidden_act", "rope_scaling", "num_local_experts", "quantization_config"};
  f.hf_hparams = gpt_oss_hf_hparams;
  f.end_of_generation_tokens = {"<|return|>", "<|call|>"};
  return f;
}();

}  // namespace pagedchat
