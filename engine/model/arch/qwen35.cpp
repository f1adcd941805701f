// Qwen3.5 / Qwen3.6 (GGUF "qwen35", and "qwen35moe" for the mixture-of-experts models): hybrid
// models whose layers are mostly Gated DeltaNet linear attention (a recurrent state per sequence,
// engine/model/layers/gated_delta_net.h), with a gated full-attention layer every
// full_attention_interval-th layer (layer l is full attention iff (l + 1) % interval == 0).
// The attention layers: q projection with a sigmoid output gate per head, q/k RMSNorm, partial
// rotary over rope.dimension_count dims with interleaved multi-section RoPE (for text every
// section carries the token position, so it is NEOX RoPE over those dims), GQA. Every layer:
// attn_norm -> mixer -> + residual; post_attention_norm (the FFN's pre-norm) -> SwiGLU MLP or
// experts -> + residual. nextn_predict_layers MTP blocks follow the main layers in the file.
// Sources: transformers modeling_qwen3_next.py / modeling_qwen3_5.py (read, not copied);
// ik_llama.cpp src/llama-hparams.cpp (LLM_ARCH_QWEN35), src/llama-load-tensors.cpp
// (create_qwen35_tensors) and src/graphs/build_qwen35.cpp, src/llama-delta-net.cpp for the GGUF
// conventions (key names, tensor names, the value-head to key-head order).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/loader/load_util.h"
#include "engine/model/arch/registry.h"

