#include "engine/loader/hf/hf_config.h"

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
};
constexpr const char* kSupported = "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM";

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
  const json j = parse_object(json_text, name);
  HfModelConfig out;

  // Architecture.
  const HfFamily* fam = nullptr;
  if (present(j, "architectures")) {
    const json& a = j["architectures"];
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
    const std::string type = j.value("model_type", json()).is_string() ? j["model_type"].get<std::string>() : "";
    for (const HfFamily& f : kHfFamilies)
      if (type == f.model_type) fam = &f;
    if (!fam)
      fail_in(name,
              "no 'architectures' and model_type '" + type + "' is not supported (supported: " + kSupported + ")");
  }
  out.architecture = fam->architecture;
  const std::string family = fam->family;
  const bool qwen = family == "qwen2" || family == "qwen3";

  std::string missing;
  for (const char* key : {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "vocab_size",
                          "rms_norm_eps", "max_position_embeddings"})
    if (!present(j, key)) missing += (missing.empty() ? "" : ", ") + std::string(key);
  if (!missing.empty()) fail_in(name, "missing required keys: " + missing);

  ModelConfig& c = out.config;
  c.architecture = family;
  c.dim = int(*get_int(j, "hidden_size", name, 1, kMaxDim));
  c.hidden_dim = int(*get_int(j, "intermediate_size", name, 1, 4 * kMaxDim));
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
    if (c.dim % c.n_heads != 0)
      fail_in(name, "hidden_size " + std::to_string(c.dim) + " is not a multiple of num_attention_heads " +
                        std::to_string(c.n_heads) + " (and no head_dim is given)");
    c.head_dim = c.dim / c.n_heads;
  }
  if (c.head_dim % 2 != 0) fail_in(name, "head_dim " + std::to_string(c.head_dim) + " is odd (RoPE needs pairs)");

  const double eps = *get_number(j, "rms_norm_eps", name);
  if (!(eps > 0 && eps < 1)) fail_in(name, "'rms_norm_eps' " + std::to_string(eps) + " out of range (0, 1)");
  c.norm_eps = float(eps);
  const double theta = get_number(j, "rope_theta", name).value_or(10000.0);
  if (!(theta > 1)) fail_in(name, "'rope_theta' " + std::to_string(theta) + " must be greater than 1");
  c.rope_theta = float(theta);
  c.rope_style = RopeStyle::kNeox;
  c.rope_scaling = parse_rope_scaling(j, name);
  c.shared_classifier = get_bool(j, "tie_word_embeddings", name).value_or(false);
  c.stop_on_bos = false;

  // Biases and norms per family (transformers' modeling_*.py): Qwen2 has q/k/v biases always;
  // Llama and Qwen3 q/k/v and o biases when attention_bias (Mistral never); Qwen3 q_norm/k_norm.
  const bool attention_bias = (family == "llama" && out.architecture == "LlamaForCausalLM") || family == "qwen3"
                                  ? get_bool(j, "attention_bias", name).value_or(false)
                                  : false;
  c.attention_qkv_bias = family == "qwen2" || attention_bias;
  c.attention_out_bias = attention_bias;
  c.qk_norm = family == "qwen3";

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
  if (present(j, "quantization_config")) {
    const json& qc = j["quantization_config"];
    const std::string method = qc.is_object() && qc.contains("quant_method") && qc["quant_method"].is_string()
                                   ? qc["quant_method"].get<std::string>()
                                   : brief(qc);
    fail_in(name, "quantized checkpoints ('quantization_config' method " + method + ") are not supported");
  }
  if (const auto prf = get_number(j, "partial_rotary_factor", name); prf && *prf != 1.0)
    fail_in(name, "'partial_rotary_factor' " + std::to_string(*prf) + " (partial RoPE) is not supported");
  if (present(j, "layer_types")) {
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
  } else if (present(j, "sliding_window")) {
    const int64_t w = *get_int(j, "sliding_window", name, 0, INT64_MAX);
    if (w < c.max_seq_len)
      fail_in(name, "sliding_window " + std::to_string(w) + " is smaller than max_position_embeddings " +
                        std::to_string(c.max_seq_len) + ": sliding-window attention is not implemented");
  }
  if (present(j, "hidden_act")) {
    const json& act = j["hidden_act"];
    if (!act.is_string() || act.get<std::string>() != "silu")
      fail_in(name, "hidden_act " + brief(act) + " is not supported (only \"silu\")");
  }
  if (get_bool(j, "mlp_bias", name).value_or(false))
    fail_in(name, "'mlp_bias' true is not supported (no MLP bias terms)");
  for (const char* k : {"num_experts", "num_local_experts"})
    if (get_int(j, k, name, 0, INT64_MAX).value_or(0) > 0)
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
