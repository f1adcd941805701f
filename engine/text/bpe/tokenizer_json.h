// Hugging Face tokenizer.json (the `tokenizers` library's serialization) -> BpeTokenizer, with
// the tokenizer_config.json of the same folder when there is one.
//
// Read (HF tokenizers 0.19-0.21 serialization): model BPE (vocab, merges as "a b" strings or
// ["a", "b"] pairs, byte_fallback, ignore_merges, unk_token, fuse_unk, continuing_subword_prefix,
// end_of_word_suffix; dropout must be null); normalizers NFC, NFD, NFKC, NFKD, Lowercase,
// StripAccents, Replace, Prepend, Strip, Sequence; pre-tokenizers Split, ByteLevel, Metaspace,
// Digits, Punctuation, Whitespace, WhitespaceSplit, Sequence; decoders ByteLevel, ByteFallback,
// Fuse, Strip, Replace, Metaspace, Sequence; added_tokens; post_processor TemplateProcessing
// (a single special token before the text = BOS added), ByteLevel, Sequence.
// tokenizer_config.json: bos_token / eos_token (strings or AddedToken objects), add_bos_token
// (overrides the post-processor), added_tokens_decoder (tokens missing from tokenizer.json).
// Anything else — another model type, an unknown component, a wrong JSON type — is refused with
// the file, the JSON path and what was found.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "engine/text/bpe/bpe_tokenizer.h"

namespace pagedchat::bpe {

/// Loads `json_path` and, when `config_path` is not empty, that tokenizer_config.json. Throws
/// std::runtime_error naming the file and the field.
std::unique_ptr<BpeTokenizer> load_tokenizer_json(const std::string& json_path, const std::string& config_path = "");

/// The same from memory: `json` is the tokenizer.json text, `config` the tokenizer_config.json
/// text or "" for none; `name` and `config_name` stand for the files in errors.
std::unique_ptr<BpeTokenizer> parse_tokenizer_json(std::string_view json, std::string_view config,
                                                   const std::string& name,
                                                   const std::string& config_name = "tokenizer_config.json");

}  // namespace pagedchat::bpe
