// The Qwen families: Qwen2 / Qwen2.5 (GGUF "qwen2", q/k/v biases), Qwen3 (GGUF "qwen3", per-head
// q/k RMSNorm, no biases) and Qwen3-MoE (GGUF "qwen3moe": Qwen3 attention, every layer a mixture of
// experts — softmax router, top-k renormalised (norm_topk_prob, which llama.cpp hard-codes for
// this architecture), SiLU-gated experts, no shared expert). GGUF files keep Hugging Face's row
// order and rotate halves (rope type NEOX).
// Sources: transformers modeling_qwen2.py, modeling_qwen3.py, modeling_qwen3_moe.py
// (Qwen3MoeSparseMoeBlock); ik_llama.cpp src/llama-hparams.cpp (LLM_ARCH_QWEN3MOE) and
// src/graphs/build_qwen3moe.cpp. config.json: transformers configuration_qwen2.py,
// configuration_qwen3.py, configuration_qwen3_moe.py.
#include <array>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/loader/load_util.h"
#include "engine/model/arch/registry.h"

namespace pagedchat {

namespace {

// Qwen2/Qwen3 (configuration_qwen2.py): layer i uses the window when use_sliding_window and
// i >= max_window_layers; refused when some layer would.
void qwen_hf_hparams(const HfKeys& k, ModelConfig& c) {
  if (!k.get_bool("use_sliding_window").value_or(false) || !k.has("sliding_window")) return;
  const int64_t mwl = k.get_int("max_window_layers", 0, INT64_MAX).value_or(28);
  if (mwl < c.n_layers)
    k.fail("use_sliding_window is true and layers " + std::to_string(mwl) + ".." + std::to_string(c.n_layers - 1) +
           " (max_window_layers " + std::to_string(mwl) + ") use sliding_window " +
           load::brief(k.values["sliding_window"]) + ": sliding-window attention is not implemented");
}

void qwen_hf_write(const ModelConfig&, nlohmann::json& config) { config["use_sliding_window"] = false; }

}  // namespace

// The expert keys of llama.cpp's MoE families (expert_count, expert_used_count,
// expert_feed_forward_length), checked; softmax before top-k, renormalised.
void gguf_expert_hparams(const GgufKeys& k, ModelConfig& c) {
  MoeConfig& m = c.moe;
  const std::optional<int64_t> n = k.get_int("expert_count"), used = k.get_int("expert_used_count"),
                               width = k.get_int("expert_feed_forward_length");
  if (!n || !used)
    k.fail("a " + k.prefix.substr(0, k.prefix.size() - 1) + " model needs " + k.prefix + "expert_count and " +
           k.prefix + "expert_used_count");
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
}

const ModelFamily kQwen2Family = [] {
  ModelFamily f;
  f.gguf_name = "qwen2";
  f.hf_classes = {{"Qwen2ForCausalLM", "qwen2"}};
  f.description = "Qwen2";
  f.qkv_bias = TensorRule::kRequired;
  f.hf_hparams = qwen_hf_hparams;
  f.hf_write_config = qwen_hf_write;
  return f;
}();

const ModelFamily kQwen3Family = [] {
  ModelFamily f;
  f.gguf_name = "qwen3";
  f.hf_classes = {{"Qwen3ForCausalLM", "qwen3", false, true}};
  f.description = "Qwen3";
  f.qk_norm = true;
  f.hf_head_dim = 128;  // Qwen3Config's default head_dim
  f.hf_hparams = qwen_hf_hparams;
  f.hf_write_config = qwen_hf_write;
  return f;
}();

void hf_mrope_sections(const HfKeys& k, ModelConfig& c, std::array<int64_t, 3> sections) {
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    if (!k.has(key)) continue;
    const nlohmann::json& r = k.values[key];
    if (!r.is_object()) k.fail(std::string("'") + key + "' is " + load::brief(r) + ", not an object");
    for (const char* t : {"rope_type", "type"})
      if (r.contains(t) && r[t] != "default" && r[t] != "mrope")
        k.fail(std::string("'") + key + "' rope_type " + load::brief(r[t]) + " is not supported for " +
               std::string(k.architecture) + " (its M-RoPE is \"default\")");
    if (!r.contains("mrope_section")) continue;
    const nlohmann::json& ms = r["mrope_section"];
    if (!ms.is_array() || ms.size() < 3 || ms.size() > 4)
      k.fail(std::string("'") + key + ".mrope_section' is " + load::brief(ms) + ", not 3 integers");
    for (std::size_t i = 0; i < ms.size(); ++i) {
      if (!ms[i].is_number_integer() || ms[i].get<int64_t>() < 0 || ms[i].get<int64_t>() > load::kMaxDim)
        k.fail(std::string("'") + key + ".mrope_section' holds " + load::brief(ms[i]));
      if (i < 3)
        sections[i] = ms[i].get<int64_t>();
      else if (ms[i].get<int64_t>() != 0)
        k.fail(std::string("'") + key + ".mrope_section' has a fourth section " + load::brief(ms[i]) +
               " (text, height and width take three)");
    }
    break;
  }
  if ((sections[0] + sections[1] + sections[2]) * 2 > c.rotary_dims() || sections[0] < 1)
    k.fail("mrope_section adds up to " + std::to_string(sections[0] + sections[1] + sections[2]) +
           " pairs; the head rotates " + std::to_string(c.rotary_dims() / 2) + " (and the first may not be 0)");
  for (int i = 0; i < 3; ++i) c.mrope_sections[std::size_t(i)] = int(sections[std::size_t(i)]);
}

