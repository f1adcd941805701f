// Check tool: ik_llama.cpp's clip (examples/mtmd, libmtmd) loads gemma4-tiny-mmproj.gguf and
//  (1) encodes golden_hf.json's HF-preprocessed pixels (golden_hf_pixels.u8 -> float32(byte * (1.0/255.0)), the
//      floats transformers' rescale produces) with its own build_gemma4 graph -> OUT_DIR/ik_clip.f32 (images in golden
//      order, clip_n_mmproj_embd floats per token), compared by hf_encoder_numpy.py with the numpy forward switched to
//      ik's choices (GELU-quick, no block clamps, F16 pixels);
//  (2) runs ik's OWN preprocessing (stb_image decode, forced RGB, clip_image_preprocess) on each distinct image file
//      -> OUT_DIR/ik_own.json (size, tokens, and for entries where ik's size equals HF's, the pixel difference) and
//      encodes the entries whose size equals HF's -> OUT_DIR/ik_own_same_size.f32 (for the resampler measurement).
// Build (README.md):
//   g++ -O2 -std=c++17 ik_clip_encode.cpp -I$IK/src/include -I$IK/src/ggml/include -I$IK/src/examples/mtmd
//       -I$IK/src/vendor -L$IK/build/src -L$IK/build/ggml/src -L$IK/build/examples/mtmd -lmtmd -lllama -lggml
//       -Wl,-rpath,$IK/build/src:$IK/build/ggml/src:$IK/build/examples/mtmd -o ik_clip_encode
// Run (in this folder): ./ik_clip_encode gemma4-tiny-mmproj.gguf golden_hf.json golden_hf_pixels.u8 OUT_DIR [N_THREADS]
// N_THREADS (default 4) is passed to clip_image_encode. NOTE: with 1-3 threads ik's CPU backend computes the gemma4v
// pooler input wrongly: build_gemma4's ggml_cont_4d(ggml_transpose(cur), n_patches_x, n_patches_y, n_embd, 1) hits
// the transpose fast path of ggml_compute_forward_dup_bytes (taken when src->ne[2]*src->ne[3] >= nth/2), which
// iterates the source with the DESTINATION's ne[0], ne[1] and so copies only n_patches_x*n_patches_y elements of the
// transposed [n_patches, n_embd] source (patch < n_patches_x, channel < n_patches_y) into the first channel plane.
// With >= 4 threads the generic (correct) copy runs. ik_clip_1thread.f32 records the broken 1-thread output.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clip-impl.h"
#include "clip.h"

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#include "stb/stb_image.h"

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: ik_clip_encode MMPROJ golden_hf.json golden_hf_pixels.u8 OUT_DIR\n");
    return 2;
  }
  nlohmann::ordered_json g;
  std::ifstream(argv[2]) >> g;
  std::vector<unsigned char> px;
  {
    std::ifstream f(argv[3], std::ios::binary);
    f.seekg(0, std::ios::end);
    px.resize(size_t(f.tellg()));
    f.seekg(0);
    f.read(reinterpret_cast<char*>(px.data()), std::streamsize(px.size()));
  }
  const std::string out_dir = argv[4];
  const int n_threads = argc > 5 ? std::atoi(argv[5]) : 4;
  clip_context_params ccp{/*use_gpu*/ false, GGML_LOG_LEVEL_ERROR, CLIP_FLASH_ATTN_TYPE_DISABLED, -1, -1,
                          GGML_TYPE_F32};
  clip_ctx* clip = clip_init(argv[1], ccp).ctx_v;
  if (!clip) return 1;
  const int n_mm = clip_n_mmproj_embd(clip);
  std::fprintf(stderr, "clip_n_mmproj_embd %d\n", n_mm);

  // (1) HF pixels through ik's encoder (n_threads, and 1 thread for the record)
  for (int pass = 0; pass < 2; ++pass) {
    const int nt = pass == 0 ? n_threads : 1;
    std::vector<float> out;
    for (auto& im : g["images"]) {
      clip_image_f32* img = clip_image_f32_init();
      img->nx = im["hf_preproc"]["nx"];
      img->ny = im["hf_preproc"]["ny"];
      const size_t off = im["hf_preproc"]["bytes"]["offset"], cnt = im["hf_preproc"]["bytes"]["count"];
      img->buf.resize(cnt);
      for (size_t i = 0; i < cnt; ++i) img->buf[i] = float(double(px[off + i]) * (1.0 / 255.0));
      const int n_tok = clip_n_output_tokens(clip, img);
      std::vector<float> emb(size_t(n_tok) * n_mm);
      if (!clip_image_encode(clip, nt, img, emb.data())) return 1;
      std::fprintf(stderr, "%s (%d) %d threads: %d tokens\n", im["image"].get<std::string>().c_str(),
                   int(im["max_soft_tokens"]), nt, n_tok);
      out.insert(out.end(), emb.begin(), emb.end());
      clip_image_f32_free(img);
    }
    std::ofstream(out_dir + (pass == 0 ? "/ik_clip.f32" : "/ik_clip_1thread.f32"), std::ios::binary)
        .write(reinterpret_cast<const char*>(out.data()), std::streamsize(out.size() * 4));
  }

  // (2) ik's own decode + preprocessing
  nlohmann::ordered_json own = nlohmann::ordered_json::array();
  std::vector<float> same;
  for (auto& im : g["images"]) {
    const std::string path = im["image"];
    int nx = 0, ny = 0, nc = 0;
    unsigned char* data = stbi_load(path.c_str(), &nx, &ny, &nc, 3);
    nlohmann::ordered_json e = {{"image", path}, {"max_soft_tokens", im["max_soft_tokens"]}};
    if (!data) {
      e["decoded"] = nullptr;
      own.push_back(e);
      continue;
    }
    clip_image_u8* u8 = clip_image_u8_init();
    clip_build_img_from_pixels(data, nx, ny, u8);
    stbi_image_free(data);
    clip_image_f32_batch* batch = clip_image_f32_batch_init();
    if (!clip_image_preprocess(clip, u8, batch)) return 1;
    clip_image_f32* f = clip_image_f32_get_img(batch, 0);
    const int rx = int(clip_image_f32_batch_nx(batch, 0)), ry = int(clip_image_f32_batch_ny(batch, 0));
    e["decoded"] = {{"nx", nx}, {"ny", ny}};
    e["ik_preproc"] = {{"nx", rx}, {"ny", ry}, {"n_images", clip_image_f32_batch_n_images(batch)}};
    e["n_tokens"] = clip_n_output_tokens(clip, f);
    e["tokens_x"] = clip_n_output_tokens_x(clip, f);
    e["tokens_y"] = clip_n_output_tokens_y(clip, f);
    if (rx == int(im["hf_preproc"]["nx"]) && ry == int(im["hf_preproc"]["ny"])) {
      const size_t off = im["hf_preproc"]["bytes"]["offset"], cnt = im["hf_preproc"]["bytes"]["count"];
      double mx = 0;
      size_t ndiff = 0;
      for (size_t i = 0; i < cnt; ++i) {
        const double d = std::fabs(double(f->buf[i]) * 255.0 - double(px[off + i]));
        mx = std::max(mx, d);
        ndiff += d > 0.5;
      }
      e["same_size_as_hf"] = true;
      e["pixel_max_abs_diff_bytes"] = mx;
      e["pixel_n_bytes_differing"] = ndiff;
      e["pixel_n_bytes"] = cnt;
      const int n_tok = clip_n_output_tokens(clip, f);
      std::vector<float> emb(size_t(n_tok) * n_mm);
      if (!clip_image_encode(clip, n_threads, f, emb.data())) return 1;
      e["same_size_embd"] = {{"offset", same.size()}, {"count", emb.size()}};
      same.insert(same.end(), emb.begin(), emb.end());
    } else {
      e["same_size_as_hf"] = false;
    }
    std::fprintf(stderr, "own %s\n", e.dump().c_str());
    own.push_back(e);
    clip_image_f32_batch_free(batch);
    clip_image_u8_free(u8);
  }
  std::ofstream(out_dir + "/ik_own.json") << own.dump(1) << "\n";
  std::ofstream(out_dir + "/ik_own_same_size.f32", std::ios::binary)
      .write(reinterpret_cast<const char*>(same.data()), std::streamsize(same.size() * 4));
  clip_free(clip);
  return 0;
}
