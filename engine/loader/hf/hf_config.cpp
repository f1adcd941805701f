#include "engine/loader/hf/hf_config.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <nlohmann/json.hpp>

#include "engine/loader/load_util.h"
#include "engine/model/arch/registry.h"

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
  json j = load::parse_json(text, name);
  if (!j.is_object()) fail_in(name, "not a JSON object");
  return j;
}

bool present(const json& j, const char* key) { return j.contains(key) && !j[key].is_null(); }

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

bool HfKeys::has(const char* key) const { return present(values, key); }

std::optional<int64_t> HfKeys::get_int(const char* key, int64_t lo, int64_t hi) const {
  if (!has(key)) return std::nullopt;
  const json& v = values[key];
  if (!v.is_number_integer()) fail(std::string("'") + key + "' is " + brief(v) + ", not an integer");
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))
    fail(std::string("'") + key + "' is out of range");
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi)
    fail(std::string("'") + key + "' " + std::to_string(x) + " out of range [" + std::to_string(lo) + ", " +
         std::to_string(hi) + "]");
  return x;
}

std::optional<double> HfKeys::get_number(const char* key) const {
  if (!has(key)) return std::nullopt;
  const json& v = values[key];
  if (!v.is_number()) fail(std::string("'") + key + "' is " + brief(v) + ", not a number");
  const double x = v.get<double>();
  if (!std::isfinite(x)) fail(std::string("'") + key + "' is not finite");
  return x;
}

std::optional<bool> HfKeys::get_bool(const char* key) const {
  if (!has(key)) return std::nullopt;
  if (!values[key].is_boolean()) fail(std::string("'") + key + "' is " + brief(values[key]) + ", not true or false");
  return values[key].get<bool>();
}

void HfKeys::fail(const std::string& what) const { fail_in(file, what); }

std::optional<std::vector<bool>> hf_sliding_layers(const HfKeys& k, int n_layers) {
  if (!k.has("layer_types")) return std::nullopt;
  const json& lt = k.values["layer_types"];
  if (!lt.is_array() || lt.size() != std::size_t(n_layers))
    k.fail("'layer_types' is not a list of " + std::to_string(n_layers) + " layer kinds (num_hidden_layers)");
  std::vector<bool> sliding;
  for (std::size_t l = 0; l < lt.size(); ++l) {
    const json& t = lt[l];
    if (!t.is_string() || (t != "sliding_attention" && t != "full_attention"))
      k.fail("'layer_types' [" + std::to_string(l) + "] is " + brief(t) +
             ": an unknown layer type (supported: \"sliding_attention\", \"full_attention\")");
    sliding.push_back(t == "sliding_attention");
  }
  return sliding;
}

void hf_partial_rotary(const HfKeys& k, ModelConfig& c, double default_factor) {
  const double prf = k.get_number("partial_rotary_factor").value_or(default_factor);
  const int rot = int(double(c.head_dim) * prf);
  if (!(prf > 0 && prf <= 1) || rot < 2 || rot % 2 != 0)
    k.fail("'partial_rotary_factor' " + std::to_string(prf) + " rotates " + std::to_string(rot) + " of head_dim " +
           std::to_string(c.head_dim) + " dims (must be an even number, at least 2)");
  if (rot != c.head_dim) c.rotary_dim = rot;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw std::runtime_error("cannot read '" + path + "'");
  return ss.str();
}

namespace {

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

  // Architecture: the first "architectures" entry a family has (else model_type), from the registry.
  const ModelFamily* fam = nullptr;
  const HfClass* cls = nullptr;
  if (present(top, "architectures")) {
    const json& a = top["architectures"];
    if (!a.is_array()) fail_in(name, "'architectures' is " + brief(a) + ", not a list");
    std::string seen;
    for (const json& x : a) {
      if (!x.is_string()) fail_in(name, "'architectures' holds " + brief(x) + ", not a name");
      const std::string s = x.get<std::string>();
      std::tie(fam, cls) = find_hf_class(s);
      if (fam) break;
      seen += (seen.empty() ? "" : ", ") + s;
    }
    if (!fam)
      fail_in(name, "architecture " + (seen.empty() ? std::string("[]") : seen) +
                        " is not supported (supported: " + supported_hf_architectures() + ")");
  } else {
    const std::string type = top.value("model_type", json()).is_string() ? top["model_type"].get<std::string>() : "";
    std::tie(fam, cls) = find_hf_class_by_model_type(type);
    if (!fam)
      fail_in(name, "no 'architectures' and model_type '" + type +
                        "' is not supported (supported: " + supported_hf_architectures() + ")");
  }
  out.architecture = std::string(cls->name);

