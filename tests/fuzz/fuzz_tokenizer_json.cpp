// libFuzzer entry point for tokenizer.json: the parser (every component, JSON paths in errors),
// then encoding a short text three ways and decoding the ids. Input: the tokenizer.json bytes,
// optionally followed by a NUL and the text to encode (else a fixed mixed text). Any input must
// either work or throw std::runtime_error (std::out_of_range for ids outside the vocabulary);
// anything else — a crash, a sanitizer report, another exception escaping — is a bug. Built only
// with clang; see tests/fuzz/CMakeLists.txt.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "engine/text/bpe/tokenizer_json.h"
#include "engine/text/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = in.find('\0');
  const std::string_view json = in.substr(0, nul);
  std::string_view text = nul == std::string_view::npos ? std::string_view("Hello wörld 123 <s> 한국어 🙂\n")
                                                        : in.substr(nul + 1);
  if (text.size() > 4096) text = text.substr(0, 4096);
  try {
    const auto tok = pagedchat::bpe::parse_tokenizer_json(json, "", "fuzz-input");
    const std::vector<int> a = tok->encode(text, tok->add_bos());
    const std::vector<int> b = tok->encode_with_special_tokens(text);
    pagedchat::TemplatedText t;
    t.append(text.substr(0, text.size() / 2), false);
    t.append(text.substr(text.size() / 2), true);
    const std::vector<int> c = tok->encode_templated(t);
    (void)tok->decode(a);
    (void)tok->decode(b, true);
    (void)tok->decode_bytes(c);
    pagedchat::IncrementalDetokenizer d(*tok, a);
    for (int id : b) (void)d.add_token(id);
    (void)d.flush();
    for (int id = 0; id < tok->vocab_size() && id < 512; ++id) {
      (void)tok->token_text(id);
      (void)tok->id_to_piece(id);
    }
  } catch (const std::runtime_error&) {
    // Rejected with a message: the expected outcome for malformed input.
  }
  return 0;
}
