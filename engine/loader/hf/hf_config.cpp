#include "engine/loader/hf/hf_config.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "engine/loader/load_util.h"

using json = nlohmann::json;

namespace pagedchat {
namespace {

using load::brief;
using load::fail_in;
using load::kMaxDim;
using load::kMaxHeads;
using load::kMaxLayers;
using load::kMaxPositions;
using load::kMaxVocab;

json parse_object(const std::string& text, const std::string& name) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    fail_in(name, std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object()) fail_in(name, "not a JSON object");
  return j;
}

bool present(const json& j, const char* key) { return j.contains(key) && !j[key].is_null(); }

/// j[key] as an integer in [lo, hi]; nullopt when absent or null.
std::optional<int64_t> get_int(const json& j, const char* key, const std::string& name, int64_t lo, int64_t hi) {
  if (!present(j, key)) return std::nullopt;
  const json& v = j[key];
  if (!v.is_number_integer()) fail_in(name, std::string("'") + key + "' is " + brief(v) + ", not an integer");
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))
    fail_in(name, std::string("'") + key + "' is out of range");
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi)
    fail_in(name, std::string("'") + key + "' " + std::to_string(x) + " out of range [" + std::to_string(lo) + ", " +
                      std::to_string(hi) + "]");
  return x;
}

std::optional<double> get_number(const json& j, const char* key, const std::string& name) {
  if (!present(j, key)) return std::nullopt;
  const json& v = j[key];
  if (!v.is_number()) fail_in(name, std::string("'") + key + "' is " + brief(v) + ", not a number");
  const double x = v.get<double>();
  if (!std::isfinite(x)) fail_in(name, std::string("'") + key + "' is not finite");
  return x;
}

std::optional<bool> get_bool(const json& j, const char* key, const std::string& name) {
  if (!present(j, key)) return std::nullopt;
  if (!j[key].is_boolean()) fail_in(name, std::string("'") + key + "' is " + brief(j[key]) + ", not true or false");
  return j[key].get<bool>();
}

/// An int or a non-empty list of ints (eos_token_id), each in [0, hi).
std::vector<int> get_id_list(const json& j, const char* key, const std::string& name, int64_t hi) {
  std::vector<int> ids;
  if (!present(j, key)) return ids;
  const json& v = j[key];
  auto one = [&](const json& x) {
    if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() >= hi)
      fail_in(name,
              std::string("'") + key + "' holds " + brief(x) + ", not a token id in [0, " + std::to_string(hi) + ")");
    ids.push_back(int(x.get<int64_t>()));
  };
  if (v.is_array()) {
    if (v.empty()) fail_in(name, std::string("'") + key + "' is an empty list");
    for (const json& x : v) one(x);
  } else {
    one(v);
  }
  return ids;
}

/// A special token: "<s>", or an AddedToken object {"content": "<s>", ...}; empty when absent.
std::string get_token(const json& j, const char* key, const std::string& name) {
  if (!present(j, key)) return {};
  const json& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  fail_in(name, std::string("'") + key + "' is " + brief(v) + ", not a token string or {\"content\": ...}");
}

}  // namespace

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw std::runtime_error("cannot read '" + path + "'");
  return ss.str();
}

