#include "cli/dtype_options.h"

namespace pagedchat::cli {

CLI::Option* add_weight_dtype_option(CLI::App* cmd, const std::string& flag, WeightDType& out,
                                     const std::string& help) {
  return cmd
      ->add_option_function<std::string>(
          flag, [&out](const std::string& name) { out = parse_weight_dtype(name); }, help)
      ->check(CLI::IsMember({"auto", "float32", "bfloat16", "float16"}));
}

void add_dtype_options(CLI::App* cmd, EngineConfig& e) {
  add_weight_dtype_option(cmd, "--dtype", e.dtype,
                          "weight matrices: auto (each in its file's type: quantized GGUF types stay quantized, BF16 "
                          "stays BF16), float32 (everything dequantized: exact, 4 bytes per weight), bfloat16 or "
                          "float16 (unquantized matrices in that type)");
  cmd->add_option_function<std::string>(
         "--kv-cache-dtype", [&e](const std::string& name) { e.kv_cache_dtype = parse_kv_cache_dtype(name); },
         "KV-cache element type: auto (bfloat16 on the CPU), float32, bfloat16, float16 (2 bytes per "
         "element: twice the sequences of float32 in the same memory), q8_0 (34 bytes per 32 elements, "
         "as llama.cpp's -ctk/-ctv q8_0; head sizes that are multiples of 32)")
      ->check(CLI::IsMember({"auto", "float32", "bfloat16", "float16", "q8_0"}));
}

}  // namespace pagedchat::cli
