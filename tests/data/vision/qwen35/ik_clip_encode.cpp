// Check tool: ik_llama.cpp's clip (examples/mtmd, libmtmd) loads qwen35-tiny-mmproj.gguf and encodes the HF
// preprocessed floats of golden_hf.json (hf_preproc) with its own build_qwen3vl graph; writes the embeddings
// (images in golden order, clip_n_mmproj_embd floats per token, little-endian float32) for hf_encoder_numpy.py's
// comparison (numpy with ik's choices: nearest position embedding, tanh merger GELU, F16 pixels).
// Build (README.md):
//   g++ -O2 -std=c++17 ik_clip_encode.cpp -I$IK/src/include -I$IK/src/ggml/include -I$IK/src/examples/mtmd
//       -I$IK/src/vendor -L$IK/build/src -L$IK/build/ggml/src -L$IK/build/examples/mtmd -lmtmd -lllama -lggml
//       -Wl,-rpath,$IK/build/src:$IK/build/ggml/src:$IK/build/examples/mtmd -o ik_clip_encode
// Run: ./ik_clip_encode qwen35-tiny-mmproj.gguf golden_hf.json golden_hf.f32 OUT.f32
#include <cstdio>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "clip-impl.h"
#include "clip.h"

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: ik_clip_encode MMPROJ golden_hf.json golden_hf.f32 OUT.f32\n");
    return 2;
  }
  nlohmann::json g;
  std::ifstream(argv[2]) >> g;
  std::vector<float> blob;
  {
    std::ifstream f(argv[3], std::ios::binary);
    f.seekg(0, std::ios::end);
    blob.resize(size_t(f.tellg()) / 4);
    f.seekg(0);
    f.read(reinterpret_cast<char*>(blob.data()), std::streamsize(blob.size() * 4));
  }
  clip_context_params ccp{/*use_gpu*/ false, GGML_LOG_LEVEL_ERROR, CLIP_FLASH_ATTN_TYPE_DISABLED, 8, 64,
                          GGML_TYPE_F32};
  clip_ctx* clip = clip_init(argv[1], ccp).ctx_v;
  if (!clip) return 1;
  const int n_mm = clip_n_mmproj_embd(clip);
  std::fprintf(stderr, "clip_n_mmproj_embd %d\n", n_mm);
  std::vector<float> out;
  for (auto& im : g["images"]) {
    clip_image_f32* img = clip_image_f32_init();
    img->nx = im["hf_preproc"]["nx"];
    img->ny = im["hf_preproc"]["ny"];
    const size_t off = im["hf_preproc"]["floats"]["offset"], cnt = im["hf_preproc"]["floats"]["count"];
    img->buf.assign(blob.begin() + long(off), blob.begin() + long(off + cnt));
    const int n_tok = clip_n_output_tokens(clip, img);
    std::vector<float> emb(size_t(n_tok) * n_mm);
    if (!clip_image_encode(clip, 1, img, emb.data())) return 1;
    std::fprintf(stderr, "%s: %d tokens (%d x %d)\n", im["image"].get<std::string>().c_str(), n_tok,
                 clip_n_output_tokens_x(clip, img), clip_n_output_tokens_y(clip, img));
    out.insert(out.end(), emb.begin(), emb.end());
    clip_image_f32_free(img);
  }
  std::ofstream(argv[4], std::ios::binary)
      .write(reinterpret_cast<const char*>(out.data()), std::streamsize(out.size() * 4));
  clip_free(clip);
  return 0;
}
