#include "engine/text/bpe/tokenizer_json.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "engine/loader/load_util.h"
#include "engine/text/utf8.h"

namespace pagedchat::bpe {

namespace {

using json = nlohmann::json;
constexpr int64_t kMaxId = 1 << 22;

std::string type_name(const json& j) { return j.type_name(); }

// A JSON value with its path in the file, for error messages.
struct Node {
  const json& j;
  std::string path;
  const std::string& file;

  [[noreturn]] void fail(const std::string& msg) const {
    throw std::runtime_error("'" + file + "': " + path + ": " + msg);
  }
  Node at(const std::string& key) const {
    static const json null_value;
    const auto it = j.find(key);
    return Node{it == j.end() ? null_value : *it, path.empty() ? key : path + "." + key, file};
  }
  Node at(std::size_t i) const { return Node{j[i], path + "[" + std::to_string(i) + "]", file}; }
  bool has(const std::string& key) const { return j.is_object() && j.contains(key) && !j[key].is_null(); }
  bool null() const { return j.is_null(); }
  void expect(bool ok, const char* what) const {
    if (!ok) fail(std::string("expected ") + what + ", found " + type_name(j));
  }
  const json& object() const {
    expect(j.is_object(), "an object");
    return j;
  }
  const json& array() const {
    expect(j.is_array(), "an array");
    return j;
  }
  std::string str() const {
    expect(j.is_string(), "a string");
    std::string s = j.get<std::string>();
    if (!utf8::is_valid(s)) fail("not valid UTF-8");
    return s;
  }
  bool boolean() const {
    expect(j.is_boolean(), "true or false");
    return j.get<bool>();
  }
  int64_t integer() const {
    expect(j.is_number_integer(), "an integer");
    return j.get<int64_t>();
  }
  // Optional members: absent or null gives the default.
  bool opt_bool(const std::string& key, bool def) const { return has(key) ? at(key).boolean() : def; }
  std::string opt_str(const std::string& key, const std::string& def = "") const {
    return has(key) ? at(key).str() : def;
  }
  int64_t opt_int(const std::string& key, int64_t def) const { return has(key) ? at(key).integer() : def; }
  std::string type() const {
    object();
    if (!has("type")) fail("no \"type\"");
    return at("type").str();
  }
};

std::string single_char(const Node& n) {
  const std::string s = n.str();
  if (s.empty() || utf8::char_len(s, 0) != s.size()) n.fail("expected one character, found \"" + s + "\"");
  return s;
}

Pattern parse_pattern(const Node& n) {
  n.object();
  Pattern p;
  if (n.has("Regex")) {
    p.regex = std::make_shared<Regex>(n.at("Regex").str(), "'" + n.file + "': " + n.path + ".Regex");
  } else if (n.has("String")) {
    p.literal = n.at("String").str();
    if (p.literal.empty()) n.fail("an empty String pattern");
  } else {
    n.fail("expected {\"String\": ...} or {\"Regex\": ...}");
  }
  return p;
}

SplitBehavior parse_behavior(const Node& n) {
  static const std::map<std::string, SplitBehavior> kinds = {{"Removed", SplitBehavior::kRemoved},
                                                             {"Isolated", SplitBehavior::kIsolated},
                                                             {"MergedWithPrevious", SplitBehavior::kMergedWithPrevious},
                                                             {"MergedWithNext", SplitBehavior::kMergedWithNext},
                                                             {"Contiguous", SplitBehavior::kContiguous}};
  const std::string s = n.str();
  const auto it = kinds.find(s);
  if (it == kinds.end())
    n.fail("unknown split behavior \"" + s + "\" (Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous)");
  return it->second;
}

PreTokenizer::Prepend parse_prepend(const Node& n) {
  if (n.has("prepend_scheme")) {
    const Node s = n.at("prepend_scheme");
    const std::string v = s.str();
    if (v == "always") return PreTokenizer::Prepend::kAlways;
    if (v == "first") return PreTokenizer::Prepend::kFirst;
    if (v == "never") return PreTokenizer::Prepend::kNever;
    s.fail("unknown prepend_scheme \"" + v + "\" (always, first, never)");
  }
  return n.opt_bool("add_prefix_space", true) ? PreTokenizer::Prepend::kAlways : PreTokenizer::Prepend::kNever;
}

Normalizer parse_normalizer(const Node& n) {
  const std::string t = n.type();
  Normalizer r;
  using T = Normalizer::Type;
  if (t == "NFC")
    r.type = T::kNFC;
  else if (t == "NFD")
    r.type = T::kNFD;
  else if (t == "NFKC")
    r.type = T::kNFKC;
  else if (t == "NFKD")
    r.type = T::kNFKD;
  else if (t == "Lowercase")
    r.type = T::kLowercase;
  else if (t == "StripAccents")
    r.type = T::kStripAccents;
  else if (t == "Replace") {
    r.type = T::kReplace;
    r.pattern = parse_pattern(n.at("pattern"));
    r.content = n.at("content").str();
  } else if (t == "Prepend") {
    r.type = T::kPrepend;
    r.content = n.at("prepend").str();
  } else if (t == "Strip") {
    r.type = T::kStrip;
    r.left = n.opt_bool("strip_left", true);
    r.right = n.opt_bool("strip_right", true);
  } else if (t == "Sequence") {
    r.type = T::kSequence;
    const Node list = n.at("normalizers");
    for (std::size_t i = 0; i < list.array().size(); ++i) r.children.push_back(parse_normalizer(list.at(i)));
  } else {
    n.at("type").fail(
        "unsupported normalizer \"" + t +
        "\" (supported: NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Replace, Prepend, Strip, Sequence)");
  }
  return r;
}

PreTokenizer parse_pre_tokenizer(const Node& n) {
  const std::string t = n.type();
  PreTokenizer r;
  using T = PreTokenizer::Type;
  if (t == "Split") {
    r.type = T::kSplit;
    r.pattern = parse_pattern(n.at("pattern"));
    r.behavior = parse_behavior(n.at("behavior"));
    r.invert = n.opt_bool("invert", false);
  } else if (t == "ByteLevel") {
    r.type = T::kByteLevel;
    r.add_prefix_space = n.opt_bool("add_prefix_space", true);
    r.use_regex = n.opt_bool("use_regex", true);
  } else if (t == "Metaspace") {
    r.type = T::kMetaspace;
    r.replacement = single_char(n.at("replacement"));
    r.prepend = parse_prepend(n);
    r.split = n.opt_bool("split", true);
  } else if (t == "Digits") {
    r.type = T::kDigits;
    r.individual_digits = n.opt_bool("individual_digits", false);
  } else if (t == "Punctuation") {
    r.type = T::kPunctuation;
    r.behavior = n.has("behavior") ? parse_behavior(n.at("behavior")) : SplitBehavior::kIsolated;
  } else if (t == "Whitespace") {
    r.type = T::kWhitespace;
    r.pattern.regex = std::make_shared<Regex>(R"(\w+|[^\w\s]+)", "the Whitespace pre-tokenizer");
  } else if (t == "WhitespaceSplit") {
    r.type = T::kWhitespaceSplit;
  } else if (t == "Sequence") {
    r.type = T::kSequence;
    const Node list = n.at("pretokenizers");
    for (std::size_t i = 0; i < list.array().size(); ++i) r.children.push_back(parse_pre_tokenizer(list.at(i)));
  } else {
    n.at("type").fail("unsupported pre-tokenizer \"" + t +
                      "\" (supported: Split, ByteLevel, Metaspace, Digits, Punctuation, Whitespace, WhitespaceSplit, "
                      "Sequence)");
  }
  return r;
}

Decoder parse_decoder(const Node& n) {
  const std::string t = n.type();
  Decoder r;
  using T = Decoder::Type;
  if (t == "ByteLevel")
    r.type = T::kByteLevel;
  else if (t == "ByteFallback")
    r.type = T::kByteFallback;
  else if (t == "Fuse")
    r.type = T::kFuse;
  else if (t == "Strip") {
    r.type = T::kStrip;
    r.content = single_char(n.at("content"));
    r.start = int(n.opt_int("start", 0));
    r.stop = int(n.opt_int("stop", 0));
    if (r.start < 0 || r.stop < 0) n.fail("negative start or stop");
  } else if (t == "Replace") {
    r.type = T::kReplace;
    r.pattern = parse_pattern(n.at("pattern"));
    r.content = n.at("content").str();
  } else if (t == "Metaspace") {
    r.type = T::kMetaspace;
    r.replacement = single_char(n.at("replacement"));
    r.strip_first_space = parse_prepend(n) != PreTokenizer::Prepend::kNever;
  } else if (t == "Sequence") {
    r.type = T::kSequence;
    const Node list = n.at("decoders");
    for (std::size_t i = 0; i < list.array().size(); ++i) r.children.push_back(parse_decoder(list.at(i)));
  } else {
    n.at("type").fail("unsupported decoder \"" + t +
                      "\" (supported: ByteLevel, ByteFallback, Fuse, Strip, Replace, Metaspace, Sequence)");
  }
  return r;
}

// The special tokens a post-processor puts before and after a single sequence.
struct Template {
  std::vector<int> before, after;
};

void parse_post_processor(const Node& n, Template& out) {
  const std::string t = n.type();
  if (t == "ByteLevel") return;  // offsets only
  if (t == "Sequence") {
    const Node list = n.at("processors");
    for (std::size_t i = 0; i < list.array().size(); ++i) parse_post_processor(list.at(i), out);
    return;
  }
  if (t != "TemplateProcessing")
    n.at("type").fail("unsupported post-processor \"" + t + "\" (supported: TemplateProcessing, ByteLevel, Sequence)");
  const Node single = n.at("single");
  const Node specials = n.at("special_tokens");
  bool seen_a = false;
  for (std::size_t i = 0; i < single.array().size(); ++i) {
    const Node item = single.at(i);
    item.object();
    if (item.has("Sequence")) {
      seen_a = true;
      continue;
    }
    if (!item.has("SpecialToken")) item.fail("expected {\"SpecialToken\": ...} or {\"Sequence\": ...}");
    const std::string name = item.at("SpecialToken").at("id").str();
    const Node entry = specials.at(name);
    if (entry.null()) specials.fail("no entry for \"" + name + "\", which " + item.path + " names");
    const Node ids = entry.at("ids");
    for (std::size_t k = 0; k < ids.array().size(); ++k) {
      const int64_t id = ids.at(k).integer();
      if (id < 0 || id >= kMaxId) ids.at(k).fail("id " + std::to_string(id) + " out of range");
      (seen_a ? out.after : out.before).push_back(int(id));
    }
  }
}

AddedToken parse_added_token(const Node& n, int64_t id) {
  n.object();
  AddedToken t;
  if (id < 0 || id >= kMaxId) n.fail("id " + std::to_string(id) + " out of range");
  t.id = int(id);
  t.content = n.at("content").str();
  if (t.content.empty()) n.at("content").fail("empty content");
  t.special = n.opt_bool("special", false);
  t.lstrip = n.opt_bool("lstrip", false);
  t.rstrip = n.opt_bool("rstrip", false);
  t.single_word = n.opt_bool("single_word", false);
  t.normalized = n.opt_bool("normalized", !t.special);  // HF's default: normalized unless special
  return t;
}

// bos_token / eos_token of tokenizer_config.json: a string, an AddedToken object, or null.
std::optional<std::string> config_token(const Node& n) {
  if (n.null()) return std::nullopt;
  if (n.j.is_string()) return n.str();
  if (n.j.is_object()) return n.at("content").str();
  n.fail("expected a string, an AddedToken object or null, found " + type_name(n.j));
}

json parse_json(std::string_view text, const std::string& name) { return load::parse_json(text, name); }

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open '" + path + "'");
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

std::unique_ptr<BpeTokenizer> parse_tokenizer_json(std::string_view json_text, std::string_view config_text,
                                                   const std::string& name, const std::string& config_name) {
  const json root = parse_json(json_text, name);
  const Node top{root, "", name};
  top.object();
  BpeConfig c;
  c.path = name;

  // --- model
  const Node model = top.at("model");
  model.object();
  const std::string type = model.has("type") ? model.at("type").str() : (model.has("merges") ? "BPE" : "");
  if (type != "BPE")
    (model.has("type") ? model.at("type") : model).fail("unsupported model \"" + type + "\" (only BPE is supported)");
  if (model.has("dropout")) model.at("dropout").fail("BPE dropout is not supported (it must be null)");
  const Node vocab = model.at("vocab");
  vocab.object();
  for (const auto& [piece, id_json] : vocab.j.items()) {
    const Node idn{id_json, vocab.path + "[\"" + piece + "\"]", name};
    const int64_t id = idn.integer();
    if (id < 0 || id >= kMaxId) idn.fail("id " + std::to_string(id) + " out of range");
    if (piece.empty() || !utf8::is_valid(piece)) idn.fail("the token is empty or not UTF-8");
    if (std::size_t(id) >= c.vocab.size()) c.vocab.resize(std::size_t(id) + 1);
    if (!c.vocab[id].empty()) idn.fail("id " + std::to_string(id) + " is also \"" + c.vocab[id] + "\"");
    c.vocab[id] = piece;
  }
  const Node merges = model.at("merges");
  if (!merges.null()) {
    merges.array();
    c.merges.reserve(merges.j.size());
    for (std::size_t i = 0; i < merges.j.size(); ++i) {
      const Node m = merges.at(i);
      if (m.j.is_string()) {
        const std::string s = m.str();
        const std::size_t sp = s.find(' ');
        if (sp == std::string::npos || sp == 0 || sp + 1 >= s.size() || s.find(' ', sp + 1) != std::string::npos)
          m.fail("expected \"left right\" (two tokens and one space), found \"" + s + "\"");
        c.merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
      } else if (m.j.is_array() && m.j.size() == 2) {
        c.merges.emplace_back(m.at(0).str(), m.at(1).str());
      } else {
        m.fail("expected \"left right\" or [\"left\", \"right\"], found " + type_name(m.j));
      }
    }
  }
  c.merges_where = "'" + name + "': model.merges";
  c.model.byte_fallback = model.opt_bool("byte_fallback", false);
  c.model.ignore_merges = model.opt_bool("ignore_merges", false);
  c.model.fuse_unk = model.opt_bool("fuse_unk", false);
  c.model.continuing_subword_prefix = model.opt_str("continuing_subword_prefix");
  c.model.end_of_word_suffix = model.opt_str("end_of_word_suffix");
  std::optional<std::string> unk;
  if (model.has("unk_token")) unk = model.at("unk_token").str();

  // --- pipeline
  if (top.has("normalizer")) c.normalizer = parse_normalizer(top.at("normalizer"));
  if (top.has("pre_tokenizer")) c.pre_tokenizer = parse_pre_tokenizer(top.at("pre_tokenizer"));
  if (top.has("decoder")) c.decoder = parse_decoder(top.at("decoder"));
  Template tmpl;
  if (top.has("post_processor")) parse_post_processor(top.at("post_processor"), tmpl);

  // --- added tokens
  std::map<int, std::size_t> added_at;  // id -> index in c.added
  if (top.has("added_tokens")) {
    const Node list = top.at("added_tokens");
    for (std::size_t i = 0; i < list.array().size(); ++i) {
      const Node t = list.at(i);
      t.object();
      AddedToken a = parse_added_token(t, t.at("id").integer());
      if (added_at.count(a.id)) t.at("id").fail("id " + std::to_string(a.id) + " appears twice");
      added_at[a.id] = c.added.size();
      c.added.push_back(std::move(a));
    }
  }

  // --- tokenizer_config.json
  std::optional<bool> add_bos;
  std::optional<std::string> bos_token, eos_token;
  json cfg_root;
  if (!config_text.empty()) {
    cfg_root = parse_json(config_text, config_name);
    const Node cfg{cfg_root, "", config_name};
    cfg.object();
    if (cfg.has("add_bos_token")) add_bos = cfg.at("add_bos_token").boolean();
    c.clean_spaces = cfg.opt_bool("clean_up_tokenization_spaces", false);
    bos_token = config_token(cfg.at("bos_token"));
    eos_token = config_token(cfg.at("eos_token"));
    if (cfg.has("added_tokens_decoder")) {
      const Node dec = cfg.at("added_tokens_decoder");
      for (const auto& [key, value] : dec.object().items()) {
        const Node t{value, dec.path + "[\"" + key + "\"]", config_name};
        int64_t id = -1;
        try {
          std::size_t used = 0;
          id = std::stoll(key, &used);
          if (used != key.size()) id = -1;
        } catch (const std::exception&) {
        }
        if (id < 0) t.fail("the key is not a token id");
        if (added_at.count(int(id))) continue;  // tokenizer.json has it
        added_at[int(id)] = c.added.size();
        c.added.push_back(parse_added_token(t, id));
      }
    }
  }

  // --- ids of named tokens
  auto id_of = [&](const std::string& content) -> std::optional<int> {
    for (const AddedToken& a : c.added)
      if (a.content == content) return a.id;
    for (std::size_t i = 0; i < c.vocab.size(); ++i)
      if (c.vocab[i] == content) return int(i);
    return std::nullopt;
  };
  if (unk) {
    const auto id = id_of(*unk);
    if (!id) model.at("unk_token").fail("\"" + *unk + "\" is not in the vocabulary");
    c.model.unk_id = *id;
  }
  if (tmpl.before.size() > 1)
    top.at("post_processor")
        .fail("the template adds " + std::to_string(tmpl.before.size()) +
              " tokens before the text; only a single BOS token is supported");
  c.bos_id = tmpl.before.empty() ? -1 : tmpl.before.front();
  c.add_bos = !tmpl.before.empty();
  if (bos_token) {
    const auto id = id_of(*bos_token);
    if (!id)
      throw std::runtime_error("'" + config_name + "': bos_token: \"" + *bos_token + "\" is not in the vocabulary");
    c.bos_id = *id;
  }
  if (eos_token) {
    const auto id = id_of(*eos_token);
    if (!id)
      throw std::runtime_error("'" + config_name + "': eos_token: \"" + *eos_token + "\" is not in the vocabulary");
    c.eos_id = *id;
  }
  if (add_bos) c.add_bos = *add_bos;
  return std::make_unique<BpeTokenizer>(std::move(c));
}

std::unique_ptr<BpeTokenizer> load_tokenizer_json(const std::string& json_path, const std::string& config_path) {
  const std::string text = read_file(json_path);
  const std::string config = config_path.empty() ? std::string() : read_file(config_path);
  return parse_tokenizer_json(text, config, json_path, config_path.empty() ? "tokenizer_config.json" : config_path);
}

}  // namespace pagedchat::bpe
