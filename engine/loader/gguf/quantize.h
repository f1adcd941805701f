// float32 -> the block types `pagedchat-cli convert --type q4_k_m` writes: Q4_K, Q6_K (K-quants,
// 256 values per block) and Q5_0 (32 per block, for rows whose length is no multiple of 256), in
// ggml's block layouts (ggml-common.h: block_q4_K, block_q6_K, block_q5_0), which the loader's
// dequantizers read back. The scales are chosen by our own least-squares search, not ggml's code;
// q4_k_m_tensor_type() follows llama.cpp's Q4_K_M recipe (THIRD_PARTY_NOTICES, 2).
#pragma once

#include <cstdint>
#include <string>

namespace pagedchat {

/// Q4_K: per 256 values an F16 scale d and min dmin, per 32 a 6-bit scale and 6-bit min, 4-bit
/// values; x ≈ d·sc·q − dmin·m. `n` a multiple of 256, every value finite (std::invalid_argument
/// otherwise). Writes n / 256 * 144 bytes.
void quantize_q4_k(const float* src, void* dst, uint64_t n);
/// Q6_K: per 256 values an F16 scale d, per 16 an int8 scale, 6-bit values; x ≈ d·sc·(q − 32).
/// `n` a multiple of 256, values finite. Writes n / 256 * 210 bytes.
void quantize_q6_k(const float* src, void* dst, uint64_t n);
/// Q5_0: per 32 values an F16 scale d and 5-bit values; x ≈ d·(q − 16). `n` a multiple of 32,
/// values finite. Writes n / 32 * 22 bytes.
void quantize_q5_0(const float* src, void* dst, uint64_t n);

/// The block type llama.cpp's Q4_K_M recipe gives the GGUF tensor `name` (a matrix of `cols`
/// columns; its layer read from "blk.N.", of `n_layers`): "q6_K" for output.weight (token_embd.weight
/// when the classifier is tied), for attn_v and ffn_down (experts too) on the layers its
/// use_more_bits rule picks (the first and last eighth, and every third between) and for a fused
/// attn_qkv (llama.cpp: Q5_K, which we do not write); "q4_K" for the other matrices. A row length
/// that is no multiple of 256 falls back as llama.cpp does: Q4_K -> Q5_0, Q6_K -> Q8_0 ("q5_0",
/// "q8_0"), and to "f16" when it is no multiple of 32 either.
std::string q4_k_m_tensor_type(const std::string& name, uint64_t cols, int n_layers, bool tied_output);

}  // namespace pagedchat
