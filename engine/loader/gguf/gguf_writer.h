// Writing a loaded model as a GGUF v3 file that llama.cpp / ik_llama.cpp and load_gguf read: every
// architecture of the model registry (engine/model/arch/registry.h): "llama" (Llama 1-3.x, Mistral,
// llama2.c models), "qwen2", "qwen3", "qwen3moe", "gemma3", "phi3", "smollm3", "exaone4" (the
// later ones with llama.cpp's later key and tensor names: b4747 does not know them), with the
// model's vocabulary (gguf_vocab_writer.h) and chat template.
//
// What is written follows llama.cpp's convert_hf_to_gguf.py (Model.set_gguf_parameters,
// LlamaModel.set_gguf_parameters / modify_tensors / generate_extra_tensors, Qwen2Model, and the
// later Qwen3MoeModel, Gemma3Model, Phi3MiniModel, SmolLM3Model, Exaone4Model) and gguf-py's key
// names: {arch}.context_length, .embedding_length, .block_count, .feed_forward_length (absent when
// every layer has experts), .attention.head_count, .attention.head_count_kv, .rope.freq_base,
// .attention.layer_norm_rms_epsilon, .attention.key_length / .value_length (when head_dim is not
// embedding_length / head_count, and always for qwen3, qwen3moe, gemma3, exaone4), llama, smollm3
// and exaone4 also .vocab_size, llama, smollm3 and phi3 .rope.dimension_count (and any partial
// rotary model); rope scaling: linear as .rope.scaling.type/.factor, Llama 3's (HF rope_scaling
// llama3) as the tensor rope_freqs.weight [rotary_dim/2] of frequency divisors (llama and exaone4;
// llama.cpp's other graphs have no such input), Phi-3's LongRoPE as rope_factors_long /
// rope_factors_short [rotary_dim/2] with .rope.scaling.attn_factor and
// .rope.scaling.original_context_length; experts: .expert_count, .expert_used_count,
// .expert_feed_forward_length; sliding windows: .attention.sliding_window (gemma3, phi3, exaone4;
// 0 for a 64-layer exaone4 without one) and, where the family's rule in code does not give the
// layers that slide, .attention.sliding_window_pattern (one bool per layer; always for exaone4).
// Tensors: token_embd, output_norm, output (absent when tied), blk.N.attn_norm, attn_q/k/v (+
// .bias) or attn_qkv (phi3), attn_output (+ .bias), attn_q_norm / attn_k_norm,
// post_attention_norm, ffn_norm, ffn_gate / ffn_down / ffn_up (phi3: ffn_up [gate | up], no
// ffn_gate) or ffn_gate_inp (F32) and 3-D ffn_gate_exps / ffn_down_exps / ffn_up_exps,
// post_ffw_norm — as the family has them.
// What the file says is checked before anything is written: the family's own rules
// (ModelFamily::gguf_hparams) applied to the keys must give the model's per-layer specs, experts
// and scales; a model they cannot describe (SmolLM3 NoPE layers other than every 4th, Qwen3-MoE
// dense layers or norm_topk_prob false, a Gemma 3 local RoPE base other than 10000, ...) is
// refused by name.
// RoPE layout: GGUF llama and smollm3 files rotate interleaved pairs, so a model computed with
// rotate-half (Hugging Face weights) gets its q/k rows (weights and biases) permuted as
// LlamaModel.permute does; the other families keep Hugging Face's order (NEOX rope).
// Types (llama-quantize's choices): vectors (norms, biases, rope factors) and the expert router stay
// F32; "f16" stores every other matrix as F16; "q8_0" a matrix as Q8_0 when its rows hold a
// multiple of 32 values, else F16.
#pragma once

#include <stop_token>
#include <string>

#include "engine/loader/gguf/gguf_vocab_writer.h"
#include "engine/model/model_weights.h"
#include "engine/text/tokenizer.h"

namespace pagedchat {

/// Writes `model` with `tokenizer`'s vocabulary (gguf_vocab_of: read again from the tokenizer's
/// source file) to `path` as GGUF v3. `type` is "f32", "f16", "q8_0" or "q4_k_m" (llama.cpp's
/// mix, q4_k_m_tensor_type() in quantize.h) (std::invalid_argument otherwise); `chat_template` is stored as
/// tokenizer.chat_template when not empty. The file appears at `path` only when complete. Throws std::runtime_error
/// naming the path: unwritable, a vocabulary whose size differs from the model's rows, a vocabulary that cannot be
/// expressed, an architecture or option llama.cpp's graph for it cannot run (another architecture, q/k norms outside
/// their families, Llama 3 rope scaling outside llama/exaone4, a NEOX-family model in interleaved RoPE layout, what the
/// family's keys cannot describe, see above), non-finite weights for the quantized types.
/// `stop`: a request to stop (the CLI's Ctrl+C), checked between rows: std::runtime_error, no file.
void write_gguf(const LoadedModel& model, const Tokenizer& tokenizer, const std::string& path, const std::string& type,
                const std::string& chat_template = "", std::stop_token stop = {});

/// As above with the vocabulary given.
void write_gguf(const LoadedModel& model, const GgufVocab& vocab, const std::string& path, const std::string& type,
                const std::string& chat_template = "", std::stop_token stop = {});

/// A vocabulary-only GGUF (tokenizer.ggml.* metadata, no tensors), as llama.cpp's ggml-vocab-*.gguf
/// test files; read it back with GgufFile + read_gguf_vocab. Throws std::runtime_error naming the path.
void write_gguf_vocab(const GgufVocab& vocab, const std::string& path);

}  // namespace pagedchat
