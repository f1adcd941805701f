#include "engine/loader/hub/gguf_choice.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <stdexcept>

#include "engine/core/host_memory.h"

namespace pagedchat::hub {

namespace {

std::string upper(std::string s) {
  for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string base_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// NAME-00001-of-00003.gguf -> (NAME.gguf, 1, 3)
struct Split {
  std::string key;
  int index = 1, count = 1;
};
Split split_of(const std::string& path) {
  static const std::regex re(R"(^(.*)-(\d{5})-of-(\d{5})\.gguf$)", std::regex::icase);
  std::smatch m;
  if (std::regex_match(path, m, re)) return {m[1].str() + ".gguf", std::stoi(m[2].str()), std::stoi(m[3].str())};
  return {path, 1, 1};
}

}  // namespace

std::string gguf_quant_of(const std::string& file_name) {
  std::string name = upper(base_name(file_name));
  if (ends_with(name, ".GGUF")) name.resize(name.size() - 5);
  static const std::regex split(R"(-\d{5}-OF-\d{5}$)");
  name = std::regex_replace(name, split, "");
  // A label: optional UD- (unsloth's dynamic quants), then a llama.cpp type name, between
  // separators. The last one in the name wins (a base model's name may hold a number like Q2).
  static const std::regex label(
      R"((?:^|[-_.])((?:UD-)?(?:I?Q[1-8](?:_[0-9A-Z]{1,3}){0,3}|T?Q[12]_0|BF16|F16|F32|FP16|FP32|MXFP4(?:_MOE)?))(?=[-_.]|$))");
  std::string found;
  for (auto it = std::sregex_iterator(name.begin(), name.end(), label); it != std::sregex_iterator(); ++it)
    found = (*it)[1].str();
  return found;
}

bool fits_in_memory(std::uint64_t bytes, std::optional<std::uint64_t> available) {
  const std::uint64_t have = available ? *available : available_memory_bytes();
  return have > 0 && bytes + bytes / 5 <= have;
}

std::vector<GgufModel> gguf_models(const HubRepo& repo, std::optional<std::uint64_t> available) {
  std::map<std::string, GgufModel> by_key;
  std::map<std::string, std::vector<std::pair<int, HubFile>>> parts;
  for (const HubFile& f : repo.files) {
    const std::string name = upper(base_name(f.path));
    if (!ends_with(name, ".GGUF")) continue;
    if (name.rfind("MMPROJ", 0) == 0 || name.find("IMATRIX") != std::string::npos) continue;
    const Split s = split_of(f.path);
    parts[s.key].push_back({s.index, f});
  }
  std::vector<GgufModel> out;
  for (auto& [key, list] : parts) {
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    GgufModel m;
    m.quant = gguf_quant_of(key);
    for (auto& [index, f] : list) {
      m.size += f.size;
      m.parts.push_back(f);
    }
    m.fits = fits_in_memory(m.size, available);
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(), [](const GgufModel& a, const GgufModel& b) {
    return a.size != b.size ? a.size < b.size : a.first_path() < b.first_path();
  });
  if (out.empty()) return out;
  GgufModel* pick = nullptr;
  for (const char* q : {"Q4_K_M", "Q4_K_S", "Q5_K_M", "Q8_0"}) {
    for (GgufModel& m : out)
      if (m.fits && m.quant == q) {
        pick = &m;
        break;
      }
    if (pick) break;
  }
  if (!pick)
    for (GgufModel& m : out)
      if (m.fits) pick = &m;  // the largest that fits (sorted by size)
  if (!pick) pick = &out.front();
  pick->recommended = true;
  return out;
}

const GgufModel& choose_gguf(const std::vector<GgufModel>& models, const std::string& repo, const std::string& tag) {
  if (models.empty()) throw std::invalid_argument(repo + " holds no GGUF model file");
  if (tag.empty()) {
    for (const GgufModel& m : models)
      if (m.recommended) return m;
    return models.front();
  }
  const std::string want = upper(tag);
  for (const GgufModel& m : models)
    if (m.quant == want) return m;
  for (const GgufModel& m : models)
    if (upper(m.first_path()) == want || upper(base_name(m.first_path())) == want) return m;
  std::string labels;
  for (const GgufModel& m : models)
    labels += (labels.empty() ? "" : ", ") + (m.quant.empty() ? m.first_path() : m.quant);
  throw std::invalid_argument(repo + " has no " + tag + " file; it has: " + labels);
}

std::vector<HubFile> hf_folder_files(const HubRepo& repo) {
  static const std::vector<std::string> names = {
      "config.json",           "generation_config.json", "tokenizer.json",
      "tokenizer_config.json", "tokenizer.model",        "special_tokens_map.json",
      "chat_template.jinja",   "chat_template.json",     "model.safetensors.index.json"};
  std::vector<HubFile> out;
  for (const HubFile& f : repo.files) {
    if (f.path.find('/') != std::string::npos) continue;  // the root folder only
    if (std::find(names.begin(), names.end(), f.path) != names.end() || ends_with(f.path, ".safetensors"))
      out.push_back(f);
  }
  return out;
}

}  // namespace pagedchat::hub
