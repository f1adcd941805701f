// llama.cpp's BPE pre-tokenizer types (GGUF tokenizer.ggml.pre), as llama.cpp b4747 defines them (plus
// exaone4, gpt-4o and llama4, as ik_llama.cpp 8337e4cd3 maps them, for the families of engine/model/arch)
// in src/llama-vocab.cpp: the name -> type mapping of llama_vocab::impl::load, each type's
// expressions (llm_tokenizer_bpe; applied one after the other, each match isolated, then bytes
// become GPT-2 characters) and the defaults a type sets (ignore_merges, add_bos, clean_spaces,
// no BOS for chatglm-bpe).
//
// The expressions run as written on PCRE2 (see engine/text/bpe/regex.h), which gives what Hugging
// Face tokenizers computes with them. Where llama.cpp's expression is an approximation that
// changes the result, the original from the model's tokenizer.json is used instead: "tekken"
// (llama.cpp rewrote its \p{Lu}/\p{Ll}/\p{M} classes as ASCII look-aheads; its own comment keeps
// the original). Where llama.cpp leaves out a normalizer the model's tokenizer.json has, it is
// added back: Qwen2 ("qwen2", "deepseek-r1-qwen") normalizes to NFC.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pagedchat {

struct GgufBpePre {
  std::string type;                  ///< llama.cpp's LLAMA_VOCAB_PRE_TYPE_* name, e.g. "LLAMA3"
  std::vector<std::string> regexes;  ///< applied in order (Split, Isolated)
  bool ignore_merges = false;
  bool add_bos = false;      ///< default when the file has no tokenizer.ggml.add_bos_token
  bool clean_spaces = true;  ///< llama.cpp's clean_up_tokenization_spaces default
  bool no_bos = false;       ///< the type has no BOS token (chatglm-bpe)
  bool nfc = false;          ///< NFC-normalize the input (Qwen2's tokenizer.json does)
};

/// The pre-tokenizer for tokenizer.ggml.pre = `name` ("" = absent, llama.cpp's "default" with a
/// warning); std::nullopt when the name is none of those.
std::optional<GgufBpePre> gguf_bpe_pre(std::string_view name);

/// Every name accepted, for error messages and tests.
const std::vector<std::string>& gguf_bpe_pre_names();

}  // namespace pagedchat
