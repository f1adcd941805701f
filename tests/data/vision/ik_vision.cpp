// The vision golden of gemma3-tiny-mmproj.gguf + gemma3-tiny.gguf from ik_llama.cpp's libmtmd / libllama
// (8337e4cd): per image the decoded RGB bytes' sha256, clip_image_preprocess's float image and
// clip_image_encode's embeddings, the same embeddings for transformers-style preprocessed floats
// (hf_preproc.f32, written by make_gemma3_mmproj.py), and three end-to-end prompts through mtmd
// (chunk layout, positions, 16 greedy steps with top-10). Layout: README.md.
//
// Build (ik_llama.cpp source in $IK/src, CPU build in $IK/build):
//   g++ -O2 -std=c++17 ik_vision.cpp -I$IK/src/include -I$IK/src/ggml/include -I$IK/src/examples/mtmd \
//       -I$IK/src/vendor -L$IK/build/src -L$IK/build/ggml/src -L$IK/build/examples/mtmd \
//       -lmtmd -lllama -lggml -Wl,-rpath,$IK/build/src:$IK/build/ggml/src:$IK/build/examples/mtmd -o ik_vision
// Run (in this folder):
//   ./ik_vision gemma3-tiny.gguf gemma3-tiny-mmproj.gguf . HF_DIR golden.json golden.f32 [DUMP_DIR]
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "clip-impl.h"
#include "clip.h"
#include "llama.h"
#include "mtmd-helper.h"
#include "mtmd.h"

