#include "engine/loader/model_summary.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <stdexcept>

#include "engine/loader/chat_template_source.h"
#include "engine/loader/gguf/dequant.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/hf/hf_config.h"
#include "engine/loader/hf/hf_loader.h"
#include "engine/loader/hf/safetensors.h"
#include "engine/loader/llama2c/llama2c_loader.h"
#include "engine/loader/model_files.h"
#include "engine/model/arch/registry.h"
#include "engine/text/chat_template.h"

namespace pagedchat {

namespace fs = std::filesystem;

std::string gguf_file_type_name(int64_t ftype) {
  // enum llama_ftype (llama.cpp's llama.h); gaps are types llama.cpp removed.
  static const std::map<int64_t, const char*> kNames = {
      {0, "F32"},     {1, "F16"},     {2, "Q4_0"},      {3, "Q4_1"},    {7, "Q8_0"},     {8, "Q5_0"},
      {9, "Q5_1"},    {10, "Q2_K"},   {11, "Q3_K_S"},   {12, "Q3_K_M"}, {13, "Q3_K_L"},  {14, "Q4_K_S"},
      {15, "Q4_K_M"}, {16, "Q5_K_S"}, {17, "Q5_K_M"},   {18, "Q6_K"},   {19, "IQ2_XXS"}, {20, "IQ2_XS"},
      {21, "Q2_K_S"}, {22, "IQ3_XS"}, {23, "IQ3_XXS"},  {24, "IQ1_S"},  {25, "IQ4_NL"},  {26, "IQ3_S"},
      {27, "IQ3_M"},  {28, "IQ2_S"},  {29, "IQ2_M"},    {30, "IQ4_XS"}, {31, "IQ1_M"},   {32, "BF16"},
      {36, "TQ1_0"},  {37, "TQ2_0"},  {38, "MXFP4_MOE"}};
  const auto it = kNames.find(ftype & ~int64_t(1024));  // LLAMA_FTYPE_GUESSED
  return it == kNames.end() ? std::string() : it->second;
}

namespace {

// The family name of the template `path` carries ("" none, "custom" unrecognised).
std::string template_family(const std::string& path) {
  std::string text;
  try {
    text = read_model_chat_template(path);
  } catch (const std::exception&) {
    return "";
  }
  if (text.empty()) return "";
  const std::string family = detect_chat_template(text);
  return family == "none" ? "custom" : family;
}

uint64_t file_size_or_zero(const fs::path& p) {
  std::error_code ec;
  const auto n = fs::file_size(p, ec);
  return ec ? 0 : uint64_t(n);
}

// The files of a split GGUF ("name-00001-of-00003.gguf": every part that exists), else `path`.
std::vector<fs::path> gguf_parts(const fs::path& path) {
  static const std::regex kSplit(R"((.*)-(\d{5})-of-(\d{5})\.gguf)");
  std::smatch m;
  const std::string name = path.filename().string();
  if (!std::regex_match(name, m, kSplit)) return {path};
  const int count = std::stoi(m[3].str());
  std::vector<fs::path> parts;
  for (int i = 1; i <= count; ++i) {
    char index[32];
    std::snprintf(index, sizeof index, "-%05d-of-%05d.gguf", i, count);
    const fs::path part = path.parent_path() / (m[1].str() + index);
    if (fs::exists(part)) parts.push_back(part);
  }
  return parts;
}

ModelSummary summarize_gguf(const std::string& path) {
  ModelSummary s;
  s.format = "gguf";
  std::map<uint32_t, uint64_t> bytes_by_type;
  bool first = true;
  for (const fs::path& part : gguf_parts(path)) {
    const GgufFile f = GgufFile::open(part.string());
    s.size_bytes += f.file_size();
    for (const GgufTensorInfo& t : f.tensors()) {
      s.n_params += t.n_elements;
      bytes_by_type[uint32_t(t.type)] += t.n_bytes;
    }
    if (!first) continue;
    first = false;
    s.architecture = f.get_string("general.architecture").value_or("");
    s.supported = !s.architecture.empty() && find_family_by_gguf_name(s.architecture) != nullptr;
    if (const auto ctx = f.get_int(s.architecture + ".context_length")) s.context_length = *ctx;
    if (const auto ftype = f.get_int("general.file_type")) s.quantization = gguf_file_type_name(*ftype);
  }
  if (s.quantization.empty() && !bytes_by_type.empty()) {
    // No (or an unnamed) file type: the type holding most of the bytes.
    auto most = bytes_by_type.begin();
    for (auto it = bytes_by_type.begin(); it != bytes_by_type.end(); ++it)
      if (it->second > most->second) most = it;
    s.quantization = ggml_type_name(most->first);
  }
  s.chat_template = template_family(path);
  return s;
}

ModelSummary summarize_hf(const std::string& dir) {
  ModelSummary s;
  s.format = "huggingface";
  const fs::path config_path = fs::path(dir) / "config.json";
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(read_text_file(config_path.string()));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(config_path.string() + " is not valid JSON: " + e.what());
  }
  if (!config.is_object()) throw std::runtime_error(config_path.string() + " is not a JSON object");
  const nlohmann::json& text = config.contains("text_config") && config["text_config"].is_object()
                                   ? config["text_config"]
                                   : config;
  if (config.contains("architectures") && config["architectures"].is_array() && !config["architectures"].empty() &&
      config["architectures"][0].is_string())
    s.architecture = config["architectures"][0].get<std::string>();
  else if (config.contains("model_type") && config["model_type"].is_string())
    s.architecture = config["model_type"].get<std::string>();
  s.supported = !s.architecture.empty() &&
                (find_hf_class(s.architecture).first != nullptr || find_hf_class_by_model_type(s.architecture).first);
  for (const nlohmann::json* c : {&text, const_cast<const nlohmann::json*>(&config)}) {
    const auto it = c->find("max_position_embeddings");
    if (s.context_length == 0 && it != c->end() && it->is_number_integer()) s.context_length = it->get<int64_t>();
  }

