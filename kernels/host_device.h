// PC_HOST_DEVICE marks the small per-element helpers (rope_math.h, norm_math.h, softmax_math.h,
// float16_math.h) that the CPU kernels, the CUDA kernels and the CPU tests all call, so the
// arithmetic a GPU does is tested where no GPU is.
#pragma once

#if defined(__CUDACC__)
#define PC_HOST_DEVICE __host__ __device__
#else
#define PC_HOST_DEVICE
#endif