namespace {

// The supported transformers classes, their model_type and the family (GGUF name) they compute.
struct HfFamily {
  const char* architecture;
  const char* model_type;
  const char* family;
};
constexpr HfFamily kHfFamilies[] = {
    {"LlamaForCausalLM", "llama", "llama"},
    {"MistralForCausalLM", "mistral", "llama"},
    {"Qwen2ForCausalLM", "qwen2", "qwen2"},
    {"Qwen3ForCausalLM", "qwen3", "qwen3"},
    {"Qwen3MoeForCausalLM", "qwen3_moe", "qwen3moe"},
    {"Gemma3ForCausalLM", "gemma3_text", "gemma3"},
    {"Gemma3ForConditionalGeneration", "gemma3", "gemma3"},
    {"Phi3ForCausalLM", "phi3", "phi3"},
    {"SmolLM3ForCausalLM", "smollm3", "smollm3"},
    {"Exaone4ForCausalLM", "exaone4", "exaone4"},
};
constexpr const char* kSupported =
    "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM, "
    "Gemma3ForCausalLM, Gemma3ForConditionalGeneration (text only), Phi3ForCausalLM, SmolLM3ForCausalLM, "
    "Exaone4ForCausalLM";

// Gemma3TextConfig's defaults (transformers configuration_gemma3.py): a Gemma3ForConditionalGeneration
// config.json's text_config leaves most of them out (gemma-3-4b-it gives hidden_size,
// intermediate_size, num_hidden_layers, rope_scaling and sliding_window only).
json gemma3_text_defaults() {
  return {{"vocab_size", 262208},
          {"hidden_size", 2304},
          {"intermediate_size", 9216},
          {"num_hidden_layers", 26},
          {"num_attention_heads", 8},
          {"num_key_value_heads", 4},
          {"head_dim", 256},
          {"hidden_activation", "gelu_pytorch_tanh"},
          {"max_position_embeddings", 131072},
          {"rms_norm_eps", 1e-6},
          {"tie_word_embeddings", true},
          {"rope_theta", 1000000.0},
          {"attention_bias", false},
          {"query_pre_attn_scalar", 256},
          {"sliding_window", 4096},
          {"rope_local_base_freq", 10000.0},
          {"sliding_window_pattern", 6}};
}

// transformers 5 writes RoPE as rope_parameters: {rope_theta, rope_type, <scaling keys>,
// partial_rotary_factor}, or one such object per layer type (Gemma 3: full_attention for the global
// layers, sliding_attention for the local ones). Copied into the older keys this parser reads
// (rope_theta, rope_scaling, partial_rotary_factor, rope_local_base_freq) where those are absent.
void adopt_rope_parameters(json& j, const std::string& name) {
  if (!present(j, "rope_parameters")) return;
  const json rp = j["rope_parameters"];
  if (!rp.is_object()) fail_in(name, "'rope_parameters' is " + brief(rp) + ", not an object");
  auto adopt = [&](const json& p, const char* theta_key, bool scaling) {
    if (!p.is_object()) fail_in(name, "'rope_parameters' holds " + brief(p) + ", not an object");
    if (p.contains("rope_theta") && !present(j, theta_key)) j[theta_key] = p["rope_theta"];
    if (!scaling) return;
    if (p.contains("partial_rotary_factor") && !present(j, "partial_rotary_factor"))
      j["partial_rotary_factor"] = p["partial_rotary_factor"];
    const bool scaled = (p.contains("rope_type") && p["rope_type"] != "default") ||
                        (p.contains("type") && p["type"] != "default");
    if (scaled && !present(j, "rope_scaling")) j["rope_scaling"] = p;
  };
  if (rp.contains("full_attention") || rp.contains("sliding_attention")) {
    if (rp.contains("full_attention")) adopt(rp["full_attention"], "rope_theta", true);
    if (rp.contains("sliding_attention")) adopt(rp["sliding_attention"], "rope_local_base_freq", false);
  } else {
    adopt(rp, "rope_theta", true);
  }
}

/// layer_types: one "sliding_attention" / "full_attention" per layer, as sliding flags; nullopt
/// when absent. Another kind of layer is refused by name.
std::optional<std::vector<bool>> sliding_layers(const json& j, int n_layers, const std::string& name) {
  if (!present(j, "layer_types")) return std::nullopt;
  const json& lt = j["layer_types"];
  if (!lt.is_array() || lt.size() != std::size_t(n_layers))
    fail_in(name, "'layer_types' is not a list of " + std::to_string(n_layers) + " layer kinds (num_hidden_layers)");
  std::vector<bool> sliding;
  for (std::size_t l = 0; l < lt.size(); ++l) {
    const json& k = lt[l];
    if (!k.is_string() || (k != "sliding_attention" && k != "full_attention"))
      fail_in(name, "'layer_types' [" + std::to_string(l) + "] is " + brief(k) +
                        ": an unknown layer type (supported: \"sliding_attention\", \"full_attention\")");
    sliding.push_back(k == "sliding_attention");
  }
  return sliding;
}

// rope_scaling (transformers modeling_rope_utils.py): null, "default", "linear" and "llama3" are
// computed exactly; every other type is refused by name.
RopeScaling parse_rope_scaling(const json& j, const std::string& name) {
  RopeScaling s;
  if (!present(j, "rope_scaling")) return s;
  const json& rs = j["rope_scaling"];
  if (!rs.is_object()) fail_in(name, "'rope_scaling' is " + brief(rs) + ", not an object or null");
  std::string type;
  for (const char* k : {"rope_type", "type"})
    if (rs.contains(k) && rs[k].is_string()) {
      type = rs[k].get<std::string>();
      break;
    }
  if (type.empty()) fail_in(name, "'rope_scaling' " + brief(rs) + " names no rope_type");
  if (type == "default") return s;
  auto number = [&](const char* key) {
    if (!rs.contains(key) || !rs[key].is_number())
      fail_in(name, "rope_scaling type '" + type + "' needs a number '" + key + "', got " +
                        (rs.contains(key) ? brief(rs[key]) : "none"));
    const double v = rs[key].get<double>();
    if (!std::isfinite(v) || !(v > 0))
      fail_in(name, "rope_scaling '" + std::string(key) + "' " + brief(rs[key]) + " must be positive");
    return v;
  };
  if (type == "linear") {
    s.type = RopeScalingType::kLinear;
    s.factor = number("factor");
    return s;
  }
  if (type == "llama3") {
    s.type = RopeScalingType::kLlama3;
    s.factor = number("factor");
    s.low_freq_factor = number("low_freq_factor");
    s.high_freq_factor = number("high_freq_factor");
    const double orig = number("original_max_position_embeddings");
    if (orig != std::floor(orig) || orig > double(kMaxPositions))
      fail_in(name, "rope_scaling 'original_max_position_embeddings' " + brief(rs["original_max_position_embeddings"]) +
                        " is not a position count");
    s.original_max_position_embeddings = int(orig);
    if (!(s.high_freq_factor > s.low_freq_factor))
      fail_in(name, "rope_scaling llama3: high_freq_factor must be greater than low_freq_factor");
    return s;
  }
  fail_in(name, "rope_scaling type '" + type + "' is not supported (supported: default, linear, llama3)");
}

}  // namespace

