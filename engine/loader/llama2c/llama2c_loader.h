// Loader for llama2.c checkpoints (karpathy/llama2.c, run.c's legacy format): a header of 7 int32
// (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len; vocab_size > 0 means the
// classifier shares the token embedding), then float32 weights in run.c's order.
#pragma once

#include <string>

#include "engine/model/model_weights.h"

namespace pagedchat {

/// Why `path` is not a usable llama2.c checkpoint ("cannot be read", "is truncated: ...", "is not
/// a valid llama2.c checkpoint: ..."), or "" when it starts with a plausible header whose implied
/// size fits the file. Reads only the 28-byte header and the file size.
std::string llama2c_checkpoint_problem(const std::string& path);

/// True when llama2c_checkpoint_problem(`path`) is "".
bool looks_like_llama2c_checkpoint(const std::string& path);

/// Loads a llama2.c checkpoint by mmap. Every header value is range-checked and every tensor's
/// extent is checked against the file size before use. Throws std::runtime_error naming the file
/// and the problem ("truncated: needs N bytes, has M", "n_heads 0 out of range", ...).
LoadedModel load_llama2c(const std::string& path);

}  // namespace pagedchat
