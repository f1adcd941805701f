// Token types and special ids by the rules of llama.cpp's convert_hf_to_gguf.py and gguf-py (MIT;
// THIRD_PARTY_NOTICES).
#include "engine/loader/gguf/gguf_vocab_writer.h"

#include <sentencepiece_processor.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/hf/hf_config.h"
#include "engine/loader/load_util.h"

namespace pagedchat {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

GgufValue u32_value(uint32_t v) {
  GgufValue x;
  x.type = x.elem_type = GgufType::kUint32;
  x.uints = {v};
  return x;
}

GgufValue bool_value(bool v) {
  GgufValue x;
  x.type = x.elem_type = GgufType::kBool;
  x.uints = {v ? 1u : 0u};
  return x;
}

json read_json(const std::string& path) { return load::parse_json(read_text_file(path), path); }

// Hugging Face's regular expressions of the Split pre-tokenizer (tokenizer.json) of the two
// families, and the llama.cpp pre-tokenizer name of each.
constexpr const char* kLlama3Split =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr const char* kQwen2Split =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

void flatten(const json& p, std::vector<json>& out) {
  if (p.is_object() && p.value("type", "") == "Sequence" && p.contains("pretokenizers") &&
      p["pretokenizers"].is_array()) {
    for (const json& x : p["pretokenizers"]) flatten(x, out);
  } else {
    out.push_back(p);
  }
}

// convert_hf_to_gguf.py's does_token_look_special.
bool looks_special(const std::string& t) {
  auto starts = [&](const char* s) { return t.rfind(s, 0) == 0; };
  auto ends = [&](const std::string& s) {
    return t.size() >= s.size() && t.compare(t.size() - s.size(), s.size(), s) == 0;
  };
  if (t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]") return true;
  if (starts("<|") && ends("|>")) return true;
  if (starts("<\xEF\xBD\x9C") && ends("\xEF\xBD\x9C>")) return true;  // <｜ ... ｜> (DeepSeek)
  return starts("<unused") && ends(">");
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
  return s;
}

}  // namespace

std::string hf_bpe_pre_name(const std::string& pre_tokenizer_json, bool ignore_merges) {
  json p;
  try {
    p = json::parse(pre_tokenizer_json);
  } catch (const json::exception&) {
    return "";
  }
  std::vector<json> parts;
  flatten(p, parts);
  std::vector<std::string> splits;
  int byte_level = 0, byte_level_regex = 0, other = 0;
  for (const json& x : parts) {
    const std::string type = x.is_object() ? x.value("type", "") : "";
    if (type == "Split" && x.contains("pattern") && x["pattern"].is_object() && x["pattern"].contains("Regex") &&
        x["pattern"]["Regex"].is_string() && x.value("behavior", "") == "Isolated" && !x.value("invert", false)) {
      splits.push_back(x["pattern"]["Regex"].get<std::string>());
    } else if (type == "ByteLevel") {
      ++byte_level;
      if (x.value("use_regex", true)) ++byte_level_regex;
      if (x.value("add_prefix_space", false)) ++other;  // a leading space llama.cpp would not add
    } else {
      ++other;
    }
  }
  if (other || byte_level != 1) return "";
  if (splits.empty()) return byte_level_regex ? "gpt-2" : "";
  if (splits.size() != 1 || byte_level_regex) return "";
  if (splits[0] == kLlama3Split) return ignore_merges ? "llama-bpe" : "smaug-bpe";
  if (splits[0] == kQwen2Split) return "qwen2";
  return "";
}

