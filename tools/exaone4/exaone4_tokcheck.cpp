// Tokenizer cross-check for the EXAONE 4 tiny vocabulary against llama.cpp's libllama (b4747 API).
//
//   exaone4_tokcheck VOCAB.gguf TEXTS.hex
//
// VOCAB.gguf: the vocab-only check GGUF written by make_exaone4_tiny.py --tokcheck-gguf (arch 'llama',
// pre 'gpt-2' = pre type GPT2, the one llama.cpp uses for 'exaone4'). TEXTS.hex: one text per line, as hex of its
// UTF-8 bytes. Prints, per text, "T <ids...>" from llama_tokenize(add_special=true, parse_special=false),
// then for every token id "P <id> <hex of llama_token_to_piece(special=true)>".
//
// Build (llama.cpp b4747 built as a shared library in $L):
//   g++ -O1 -std=c++17 -o exaone4_tokcheck exaone4_tokcheck.cpp -I$L/include -I$L/ggml/include \
//       -L$L/build-cpu/bin -lllama -Wl,-rpath,$L/build-cpu/bin
#include "llama.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

static std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
  return out;
}

static std::string hex(const char* p, int n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(p[i]);
    s.push_back(d[c >> 4]);
    s.push_back(d[c & 15]);
  }
  return s;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s VOCAB.gguf TEXTS.hex\n", argv[0]);
    return 2;
  }
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  mp.vocab_only = true;
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (!model) {
    std::fprintf(stderr, "cannot load %s\n", argv[1]);
    return 1;
  }
  const llama_vocab* vocab = llama_model_get_vocab(model);
  std::ifstream in(argv[2]);
  std::string line;
  while (std::getline(in, line)) {
    const std::string text = unhex(line);
    std::vector<llama_token> toks(text.size() + 8);
    const int n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), toks.data(),
                                 static_cast<int32_t>(toks.size()), true, false);
    if (n < 0) {
      std::fprintf(stderr, "tokenize failed\n");
      return 1;
    }
    std::printf("T");
    for (int i = 0; i < n; ++i) std::printf(" %d", toks[i]);
    std::printf("\n");
  }
  const int nv = llama_vocab_n_tokens(vocab);
  for (int t = 0; t < nv; ++t) {
    char buf[256];
    const int n = llama_token_to_piece(vocab, t, buf, sizeof buf, 0, true);
    std::printf("P %d %s\n", t, n > 0 ? hex(buf, n).c_str() : "");
  }
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
