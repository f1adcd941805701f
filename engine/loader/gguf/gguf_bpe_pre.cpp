// The expressions and the name table are llama.cpp b4747's (src/llama-vocab.cpp, MIT; THIRD_PARTY_NOTICES).
#include "engine/loader/gguf/gguf_bpe_pre.h"

#include <map>

namespace pagedchat {

namespace {

// LLAMA_VOCAB_PRE_TYPE_* -> expressions (llama.cpp b4747 llm_tokenizer_bpe; TEKKEN: the original
// from tokenizer.json, quoted in llama.cpp's comment).
const std::map<std::string, std::vector<std::string>>& expressions() {
  // One regex a line, as the tokenizer.json files list them; clang-format would re-wrap the
  // long UTF-8 literals differently on each run.
  // clang-format off
  static const std::map<std::string, std::vector<std::string>> table = {
    {"DEFAULT", {"[\\p{P}\\$\\+<=>\\^~\\|]+",
      "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
      "\\p{N}+",
      "[0-9][0-9][0-9]"}},
    {"LLAMA3", {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"DBRX", {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"SMAUG", {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"DEEPSEEK_LLM", {"[\r\n]",
      "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
      "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
      "\\s+$",
      "[一-龥ࠀ-一가-퟿]+",
      "\\p{N}+"}},
    {"DEEPSEEK3_LLM", {"\\p{N}{1,3}",
      "[一-龥぀-ゟ゠-ヿ]+",
      "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"}},
    {"DEEPSEEK_CODER", {"[\r\n]",
      "\\s?\\p{L}+",
      "\\s?\\p{P}+",
      "[一-龥ࠀ-一가-퟿]+",
      "\\p{N}"}},
    {"FALCON", {"[\\p{P}\\$\\+<=>\\^~\\|`]+",
      "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
      "[0-9][0-9][0-9]"}},
    {"STARCODER", {"\\p{N}",
      "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"}},
    {"REFACT", {"\\p{N}",
      "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"}},
    {"COMMAND_R", {"\\p{N}",
      "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"}},
    {"SMOLLM", {"\\p{N}",
      "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"}},
    {"CODESHELL", {"\\p{N}",
      "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"}},
    {"EXAONE", {"\\p{N}",
      "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"}},
    {"MINERVA", {"\\p{N}",
      "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"}},
    {"GPT2", {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"}},
    // o200k (tokenizer.json's own pattern; PCRE2 runs its (?i:...) group as written).
    {"GPT4O", {"[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"MPT", {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"}},
    {"OLMO", {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"}},
    {"JAIS", {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"}},
    {"STABLELM2", {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"QWEN2", {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    // Qwen3.5's tokenizer.json: as QWEN2, but letters absorb combining marks (\\p{M}).
    {"QWEN35", {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"PORO", {" ?[^(\\s|.,!?…。，、।۔،)]+"}},
    {"BLOOM", {" ?[^(\\s|.,!?…。，、।۔،)]+"}},
    {"GPT3_FINNISH", {" ?[^(\\s|.,!?…。，、।۔،)]+"}},
    {"CHATGLM4", {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"VIKING", {" ?[^(\\s|.,!?…。，、।۔،)]+",
      "\\p{N}"}},
    {"TEKKEN", {"[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"CHAMELEON", {"<sentinel:[0-9]+>",
      "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z",
      "([\\t\\n]|    |  )",
      "\\p{N}",
      "[\\p{P}!-/:-@\\[-`{-~]",
      "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"}},
  };
  // clang-format on
  return table;
}

struct Name {
  const char* name;
  const char* type;
  bool ignore_merges, add_bos, clean_spaces, no_bos, nfc;
};
// llama_vocab::impl::load: tokenizer.ggml.pre -> type and the defaults each branch sets
// (BPE defaults: clean_spaces true, add_bos false, ignore_merges false).
constexpr Name kNames[] = {
    {"default", "DEFAULT", false, false, true, false, false},
    {"llama3", "LLAMA3", true, true, true, false, false},
    {"llama-v3", "LLAMA3", true, true, true, false, false},
    {"llama-bpe", "LLAMA3", true, true, true, false, false},
    {"falcon3", "LLAMA3", true, true, true, false, false},
    {"deepseek-llm", "DEEPSEEK_LLM", false, false, false, false, false},
    {"deepseek-coder", "DEEPSEEK_CODER", false, false, false, false, false},
    {"deepseek-v3", "DEEPSEEK3_LLM", false, false, false, false, false},
    {"falcon", "FALCON", false, false, true, false, false},
    {"mpt", "MPT", false, false, true, false, false},
    {"starcoder", "STARCODER", false, false, true, false, false},
    {"gpt-2", "GPT2", false, false, true, false, false},
    {"phi-2", "GPT2", false, false, true, false, false},
    {"jina-es", "GPT2", false, false, true, false, false},
    {"jina-de", "GPT2", false, false, true, false, false},
    {"gigachat", "GPT2", false, false, true, false, false},
    {"jina-v1-en", "GPT2", false, false, true, false, false},
    {"jina-v2-es", "GPT2", false, false, true, false, false},
    {"jina-v2-de", "GPT2", false, false, true, false, false},
    {"jina-v2-code", "GPT2", false, false, true, false, false},
    {"roberta-bpe", "GPT2", false, false, true, false, false},
    {"refact", "REFACT", false, false, true, false, false},
    {"command-r", "COMMAND_R", false, false, false, false, false},
    {"qwen2", "QWEN2", false, false, false, false, true},
    {"qwen35", "QWEN35", false, false, false, false, true},
    {"deepseek-r1-qwen", "QWEN2", false, false, false, false, true},
    {"stablelm2", "STABLELM2", false, false, true, false, false},
    {"olmo", "OLMO", false, false, true, false, false},
    {"dbrx", "DBRX", false, false, true, false, false},
    {"smaug-bpe", "SMAUG", false, false, true, false, false},
    {"poro-chat", "PORO", false, false, false, false, false},
    {"chatglm-bpe", "CHATGLM4", false, false, true, true, false},
    {"viking", "VIKING", false, false, false, false, false},
    {"jais", "JAIS", false, false, true, false, false},
    {"tekken", "TEKKEN", true, true, false, false, false},
    {"smollm", "SMOLLM", false, false, false, false, false},
    {"codeshell", "CODESHELL", false, false, true, false, false},
    {"bloom", "BLOOM", false, false, true, false, false},
    {"gpt3-finnish", "GPT3_FINNISH", false, false, true, false, false},
    {"exaone", "EXAONE", false, false, true, false, false},
    // Names later llama.cpp / ik_llama.cpp (8337e4cd3) added for the families of engine/model/arch:
    {"exaone4", "GPT2", false, false, true, false, false},
    {"gpt-4o", "GPT4O", false, false, false, false, false},
    {"llama4", "GPT4O", false, false, false, false, false},
    {"chameleon", "CHAMELEON", false, true, false, false, false},
    {"minerva-7b", "MINERVA", false, false, true, false, false},
    {"megrez", "QWEN2", false, false, true, false, false},
};

}  // namespace

std::optional<GgufBpePre> gguf_bpe_pre(std::string_view name) {
  const std::string_view key = name.empty() ? std::string_view("default") : name;
  for (const Name& n : kNames) {
    if (key != n.name) continue;
    GgufBpePre p;
    p.type = n.type;
    p.regexes = expressions().at(n.type);
    p.ignore_merges = n.ignore_merges;
    p.add_bos = n.add_bos;
    p.clean_spaces = n.clean_spaces;
    p.no_bos = n.no_bos;
    p.nfc = n.nfc;
    return p;
  }
  return std::nullopt;
}

const std::vector<std::string>& gguf_bpe_pre_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Name& n : kNames) v.emplace_back(n.name);
    return v;
  }();
  return names;
}

}  // namespace pagedchat
