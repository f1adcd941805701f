// libFuzzer entry point for GGUF files: the reader (GgufFile::parse from memory), the Llama loader
// (shape/type checks, dequantization) and the vocabulary -> sentencepiece path. Any input must
// either load or throw std::runtime_error; anything else (a crash, a sanitizer report, another
// exception type escaping) is a bug. Built only with clang; see tests/fuzz/CMakeLists.txt.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "engine/loader/gguf/gguf_model.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/gguf/gguf_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  try {
    pagedchat::GgufFile f = pagedchat::GgufFile::parse(data, size, "fuzz-input");
    (void)pagedchat::read_gguf_chat_template(f);
    const pagedchat::LoadedModel model = pagedchat::load_gguf_model(f);
    const auto tokenizer = pagedchat::load_gguf_tokenizer(f);
  } catch (const std::runtime_error&) {
    // Rejected with a message: the expected outcome for malformed input.
  }
  return 0;
}