  // The keys of the text model: config.json itself, or (Gemma3ForConditionalGeneration) its
  // text_config, with the special token ids of the top level; then the config class's defaults.
  json j = top;
  if (cls->text_config) {
    if (!present(top, "text_config") || !top["text_config"].is_object())
      fail_in(name, out.architecture + " without a 'text_config' object: the text model is unknown");
    j = top["text_config"];
    for (const char* k : {"bos_token_id", "eos_token_id", "pad_token_id"})
      if (top.contains(k)) j[k] = top[k];
    // The top level's tie_word_embeddings where text_config has none; the vision tower's keys for
    // what the text model takes from it (Qwen3-VL's deepstack features).
    for (const char* k : {"tie_word_embeddings", "vision_config"})
      if (top.contains(k) && !j.contains(k)) j[k] = top[k];
    out.multimodal = true;
  }
  adopt_rope_parameters(j, name);
  if (!fam->hf_defaults.empty()) {
    const json defaults = json::parse(fam->hf_defaults);
    for (auto it = defaults.begin(); it != defaults.end(); ++it)
      if (!j.contains(it.key())) j[it.key()] = it.value();
  }
  const HfKeys keys{j, name, cls->name};

  std::string missing;
  for (const char* key : {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "vocab_size",
                          "rms_norm_eps", "max_position_embeddings"})
    if (!keys.has(key) && !(fam->moe && std::string(key) == "intermediate_size"))  // MoE: for dense layers only
      missing += (missing.empty() ? "" : ", ") + std::string(key);
  if (!missing.empty()) fail_in(name, "missing required keys: " + missing);

  ModelConfig& c = out.config;
  c.architecture = std::string(fam->gguf_name);
  c.hidden_size = int(*keys.get_int("hidden_size", 1, kMaxDim));
  c.intermediate_size = int(keys.get_int("intermediate_size", 1, 4 * kMaxDim).value_or(0));
  c.n_layers = int(*keys.get_int("num_hidden_layers", 1, kMaxLayers));
  c.n_heads = int(*keys.get_int("num_attention_heads", 1, kMaxHeads));
  c.n_kv_heads = int(keys.get_int("num_key_value_heads", 1, c.n_heads).value_or(c.n_heads));
  c.vocab_size = int(*keys.get_int("vocab_size", 1, kMaxVocab));
  c.max_seq_len = int(*keys.get_int("max_position_embeddings", 1, kMaxPositions));
  c.max_seq_len_is_soft = true;
  if (c.n_heads % c.n_kv_heads != 0)
    fail_in(name, "num_attention_heads " + std::to_string(c.n_heads) + " is not a multiple of num_key_value_heads " +
                      std::to_string(c.n_kv_heads));
  if (const auto hd = keys.get_int("head_dim", 1, kMaxDim)) {
    c.head_dim = int(*hd);
  } else if (fam->hf_head_dim > 0) {
    c.head_dim = fam->hf_head_dim;  // the config class's default (Qwen3Config: 128)
  } else {
    if (c.hidden_size % c.n_heads != 0)
      fail_in(name, "hidden_size " + std::to_string(c.hidden_size) + " is not a multiple of num_attention_heads " +
                        std::to_string(c.n_heads) + " (and no head_dim is given)");
    c.head_dim = c.hidden_size / c.n_heads;
  }
  if (c.head_dim % 2 != 0) fail_in(name, "head_dim " + std::to_string(c.head_dim) + " is odd (RoPE needs pairs)");

  const double eps = *keys.get_number("rms_norm_eps");
  if (!(eps > 0 && eps < 1)) fail_in(name, "'rms_norm_eps' " + std::to_string(eps) + " out of range (0, 1)");
  c.norm_eps = float(eps);
  const double theta = keys.get_number("rope_theta").value_or(10000.0);
  if (!(theta > 1)) fail_in(name, "'rope_theta' " + std::to_string(theta) + " must be greater than 1");
  c.rope_theta = float(theta);
  c.rope_style = RopeStyle::kNeox;
  if (!fam->hf_owns("rope_scaling")) c.rope_scaling = parse_rope_scaling(j, name);
  c.shared_classifier = keys.get_bool("tie_word_embeddings").value_or(false);
  c.stop_on_bos = false;

  // Biases, norms and activation as the family has them (transformers' modeling_*.py): q/k/v
  // biases always where the family requires them (Qwen2); q/k/v and o biases when the class reads
  // attention_bias (Llama, Qwen3, Qwen3-MoE, SmolLM3; Mistral never).
  const bool attention_bias = cls->attention_bias && keys.get_bool("attention_bias").value_or(false);
  c.attention_qkv_bias = fam->qkv_bias == TensorRule::kRequired || attention_bias;
  c.attention_out_bias = attention_bias;
  c.qk_norm = fam->qk_norm;
  c.pre_norm = fam->pre_norm;
  c.post_norm = fam->post_norm;
  c.activation = fam->activation;
  out.norm_weight_offset = fam->hf_norm_weight_offset;
  // The family's own keys and per-layer rules (engine/model/arch/<family>.cpp).
  if (fam->hf_hparams) fam->hf_hparams(keys, c);

