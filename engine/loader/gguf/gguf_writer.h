// Writing a loaded model as a GGUF v3 file that llama.cpp (b4747) and load_gguf read: the
// architectures "llama" (Llama 1-3.x, Mistral, llama2.c models), "qwen2" and "qwen3" (the last with
// llama.cpp's later key and tensor names: b4747 does not know it), with the model's vocabulary
// (gguf_vocab_writer.h) and chat template.
//
// What is written follows llama.cpp b4747's convert_hf_to_gguf.py (Model.set_gguf_parameters,
// LlamaModel.set_gguf_parameters / modify_tensors / generate_extra_tensors, Qwen2Model) and
// gguf-py's key names: {arch}.context_length, .embedding_length, .block_count,
// .feed_forward_length, .attention.head_count, .attention.head_count_kv, .rope.freq_base,
// .attention.layer_norm_rms_epsilon, .attention.key_length / .value_length (when head_dim is not
// embedding_length / head_count, and always for qwen3), llama also .vocab_size and
// .rope.dimension_count; rope scaling: linear as .rope.scaling.type/.factor, Llama 3's (HF
// rope_scaling llama3) as the tensor rope_freqs.weight [head_dim/2] of frequency divisors (llama
// only; llama.cpp's qwen2 graph has no such input). Tensors: token_embd, output_norm, output (absent
// when tied), blk.N.attn_norm, attn_q/k/v (+ .bias), attn_output (+ .bias), attn_q_norm /
// attn_k_norm (qwen3), ffn_norm, ffn_gate, ffn_down, ffn_up.
// RoPE layout: GGUF llama files rotate interleaved pairs, so a model computed with rotate-half
// (Hugging Face weights) gets its q/k rows (weights and biases) permuted as LlamaModel.permute
// does; qwen2/qwen3 files keep Hugging Face's order (llama.cpp runs them with NEOX rope).
// Types (llama-quantize's choices): vectors (norms, biases, rope_freqs) stay F32; "f16" stores every
// matrix as F16; "q8_0" a matrix as Q8_0 when its rows hold a multiple of 32 values, else F16.
#pragma once

#include <string>

#include "engine/loader/gguf/gguf_vocab_writer.h"
#include "engine/model/model_weights.h"
#include "engine/text/tokenizer.h"

namespace pagedchat {

/// Writes `model` with `tokenizer`'s vocabulary (gguf_vocab_of: read again from the tokenizer's
/// source file) to `path` as GGUF v3. `type` is "f32", "f16" or "q8_0" (std::invalid_argument
/// otherwise); `chat_template` is stored as tokenizer.chat_template when not empty. The file
/// appears at `path` only when complete. Throws std::runtime_error naming the path: unwritable,
/// a vocabulary whose size differs from the model's rows, a vocabulary that cannot be expressed,
/// an architecture or option llama.cpp's graph for it cannot run (another architecture, q/k norms
/// outside qwen3, Llama 3 rope scaling on qwen2/qwen3, a qwen model in interleaved RoPE layout),
/// non-finite weights for q8_0.
void write_gguf(const LoadedModel& model, const Tokenizer& tokenizer, const std::string& path, const std::string& type,
                const std::string& chat_template = "");

/// As above with the vocabulary given.
void write_gguf(const LoadedModel& model, const GgufVocab& vocab, const std::string& path, const std::string& type,
                const std::string& chat_template = "");

/// A vocabulary-only GGUF (tokenizer.ggml.* metadata, no tensors), as llama.cpp's ggml-vocab-*.gguf
/// test files; read it back with GgufFile + read_gguf_vocab. Throws std::runtime_error naming the path.
void write_gguf_vocab(const GgufVocab& vocab, const std::string& path);

}  // namespace pagedchat