namespace {

// ---- SHA-256 (FIPS 180-4), for the decoded pixel bytes ----
struct Sha256 {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
  void block(const uint8_t* p) {
    static const uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = uint32_t(p[4 * i]) << 24 | uint32_t(p[4 * i + 1]) << 16 | uint32_t(p[4 * i + 2]) << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; ++i) {
      uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; ++i) {
      uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
  }
  std::string digest(const uint8_t* data, size_t n) {
    std::vector<uint8_t> m(data, data + n);
    m.push_back(0x80);
    while (m.size() % 64 != 56) m.push_back(0);
    uint64_t bits = uint64_t(n) * 8;
    for (int i = 7; i >= 0; --i) m.push_back(uint8_t(bits >> (8 * i)));
    for (size_t i = 0; i < m.size(); i += 64) block(m.data() + i);
    char buf[65];
    for (int i = 0; i < 8; ++i) std::snprintf(buf + 8 * i, 9, "%08x", h[i]);
    return std::string(buf, 64);
  }
};

std::string sha256(const uint8_t* d, size_t n) { return Sha256().digest(d, n); }

double sig7(float x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", double(x));
  return std::strtod(buf, nullptr);
}

// golden.f32: blocks of little-endian float32, appended in order; the JSON gives offset/count in floats
struct Blob {
  std::vector<float> data;
  json add(const float* v, size_t n) {
    json j = {{"offset", data.size()}, {"count", n}};
    data.insert(data.end(), v, v + n);
    return j;
  }
};

const int N_CLIP_THREADS = 4;

const char* IMAGES[] = {"square.png", "wide.png", "tall.jpg", "small.webp", "rgba.png", "gray.png"};

struct Env {
  llama_model* model;
  mtmd_context* mctx;
  std::string dir;
  int n_vocab;
  int n_embd;
  bool flash_attn;
};

llama_context* new_ctx(Env& e, bool flash_attn) {
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = 512;
  cp.n_batch = cp.n_ubatch = 512;
  cp.n_threads = cp.n_threads_batch = 1;
  cp.flash_attn = flash_attn;
  cp.type_k = GGML_TYPE_F16;
  cp.type_v = GGML_TYPE_F16;
  return llama_init_from_model(e.model, cp);
}

json top10(const float* lg, int n_vocab) {
  std::vector<float> v(lg, lg + n_vocab);
  json t = json::array();
  for (int k = 0; k < 10; ++k) {
    int b = 0;
    for (int i = 1; i < n_vocab; ++i)
      if (v[i] > v[b]) b = i;  // lowest id on ties
    t.push_back(json::array({b, sig7(lg[b])}));
    v[b] = -INFINITY;
  }
  return t;
}

int argmax(const float* v, int n) {
  int b = 0;
  for (int i = 1; i < n; ++i)
    if (v[i] > v[b]) b = i;
  return b;
}

std::string piece(const llama_model* m, llama_token t) {
  char buf[256];
  int n = llama_token_to_piece(m, t, buf, sizeof buf, 0, true);
  return std::string(buf, n > 0 ? n : 0);
}

// mode 0: mtmd_helper_eval_chunks (the golden); mode 1: image decoded by hand, non-causal (check that
// the hand path equals the helper); mode 2: image decoded by hand with causal attention.
struct PromptResult {
  json chunks = json::array();
  std::vector<llama_token> gen;
  json steps = json::array();
  std::vector<float> first_logits;
  int n_past_after_prompt = 0;
};

bool run_prompt(Env& e, const std::string& text, const std::vector<std::string>& imgs, int mode, int n_steps,
                bool flash_attn, PromptResult& r) {
  std::vector<mtmd_bitmap*> bms;
  for (auto& f : imgs) {
    mtmd_bitmap* b = mtmd_helper_bitmap_init_from_file(e.mctx, (e.dir + "/" + f).c_str());
    if (!b) return false;
    mtmd_bitmap_set_id(b, f.c_str());
    bms.push_back(b);
  }
  mtmd_input_text in{text.c_str(), /*add_special*/ true, /*parse_special*/ true};
  mtmd_input_chunks* chunks = mtmd_input_chunks_init();
  std::vector<const mtmd_bitmap*> cb(bms.begin(), bms.end());
  if (mtmd_tokenize(e.mctx, chunks, &in, cb.data(), cb.size()) != 0) return false;

  llama_pos n_past = 0;
  for (size_t i = 0; i < mtmd_input_chunks_size(chunks); ++i) {
    const mtmd_input_chunk* c = mtmd_input_chunks_get(chunks, i);
    json jc;
    json pos = json::array();
    if (mtmd_input_chunk_get_type(c) == MTMD_INPUT_CHUNK_TYPE_TEXT) {
      size_t n;
      const llama_token* t = mtmd_input_chunk_get_tokens_text(c, &n);
      json ids = json::array(), pieces = json::array();
      for (size_t k = 0; k < n; ++k) {
        ids.push_back(t[k]);
        pieces.push_back(piece(e.model, t[k]));
        pos.push_back(n_past++);
      }
      jc = {{"type", "text"}, {"ids", ids}, {"pieces", pieces}, {"positions", pos}};
    } else {
      const mtmd_image_tokens* it = mtmd_input_chunk_get_tokens_image(c);
      int nt = int(mtmd_input_chunk_get_n_tokens(c));
      llama_pos np = mtmd_input_chunk_get_n_pos(c);
      for (int k = 0; k < nt; ++k) pos.push_back(n_past + k);
      n_past += np;
      jc = {{"type", "image"}, {"image", mtmd_input_chunk_get_id(c)}, {"n_tokens", nt},
            {"n_pos", np},     {"nx", mtmd_image_tokens_get_nx(it)},  {"ny", mtmd_image_tokens_get_ny(it)},
            {"positions", pos}};
    }
    r.chunks.push_back(jc);
  }

  llama_context* ctx = new_ctx(e, flash_attn);
  if (!ctx) return false;
  llama_pos new_n_past = 0;
  if (mode == 0) {
    if (mtmd_helper_eval_chunks(e.mctx, ctx, chunks, 0, 0, 512, true, &new_n_past) != 0) return false;
  } else {
    llama_pos p = 0;
    size_t nc = mtmd_input_chunks_size(chunks);
    for (size_t i = 0; i < nc; ++i) {
      const mtmd_input_chunk* c = mtmd_input_chunks_get(chunks, i);
      if (mtmd_input_chunk_get_type(c) == MTMD_INPUT_CHUNK_TYPE_TEXT) {
        if (mtmd_helper_eval_chunk_single(e.mctx, ctx, c, p, 0, 512, i + 1 == nc, &p) != 0) return false;
      } else {
        if (mtmd_encode_chunk(e.mctx, c) != 0) return false;
        const float* embd = mtmd_get_output_embd(e.mctx);
        int nt = int(mtmd_input_chunk_get_n_tokens(c));
        llama_batch b = llama_batch_init(nt, e.n_embd, 1);
        b.n_tokens = nt;
        std::memcpy(b.embd, embd, sizeof(float) * size_t(nt) * size_t(e.n_embd));
        for (int k = 0; k < nt; ++k) {
          b.pos[k] = p + k;
          b.n_seq_id[k] = 1;
          b.seq_id[k][0] = 0;
          b.logits[k] = false;
        }
        llama_set_causal_attn(ctx, mode == 2);
        int rc = llama_decode(ctx, b);
        llama_set_causal_attn(ctx, true);
        llama_batch_free(b);
        if (rc != 0) return false;
        p += mtmd_input_chunk_get_n_pos(c);
      }
    }
    new_n_past = p;
  }
  r.n_past_after_prompt = new_n_past;
  llama_pos pos = new_n_past;
  for (int s = 0; s < n_steps; ++s) {
    const float* lg = llama_get_logits_ith(ctx, -1);
    if (s == 0) r.first_logits.assign(lg, lg + e.n_vocab);
    llama_token t = argmax(lg, e.n_vocab);
    r.gen.push_back(t);
    r.steps.push_back({{"id", t}, {"top10", top10(lg, e.n_vocab)}});
    if (s + 1 == n_steps) break;
    llama_batch one = llama_batch_get_one(&t, 1, pos++, 0);
    if (llama_decode(ctx, one) != 0) return false;
  }
  llama_free(ctx);
  mtmd_input_chunks_free(chunks);
  for (auto* b : bms) mtmd_bitmap_free(b);
  return true;
}

std::string file_sha(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<uint8_t> d((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return sha256(d.data(), d.size());
}

float max_abs_diff(const float* a, const float* b, size_t n) {  // NaN if either side has a non-finite value
  float m = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) return NAN;
    m = std::max(m, std::fabs(a[i] - b[i]));
  }
  return m;
}

int n_nonfinite(const std::vector<float>& v) {
  int n = 0;
  for (float x : v) n += !std::isfinite(x);
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: ik_vision TEXT.gguf MMPROJ.gguf IMG_DIR HF_DIR OUT.json OUT.f32 [DUMP_DIR]\n");
    return 2;
  }
  const std::string text_path = argv[1], mmproj_path = argv[2], dir = argv[3], hf_dir = argv[4];
  const std::string dump_dir = argc > 7 ? argv[7] : "";
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  llama_model* model = llama_model_load_from_file(text_path.c_str(), mp);
  if (!model) return 1;

