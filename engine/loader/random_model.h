// Random-weight models for benchmarks: "random:SHAPE" builds a Llama of a known shape with
// random float32 weights in memory, so realistic sizes can be measured without downloads.
#pragma once

#include <string>

#include "engine/loader/llama2c/llama2c_loader.h"

namespace pagedchat {

/// True for specs starting with "random:".
bool is_random_model_spec(const std::string& spec);

/// Builds a model from "random:NAME" or "random:NAME,key=value,..." or "random:key=value,...".
/// Names: stories260K, stories15M, stories42M, stories110M, tinyllama-1.1b, llama-2-7b,
/// llama-3-8b. Keys: dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, max_seq_len,
/// seed, tied (1, the default: the classifier is the token embedding; 0: a separate random
/// classifier, as Llama 3 8B and TinyLlama have), dtype (f32 or bf16: the matrices rounded to bfloat16, half the
/// memory: how an 8B shape fits in RAM to be written out by `convert`). Weights ~ N(0, 0.02) (norms 1), so activations
/// stay finite. Throws std::invalid_argument
/// for an unknown name or key and std::runtime_error when the weights would not fit in memory.
LoadedModel make_random_model(const std::string& spec);

}  // namespace pagedchat