namespace {

// Qwen3-VL's text model (transformers modeling_qwen3_vl.py Qwen3VLTextModel; llama.cpp's GGUF keys
// rope.dimension_sections and n_deepstack_layers as ik_llama.cpp's LLM_ARCH_QWEN3VL reads them):
// Qwen3's layers, M-RoPE over the sections' pairs, deepstack features added after the first
// n_deepstack_layers layers.
void qwen3vl_hparams(const GgufKeys& k, ModelConfig& c) {
  const std::optional<std::vector<int64_t>> sections = k.get_per_layer("rope.dimension_sections", 4);
  if (!sections)
    k.fail("a " + k.prefix.substr(0, k.prefix.size() - 1) + " model needs " + k.prefix +
           "rope.dimension_sections (the M-RoPE layout of its image positions)");
  int64_t sum = 0;
  for (std::size_t i = 0; i < sections->size(); ++i) {
    const int64_t s = (*sections)[i];
    if (s < 0 || s > load::kMaxDim) k.fail(k.prefix + "rope.dimension_sections holds " + std::to_string(s));
    if (i < 3) c.mrope_sections[i] = int(s);
    sum += s;
  }
  if (sum * 2 > c.rotary_dims() || c.mrope_sections[0] < 1)
    k.fail(k.prefix + "rope.dimension_sections add up to " + std::to_string(sum) + " pairs; the head rotates " +
           std::to_string(c.rotary_dims() / 2) + " (and the first section may not be empty)");
  const int64_t deepstack = k.get_int("n_deepstack_layers").value_or(0);
  if (deepstack < 0 || deepstack > c.n_layers)
    k.fail(k.prefix + "n_deepstack_layers is " + std::to_string(deepstack) + ", outside [0, block_count " +
           std::to_string(c.n_layers) + "]");
  c.deepstack_layers = int(deepstack);
}

// Qwen3VLForConditionalGeneration's text_config (transformers configuration_qwen3_vl.py
// Qwen3VLTextConfig, modeling_qwen3_vl.py Qwen3VLTextRotaryEmbedding): Qwen3's keys; M-RoPE
// pairs per component in rope_scaling.mrope_section (rope_parameters in newer configs; [24, 20, 20]
// when absent), always interleaved (apply_interleaved_mrope — mrope_interleaved is not read); one
// deepstack feature per entry of the vision tower's deepstack_visual_indexes (parse_hf_config
// keeps vision_config beside the text keys).
void qwen3vl_hf_hparams(const HfKeys& k, ModelConfig& c) {
  hf_mrope_sections(k, c, {24, 20, 20});
  c.deepstack_layers = 0;
  if (k.has("vision_config") && k.values["vision_config"].is_object()) {
    const nlohmann::json& vc = k.values["vision_config"];
    if (vc.contains("deepstack_visual_indexes")) {
      // One feature per entry; transformers adds feature k after text layer k, and drops those
      // past the last layer.
      const nlohmann::json& d = vc["deepstack_visual_indexes"];
      if (!d.is_array() || d.size() > 1024)
        k.fail("vision_config.deepstack_visual_indexes is " + load::brief(d) + ", not a list of vision block numbers");
      c.deepstack_layers = int(d.size());
    } else {
      c.deepstack_layers = 3;  // Qwen3VLVisionConfig's default [8, 16, 24]
    }
  }
}

}  // namespace

const ModelFamily kQwen3VlFamily = [] {
  ModelFamily f;
  f.gguf_name = "qwen3vl";
  // No text-only class: the text model of the multimodal one (the writer refuses qwen3vl).
  f.hf_classes = {{"Qwen3VLForConditionalGeneration", "qwen3_vl", true, true}};
  f.description = "Qwen3-VL";
  f.qk_norm = true;
  f.gguf_hparams = qwen3vl_hparams;
  f.hf_head_dim = 128;  // Qwen3VLTextConfig's default head_dim
  f.hf_own_keys = {"rope_scaling"};
  f.hf_hparams = qwen3vl_hf_hparams;
  return f;
}();