  mtmd_context_params mcp = mtmd_context_params_default();
  mcp.use_gpu = false;
  mcp.print_timings = false;
  mcp.n_threads = 4;  // NOT 1-3: see README (ik ggml_cont_4d-of-transpose bug below 4 threads)
  mcp.verbosity = GGML_LOG_LEVEL_ERROR;
  mtmd_context* mctx = mtmd_init_from_file(mmproj_path.c_str(), model, mcp);
  if (!mctx) return 1;

  // a second clip context for the clip_* calls (mtmd's own is private); same parameters as mtmd uses
  clip_context_params ccp{/*use_gpu*/ false, GGML_LOG_LEVEL_ERROR, CLIP_FLASH_ATTN_TYPE_DISABLED, -1, -1,
                          GGML_TYPE_F32};
  clip_ctx* clip = clip_init(mmproj_path.c_str(), ccp).ctx_v;
  if (!clip) return 1;
  const int n_mm = clip_n_mmproj_embd(clip);

  Env e{model, mctx, dir, llama_n_vocab(model), llama_model_n_embd(model), true};
  Blob blob;
  json out;
  out["reference"] =
      "ik_llama.cpp 8337e4cd3861406fc04e0854b1409cd1b027fbc9 (CPU build), libmtmd + libllama, "
      "tests/data/vision/ik_vision.cpp";
  out["text_model"] = "gemma3-tiny.gguf";
  out["text_model_sha256"] = file_sha(text_path);
  out["mmproj"] = "gemma3-tiny-mmproj.gguf";
  out["mmproj_sha256"] = file_sha(mmproj_path);
  out["mtmd_non_causal"] = mtmd_decode_use_non_causal(mctx);
  out["mtmd_default_marker"] = mtmd_default_marker();
  out["n_mmproj_embd"] = n_mm;
  out["n_vocab"] = e.n_vocab;