HfModelConfig parse_hf_config(const std::string& json_text, const std::string& name) {
  const json top = parse_object(json_text, name);
  HfModelConfig out;

  // Architecture.
  const HfFamily* fam = nullptr;
  if (present(top, "architectures")) {
    const json& a = top["architectures"];
    if (!a.is_array()) fail_in(name, "'architectures' is " + brief(a) + ", not a list");
    std::string seen;
    for (const json& x : a) {
      if (!x.is_string()) fail_in(name, "'architectures' holds " + brief(x) + ", not a name");
      const std::string s = x.get<std::string>();
      for (const HfFamily& f : kHfFamilies)
        if (s == f.architecture) fam = &f;
      if (fam) break;
      seen += (seen.empty() ? "" : ", ") + s;
    }
    if (!fam)
      fail_in(name, "architecture " + (seen.empty() ? std::string("[]") : seen) +
                        " is not supported (supported: " + kSupported + ")");
  } else {
    const std::string type = top.value("model_type", json()).is_string() ? top["model_type"].get<std::string>() : "";
    for (const HfFamily& f : kHfFamilies)
      if (type == f.model_type) fam = &f;
    if (!fam)
      fail_in(name,
              "no 'architectures' and model_type '" + type + "' is not supported (supported: " + kSupported + ")");
  }
  out.architecture = fam->architecture;
  const std::string family = fam->family;
  const bool qwen = family == "qwen2" || family == "qwen3" || family == "qwen3moe";

  // The keys of the text model: config.json itself, or (Gemma3ForConditionalGeneration) its
  // text_config, with the special token ids of the top level; Gemma 3 with transformers' defaults.
  json j = top;
  if (out.architecture == std::string("Gemma3ForConditionalGeneration")) {
    if (!present(top, "text_config") || !top["text_config"].is_object())
      fail_in(name, "Gemma3ForConditionalGeneration without a 'text_config' object: the text model is unknown");
    j = top["text_config"];
    for (const char* k : {"bos_token_id", "eos_token_id", "pad_token_id"})
      if (top.contains(k)) j[k] = top[k];
    out.multimodal = true;
  }
  adopt_rope_parameters(j, name);
  if (family == "gemma3") {
    const json defaults = gemma3_text_defaults();
    for (auto it = defaults.begin(); it != defaults.end(); ++it)
      if (!j.contains(it.key())) j[it.key()] = it.value();
  }

  std::string missing;
  for (const char* key : {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "vocab_size",
                          "rms_norm_eps", "max_position_embeddings"})
    if (!present(j, key) && !(family == "qwen3moe" && std::string(key) == "intermediate_size"))
      missing += (missing.empty() ? "" : ", ") + std::string(key);
  if (!missing.empty()) fail_in(name, "missing required keys: " + missing);

  ModelConfig& c = out.config;
  c.architecture = family;
  c.hidden_size = int(*get_int(j, "hidden_size", name, 1, kMaxDim));
  c.intermediate_size = int(get_int(j, "intermediate_size", name, 1, 4 * kMaxDim).value_or(0));
  c.n_layers = int(*get_int(j, "num_hidden_layers", name, 1, kMaxLayers));
  c.n_heads = int(*get_int(j, "num_attention_heads", name, 1, kMaxHeads));
  c.n_kv_heads = int(get_int(j, "num_key_value_heads", name, 1, c.n_heads).value_or(c.n_heads));
  c.vocab_size = int(*get_int(j, "vocab_size", name, 1, kMaxVocab));
  c.max_seq_len = int(*get_int(j, "max_position_embeddings", name, 1, kMaxPositions));
  c.max_seq_len_is_soft = true;
  if (c.n_heads % c.n_kv_heads != 0)
    fail_in(name, "num_attention_heads " + std::to_string(c.n_heads) + " is not a multiple of num_key_value_heads " +
                      std::to_string(c.n_kv_heads));
  if (const auto hd = get_int(j, "head_dim", name, 1, kMaxDim)) {
    c.head_dim = int(*hd);
  } else if (family == "qwen3") {
    c.head_dim = 128;  // Qwen3Config's default head_dim (transformers configuration_qwen3.py)
  } else {
    if (c.hidden_size % c.n_heads != 0)
      fail_in(name, "hidden_size " + std::to_string(c.hidden_size) + " is not a multiple of num_attention_heads " +
                        std::to_string(c.n_heads) + " (and no head_dim is given)");
    c.head_dim = c.hidden_size / c.n_heads;
  }
  if (c.head_dim % 2 != 0) fail_in(name, "head_dim " + std::to_string(c.head_dim) + " is odd (RoPE needs pairs)");

  const double eps = *get_number(j, "rms_norm_eps", name);
  if (!(eps > 0 && eps < 1)) fail_in(name, "'rms_norm_eps' " + std::to_string(eps) + " out of range (0, 1)");
  c.norm_eps = float(eps);
  const double theta = get_number(j, "rope_theta", name).value_or(10000.0);
  if (!(theta > 1)) fail_in(name, "'rope_theta' " + std::to_string(theta) + " must be greater than 1");
  c.rope_theta = float(theta);
  c.rope_style = RopeStyle::kNeox;
  if (family != "phi3") c.rope_scaling = parse_rope_scaling(j, name);
  c.shared_classifier = get_bool(j, "tie_word_embeddings", name).value_or(false);
  c.stop_on_bos = false;

  // Biases and norms per family (transformers' modeling_*.py): Qwen2 has q/k/v biases always;
  // Llama, Qwen3, Qwen3-MoE and SmolLM3 q/k/v and o biases when attention_bias (Mistral never);
  // Qwen3, Qwen3-MoE, Gemma 3 and EXAONE 4 q_norm/k_norm.
  const bool attention_bias = (family == "llama" && out.architecture == "LlamaForCausalLM") || family == "qwen3" ||
                                      family == "qwen3moe" || family == "smollm3"
                                  ? get_bool(j, "attention_bias", name).value_or(false)
                                  : false;
  c.attention_qkv_bias = family == "qwen2" || attention_bias;
  c.attention_out_bias = attention_bias;
  c.qk_norm = family == "qwen3" || family == "qwen3moe" || family == "gemma3" || family == "exaone4";
  if (family == "exaone4") {
    // EXAONE 4 (modeling_exaone4.py, engine/model/arch/exaone4.cpp): post-norm-only blocks; with a
    // sliding_window, layer_types says which layers slide; RoPE only on those (all layers when
    // there is no window).
    c.pre_norm = false;
    c.post_norm = true;
    int64_t window = present(j, "sliding_window") ? *get_int(j, "sliding_window", name, 0, 1 << 24) : 0;
    if (window > 0) {
      c.layer_specs.assign(std::size_t(c.n_layers), c.layer(0));
      const json* lt = present(j, "layer_types") ? &j["layer_types"] : nullptr;
      if (lt && (!lt->is_array() || lt->size() != std::size_t(c.n_layers)))
        fail_in(name, "'layer_types' is not a list of " + std::to_string(c.n_layers) + " layer kinds");
      // sliding_window_pattern: a period (every period-th layer global) or, as the 32B's
      // config.json spells it, a string repeated over the layers ("LLLG": L local, G global).
      std::string pattern = "LLLG";
      if (present(j, "sliding_window_pattern")) {
        const json& p = j["sliding_window_pattern"];
        if (p.is_string() && !p.get<std::string>().empty() &&
            p.get<std::string>().find_first_not_of("LG") == std::string::npos) {
          pattern = p.get<std::string>();
        } else {
          const int64_t period = *get_int(j, "sliding_window_pattern", name, 1, kMaxLayers);
          pattern.assign(std::size_t(period - 1), 'L');
          pattern += 'G';
        }
      }
      for (int l = 0; l < c.n_layers; ++l) {
        bool sliding = pattern[std::size_t(l) % pattern.size()] == 'L';
        if (lt) {
          const json& k = (*lt)[std::size_t(l)];
          if (!k.is_string() || (k != "sliding_attention" && k != "full_attention"))
            fail_in(name, "'layer_types' [" + std::to_string(l) + "] is " + brief(k) +
                              ", not \"sliding_attention\" or \"full_attention\"");
          sliding = k == "sliding_attention";
        }
        c.layer_specs[std::size_t(l)].sliding_window = sliding ? int(window) : 0;
        c.layer_specs[std::size_t(l)].use_rope = sliding;
      }
    }
  }
  if (family == "gemma3") {
    // Gemma 3 (modeling_gemma3.py, engine/model/arch/gemma3.cpp): sandwich norms whose weights are
    // stored as w for (1 + w), GELU-tanh, embeddings times sqrt(hidden_size), sliding layers with
    // their own RoPE base and no rope_scaling, global layers with rope_theta and rope_scaling.
    c.pre_norm = true;
    c.post_norm = true;
    c.activation = MlpActivation::kGeluTanh;
    out.norm_weight_offset = 1.0f;
    const json act = present(j, "hidden_activation") ? j["hidden_activation"] : json("gelu_pytorch_tanh");
    if (!act.is_string() || act.get<std::string>() != "gelu_pytorch_tanh")
      fail_in(name, "hidden_activation " + brief(act) + " is not supported (only \"gelu_pytorch_tanh\")");
    if (get_bool(j, "attention_bias", name).value_or(false))
      fail_in(name, "'attention_bias' true is not supported for Gemma 3 (no attention bias terms)");
    if (present(j, "attn_logit_softcapping"))
      fail_in(name, "'attn_logit_softcapping' " + brief(j["attn_logit_softcapping"]) +
                        " (attention logit soft-capping) is not supported");
    if (const auto cap = get_number(j, "final_logit_softcapping", name)) {
      if (!(*cap > 0)) fail_in(name, "'final_logit_softcapping' " + std::to_string(*cap) + " must be positive");
      c.final_logit_softcap = float(*cap);
    }
    const std::optional<int64_t> window = get_int(j, "sliding_window", name, 1, 1 << 24);
    if (!window) fail_in(name, "a Gemma 3 model needs 'sliding_window' (its local layers' window)");
    std::optional<std::vector<bool>> sliding = sliding_layers(j, c.n_layers, name);
    if (!sliding) {
      // transformers: layer i is global iff (i + 1) % sliding_window_pattern == 0.
      const int64_t period = get_int(j, "sliding_window_pattern", name, 1, kMaxLayers).value_or(6);
      sliding.emplace();
      for (int l = 0; l < c.n_layers; ++l) sliding->push_back((l + 1) % period != 0);
    }
    const double local = get_number(j, "rope_local_base_freq", name).value_or(10000.0);
    if (!(local > 1)) fail_in(name, "'rope_local_base_freq' " + std::to_string(local) + " must be greater than 1");
    c.layer_specs.assign(std::size_t(c.n_layers), LayerSpec{});
    for (int l = 0; l < c.n_layers; ++l) {
      LayerSpec& s = c.layer_specs[std::size_t(l)];
      const bool slides = (*sliding)[std::size_t(l)];
      s.sliding_window = slides ? int(*window) : 0;
      s.rope_theta = slides ? double(float(local)) : double(c.rope_theta);
      s.rope_scaled = !slides;
    }
    c.embedding_scale = std::sqrt(float(c.hidden_size));
    // Scores times query_pre_attn_scalar^-0.5; 0 (the default 1 / sqrt(head_dim)) when it is head_dim.
    const double qpas = get_number(j, "query_pre_attn_scalar", name).value_or(double(c.head_dim));
    if (!(qpas > 0)) fail_in(name, "'query_pre_attn_scalar' " + std::to_string(qpas) + " must be positive");
    if (qpas != double(c.head_dim)) c.attention_scale = 1.0f / std::sqrt(float(qpas));
  }
  if (family == "qwen3moe") {
    // Qwen3-MoE (modeling_qwen3_moe.py Qwen3MoeDecoderLayer / Qwen3MoeSparseMoeBlock): layer l is a
    // mixture of experts unless listed in mlp_only_layers, when (l + 1) % decoder_sparse_step == 0;
    // softmax router over all experts, top-k, renormalised when norm_topk_prob.
    MoeConfig& m = c.moe;
    const char* count_key = present(j, "num_experts") ? "num_experts" : "num_local_experts";
    const std::optional<int64_t> n = get_int(j, count_key, name, 1, 4096);
    const std::optional<int64_t> k = get_int(j, "num_experts_per_tok", name, 1, 4096);
    const std::optional<int64_t> width = get_int(j, "moe_intermediate_size", name, 1, 4 * kMaxDim);
    if (!n || !k || !width)
      fail_in(name, "a Qwen3-MoE model needs 'num_experts', 'num_experts_per_tok' and 'moe_intermediate_size'");
    if (*k > *n)
      fail_in(name, "'num_experts_per_tok' " + std::to_string(*k) + " is above the expert count (" + count_key + " " +
                        std::to_string(*n) + "): top-k cannot choose more experts than there are");
    m.num_experts = int(*n);
    m.num_experts_per_tok = int(*k);
    m.expert_intermediate_size = int(*width);
    m.softmax_before_topk = true;
    m.norm_topk_prob = get_bool(j, "norm_topk_prob", name).value_or(false);  // Qwen3MoeConfig's default
    const int64_t step = get_int(j, "decoder_sparse_step", name, 1, kMaxLayers).value_or(1);
    std::vector<bool> dense(std::size_t(c.n_layers), false);
    if (present(j, "mlp_only_layers")) {
      const json& mol = j["mlp_only_layers"];
      if (!mol.is_array()) fail_in(name, "'mlp_only_layers' is " + brief(mol) + ", not a list of layer indices");
      for (const json& x : mol) {
        if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() >= c.n_layers)
          fail_in(name, "'mlp_only_layers' holds " + brief(x) + ", not a layer index below num_hidden_layers " +
                            std::to_string(c.n_layers));
        dense[std::size_t(x.get<int64_t>())] = true;
      }
    }
    c.layer_specs.assign(std::size_t(c.n_layers), c.layer(0));
    int moe_layers = 0;
    for (int l = 0; l < c.n_layers; ++l) {
      c.layer_specs[std::size_t(l)].moe = !dense[std::size_t(l)] && (l + 1) % step == 0;
      moe_layers += c.layer_specs[std::size_t(l)].moe;
    }
    if (moe_layers == c.n_layers) {
      c.intermediate_size = 0;  // no dense MLP (as the GGUF loader has it)
    } else if (c.intermediate_size == 0) {
      fail_in(name, "missing required keys: intermediate_size (the dense MLP of the " +
                        std::to_string(c.n_layers - moe_layers) + " layers without experts)");
    }
  }
  if (family == "phi3") {
    // Phi-3 / Phi-4-mini (modeling_phi3.py; modeling_rope_utils.py _compute_longrope_parameters):
    // the leading int(head_dim * partial_rotary_factor) dims rotate; LongRoPE divides the
    // frequencies by short_factor (or long_factor past original_max_position_embeddings) and scales
    // cos/sin by the attention factor, which the engine applies to the scores (squared).
    const double prf = get_number(j, "partial_rotary_factor", name).value_or(1.0);
    const int rot = int(double(c.head_dim) * prf);
    if (!(prf > 0 && prf <= 1) || rot < 2 || rot % 2 != 0)
      fail_in(name, "'partial_rotary_factor' " + std::to_string(prf) + " rotates " + std::to_string(rot) + " of " +
                        std::to_string(c.head_dim) + " dims (must be an even number, at least 2)");
    if (rot != c.head_dim) c.rotary_dim = rot;
    if (present(j, "rope_scaling")) {
      const json& rs = j["rope_scaling"];
      if (!rs.is_object()) fail_in(name, "'rope_scaling' is " + brief(rs) + ", not an object or null");
      std::string type;
      for (const char* key : {"rope_type", "type"})
        if (rs.contains(key) && rs[key].is_string()) {
          type = rs[key].get<std::string>();
          break;
        }
      if (type != "default") {
        if (type != "longrope" && type != "su")
          fail_in(name, "rope_scaling type '" + type + "' is not supported for Phi-3 (supported: default, longrope)");
        const int half = c.rotary_dims() / 2;
        auto factors = [&](const char* key) {
          if (!rs.contains(key) || !rs[key].is_array() || rs[key].size() != std::size_t(half))
            fail_in(name, std::string("rope_scaling longrope needs '") + key + "': a list of " + std::to_string(half) +
                              " numbers (rotated dims / 2), got " + (rs.contains(key) ? brief(rs[key]) : "none"));
          std::vector<float> v;
          for (const json& x : rs[key]) {
            if (!x.is_number() || !(x.get<double>() > 0) || !std::isfinite(x.get<double>()))
              fail_in(name, std::string("rope_scaling '") + key + "' holds " + brief(x) + ", not a positive number");
            v.push_back(float(x.get<double>()));
          }
          return v;
        };
        c.rope_freq_factors = factors("short_factor");
        c.rope_freq_factors_long = factors("long_factor");
        const json& orig_src = rs.contains("original_max_position_embeddings") ? rs : j;
        const int64_t original =
            get_int(orig_src, "original_max_position_embeddings", name, 1, kMaxPositions).value_or(4096);
        c.rope_long_threshold = int(original);
        double attention = 1.0;
        if (const auto af = get_number(rs, "attention_factor", name)) {
          if (!(*af > 0) || *af > 16)
            fail_in(name, "rope_scaling 'attention_factor' " + std::to_string(*af) + " is outside (0, 16]");
          attention = *af;
        } else if (const double s = double(c.max_seq_len) / double(original); s > 1.0) {
          attention = std::sqrt(1.0 + std::log(s) / std::log(double(original)));
        }
        // As the GGUF loader: the factor as float32 (rope.scaling.attn_factor), squared.
        const double af32 = double(float(attention));
        c.rope_attn_factor = float(af32 * af32);
      }
    }
    if (const auto w = get_int(j, "sliding_window", name, 1, 1 << 24); w && *w < c.max_seq_len) {
      c.layer_specs.assign(std::size_t(c.n_layers), c.layer(0));
      for (LayerSpec& s : c.layer_specs) s.sliding_window = int(*w);
    }
  }
  if (family == "smollm3") {
    // SmolLM3 (modeling_smollm3.py: use_rope = config.no_rope_layers[layer_idx]): RoPE on layer l
    // iff no_rope_layers[l] is 1; without the list, every no_rope_layer_interval-th layer has none.
    std::vector<bool> rope;
    if (present(j, "no_rope_layers")) {
      const json& nr = j["no_rope_layers"];
      if (!nr.is_array() || nr.size() < std::size_t(c.n_layers))
        fail_in(name, "'no_rope_layers' is not a list of at least " + std::to_string(c.n_layers) +
                          " entries (num_hidden_layers)");
      for (int l = 0; l < c.n_layers; ++l) {
        const json& x = nr[std::size_t(l)];
        if (!x.is_number_integer() || (x.get<int64_t>() != 0 && x.get<int64_t>() != 1))
          fail_in(name, "'no_rope_layers' [" + std::to_string(l) + "] is " + brief(x) + ", not 0 (NoPE) or 1 (RoPE)");
        rope.push_back(x.get<int64_t>() == 1);
      }
    } else {
      const int64_t interval = get_int(j, "no_rope_layer_interval", name, 1, kMaxLayers).value_or(4);
      for (int l = 0; l < c.n_layers; ++l) rope.push_back((l + 1) % interval != 0);
    }
    c.layer_specs.assign(std::size_t(c.n_layers), c.layer(0));
    for (int l = 0; l < c.n_layers; ++l) c.layer_specs[std::size_t(l)].use_rope = rope[std::size_t(l)];
    // SmolLM3Config: with use_sliding_window, the NoPE layers slide.
    if (get_bool(j, "use_sliding_window", name).value_or(false) && present(j, "sliding_window") &&
        std::find(rope.begin(), rope.end(), false) != rope.end())
      fail_in(name, "use_sliding_window is true: sliding-window attention on SmolLM3's NoPE layers is not supported");
  }

  if (const auto bos = get_int(j, "bos_token_id", name, 0, c.vocab_size - 1)) {
    c.bos_id = int(*bos);
    out.has_bos_id = true;
  }
  const std::vector<int> eos = get_id_list(j, "eos_token_id", name, c.vocab_size);
  if (!eos.empty()) {
    c.eos_id = eos.front();
    c.extra_eos_ids.assign(eos.begin() + 1, eos.end());
    out.has_eos_id = true;
  }

  // Features this engine does not implement: refuse rather than compute something else.
  if (present(top, "quantization_config") || present(j, "quantization_config")) {
    const json& qc = present(top, "quantization_config") ? top["quantization_config"] : j["quantization_config"];
    const std::string method = qc.is_object() && qc.contains("quant_method") && qc["quant_method"].is_string()
                                   ? qc["quant_method"].get<std::string>()
                                   : brief(qc);
    fail_in(name, "quantized checkpoints ('quantization_config' method " + method + ") are not supported");
  }
  if (const auto prf = get_number(j, "partial_rotary_factor", name); prf && *prf != 1.0 && family != "phi3")
    fail_in(name, "'partial_rotary_factor' " + std::to_string(*prf) + " (partial RoPE) is not supported");
  if (family != "exaone4" && family != "gemma3" && present(j, "layer_types")) {
    const json& lt = j["layer_types"];
    if (!lt.is_array()) fail_in(name, "'layer_types' is " + brief(lt) + ", not a list");
    for (std::size_t i = 0; i < lt.size(); ++i)
      if (!lt[i].is_string() || lt[i].get<std::string>() != "full_attention")
        fail_in(name, "'layer_types' [" + std::to_string(i) + "] is " + brief(lt[i]) +
                          ": only full attention is implemented (no sliding window)");
  }
  if (qwen) {
    // Qwen2/Qwen3 (configuration_qwen2.py): layer i uses the window when use_sliding_window and
    // i >= max_window_layers.
    if (get_bool(j, "use_sliding_window", name).value_or(false) && present(j, "sliding_window")) {
      const int64_t mwl = get_int(j, "max_window_layers", name, 0, INT64_MAX).value_or(28);
      if (mwl < c.n_layers)
        fail_in(name, "use_sliding_window is true and layers " + std::to_string(mwl) + ".." +
                          std::to_string(c.n_layers - 1) + " (max_window_layers " + std::to_string(mwl) +
                          ") use sliding_window " + brief(j["sliding_window"]) +
                          ": sliding-window attention is not implemented");
    }
  } else if (family == "llama" && present(j, "sliding_window")) {
    const int64_t w = *get_int(j, "sliding_window", name, 0, INT64_MAX);
    if (w < c.max_seq_len)
      fail_in(name, "sliding_window " + std::to_string(w) + " is smaller than max_position_embeddings " +
                        std::to_string(c.max_seq_len) + ": sliding-window attention is not implemented");
  }
  if (family != "gemma3" && present(j, "hidden_act")) {
    const json& act = j["hidden_act"];
    if (!act.is_string() || act.get<std::string>() != "silu")
      fail_in(name, "hidden_act " + brief(act) + " is not supported (only \"silu\")");
  }
  if (get_bool(j, "mlp_bias", name).value_or(false))
    fail_in(name, "'mlp_bias' true is not supported (no MLP bias terms)");
  for (const char* k : {"num_experts", "num_local_experts"})
    if (family != "qwen3moe" && get_int(j, k, name, 0, INT64_MAX).value_or(0) > 0)
      fail_in(name, std::string("'") + k + "' > 0: mixture-of-experts models are not supported");
  return out;
}

