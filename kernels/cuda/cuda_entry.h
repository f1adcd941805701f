// The C entry points of libpagedchat_cuda.so, which kernels/backend_factory.cpp finds with dlsym().
// The backend object crosses the boundary as a kernels::Backend*: both sides are compiled from the
// same kernels/ops.h, which pagedchat_cuda_abi() checks (the MD5 of ops.h, PAGEDCHAT_OPS_ABI).
#pragma once

#include <cstddef>

#include "kernels/ops.h"

extern "C" {

/// The ops.h this library was built against (an MD5 digest in hex).
const char* pagedchat_cuda_abi();
/// Number of CUDA devices; 0 with a message in why[why_len] when there is none (no driver, ...).
int pagedchat_cuda_device_count(char* why, std::size_t why_len);
/// A new CUDA backend on device `device` (delete it as a Backend), or null with a message in
/// error[error_len]. `num_threads`: host threads for load-time conversions; `enforce_eager`: no CUDA graphs.
pagedchat::kernels::Backend* pagedchat_cuda_create_backend(int device, int num_threads, int enforce_eager, char* error,
                                                           std::size_t error_len);
}