  // ---- (a) + (b): per image ----
  std::vector<float> hf;
  {
    std::ifstream hfb(hf_dir + "/hf_preproc.f32", std::ios::binary);
    hfb.seekg(0, std::ios::end);
    size_t n = size_t(hfb.tellg()) / 4;
    hfb.seekg(0);
    hf.assign(n, 0.f);
    hfb.read(reinterpret_cast<char*>(hf.data()), std::streamsize(n * 4));
  }
  json hfmeta;
  std::ifstream(hf_dir + "/hf_preproc.json") >> hfmeta;

  json images = json::array();
  for (size_t ii = 0; ii < sizeof IMAGES / sizeof *IMAGES; ++ii) {
    const std::string name = IMAGES[ii];
    json ji;
    ji["image"] = name;
    mtmd_bitmap* bm = mtmd_helper_bitmap_init_from_file(mctx, (dir + "/" + name).c_str());
    std::vector<float> emb;
    clip_image_f32* f32 = nullptr;
    clip_image_f32_batch* batch = nullptr;
    clip_image_u8* u8 = nullptr;
    if (!bm) {
      // stb_image (what mtmd_helper_bitmap_init_from_file uses) has no WebP decoder
      ji["decoded"] = nullptr;
      ji["ik_decode_error"] = "mtmd_helper_bitmap_init_from_file returned null (stb_image cannot decode this format)";
      std::fprintf(stderr, "%s: ik cannot decode\n", name.c_str());
    } else {
      const int nx = int(mtmd_bitmap_get_nx(bm)), ny = int(mtmd_bitmap_get_ny(bm));
      const unsigned char* px = mtmd_bitmap_get_data(bm);
      ji["decoded"] = {{"nx", nx}, {"ny", ny}, {"rgb_sha256", sha256(px, size_t(nx) * ny * 3)}};
      if (!dump_dir.empty()) {
        FILE* f = std::fopen((dump_dir + "/" + name + ".ik.rgb").c_str(), "wb");
        std::fwrite(px, 1, size_t(nx) * ny * 3, f);
        std::fclose(f);
      }
      // ik preprocessing
      u8 = clip_image_u8_init();
      clip_build_img_from_pixels(px, nx, ny, u8);
      batch = clip_image_f32_batch_init();
      if (!clip_image_preprocess(clip, u8, batch)) return 1;
      if (clip_image_f32_batch_n_images(batch) != 1) return 1;
      f32 = clip_image_f32_get_img(batch, 0);
      const int n_tok = clip_n_output_tokens(clip, f32);
      emb.assign(size_t(n_tok) * n_mm, 0.f);
      if (!clip_image_encode(clip, N_CLIP_THREADS, f32, emb.data())) return 1;
      ji["ik_preproc"] = {{"nx", f32->nx}, {"ny", f32->ny}, {"floats", blob.add(f32->buf.data(), f32->buf.size())}};
      ji["ik_embd"] = {{"n_tokens", n_tok}, {"n_embd", n_mm}, {"floats", blob.add(emb.data(), emb.size())}};
      // the same through mtmd (tokenize + mtmd_encode_chunk + mtmd_get_output_embd): must be identical
      {
        mtmd_input_text in{mtmd_default_marker(), false, true};
        mtmd_input_chunks* ch = mtmd_input_chunks_init();
        const mtmd_bitmap* b1[1] = {bm};
        if (mtmd_tokenize(mctx, ch, &in, b1, 1) != 0) return 1;
        for (size_t c = 0; c < mtmd_input_chunks_size(ch); ++c) {
          const mtmd_input_chunk* k = mtmd_input_chunks_get(ch, c);
          if (mtmd_input_chunk_get_type(k) != MTMD_INPUT_CHUNK_TYPE_IMAGE) continue;
          if (mtmd_encode_chunk(mctx, k) != 0) return 1;
          ji["mtmd_encode_max_abs_diff_vs_clip_image_encode"] = max_abs_diff(mtmd_get_output_embd(mctx), emb.data(),
                                                                             emb.size());
        }
        mtmd_input_chunks_free(ch);
      }
      std::fprintf(stderr, "%s: %dx%d -> %d tokens\n", name.c_str(), nx, ny, n_tok);
    }
    // transformers-style preprocessing (from make_gemma3_mmproj.py) through ik's encoder
    json hm = hfmeta[ii];
    if (hm["image"] != name) return 1;
    const size_t off = hm["offset"].get<size_t>();
    clip_image_f32* hfimg = clip_image_f32_init();
    hfimg->nx = hm["nx"];
    hfimg->ny = hm["ny"];
    hfimg->buf.assign(hf.begin() + long(off), hf.begin() + long(off + size_t(hfimg->nx) * hfimg->ny * 3));
    std::vector<float> emb_hf(size_t(clip_n_output_tokens(clip, hfimg)) * n_mm);
    if (!clip_image_encode(clip, N_CLIP_THREADS, hfimg, emb_hf.data())) return 1;
    ji["hf_preproc"] = {{"pil_mode", hm["pil_mode"]},
                        {"pil_rgb_sha256", hm["pil_rgb_sha256"]},
                        {"nx", hfimg->nx},
                        {"ny", hfimg->ny},
                        {"floats", blob.add(hfimg->buf.data(), hfimg->buf.size())}};
    ji["hf_embd"] = {
        {"n_tokens", int(emb_hf.size() / n_mm)}, {"n_embd", n_mm}, {"floats", blob.add(emb_hf.data(), emb_hf.size())}};
    if (f32 && hfimg->buf.size() == f32->buf.size()) {
      ji["preproc_max_abs_diff_ik_vs_hf"] = max_abs_diff(hfimg->buf.data(), f32->buf.data(), f32->buf.size());
      ji["embd_max_abs_diff_ik_vs_hf"] = max_abs_diff(emb_hf.data(), emb.data(), std::min(emb.size(), emb_hf.size()));
    }
    clip_image_f32_free(hfimg);
    if (batch) clip_image_f32_batch_free(batch);
    if (u8) clip_image_u8_free(u8);
    if (bm) mtmd_bitmap_free(bm);
    images.push_back(ji);
  }
  out["images"] = images;

