// Logits of a token sequence from llama.cpp's libllama (b4747 API), for the OLMo2 cross-check of the
// EXAONE 4 numpy forward (see tests/data/exaone4/README.md).
//
//   exaone4_olmo2_check MODEL.gguf ID ID ...
//
// One batch, every position an output; CPU, 1 thread, F32 K and V cache, no flash attention,
// n_ctx 512. Prints "R <pos> <n_vocab floats %.9g>" per position.
//
// Build (llama.cpp b4747 built as a shared library in $L):
//   g++ -O1 -std=c++17 -o exaone4_olmo2_check exaone4_olmo2_check.cpp -I$L/include -I$L/ggml/include \
//       -L$L/build-cpu/bin -lllama -lggml -Wl,-rpath,$L/build-cpu/bin
#include "llama.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.gguf ID...\n", argv[0]);
    return 2;
  }
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (!model) return 1;
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = 512;
  cp.n_batch = 512;
  cp.n_ubatch = 512;
  cp.n_threads = 1;
  cp.n_threads_batch = 1;
  cp.type_k = GGML_TYPE_F32;
  cp.type_v = GGML_TYPE_F32;
  cp.flash_attn = false;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) return 1;
  const int n = argc - 2;
  llama_batch b = llama_batch_init(n, 0, 1);
  for (int i = 0; i < n; ++i) {
    b.token[i] = std::atoi(argv[2 + i]);
    b.pos[i] = i;
    b.n_seq_id[i] = 1;
    b.seq_id[i][0] = 0;
    b.logits[i] = 1;
  }
  b.n_tokens = n;
  if (llama_decode(ctx, b) != 0) return 1;
  const int nv = llama_vocab_n_tokens(llama_model_get_vocab(model));
  for (int i = 0; i < n; ++i) {
    const float* l = llama_get_logits_ith(ctx, i);
    std::printf("R %d", i);
    for (int t = 0; t < nv; ++t) std::printf(" %.9g", l[t]);
    std::printf("\n");
  }
  llama_batch_free(b);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
