// libFuzzer target for llama2.c checkpoints (engine/loader/llama2c): the header check
// (llama2c_checkpoint_problem) and the loader (load_llama2c, which maps the file). The input is
// written to a temporary file first, as the loader reads files only. Any input must load or be
// refused with a std::runtime_error; a checkpoint that loads has tensors inside the file.
// Built with PAGEDCHAT_FUZZ (clang); see tests/fuzz/CMakeLists.txt.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "engine/loader/llama2c/llama2c_loader.h"

namespace {

/// One temporary file per process, rewritten for every input and removed at exit.
const std::string& input_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    std::string p = std::string(dir && *dir ? dir : "/tmp") + "/fuzz_llama2c_XXXXXX";
    const int fd = mkstemp(p.data());
    if (fd < 0) std::abort();
    close(fd);
    std::atexit([] { std::remove(input_path().c_str()); });
    return p;
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string& path = input_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0) std::abort();
  const bool plausible = pagedchat::looks_like_llama2c_checkpoint(path);
  try {
    const pagedchat::LoadedModel model = pagedchat::load_llama2c(path);
    if (!plausible) std::abort();  // the loader took a file the header check refuses
  } catch (const std::runtime_error&) {
    // Refused with a message: the expected outcome for a malformed file.
  }
  return 0;
}