  // ---- (c): end to end ----
  struct P {
    const char* name;
    const char* text;
    std::vector<std::string> imgs;
  };
  const std::string M = mtmd_default_marker();
  const std::vector<P> prompts = {
      {"P1", "Describe <__media__> in one line.", {"square.png"}},
      {"P2", "<__media__>What is it?", {"wide.png"}},
      {"P3", "Compare <__media__> and <__media__> now.", {"square.png", "gray.png"}},
  };
  const int N_STEPS = 16;
  json jp = json::array();
  for (auto& p : prompts) {
    std::string text = p.text;
    PromptResult r;
    if (!run_prompt(e, text, p.imgs, 0, N_STEPS, true, r)) {
      std::fprintf(stderr, "prompt %s failed\n", p.name);
      return 1;
    }
    PromptResult rh;  // the hand-decoded non-causal path must give the same first logits
    if (!run_prompt(e, text, p.imgs, 1, 1, true, rh)) return 1;
    json j = {{"name", p.name},
              {"prompt", text},
              {"images", p.imgs},
              {"chunks", r.chunks},
              {"n_past_after_prompt", r.n_past_after_prompt},
              {"generated_ids", r.gen},
              {"steps", r.steps},
              {"first_logits", blob.add(r.first_logits.data(), r.first_logits.size())},
              {"check_hand_noncausal_first_logits_max_abs_diff",
               max_abs_diff(rh.first_logits.data(), r.first_logits.data(), r.first_logits.size())}};
    if (std::string(p.name) == "P1") {
      PromptResult rc;
      if (!run_prompt(e, text, p.imgs, 2, 1, true, rc)) return 1;
      j["causal_image_first_step"] = {
          {"id", rc.gen[0]},
          {"top10", rc.steps[0]["top10"]},
          {"first_logits_max_abs_diff_vs_noncausal",
           max_abs_diff(rc.first_logits.data(), r.first_logits.data(), r.first_logits.size())}};
      // flash attention off (ik's non-flash non-causal mask path), for information only
      PromptResult rn;
      if (!run_prompt(e, text, p.imgs, 0, 1, false, rn)) return 1;
      j["flash_attn_off_first_step"] = {
          {"id", rn.gen[0]},
          {"top10", rn.steps[0]["top10"]},
          {"n_nonfinite_first_logits", n_nonfinite(rn.first_logits)},
          {"first_logits_max_abs_diff_vs_golden",
           max_abs_diff(rn.first_logits.data(), r.first_logits.data(), r.first_logits.size())}};
      PromptResult rnc;
      if (!run_prompt(e, text, p.imgs, 2, 1, false, rnc)) return 1;
      j["flash_attn_off_causal_image_first_step"] = {
          {"id", rnc.gen[0]},
          {"top10", rnc.steps[0]["top10"]},
          {"n_nonfinite_first_logits", n_nonfinite(rnc.first_logits)},
          {"first_logits_max_abs_diff_vs_fa_on_causal",
           max_abs_diff(rnc.first_logits.data(), rc.first_logits.data(), rc.first_logits.size())}};
    }
    jp.push_back(j);
    std::fprintf(stderr, "%s: n_past %d, first id %d\n", p.name, r.n_past_after_prompt, r.gen[0]);
  }
  out["settings"] =
      "text context: n_ctx 512, n_batch = n_ubatch = 512, n_threads 1, flash_attn ON, K/V cache F16, ik defaults "
      "otherwise; "
      "mtmd and clip_image_encode: use_gpu false, n_threads 4 (clip flash attention always off in mtmd, kq_type F32); "
      "mtmd_tokenize add_special true, parse_special true; mtmd_helper_eval_chunks(n_past 0, seq 0, n_batch 512, "
      "logits_last true); "
      "greedy argmax (lowest id on ties), top10 logits to 7 significant digits";
  out["prompts"] = jp;
  out["commands"] = {
      {"mmproj_and_images", "PYTHONPATH=$IK/src/gguf-py /usr/bin/python3 make_gemma3_mmproj.py . $SCRATCH"},
      {"build",
       "g++ -O2 -std=c++17 ik_vision.cpp -I$IK/src/include -I$IK/src/ggml/include -I$IK/src/examples/mtmd "
       "-I$IK/src/vendor -L$IK/build/src -L$IK/build/ggml/src -L$IK/build/examples/mtmd -lmtmd -lllama -lggml "
       "-Wl,-rpath,$IK/build/src:$IK/build/ggml/src:$IK/build/examples/mtmd -o $SCRATCH/ik_vision"},
      {"run",
       "$SCRATCH/ik_vision $SHARED/models/arch/gemma3-tiny.gguf gemma3-tiny-mmproj.gguf . $SCRATCH golden.json "
       "golden.f32"}};
  out["golden_f32"] = {{"file", "golden.f32"},
                       {"n_floats", blob.data.size()},
                       {"format", "little-endian float32; blocks at offset/count (in floats) given per field"}};

  FILE* bf = std::fopen(argv[6], "wb");
  std::fwrite(blob.data.data(), sizeof(float), blob.data.size(), bf);
  std::fclose(bf);
  std::ofstream(argv[5]) << out.dump(1) << "\n";
  clip_free(clip);
  mtmd_free(mctx);
  llama_free_model(model);
  return 0;
}