BpeVocab bpe_vocab_from_gguf(const GgufFile& f) {
  if (f.get_string("tokenizer.ggml.model").value_or("") != "gpt2")
    throw std::runtime_error("'" + f.name() + "': tokenizer.ggml.model is not gpt2");
  BpeVocab v;
  const GgufValue* tokens = f.get_array("tokenizer.ggml.tokens", GgufType::kString);
  const GgufValue* merges = f.get_array("tokenizer.ggml.merges", GgufType::kString);
  if (!tokens || !merges) throw std::runtime_error("'" + f.name() + "': tokenizer.ggml.tokens or .merges is missing");
  v.tokens = tokens->strings;
  v.merges = merges->strings;
  if (const GgufValue* types = f.get_array("tokenizer.ggml.token_type", GgufType::kInt32))
    v.types.assign(types->ints.begin(), types->ints.end());
  else
    v.types.assign(v.tokens.size(), 1);
  if (v.types.size() != v.tokens.size())
    throw std::runtime_error("'" + f.name() + "': tokenizer.ggml.token_type and .tokens differ in length");
  v.pre = f.get_string("tokenizer.ggml.pre").value_or("default");
  for (const auto& [key, value] : f.metadata()) {
    if (key.rfind("tokenizer.ggml.", 0) != 0) continue;
    const bool id = key.size() > 9 && key.compare(key.size() - 9, 9, "_token_id") == 0;
    if (id || key.rfind("tokenizer.ggml.add_", 0) == 0) v.extra.emplace_back(key, value);
  }
  return v;
}

