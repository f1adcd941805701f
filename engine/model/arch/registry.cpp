#include "engine/model/arch/registry.h"

#include <stdexcept>

#include "engine/loader/gguf/gguf_reader.h"

namespace pagedchat {

std::optional<int64_t> GgufKeys::get_int(const std::string& key) const { return file.get_int(prefix + key); }

std::optional<double> GgufKeys::get_float(const std::string& key) const { return file.get_float(prefix + key); }

std::optional<std::vector<int64_t>> GgufKeys::get_per_layer(const std::string& key, int n) const {
  const GgufValue* v = file.find(prefix + key);
  if (!v) return std::nullopt;
  std::vector<int64_t> out;
  if (!v->is_array()) {
    out.assign(std::size_t(n), *file.get_int(prefix + key));  // get_int throws for a non-integer
    return out;
  }
  if (v->elem_type == GgufType::kArray || v->elem_type == GgufType::kString || v->elem_type == GgufType::kFloat32 ||
      v->elem_type == GgufType::kFloat64)
    fail("key '" + prefix + key + "' is not a per-layer list of integers or booleans");
  for (uint64_t u : v->uints) out.push_back(int64_t(u));
  for (int64_t i : v->ints) out.push_back(i);
  if (int(out.size()) != n)
    fail("key '" + prefix + key + "' has " + std::to_string(out.size()) + " entries for " + std::to_string(n) +
         " layers");
  return out;
}

void GgufKeys::fail(const std::string& what) const { throw std::runtime_error("'" + file.name() + "': " + what); }

int gguf_sliding_window(const GgufKeys& k) {
  const std::optional<int64_t> window = k.get_int("attention.sliding_window");
  const std::string arch = k.prefix.substr(0, k.prefix.size() - 1);
  if (!window) k.fail("a " + arch + " model needs " + k.prefix + "attention.sliding_window");
  if (*window < 1 || *window > (1 << 24))
    k.fail(k.prefix + "attention.sliding_window is " + std::to_string(*window) + ", outside [1, 16777216]");
  return int(*window);
}

const std::vector<const ModelFamily*>& model_families() {
  static const std::vector<const ModelFamily*> all = {
      &kLlamaFamily,      &kQwen2Family,     &kQwen3Family,  &kQwen3VlFamily, &kQwen3MoeFamily,
      &kQwen3VlMoeFamily, &kGemma3Family,    &kPhi3Family,   &kSmolLM3Family, &kExaone4Family,
      &kQwen35Family,     &kQwen35MoeFamily, &kGptOssFamily, &kGemma4Family};
  return all;
}

const ModelFamily* find_family_by_gguf_name(std::string_view name) {
  for (const ModelFamily* f : model_families())
    if (f->gguf_name == name) return f;
  return nullptr;
}

const ModelFamily* find_family_by_hf_name(std::string_view name) { return find_hf_class(name).first; }

std::pair<const ModelFamily*, const HfClass*> find_hf_class(std::string_view name) {
  for (const ModelFamily* f : model_families())
    for (const HfClass& k : f->hf_classes)
      if (k.name == name) return {f, &k};
  return {nullptr, nullptr};
}

std::pair<const ModelFamily*, const HfClass*> find_hf_class_by_model_type(std::string_view model_type) {
  for (const ModelFamily* f : model_families())
    for (const HfClass& k : f->hf_classes)
      if (k.model_type == model_type) return {f, &k};
  return {nullptr, nullptr};
}

std::string supported_gguf_architectures() {
  std::string s;
  for (const ModelFamily* f : model_families()) s += (s.empty() ? "" : ", ") + std::string(f->gguf_name);
  return s;
}

std::string supported_hf_architectures() {
  std::string s;
  for (const ModelFamily* f : model_families())
    for (const HfClass& k : f->hf_classes) s += (s.empty() ? "" : ", ") + std::string(k.name);
  return s;
}

}  // namespace pagedchat
