// The CPU kernel of Backend::gated_delta_net (kernels/ops.h): the recurrent core of a Gated
// DeltaNet layer, one token after another per sequence and value head (the delta rule's state
// [head_v_dim][head_k_dim] stays in the core's cache while the head's tokens pass). The delta
// rule's inner loops are the ISA kernels' delta_rule_step (written once against V, so every
// instruction-set level gives the same bits); the conv and the norms are portable C++.
#pragma once

#include <vector>

#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/ops.h"

namespace pagedchat::cpu {

/// Backend::gated_delta_net on `pool`; `scratch` grows to hold the convolved projections of the
/// call's tokens ([T, conv_dim] float32).
void gated_delta_net(ThreadPool& pool, const IsaKernels& k, float* out, const float* proj,
                     const kernels::GatedDeltaNetSpec& spec, const kernels::DeltaNetSequence* seqs, int num_seqs,
                     std::vector<float>& scratch);

}  // namespace pagedchat::cpu
