// CUDA device discovery. The CUDA kernels themselves arrive with the CUDA backend issue; this file
// keeps the CUDA build path (nvcc, cudart, cuBLAS linkage) compiled and tested from the start.
#pragma once

#include <string>

namespace pagedchat::cuda {

/// Number of CUDA devices usable by this process (0 when there is no driver or no GPU; never throws).
int device_count();
/// "NVIDIA H200 (sm_90, 139.8 GiB)" for device `index`, or "" when it does not exist.
std::string device_name(int index);

}  // namespace pagedchat::cuda