namespace pagedchat {

namespace {

void qwen35_common_hparams(const GgufKeys& k, ModelConfig& c) {
  // rope.dimension_sections: required (the reference refuses a file without it too).
  const std::optional<std::vector<int64_t>> sections = k.get_per_layer("rope.dimension_sections", 4);
  if (!sections)
    k.fail("a " + std::string(k.prefix, 0, k.prefix.size() - 1) + " model needs " + k.prefix +
           "rope.dimension_sections (the multi-section RoPE layout)");
  int64_t sum = 0;
  for (std::size_t i = 0; i < sections->size(); ++i) {
    const int64_t s = (*sections)[i];
    if (s < 0 || s > load::kMaxDim) k.fail(k.prefix + "rope.dimension_sections holds " + std::to_string(s));
    sum += s;
    if (i < 3) c.mrope_sections[i] = int(s);
  }
  // The sections split the rotated pairs (rotary_dims / 2): text positions put the same position
  // in every section (plain RoPE); an image's tokens get (t, h, w) as Qwen3-VL's (the model runner
  // fills them only in steps with images).
  if (sum * 2 > c.rotary_dims())
    k.fail(k.prefix + "rope.dimension_sections add up to " + std::to_string(sum) + " pairs, more than the " +
           std::to_string(c.rotary_dims() / 2) + " pairs rope.dimension_count " + std::to_string(c.rotary_dims()) +
           " rotates");
  c.attn_output_gate = true;
  c.qk_norm = true;

  // Gated DeltaNet shape.
  auto need = [&](const char* key, int64_t lo, int64_t hi) {
    const std::optional<int64_t> v = k.get_int(key);
    if (!v) k.fail("a hybrid Gated DeltaNet model needs " + k.prefix + key);
    if (*v < lo || *v > hi)
      k.fail(k.prefix + key + " is " + std::to_string(*v) + ", outside [" + std::to_string(lo) + ", " +
             std::to_string(hi) + "]");
    return int(*v);
  };
  LinearAttentionConfig& la = c.linear_attn;
  la.conv_kernel = need("ssm.conv_kernel", 1, 64);
  la.head_k_dim = need("ssm.state_size", 1, 4096);
  la.num_k_heads = need("ssm.group_count", 1, load::kMaxHeads);
  la.num_v_heads = need("ssm.time_step_rank", 1, load::kMaxHeads);
  const int inner = need("ssm.inner_size", 1, load::kMaxDim * 4);
  if (inner % la.num_v_heads != 0)
    k.fail(k.prefix + "ssm.inner_size " + std::to_string(inner) + " is not a multiple of ssm.time_step_rank " +
           std::to_string(la.num_v_heads) + " (the value heads)");
  la.head_v_dim = inner / la.num_v_heads;
  if (la.num_v_heads % la.num_k_heads != 0)
    k.fail(k.prefix + "ssm.time_step_rank " + std::to_string(la.num_v_heads) +
           " (value heads) is not a multiple of ssm.group_count " + std::to_string(la.num_k_heads) + " (key heads)");

  // The MTP blocks are the file's last nextn_predict_layers blocks.
  const int64_t nextn = k.get_int("nextn_predict_layers").value_or(0);
  if (nextn < 0 || nextn >= c.n_layers)
    k.fail(k.prefix + "nextn_predict_layers is " + std::to_string(nextn) + ", outside [0, block_count " +
           std::to_string(c.n_layers) + ")");
  c.nextn_predict_layers = int(nextn);
  c.n_layers -= int(nextn);

  const int64_t interval = k.get_int("full_attention_interval").value_or(4);
  if (interval < 1 || interval > load::kMaxLayers)
    k.fail(k.prefix + "full_attention_interval is " + std::to_string(interval));
  c.expand_layer_specs();
  for (int l = 0; l < c.n_layers; ++l)
    c.layer_specs[std::size_t(l)].mixer = (l + 1) % interval != 0 ? LayerMixer::kGatedDeltaNet : LayerMixer::kAttention;
}

void qwen35moe_hparams(const GgufKeys& k, ModelConfig& c) {
  qwen35_common_hparams(k, c);
  gguf_expert_hparams(k, c);
  MoeConfig& m = c.moe;
  const std::optional<int64_t> shared = k.get_int("expert_shared_feed_forward_length");
  m.shared_expert_intermediate_size = int(shared.value_or(c.intermediate_size));
  if (m.shared_expert_intermediate_size < 1 || m.shared_expert_intermediate_size > (1 << 20))
    k.fail(k.prefix + "expert_shared_feed_forward_length is " + std::to_string(m.shared_expert_intermediate_size));
  m.shared_expert_gated = true;
  c.intermediate_size = 0;
  for (LayerSpec& s : c.layer_specs) s.moe = true;
}

// Qwen3_5ForCausalLM and the text_config of Qwen3_5ForConditionalGeneration (transformers
// configuration_qwen3_5.py Qwen3_5TextConfig, modeling_qwen3_5.py): the leading
// partial_rotary_factor (0.25) of each attention head rotates, M-RoPE sections from
// rope_parameters.mrope_section ([11, 11, 10]; text positions make it plain RoPE), the Gated
// DeltaNet shape from the linear_* keys with the value heads in the checkpoint's grouped order
// (LinearAttentionConfig::v_heads_grouped: nothing is reordered at load), layer_types (else every
// full_attention_interval-th layer, 4, is full attention). The mtp.* block is not loaded from a
// folder (transformers ignores it too): its GGUF file keeps it for speculative decoding.
void qwen35_hf_hparams(const HfKeys& k, ModelConfig& c) {
  hf_partial_rotary(k, c, 0.25);
  hf_mrope_sections(k, c, {11, 11, 10});
  c.attn_output_gate = true;
  c.qk_norm = true;

  LinearAttentionConfig& la = c.linear_attn;
  auto need = [&](const char* key, int64_t hi) {
    const std::optional<int64_t> v = k.get_int(key, 1, hi);
    if (!v) k.fail(std::string("a hybrid Gated DeltaNet model needs '") + key + "'");
    return int(*v);
  };
  la.conv_kernel = need("linear_conv_kernel_dim", 64);
  la.head_k_dim = need("linear_key_head_dim", 4096);
  la.head_v_dim = need("linear_value_head_dim", 4096);
  la.num_k_heads = need("linear_num_key_heads", load::kMaxHeads);
  la.num_v_heads = need("linear_num_value_heads", load::kMaxHeads);
  la.v_heads_grouped = true;
  if (la.num_v_heads % la.num_k_heads != 0)
    k.fail("'linear_num_value_heads' " + std::to_string(la.num_v_heads) + " is not a multiple of " +
           "'linear_num_key_heads' " + std::to_string(la.num_k_heads));

  c.expand_layer_specs();
  if (k.has("layer_types")) {
    const nlohmann::json& lt = k.values["layer_types"];
    if (!lt.is_array() || lt.size() != std::size_t(c.n_layers))
      k.fail("'layer_types' is " + load::brief(lt) + ", not a list of num_hidden_layers " + std::to_string(c.n_layers) +
             " entries");
    for (int l = 0; l < c.n_layers; ++l) {
      const nlohmann::json& t = lt[std::size_t(l)];
      const std::string kind = t.is_string() ? t.get<std::string>() : "";
      if (kind != "linear_attention" && kind != "full_attention")
        k.fail("'layer_types' [" + std::to_string(l) + "] is " + load::brief(t) +
               ": a Qwen3.5 layer is \"linear_attention\" or \"full_attention\"");
      c.layer_specs[std::size_t(l)].mixer = kind == "linear_attention" ? LayerMixer::kGatedDeltaNet
                                                                       : LayerMixer::kAttention;
    }
  } else {
    const int64_t interval = k.get_int("full_attention_interval", 1, load::kMaxLayers).value_or(4);
    for (int l = 0; l < c.n_layers; ++l)
      c.layer_specs[std::size_t(l)].mixer = (l + 1) % interval != 0 ? LayerMixer::kGatedDeltaNet
                                                                    : LayerMixer::kAttention;
  }
  c.nextn_predict_layers = 0;
}

// Qwen3_5MoeForCausalLM / Qwen3_5MoeForConditionalGeneration (configuration_qwen3_5_moe.py;
// modeling_qwen3_5_moe.py Qwen3_5MoeSparseMoeBlock): every layer's FFN is num_experts experts of
// moe_intermediate_size, softmax over all, top num_experts_per_tok renormalised (the router always
// renormalises), plus a shared expert of shared_expert_intermediate_size behind
// sigmoid(shared_expert_gate).
void qwen35moe_hf_hparams(const HfKeys& k, ModelConfig& c) {
  qwen35_hf_hparams(k, c);
  MoeConfig& m = c.moe;
  const std::optional<int64_t> n = k.get_int("num_experts", 1, 4096), top_k = k.get_int("num_experts_per_tok", 1, 4096),
                               width = k.get_int("moe_intermediate_size", 1, 4 * load::kMaxDim),
                               shared = k.get_int("shared_expert_intermediate_size", 1, 4 * load::kMaxDim);
  if (!n || !top_k || !width || !shared)
    k.fail(
        "a Qwen3.5-MoE model needs 'num_experts', 'num_experts_per_tok', 'moe_intermediate_size' and "
        "'shared_expert_intermediate_size'");
  if (*top_k > *n)
    k.fail("'num_experts_per_tok' " + std::to_string(*top_k) + " is above the expert count (num_experts " +
           std::to_string(*n) + "): top-k cannot choose more experts than there are");
  m.num_experts = int(*n);
  m.num_experts_per_tok = int(*top_k);
  m.expert_intermediate_size = int(*width);
  m.softmax_before_topk = true;
  m.norm_topk_prob = true;
  m.shared_expert_intermediate_size = int(*shared);
  m.shared_expert_gated = true;
  c.intermediate_size = 0;
  for (LayerSpec& s : c.layer_specs) s.moe = true;
}

// Qwen3_5TextConfig's defaults for the keys a config.json may leave out.
constexpr std::string_view kQwen35HfDefaults =
    R"({"linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
        "linear_num_key_heads": 16, "linear_num_value_heads": 32})";
