// Writing GGUF v3 files that llama.cpp (and load_gguf) read: a Llama model's weights with llama.*
// metadata, and its sentencepiece vocabulary as tokenizer.ggml.* metadata.
//
// Format source: ggml's docs/gguf.md (layout, alignment 32), llama.cpp's gguf-py constants (key
// names) and llama-quantize's choices: norms stay F32; "f16" stores every matrix as F16; "q8_0"
// stores a matrix as Q8_0 when its rows hold a multiple of 32 values, else as F16 (as llama.cpp
// does for stories260K's ffn_down with 172 columns). Hugging Face (rotate-half RoPE) weights get
// their Q/K rows permuted into the interleaved layout GGUF llama files use, as llama.cpp's
// convert_hf_to_gguf.py does.
#pragma once

#include <string>

#include "engine/loader/gguf/gguf_tokenizer.h"
#include "engine/model/model_weights.h"
#include "engine/text/tokenizer.h"

namespace pagedchat {

/// Writes `model` and `tokenizer`'s vocabulary to `path` as GGUF v3. `type` is "f32", "f16" or
/// "q8_0" (std::invalid_argument otherwise). The vocabulary is read again from the tokenizer's
/// source (`tokenizer.path()`: a sentencepiece .model, or a GGUF file) through sentencepiece's API
/// (IdToPiece, GetScore, IsControl/IsUnknown/IsByte/IsUnused); `chat_template` is stored when not
/// empty. The file appears at `path` only when complete (written to path + ".tmp", then renamed).
/// Throws std::runtime_error naming the path (unwritable, vocabulary size differs from the model's,
/// a non-BPE tokenizer, non-finite weights for q8_0).
void write_gguf(const LoadedModel& model, const Tokenizer& tokenizer, const std::string& path, const std::string& type,
                const std::string& chat_template = "");

/// As above with the vocabulary given.
void write_gguf(const LoadedModel& model, const SpmVocab& vocab, const std::string& path, const std::string& type,
                const std::string& chat_template = "");

/// A vocabulary-only GGUF (tokenizer.ggml.* metadata, no tensors), as llama.cpp's ggml-vocab-*.gguf
/// test files; read it back with GgufFile + read_gguf_vocab. Throws std::runtime_error naming the path.
void write_gguf_vocab(const SpmVocab& vocab, const std::string& path);

/// The vocabulary of `tokenizer`, read from its source file (see write_gguf).
SpmVocab vocab_of(const Tokenizer& tokenizer);

}  // namespace pagedchat