  if (const auto bos = keys.get_int("bos_token_id", 0, c.vocab_size - 1)) {
    c.bos_id = int(*bos);
    out.has_bos_id = true;
  }
  const std::vector<int> eos = get_id_list(j, "eos_token_id", name, c.vocab_size);
  if (!eos.empty()) {
    c.eos_id = eos.front();
    c.extra_eos_ids.assign(eos.begin() + 1, eos.end());
    out.has_eos_id = true;
  }

  // Features this engine does not implement: refuse rather than compute something else (unless
  // the family's hook reads the key itself).
  if (!fam->hf_owns("quantization_config") &&
      (present(top, "quantization_config") || present(j, "quantization_config"))) {
    const json& qc = present(top, "quantization_config") ? top["quantization_config"] : j["quantization_config"];
    const std::string method = qc.is_object() && qc.contains("quant_method") && qc["quant_method"].is_string()
                                   ? qc["quant_method"].get<std::string>()
                                   : brief(qc);
    fail_in(name, "quantized checkpoints ('quantization_config' method " + method + ") are not supported");
  }
  if (!fam->hf_owns("partial_rotary_factor"))
    if (const auto prf = keys.get_number("partial_rotary_factor"); prf && *prf != 1.0)
      fail_in(name, "'partial_rotary_factor' " + std::to_string(*prf) + " (partial RoPE) is not supported");
  if (!fam->hf_owns("layer_types") && present(j, "layer_types")) {
    const json& lt = j["layer_types"];
    if (!lt.is_array()) fail_in(name, "'layer_types' is " + brief(lt) + ", not a list");
    for (std::size_t i = 0; i < lt.size(); ++i)
      if (!lt[i].is_string() || lt[i].get<std::string>() != "full_attention")
        fail_in(name, "'layer_types' [" + std::to_string(i) + "] is " + brief(lt[i]) +
                          ": only full attention is implemented (no sliding window)");
  }
  if (!fam->hf_owns("hidden_act") && present(j, "hidden_act")) {
    const json& act = j["hidden_act"];
    if (!act.is_string() || act.get<std::string>() != "silu")
      fail_in(name, "hidden_act " + brief(act) + " is not supported (only \"silu\")");
  }
  if (keys.get_bool("mlp_bias").value_or(false)) fail_in(name, "'mlp_bias' true is not supported (no MLP bias terms)");
  for (const char* k : {"num_experts", "num_local_experts"})
    if (!fam->hf_owns(k) && keys.get_int(k, 0, INT64_MAX).value_or(0) > 0)
      fail_in(name, std::string("'") + k + "' > 0: mixture-of-experts models are not supported");
  return out;
}

HfTokenizerConfig parse_tokenizer_config(const std::string& json_text, const std::string& name) {
  const json j = parse_object(json_text, name);
  const HfKeys keys{j, name, ""};
  HfTokenizerConfig t;
  t.add_bos_token = keys.get_bool("add_bos_token");
  t.add_eos_token = keys.get_bool("add_eos_token");
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
  const HfKeys keys{j, name, ""};
  HfGenerationConfig g;
  auto range = [&](const char* key, double v, bool ok, const char* allowed) {
    if (!ok) fail_in(name, std::string("'") + key + "' " + std::to_string(v) + " out of range " + allowed);
  };
  if (const auto t = keys.get_number("temperature")) {
    range("temperature", *t, *t >= 0, "[0, inf)");
    g.defaults.temperature = float(*t);
  }
  if (const auto p = keys.get_number("top_p")) {
    range("top_p", *p, *p > 0 && *p <= 1, "(0, 1]");
    g.defaults.top_p = float(*p);
  }
  if (const auto k = keys.get_int("top_k", -1, INT32_MAX)) g.defaults.top_k = int(*k);
  if (const auto m = keys.get_number("min_p")) {
    range("min_p", *m, *m >= 0 && *m <= 1, "[0, 1]");
    g.defaults.min_p = float(*m);
  }
  g.defaults.do_sample = keys.get_bool("do_sample");
  if (const auto r = keys.get_number("repetition_penalty")) {
    range("repetition_penalty", *r, *r > 0, "(0, inf)");
    g.defaults.repetition_penalty = float(*r);
  }
  if (const auto m = keys.get_int("max_new_tokens", 1, INT32_MAX)) g.defaults.max_new_tokens = int(*m);
  g.eos_ids = get_id_list(j, "eos_token_id", name, INT32_MAX);
  if (const auto b = keys.get_int("bos_token_id", 0, INT32_MAX - 1)) g.bos_id = int(*b);
  return g;
}

}  // namespace pagedchat
