// Picks the backend that runs the ops (kernels/ops.h) from EngineConfig::device: the CPU one, or
// the CUDA one, which lives in its own shared library (libpagedchat_cuda.so, linked to cudart and
// cuBLAS) loaded with dlopen() only when asked for, so a machine without the NVIDIA driver or
// without that library still runs on the CPU. No code outside kernels/ names a backend.
#pragma once

#include <memory>
#include <string>

#include "kernels/ops.h"

namespace pagedchat::kernels {

/// EngineConfig::device parsed: "cpu", "cuda" (= cuda:0), "cuda:N", "auto".
struct DeviceSpec {
  enum class Kind { kCpu, kCuda, kAuto };
  Kind kind = Kind::kCpu;
  int index = 0;  ///< the CUDA device ordinal
};

/// Parses `device`; throws std::invalid_argument naming the allowed forms.
DeviceSpec parse_device(const std::string& device);

/// What make_backend needs besides the device.
struct BackendOptions {
  std::string device = "cpu";
  int num_threads = 0;         ///< CPU threads (0 = all); the CPU backend's, and the CUDA one's host side
  bool enforce_eager = false;  ///< CUDA: no CUDA graphs (vLLM's enforce_eager)
};

/// The backend for options.device. "auto" is CUDA when the library loads and a device is
/// present, else the CPU; *note (when given) then says which and why, e.g. "device auto: cpu (no
/// CUDA device: ...)"; for the other devices it is cleared. Throws std::invalid_argument for a bad
/// device string and std::runtime_error when "cuda" / "cuda:N" cannot be had, saying why (the
/// build has no CUDA, the library or the CUDA runtime cannot be loaded, no driver, no device N).
std::unique_ptr<Backend> make_backend(const BackendOptions& options, std::string* note = nullptr);

/// The number of CUDA devices the CUDA backend library sees; 0 with *why (when given) saying why
/// (no library, no driver, no device). Never throws.
int cuda_device_count(std::string* why = nullptr);

}  // namespace pagedchat::kernels