HfTokenizerConfig parse_tokenizer_config(const std::string& json_text, const std::string& name) {
  const json j = parse_object(json_text, name);
  HfTokenizerConfig t;
  t.add_bos_token = get_bool(j, "add_bos_token", name);
  t.add_eos_token = get_bool(j, "add_eos_token", name);
  t.bos_token = get_token(j, "bos_token", name);
  t.eos_token = get_token(j, "eos_token", name);
  t.unk_token = get_token(j, "unk_token", name);
  if (present(j, "chat_template")) {
    const json& ct = j["chat_template"];
    if (ct.is_string()) {
      t.chat_template = ct.get<std::string>();
    } else if (ct.is_array()) {
      for (const json& e : ct) {
        if (!e.is_object() || !e.contains("name") || !e.contains("template") || !e["name"].is_string() ||
            !e["template"].is_string())
          fail_in(name, "'chat_template' list holds " + brief(e) + ", not {\"name\": ..., \"template\": ...}");
        if (e["name"].get<std::string>() == "default") t.chat_template = e["template"].get<std::string>();
      }
    } else {
      fail_in(name, "'chat_template' is " + brief(ct) + ", not a string or a list of named templates");
    }
  }
  return t;
}

HfGenerationConfig parse_generation_config(const std::string& json_text, const std::string& name) {
  const json j = parse_object(json_text, name);
  HfGenerationConfig g;
  auto range = [&](const char* key, double v, bool ok, const char* allowed) {
    if (!ok) fail_in(name, std::string("'") + key + "' " + std::to_string(v) + " out of range " + allowed);
  };
  if (const auto t = get_number(j, "temperature", name)) {
    range("temperature", *t, *t >= 0, "[0, inf)");
    g.defaults.temperature = float(*t);
  }
  if (const auto p = get_number(j, "top_p", name)) {
    range("top_p", *p, *p > 0 && *p <= 1, "(0, 1]");
    g.defaults.top_p = float(*p);
  }
  if (const auto k = get_int(j, "top_k", name, -1, INT32_MAX)) g.defaults.top_k = int(*k);
  if (const auto m = get_number(j, "min_p", name)) {
    range("min_p", *m, *m >= 0 && *m <= 1, "[0, 1]");
    g.defaults.min_p = float(*m);
  }
  g.defaults.do_sample = get_bool(j, "do_sample", name);
  if (const auto r = get_number(j, "repetition_penalty", name)) {
    range("repetition_penalty", *r, *r > 0, "(0, inf)");
    g.defaults.repetition_penalty = float(*r);
  }
  if (const auto m = get_int(j, "max_new_tokens", name, 1, INT32_MAX)) g.defaults.max_new_tokens = int(*m);
  g.eos_ids = get_id_list(j, "eos_token_id", name, INT32_MAX);
  if (const auto b = get_int(j, "bos_token_id", name, 0, INT32_MAX - 1)) g.bos_id = int(*b);
  return g;
}

}  // namespace pagedchat