  SafetensorsSet weights = SafetensorsSet::open_folder(dir);
  std::map<std::string, uint64_t> elements_by_dtype;
  for (const auto& [name, t] : weights.tensors()) {
    s.n_params += t.num_elements;
    elements_by_dtype[dtype_name(t.dtype)] += t.num_elements;
  }
  for (const auto& f : weights.release_files()) s.size_bytes += f->size();
  if (config.contains("quantization_config") && config["quantization_config"].is_object() &&
      config["quantization_config"].contains("quant_method") &&
      config["quantization_config"]["quant_method"].is_string()) {
    s.quantization = config["quantization_config"]["quant_method"].get<std::string>();
  } else if (!elements_by_dtype.empty()) {
    auto most = elements_by_dtype.begin();
    for (auto it = elements_by_dtype.begin(); it != elements_by_dtype.end(); ++it)
      if (it->second > most->second) most = it;
    s.quantization = most->first;
  }
  s.chat_template = template_family(dir);
  return s;
}

ModelSummary summarize_llama2c(const std::string& path) {
  const ModelFiles files = resolve_model_files(path, "");
  if (const std::string problem = llama2c_checkpoint_problem(files.checkpoint); !problem.empty())
    throw std::runtime_error(problem);
  int32_t h[7] = {};
  std::ifstream in(files.checkpoint, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(h), sizeof h)) throw std::runtime_error(files.checkpoint + " cannot be read");
  // run.c's layout: dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size (< 0: an own
  // classifier), seq_len; float32 weights.
  const uint64_t dim = uint64_t(h[0]), hidden = uint64_t(h[1]), layers = uint64_t(h[2]);
  const uint64_t heads = uint64_t(h[3]), kv_heads = uint64_t(h[4]);
  const uint64_t vocab = uint64_t(h[5] < 0 ? -int64_t(h[5]) : h[5]);
  const uint64_t head_dim = dim / heads;
  ModelSummary s;
  s.format = "llama2.c";
  s.architecture = "llama";
  s.supported = true;
  s.size_bytes = file_size_or_zero(files.checkpoint);
  s.n_params = vocab * dim +
               layers * (2 * dim + dim * heads * head_dim + 2 * dim * kv_heads * head_dim + heads * head_dim * dim +
                         3 * dim * hidden) +
               dim + (h[5] < 0 ? vocab * dim : 0);
  s.quantization = "F32";
  s.context_length = h[6];
  return s;
}

}  // namespace

ModelSummary summarize_model(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw std::runtime_error(path + " does not exist");
  fs::path gguf = path;
  if (fs::is_directory(path, ec)) {
    // A folder with one .gguf file (and no llama2.c checkpoint) loads that file.
    std::vector<fs::path> found;
    bool checkpoint = false;
    for (const auto& e : fs::directory_iterator(path, ec)) {
      if (!e.is_regular_file(ec)) continue;
      if (e.path().extension() == ".gguf") found.push_back(e.path());
      if (e.path().extension() == ".bin" && looks_like_llama2c_checkpoint(e.path().string())) checkpoint = true;
    }
    if (found.size() == 1 && !checkpoint) gguf = found.front();
  }
  if (is_gguf_file(gguf.string()) || gguf.extension() == ".gguf") return summarize_gguf(gguf.string());
  if (const std::string hf = hf_folder_of(path); !hf.empty()) return summarize_hf(hf);
  return summarize_llama2c(path);
}

}  // namespace pagedchat
