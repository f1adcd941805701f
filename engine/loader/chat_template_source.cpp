#include "engine/loader/chat_template_source.h"

#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/gguf/gguf_tokenizer.h"
#include "engine/loader/load_util.h"

namespace fs = std::filesystem;

namespace pagedchat {

std::string hf_folder_chat_template(const std::string& dir, const HfTokenizerConfig& tc) {
  if (!tc.chat_template.empty()) return tc.chat_template;
  const fs::path d(dir);
  std::error_code ec;
  if (fs::is_regular_file(d / "chat_template.jinja", ec)) return read_text_file((d / "chat_template.jinja").string());
  const fs::path js = d / "chat_template.json";
  if (fs::is_regular_file(js, ec)) {
    const nlohmann::json j = load::parse_json(read_text_file(js.string()), js.string());
    if (j.is_object() && j.contains("chat_template") && j["chat_template"].is_string())
      return j["chat_template"].get<std::string>();
    throw std::runtime_error("'" + js.string() + "': no \"chat_template\" string");
  }
  return {};
}

std::string read_model_chat_template(const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  if (fs::is_regular_file(p, ec) && is_gguf_file(path)) return read_gguf_chat_template(GgufFile::open(path));
  if (fs::is_regular_file(p, ec)) {
    const std::string name = p.filename().string();
    const bool in_hf_folder = name == "config.json" || name == "tokenizer.json" || name == "tokenizer_config.json" ||
                              p.extension() == ".safetensors" || name == "model.safetensors.index.json";
    if (!in_hf_folder) return {};  // a llama2.c checkpoint or a sentencepiece model: no template
    p = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  }
  if (!fs::is_directory(p, ec)) throw std::runtime_error("'" + path + "' does not exist");
  HfTokenizerConfig tc;
  const fs::path tcp = p / "tokenizer_config.json";
  if (fs::is_regular_file(tcp, ec)) tc = parse_tokenizer_config(read_text_file(tcp.string()), tcp.string());
  // A folder holding exactly one .gguf (and no Hugging Face files) names that file.
  if (tc.chat_template.empty() && !fs::exists(p / "config.json", ec)) {
    std::string gguf;
    int n = 0;
    for (const auto& e : fs::directory_iterator(p, ec))
      if (e.is_regular_file(ec) && e.path().extension() == ".gguf") gguf = e.path().string(), ++n;
    if (n == 1) return read_gguf_chat_template(GgufFile::open(gguf));
  }
  return hf_folder_chat_template(p.string(), tc);
}

}  // namespace pagedchat
