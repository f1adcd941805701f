#include "cli/device_options.h"

namespace pagedchat::cli {

void add_device_options(CLI::App* cmd, EngineConfig& e) {
  cmd->add_option("--device", e.device,
                  "where the forward runs: cpu (default), cuda, cuda:N, or auto (CUDA when available, else the CPU)");
  cmd->add_option("--gpu-memory-utilization", e.gpu_memory_utilization,
                  "fraction of the GPU's memory for weights, activations and the KV cache (default 0.9)")
      ->check(CLI::Range(0.01, 1.0));
  cmd->add_flag("--enforce-eager", e.enforce_eager, "GPU: no CUDA graphs (every kernel launched eagerly)");
}

}  // namespace pagedchat::cli
