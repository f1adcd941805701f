// The load-time check that makes a wrong GPU backend safe: a tiny random-weight model runs
// through the backend and through the CPU backend (the reference), and their logits are compared.
#pragma once

#include <string>

#include "kernels/ops.h"

namespace pagedchat {

/// Runs a random model (2 layers, grouped-query attention, head size 64) through `backend` and the
/// CPU backend: a step of two prompts (one of 600 tokens, so the context crosses attention
/// partitions and KV blocks) and a decode step of both, with float32 weights and KV cache, then
/// with bfloat16 weights and KV cache (a GPU's "auto", the path users run). Returns "" when every
/// logit row agrees within ||a - b|| / ||b|| <= 1e-3 (float32) and 3e-2 (bfloat16), else a
/// sentence saying which path differs and by how much (or what the backend threw). Never throws.
std::string check_backend_agrees(kernels::Backend& backend, int num_threads);

}  // namespace pagedchat