BpeVocab bpe_vocab_from_hf(const std::string& tokenizer_json, int n_vocab) {
  const fs::path dir = fs::path(tokenizer_json).parent_path();
  std::error_code ec;
  const json tj = read_json(tokenizer_json);
  const std::string tc_path = (dir / "tokenizer_config.json").string(), cfg_path = (dir / "config.json").string();
  const json tc = fs::is_regular_file(tc_path, ec) ? read_json(tc_path) : json::object();
  const json cfg = fs::is_regular_file(cfg_path, ec) ? read_json(cfg_path) : json::object();
  auto fail = [&](const std::string& what) { throw std::runtime_error("'" + tokenizer_json + "': " + what); };
  if (!tj.is_object() || !tj.contains("model") || !tj["model"].is_object() || tj["model"].value("type", "") != "BPE")
    fail("not a BPE tokenizer.json");
  const json& model = tj["model"];
  const json pre = tj.contains("pre_tokenizer") ? tj["pre_tokenizer"] : json();
  if (pre.dump().find("\"ByteLevel\"") == std::string::npos)
    fail(
        "a sentencepiece-style BPE tokenizer.json (no ByteLevel pre-tokenizer): GGUF stores those as a 'llama' "
        "vocabulary, convert from the model's tokenizer.model instead");
  BpeVocab v;
  v.pre = hf_bpe_pre_name(pre.dump(), model.value("ignore_merges", false));
  if (v.pre.empty())
    fail("its pre-tokenizer " + pre.dump().substr(0, 200) +
         " is not one whose llama.cpp name (tokenizer.ggml.pre) this converter knows (llama-bpe, smaug-bpe, qwen2, "
         "gpt-2)");
  // llama.cpp normalizes nothing, except NFC for the qwen2 pre-tokenizer (Qwen's tokenizer.json has it).
  if (tj.contains("normalizer") && !tj["normalizer"].is_null() &&
      !(v.pre == "qwen2" && tj["normalizer"].is_object() && tj["normalizer"].value("type", "") == "NFC"))
    fail("normalizer " + tj["normalizer"].dump().substr(0, 60) + " has no llama.cpp equivalent for pre-tokenizer " +
         v.pre);

  // id -> (text, added?, special?)
  struct Tok {
    std::string text;
    bool added = false, special = false;
  };
  std::map<int, Tok> by_id;
  if (!model.contains("vocab") || !model["vocab"].is_object()) fail("model.vocab is missing");
  for (const auto& [text, id] : model["vocab"].items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0) fail("model.vocab['" + text + "'] is not a token id");
    by_id[int(id.get<int64_t>())] = {text, false, false};
  }
  json added = tj.value("added_tokens", json::array());
  for (const json& a : added) {
    if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || !a.contains("content") ||
        !a["content"].is_string())
      fail("an added_tokens entry has no id or content");
    by_id[a["id"].get<int>()] = {a["content"].get<std::string>(), true, a.value("special", false)};
  }
  if (tc.is_object() && tc.contains("added_tokens_decoder") && tc["added_tokens_decoder"].is_object())
    for (const auto& [key, a] : tc["added_tokens_decoder"].items()) {
      const int id = std::atoi(key.c_str());
      if (by_id.count(id) || !a.is_object() || !a.contains("content") || !a["content"].is_string()) continue;
      by_id[id] = {a["content"].get<std::string>(), true, a.value("special", false)};
    }
  if (!by_id.empty() && by_id.rbegin()->first >= n_vocab)
    fail("token id " + std::to_string(by_id.rbegin()->first) + " is past the model's " + std::to_string(n_vocab) +
         " embedding rows");

  v.tokens.resize(n_vocab);
  v.types.resize(n_vocab);
  for (int i = 0; i < n_vocab; ++i) {
    const auto it = by_id.find(i);
    if (it == by_id.end()) {
      v.tokens[i] = "[PAD" + std::to_string(i) + "]";
      v.types[i] = 5;  // UNUSED
    } else if (!it->second.added) {
      v.tokens[i] = it->second.text;
      v.types[i] = 1;  // NORMAL
    } else if (it->second.special || looks_special(it->second.text)) {
      v.tokens[i] = it->second.text;
      v.types[i] = 3;  // CONTROL
    } else {
      v.tokens[i] = replace_all(it->second.text, "\xE2\x96\x81", " ");  // pre-normalized user-defined spaces
      v.types[i] = 4;                                                   // USER_DEFINED
    }
  }
  if (!model.contains("merges") || !model["merges"].is_array()) fail("model.merges is missing");
  v.merges.reserve(model["merges"].size());
  for (const json& m : model["merges"]) {
    if (m.is_string())
      v.merges.push_back(m.get<std::string>());
    else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string())
      v.merges.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
    else
      fail("a merges entry is neither \"a b\" nor [\"a\", \"b\"]");
  }

  // Special ids (gguf-py SpecialVocab): tokenizer_config.json's token strings among the added
  // tokens first, then config.json's ids for what is still unset.
  static const std::pair<const char*, const char*> kTypes[] = {
      {"bos", "bos_token_id"},     {"eos", "eos_token_id"}, {"unk", "unknown_token_id"}, {"sep", "seperator_token_id"},
      {"pad", "padding_token_id"}, {"cls", "cls_token_id"}, {"mask", "mask_token_id"}};
  std::vector<std::string> set;
  auto set_id = [&](const char* key, const json& id) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= n_vocab) return;
    for (const std::string& s : set)
      if (s == key) return;
    set.push_back(key);
    v.extra.emplace_back(std::string("tokenizer.ggml.") + key, u32_value(uint32_t(id.get<int64_t>())));
  };
  for (const auto& [typ, key] : kTypes) {
    const json e = tc.is_object() ? tc.value(std::string(typ) + "_token", json()) : json();
    std::string content;
    if (e.is_string())
      content = e.get<std::string>();
    else if (e.is_object() && e.contains("content") && e["content"].is_string())
      content = e["content"].get<std::string>();
    else
      continue;
    for (const json& a : added)
      if (a["content"].get<std::string>() == content) {
        set_id(key, a["id"]);
        break;
      }
  }
  for (const auto& [typ, key] : kTypes)
    if (cfg.is_object()) set_id(key, cfg.value(std::string(typ) + "_token_id", json()));
  for (const char* typ : {"bos", "eos"}) {
    const std::string k = std::string("add_") + typ + "_token";
    if (tc.is_object() && tc.contains(k) && tc[k].is_boolean())
      v.extra.emplace_back("tokenizer.ggml." + k, bool_value(tc[k].get<bool>()));
  }
  return v;
}

