// The CPU backend (kernels/ops.h) with an explicit instruction-set level, for tests and
// benchmarks that compare the scalar / AVX2 / AVX-512 paths on one machine.
#pragma once

#include <memory>

#include "kernels/cpu/cpu_features.h"
#include "kernels/ops.h"

namespace pagedchat::cpu {

/// A CPU backend using the kernels for `isa`, which must be supported (isa_supported()).
std::unique_ptr<kernels::Backend> make_cpu_backend(int num_threads, Isa isa);

/// The instruction-set level a backend made by make_cpu_backend runs; kScalar for other backends.
Isa backend_isa(const kernels::Backend& backend);

}  // namespace pagedchat::cpu
