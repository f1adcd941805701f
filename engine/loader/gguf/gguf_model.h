// Models from GGUF files (llama.cpp's own format): {arch}.* metadata becomes the ModelConfig, the
// token_embd / blk.N.* / output_norm / output tensors the ModelWeights, for the architectures
// "llama" (Llama 1-3.x, Mistral, TinyLlama, ...), "qwen2" (Qwen2, Qwen2.5) and "qwen3" (key and
// tensor names as llama.cpp after b4747 writes them). Names and rules: llama.cpp b4747
// src/llama-model.cpp (load_hparams, load_tensors, llama_model_rope_type), src/llama-arch.cpp,
// gguf-py/gguf/constants.py.
//
// Weights: matrices stay in the file's type (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K,
// Q5_K, Q6_K, MXFP4, IQ4_NL, IQ4_XS) and point into the memory-mapped file; the model packs them for the kernels and
// drops the file's pages (engine/model/decoder_model.h). Norms and biases are float32 (used in
// place when the file stores them so, else converted). Other types (Q2_K, Q3_K, the other IQ types) are
// refused naming the tensor and its type.
// RoPE: GGUF llama files rotate interleaved pairs (llama.cpp's converters permute Hugging Face's
// Q/K rows into that layout: rope type NORM); qwen2 / qwen3 files keep Hugging Face's row order and
// rotate halves (rope type NEOX).
#pragma once

#include <memory>
#include <string>

#include "engine/model/model_weights.h"
#include "engine/text/tokenizer.h"

namespace pagedchat {

class GgufFile;

/// Builds the model of `f`. general.architecture must be "llama", "qwen2" or "qwen3" (others are
/// refused by name); with A that name: needs A.context_length (-> max_seq_len, soft: a larger
/// max_model_len is allowed with a warning), A.embedding_length, A.block_count,
/// A.feed_forward_length, A.attention.head_count; optional A.attention.head_count_kv (default
/// head_count), A.attention.key_length (head size; default embedding_length / head_count; Qwen3),
/// A.attention.value_length (must equal it), A.rope.dimension_count (must equal the head size),
/// A.rope.freq_base (10000), A.attention.layer_norm_rms_epsilon (1e-5), A.rope.scaling.type /
/// .factor (none, or linear; yarn and longrope are refused), A.vocab_size (must match).
/// Tensors (GGUF ne = {cols, rows}): token_embd [vocab, dim], blk.N.attn_norm/ffn_norm [dim],
/// attn_q [n_heads*hd, dim], attn_k/attn_v [n_kv_heads*hd, dim], attn_output [dim, n_heads*hd],
/// ffn_gate/ffn_up [hidden, dim], ffn_down [dim, hidden], output_norm [dim], output [vocab, dim]
/// (absent: tied to token_embd); per architecture: llama — optional attn_{q,k,v,output}.bias and
/// rope_freqs.weight [hd/2] (Llama 3.1 frequency divisors -> ModelConfig::rope_freq_factors);
/// qwen2 — attn_{q,k,v}.bias required; qwen3 — attn_q_norm / attn_k_norm [hd] required.
/// Refuses what it would compute wrongly: MoE (expert_count), sliding-window attention,
/// unsupported RoPE scaling, unknown or extra tensors (FFN biases, ...). When it keeps tensors in
/// place it takes `f`'s mapping into the result's `files`. Throws std::runtime_error naming the
/// file and the key or tensor.
LoadedModel load_gguf_model(GgufFile& f);

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
