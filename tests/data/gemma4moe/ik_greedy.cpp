// The golden of gemma4moe-tiny.gguf from ik_llama.cpp's libllama (8337e4cd): greedy ids, the top-5 of
// each step and the logits of the first and last step, in the layout of ../../shared/models/arch's
// goldens (README.md there). Settings as that README's gemma4-tiny: CPU, one thread, flash
// attention on, K and V caches F16, n_ctx 512, n_batch = n_ubatch = 512, ik's defaults otherwise;
// the prompt in one llama_decode, then one token per call; argmax (lowest id on ties); 24 tokens.
//
// Build (ik_llama.cpp built CPU-only in IK):
//   g++ -O2 -std=c++17 ik_greedy.cpp -I$IK/include -I$IK/ggml/include -L$IK/build/src \
//       -L$IK/build/ggml/src -lllama -lggml -o ik_greedy
// Run: LD_LIBRARY_PATH=$IK/build/src:$IK/build/ggml/src ./ik_greedy gemma4moe-tiny.gguf gemma4moe-tiny.gguf
//   (writes gemma4moe-tiny.gguf.golden.json and .golden.f32)
#include <cstdio>
#include <string>
#include <vector>

#include "llama.h"

namespace {

std::string hex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

int argmax(const float* v, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (v[i] > v[best]) best = i;
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: ik_greedy MODEL.gguf OUT_STEM\n");
    return 2;
  }
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (!model) return 1;
  const int n_vocab = llama_n_vocab(model);
  const std::vector<std::pair<std::string, std::string>> prompts = {
      {"once_upon", "Once upon a time"},
      {"korean", "\xec\x95\x88\xeb\x85\x95\xed\x95\x98\xec\x84\xb8\xec\x9a\x94, \xec\x98\xa4\xeb\x8a\x98\xec\x9d\x80"},
      {"long",
       "Once upon a time, in a small village by the sea, there lived an old fisherman named Tom. Every morning he "
       "wrote:\ndef main():\n    print(\"Hello, world!\")\nand then he went out to fish."}};
  const std::string stem = argv[2];
  FILE* lf = std::fopen((stem + ".golden.f32").c_str(), "wb");
  std::string js = "{\n \"model\": " + json_string(argv[1]) +
                   ",\n \"reference\": \"ik_llama.cpp 8337e4cd3861406fc04e0854b1409cd1b027fbc9, CPU, tests/data/"
                   "gemma4moe/ik_greedy.cpp\",\n \"how\": \"n_threads 1, flash_attn on, K/V cache F16, n_ctx 512, "
                   "n_batch = n_ubatch = 512; prompt in one llama_decode, then one token per call; argmax\",\n"
                   " \"n_gen\": 24,\n \"n_vocab\": " +
                   std::to_string(n_vocab) + ",\n \"add_bos\": true,\n \"prompts\": [\n";
  for (std::size_t pi = 0; pi < prompts.size(); ++pi) {
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 512;
    cp.n_batch = cp.n_ubatch = 512;
    cp.n_threads = cp.n_threads_batch = 1;
    cp.flash_attn = true;
    cp.type_k = GGML_TYPE_F16;
    cp.type_v = GGML_TYPE_F16;
    llama_context* ctx = llama_init_from_model(model, cp);
    if (!ctx) return 1;
    const std::string& text = prompts[pi].second;
    std::vector<llama_token> ids(text.size() + 8);
    const int n = llama_tokenize(model, text.c_str(), int(text.size()), ids.data(), int(ids.size()), true, false);
    ids.resize(std::size_t(n));
    std::vector<llama_token> prompt = ids, gen;
    std::string top5 = "[", pieces = "[";
    llama_batch batch = llama_batch_get_one(ids.data(), n, 0, 0);
    if (llama_decode(ctx, batch) != 0) return 1;
    int pos = n;
    for (int s = 0; s < 24; ++s) {
      const float* lg = llama_get_logits_ith(ctx, -1);
      if (s == 0 || s == 23) std::fwrite(lg, sizeof(float), std::size_t(n_vocab), lf);
      std::vector<int> order;
      std::vector<float> v(lg, lg + n_vocab);
      for (int k = 0; k < 5; ++k) {
        const int b = argmax(v.data(), n_vocab);
        order.push_back(b);
        v[std::size_t(b)] = -1e30f;
      }
      top5 += std::string(s ? "," : "") + "[";
      for (int k = 0; k < 5; ++k) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s[%d,%.9g]", k ? "," : "", order[std::size_t(k)], lg[order[std::size_t(k)]]);
        top5 += buf;
      }
      top5 += "]";
      llama_token t = order[0];
      gen.push_back(t);
      char piece[256];
      const int len = llama_token_to_piece(model, t, piece, sizeof piece, 0, true);
      pieces += std::string(s ? "," : "") + "\"" + hex(std::string(piece, std::size_t(len > 0 ? len : 0))) + "\"";
      if (s == 23) break;
      llama_batch one = llama_batch_get_one(&t, 1, pos++, 0);
      if (llama_decode(ctx, one) != 0) return 1;
    }
    auto list = [](const std::vector<llama_token>& x) {
      std::string o = "[";
      for (std::size_t i = 0; i < x.size(); ++i) o += (i ? "," : "") + std::to_string(x[i]);
      return o + "]";
    };
    js += std::string(pi ? ",\n" : "") + "  {\"name\": " + json_string(prompts[pi].first) +
          ", \"prompt\": " + json_string(text) + ", \"prompt_ids\": " + list(prompt) +
          ", \"generated_ids\": " + list(gen) + ", \"top5_per_step\": " + top5 + "]" +
          ", \"generated_pieces_hex\": " + pieces + "]}";
    llama_free(ctx);
  }
  js += "\n ]\n}\n";
  std::fclose(lf);
  FILE* jf = std::fopen((stem + ".golden.json").c_str(), "w");
  std::fputs(js.c_str(), jf);
  std::fclose(jf);
  llama_free_model(model);
  return 0;
}
