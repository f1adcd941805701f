// Llama-architecture models from GGUF files (llama.cpp's own format): llama.* metadata becomes the
// ModelConfig, the token_embd / blk.N.* / output_norm / output tensors the LlamaWeights.
//
// Weights: F32 tensors are used in place from the memory-mapped file; F16, BF16, Q8_0, Q4_0, Q4_K
// and Q6_K tensors are dequantized to float32 into owned buffers at load time (the engine has no
// quantized kernels yet), so they take 4 bytes per weight in memory. When no matrix is used in
// place the few F32 norms are copied too and the file is unmapped (resident = the float32 copies).
// RoPE: GGUF llama files rotate interleaved pairs (llama.cpp's converters permute Hugging Face's
// Q/K rows into that layout), so the config says RopeStyle::kInterleaved.
#pragma once

#include <memory>
#include <string>

#include "engine/model/model_weights.h"
#include "engine/text/tokenizer.h"

namespace pagedchat {

class GgufFile;

/// Builds the model of `f`. general.architecture must be "llama" (others are refused by name);
/// needs llama.context_length (-> max_seq_len, soft: a larger max_model_len is allowed with a
/// warning), .embedding_length, .block_count, .feed_forward_length, .attention.head_count; optional
/// .attention.head_count_kv (default head_count), .rope.dimension_count (must equal head_dim),
/// .rope.freq_base (10000), .attention.layer_norm_rms_epsilon (1e-5). Tensors (GGUF ne = {cols,
/// rows}): token_embd [vocab, dim], blk.N.attn_norm/ffn_norm [dim], attn_q [n_heads*hd, dim],
/// attn_k/attn_v [n_kv_heads*hd, dim], attn_output [dim, n_heads*hd], ffn_gate/ffn_up [hidden, dim],
/// ffn_down [dim, hidden], output_norm [dim], output [vocab, dim] (absent: tied to token_embd).
/// Refuses what it would compute wrongly: MoE, RoPE scaling, unknown or extra tensors. When it keeps
/// tensors in place it takes `f`'s mapping into the result's `files`. Throws std::runtime_error
/// naming the file and the key or tensor.
LoadedModel load_gguf_llama(GgufFile& f);

/// A GGUF file's model, tokenizer and chat template.
struct GgufModel {
  LoadedModel model;
  std::unique_ptr<Tokenizer> tokenizer;  ///< null when not asked for
  std::string chat_template;             ///< tokenizer.chat_template, or ""
  bool add_bos = true;                   ///< the tokenizer's add_bos(): add_bos_token or llama.cpp's default
};

/// Opens `path` and loads its model, plus its tokenizer when `with_tokenizer` (see
/// gguf_tokenizer.h). Throws std::runtime_error naming the file.
GgufModel load_gguf(const std::string& path, bool with_tokenizer = true);

}  // namespace pagedchat
