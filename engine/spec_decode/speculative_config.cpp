#include "engine/spec_decode/speculative_config.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace pagedchat {

namespace {

[[noreturn]] void spec_config_error(const std::string& what) {
  throw std::invalid_argument("--speculative-config: " + what);
}

int spec_int_field(const nlohmann::json& j, const char* key, int fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  const nlohmann::json& v = j[key];
  if (!v.is_number_integer()) spec_config_error(std::string("\"") + key + "\" must be an integer");
  const long long x = v.get<long long>();
  if (x < -1'000'000 || x > 1'000'000) spec_config_error(std::string("\"") + key + "\" is out of range");
  return int(x);
}

}  // namespace

void SpeculativeConfig::validate() const {
  if (method == Method::kNone) return;
  if (num_speculative_tokens < 1 || num_speculative_tokens > kMaxSpeculativeTokens)
    spec_config_error("\"num_speculative_tokens\" must be in [1, " + std::to_string(kMaxSpeculativeTokens) + "], got " +
                      std::to_string(num_speculative_tokens));
  if (method == Method::kDraftModel && model.empty()) spec_config_error("method \"draft_model\" needs \"model\"");
  if (method == Method::kNgram) {
    if (prompt_lookup_min < 1)
      spec_config_error("\"prompt_lookup_min\" must be >= 1, got " + std::to_string(prompt_lookup_min));
    if (prompt_lookup_max < prompt_lookup_min || prompt_lookup_max > 64)
      spec_config_error("\"prompt_lookup_max\" must be in [prompt_lookup_min, 64], got " +
                        std::to_string(prompt_lookup_max));
  }
}

std::string SpeculativeConfig::method_name() const { return method_name(method); }

std::string SpeculativeConfig::method_name(Method m) {
  switch (m) {
    case Method::kNgram:
      return "ngram";
    case Method::kOracle:
      return "oracle";
    case Method::kDraftModel:
      return "draft_model";
    case Method::kMtp:
      return "mtp";
    case Method::kNone:
      break;
  }
  return "none";
}

SpeculativeConfig parse_speculative_config(const std::string& text) {
  SpeculativeConfig c;
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return c;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    spec_config_error(std::string("not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object())
    spec_config_error("must be a JSON object, e.g. {\"method\": \"ngram\", \"num_speculative_tokens\": 4}");
  if (j.empty()) return c;
  for (const auto& [key, value] : j.items())
    if (key != "method" && key != "num_speculative_tokens" && key != "prompt_lookup_max" &&
        key != "prompt_lookup_min" && key != "model" && key != "fit_to_batch")
      spec_config_error("unknown key \"" + key +
                        "\" (this build reads method, num_speculative_tokens, prompt_lookup_max, "
                        "prompt_lookup_min, model, fit_to_batch)");
  if (!j.contains("method") || !j["method"].is_string()) spec_config_error("\"method\" (a string) is required");
  const std::string method = j["method"].get<std::string>();
  if (method == "ngram") {
    c.method = SpeculativeConfig::Method::kNgram;
  } else if (method == "oracle") {
    c.method = SpeculativeConfig::Method::kOracle;
  } else if (method == "draft_model") {
    c.method = SpeculativeConfig::Method::kDraftModel;
  } else if (method == "mtp" || method.ends_with("_mtp")) {
    // vLLM's spellings: "mtp", and the per-family "deepseek_mtp", "qwen3_next_mtp" ... it maps to it.
    c.method = SpeculativeConfig::Method::kMtp;
  } else if (method == "eagle" || method == "eagle3" || method == "medusa" || method == "mlp_speculator") {
    spec_config_error("method \"" + method +
                      "\" is not supported by this build yet (it has \"ngram\", \"draft_model\" and \"mtp\")");
  } else {
    spec_config_error("unknown method \"" + method + "\" (this build has \"ngram\", \"draft_model\" and \"mtp\")");
  }
  if (j.contains("model")) {
    if (!j["model"].is_string() || j["model"].get<std::string>().empty())
      spec_config_error("\"model\" must be the draft model's file or folder");
    if (c.method != SpeculativeConfig::Method::kDraftModel)
      spec_config_error("\"model\" is for method \"draft_model\" only");
    c.model = j["model"].get<std::string>();
  }
  if (j.contains("fit_to_batch")) {
    if (!j["fit_to_batch"].is_boolean()) spec_config_error("\"fit_to_batch\" must be true or false");
    c.fit_to_batch = j["fit_to_batch"].get<bool>();
  }
  if (!j.contains("num_speculative_tokens") || j["num_speculative_tokens"].is_null())
    spec_config_error("\"num_speculative_tokens\" is required");
  c.num_speculative_tokens = spec_int_field(j, "num_speculative_tokens", 0);
  // One bound given alone moves the other's default so that min <= max.
  const bool has_max = j.contains("prompt_lookup_max") && !j["prompt_lookup_max"].is_null();
  const bool has_min = j.contains("prompt_lookup_min") && !j["prompt_lookup_min"].is_null();
  if ((has_max || has_min) && c.method != SpeculativeConfig::Method::kNgram)
    spec_config_error("\"prompt_lookup_max\" and \"prompt_lookup_min\" are for method \"ngram\" only");
  c.prompt_lookup_max = spec_int_field(j, "prompt_lookup_max", c.prompt_lookup_max);
  c.prompt_lookup_min = spec_int_field(j, "prompt_lookup_min", c.prompt_lookup_min);
  if (has_max && c.prompt_lookup_max < 1)
    spec_config_error("\"prompt_lookup_max\" must be >= 1, got " + std::to_string(c.prompt_lookup_max));
  if (has_max && !has_min) c.prompt_lookup_min = std::min(c.prompt_lookup_min, c.prompt_lookup_max);
  if (has_min && !has_max) c.prompt_lookup_max = std::max(c.prompt_lookup_max, c.prompt_lookup_min);
  c.validate();
  return c;
}

}  // namespace pagedchat
