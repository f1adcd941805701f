#include "cli/dtype_options.h"

namespace pagedchat::cli {

void add_dtype_options(CLI::App* cmd, EngineConfig& e) {
  cmd->add_option("--dtype", e.dtype,
                  "weight matrices: auto (each in its file's type: quantized GGUF types stay quantized, BF16 stays "
                  "BF16), float32 (everything dequantized: exact, 4 bytes per weight), bfloat16 or float16 "
                  "(unquantized matrices in that type)")
      ->check(CLI::IsMember({"auto", "float32", "bfloat16", "float16"}));
  cmd->add_option("--kv-cache-dtype", e.kv_cache_dtype,
                  "KV-cache element type: auto (bfloat16 on the CPU), float32, bfloat16, float16 (2 bytes per "
                  "element: twice the sequences of float32 in the same memory), q8_0 (34 bytes per 32 elements, "
                  "as llama.cpp's -ctk/-ctv q8_0; head sizes that are multiples of 32)")
      ->check(CLI::IsMember({"auto", "float32", "bfloat16", "float16", "q8_0"}));
}

}  // namespace pagedchat::cli
