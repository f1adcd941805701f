// The load-time check that makes a wrong GPU backend safe: a tiny random-weight model runs
// through the backend and through the CPU backend (the reference), and their logits are compared.
#pragma once

#include <string>

#include "kernels/ops.h"

namespace pagedchat {

/// Runs a random model (2 layers, grouped-query attention, head size 64, float32 weights and KV
/// cache) through `backend` and the CPU backend: a step of two prompts (one of 600 tokens, so the
/// context crosses attention partitions and KV blocks) and a decode step of both. Returns "" when
/// every logit row agrees within ||a - b|| / ||b|| <= 1e-3, else a sentence saying by how much
/// they differ (or what the backend threw). Never throws.
std::string check_backend_agrees(kernels::Backend& backend, int num_threads);

}  // namespace pagedchat