constexpr std::string_view kQwen35MoeHfDefaults =
    R"({"linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
        "linear_num_key_heads": 16, "linear_num_value_heads": 32, "moe_intermediate_size": 512,
        "shared_expert_intermediate_size": 512, "num_experts_per_tok": 8, "num_experts": 256})";

}  // namespace

const ModelFamily kQwen35Family = [] {
  ModelFamily f;
  f.gguf_name = "qwen35";
  f.hf_classes = {{"Qwen3_5ForCausalLM", "qwen3_5_text"}, {"Qwen3_5ForConditionalGeneration", "qwen3_5", true}};
  f.description = "Qwen3.5";
  f.qk_norm = true;
  f.ffn_norm_name = "post_attention_norm";
  f.attn_output_gate = true;
  f.linear_attention = true;
  f.mtp = true;
  f.gguf_hparams = qwen35_common_hparams;
  f.hf_defaults = kQwen35HfDefaults;
  f.hf_head_dim = 256;  // Qwen3_5TextConfig's default head_dim
  f.hf_own_keys = {"rope_scaling", "partial_rotary_factor", "layer_types"};
  f.hf_norm_weight_offset = 1.0f;  // Qwen3_5RMSNorm multiplies by 1 + w (not the DeltaNet's gated norm)
  f.hf_hparams = qwen35_hf_hparams;
  return f;
}();

const ModelFamily kQwen35MoeFamily = [] {
  ModelFamily f;
  f.gguf_name = "qwen35moe";
  f.hf_classes = {{"Qwen3_5MoeForCausalLM", "qwen3_5_moe_text"},
                  {"Qwen3_5MoeForConditionalGeneration", "qwen3_5_moe", true}};
  f.description = "Qwen3.5-MoE";
  f.qk_norm = true;
  f.moe = true;
  f.ffn_norm_name = "post_attention_norm";
  f.attn_output_gate = true;
  f.linear_attention = true;
  f.mtp = true;
  f.gguf_hparams = qwen35moe_hparams;
  f.hf_defaults = kQwen35MoeHfDefaults;
  f.hf_head_dim = 256;
  f.hf_own_keys = {"rope_scaling", "partial_rotary_factor", "layer_types", "num_experts"};
  f.hf_norm_weight_offset = 1.0f;
  f.hf_hparams = qwen35moe_hf_hparams;
  return f;
}();

}  // namespace pagedchat