namespace {

void qwen3moe_hparams(const GgufKeys& k, ModelConfig& c) {
  gguf_expert_hparams(k, c);
  c.intermediate_size = 0;  // no dense MLP
  c.expand_layer_specs();
  for (LayerSpec& s : c.layer_specs) s.moe = true;
}

// Qwen3-MoE (modeling_qwen3_moe.py Qwen3MoeDecoderLayer / Qwen3MoeSparseMoeBlock): layer l is a
// mixture of experts unless listed in mlp_only_layers, when (l + 1) % decoder_sparse_step == 0;
// softmax router over all experts, top-k, renormalised when norm_topk_prob.
void qwen3moe_hf_hparams(const HfKeys& k, ModelConfig& c) {
  MoeConfig& m = c.moe;
  const char* count_key = k.has("num_experts") ? "num_experts" : "num_local_experts";
  const std::optional<int64_t> n = k.get_int(count_key, 1, 4096);
  const std::optional<int64_t> top_k = k.get_int("num_experts_per_tok", 1, 4096);
  const std::optional<int64_t> width = k.get_int("moe_intermediate_size", 1, 4 * load::kMaxDim);
  if (!n || !top_k || !width)
    k.fail("a Qwen3-MoE model needs 'num_experts', 'num_experts_per_tok' and 'moe_intermediate_size'");
  if (*top_k > *n)
    k.fail("'num_experts_per_tok' " + std::to_string(*top_k) + " is above the expert count (" + count_key + " " +
           std::to_string(*n) + "): top-k cannot choose more experts than there are");
  m.num_experts = int(*n);
  m.num_experts_per_tok = int(*top_k);
  m.expert_intermediate_size = int(*width);
  m.softmax_before_topk = true;
  m.norm_topk_prob = k.get_bool("norm_topk_prob").value_or(false);  // Qwen3MoeConfig's default
  const int64_t step = k.get_int("decoder_sparse_step", 1, load::kMaxLayers).value_or(1);
  std::vector<bool> dense(std::size_t(c.n_layers), false);
  if (k.has("mlp_only_layers")) {
    const nlohmann::json& mol = k.values["mlp_only_layers"];
    if (!mol.is_array()) k.fail("'mlp_only_layers' is " + load::brief(mol) + ", not a list of layer indices");
    for (const nlohmann::json& x : mol) {
      if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() >= c.n_layers)
        k.fail("'mlp_only_layers' holds " + load::brief(x) + ", not a layer index below num_hidden_layers " +
               std::to_string(c.n_layers));
      dense[std::size_t(x.get<int64_t>())] = true;
    }
  }
  c.expand_layer_specs();
  int moe_layers = 0;
  for (int l = 0; l < c.n_layers; ++l) {
    c.layer_specs[std::size_t(l)].moe = !dense[std::size_t(l)] && (l + 1) % step == 0;
    moe_layers += c.layer_specs[std::size_t(l)].moe;
  }
  if (moe_layers == c.n_layers) {
    c.intermediate_size = 0;  // no dense MLP (as the GGUF loader has it)
  } else if (c.intermediate_size == 0) {
    k.fail("missing required keys: intermediate_size (the dense MLP of the " + std::to_string(c.n_layers - moe_layers) +
           " layers without experts)");
  }
  qwen_hf_hparams(k, c);
}

void qwen3moe_hf_write(const ModelConfig& c, nlohmann::json& config) {
  nlohmann::json dense_layers = nlohmann::json::array();
  for (int l = 0; l < c.n_layers; ++l)
    if (!c.layer(l).moe) dense_layers.push_back(l);
  config["use_sliding_window"] = false;
  config["num_experts"] = c.moe.num_experts;
  config["num_experts_per_tok"] = c.moe.num_experts_per_tok;
  config["moe_intermediate_size"] = c.moe.expert_intermediate_size;
  config["norm_topk_prob"] = c.moe.norm_topk_prob;
  config["decoder_sparse_step"] = 1;
  config["mlp_only_layers"] = dense_layers;
}

}  // namespace

const ModelFamily kQwen3MoeFamily = [] {
  ModelFamily f;
  f.gguf_name = "qwen3moe";
  f.hf_classes = {{"Qwen3MoeForCausalLM", "qwen3_moe", false, true}};
  f.description = "Qwen3-MoE";
  f.qk_norm = true;
  f.moe = true;
  f.gguf_hparams = qwen3moe_hparams;
  f.hf_own_keys = {"num_experts", "num_local_experts"};
  f.hf_hparams = qwen3moe_hf_hparams;
  f.hf_write_config = qwen3moe_hf_write;
  return f;
}();

// Qwen3-VL-MoE's text model (GGUF "qwen3vlmoe": Qwen3-VL-30B-A3B, 235B-A22B; transformers
// modeling_qwen3_vl_moe.py; ik_llama.cpp LLM_ARCH_QWEN3VLMOE): Qwen3-MoE's layers with Qwen3-VL's
// M-RoPE sections and deepstack features.
const ModelFamily kQwen3VlMoeFamily = [] {
  ModelFamily f;
  f.gguf_name = "qwen3vlmoe";
  f.description = "Qwen3-VL-MoE";
  f.qk_norm = true;
  f.moe = true;
  f.gguf_hparams = [](const GgufKeys& k, ModelConfig& c) {
    qwen3moe_hparams(k, c);
    qwen3vl_hparams(k, c);
  };
  return f;
}();

}  // namespace pagedchat