SpmVocab vocab_of(const Tokenizer& tokenizer) {
  const std::string& src = tokenizer.path();
  if (tokenizer.kind() != "sentencepiece")
    throw std::runtime_error("tokenizer '" + src + "' is a " + tokenizer.kind() +
                             " tokenizer, not a sentencepiece one (see gguf_vocab_of)");
  if (is_gguf_file(src)) return read_gguf_vocab(GgufFile::open(src));
  sentencepiece::SentencePieceProcessor sp;
  if (const auto st = sp.Load(src); !st.ok())
    throw std::runtime_error("cannot read the vocabulary of tokenizer '" + src +
                             "' (neither a sentencepiece .model nor a GGUF file): " + st.ToString());
  return vocab_from_sentencepiece(sp, src);
}

GgufVocab gguf_vocab_of(const Tokenizer& tokenizer, int n_vocab) {
  const std::string& src = tokenizer.path();
  if (tokenizer.kind() == "sentencepiece") return vocab_of(tokenizer);
  if (is_gguf_file(src)) {
    const GgufFile f = GgufFile::open(src);
    if (f.get_string("tokenizer.ggml.model").value_or("") == "llama") return read_gguf_vocab(f);
    return bpe_vocab_from_gguf(f);
  }
  if (fs::path(src).extension() == ".json") return bpe_vocab_from_hf(src, n_vocab);
  throw std::runtime_error("tokenizer '" + src + "' is a " + tokenizer.kind() +
                           " tokenizer from a file this converter cannot read a GGUF vocabulary from");
}

void put_gguf_vocab(GgufMetaWriter& meta, const GgufVocab& vocab) {
  if (const SpmVocab* s = std::get_if<SpmVocab>(&vocab)) {
    meta.kv_str("tokenizer.ggml.model", "llama");
    meta.kv_strings("tokenizer.ggml.tokens", s->pieces);
    meta.kv_f32s("tokenizer.ggml.scores", s->scores);
    meta.kv_i32s("tokenizer.ggml.token_type", std::vector<int32_t>(s->types.begin(), s->types.end()));
    if (s->unk_id >= 0) meta.kv_u32("tokenizer.ggml.unknown_token_id", uint32_t(s->unk_id));
    if (s->bos_id >= 0) meta.kv_u32("tokenizer.ggml.bos_token_id", uint32_t(s->bos_id));
    if (s->eos_id >= 0) meta.kv_u32("tokenizer.ggml.eos_token_id", uint32_t(s->eos_id));
    if (s->pad_id >= 0) meta.kv_u32("tokenizer.ggml.padding_token_id", uint32_t(s->pad_id));
    meta.kv_bool("tokenizer.ggml.add_bos_token", s->add_bos);
    meta.kv_bool("tokenizer.ggml.add_eos_token", false);
    meta.kv_bool("tokenizer.ggml.add_space_prefix", s->add_space_prefix);
    meta.kv_bool("tokenizer.ggml.remove_extra_whitespaces", s->remove_extra_whitespaces);
    return;
  }
  const BpeVocab& b = std::get<BpeVocab>(vocab);
  meta.kv_str("tokenizer.ggml.model", "gpt2");
  meta.kv_str("tokenizer.ggml.pre", b.pre);
  meta.kv_strings("tokenizer.ggml.tokens", b.tokens);
  meta.kv_i32s("tokenizer.ggml.token_type", b.types);
  meta.kv_strings("tokenizer.ggml.merges", b.merges);
  for (const auto& [key, value] : b.extra) meta.kv_value(key, value);
}

std::size_t gguf_vocab_size(const GgufVocab& v) {
  if (const SpmVocab* s = std::get_if<SpmVocab>(&v)) return s->pieces.size();
  return std::get<BpeVocab>(v).tokens.size();
}

}  // namespace pagedchat
