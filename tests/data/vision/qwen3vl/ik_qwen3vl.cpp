// The vision golden of qwen3vl-tiny-mmproj.gguf + qwen3vl-tiny.gguf (derived from qwen3-tiny.gguf by
// make_qwen3vl_text.py) from ik_llama.cpp's libmtmd / libllama: per image the decoded RGB bytes' sha256,
// clip_image_preprocess's float image (smart resize) and clip_image_encode's embeddings (main projector
// output + 2 deepstack features = 192 floats per token), and three end-to-end prompts through mtmd (chunk
// layout, M-RoPE positions, 16 greedy steps) in two decode modes: (a) each image in one llama_decode
// (mtmd default, n_batch 512) and (b) image tokens one per llama_decode (causal like HF). Layout: README.md.
//
// Build (ik_llama.cpp source in $IK/src, CPU build in $IK/build):
//   g++ -O2 -std=c++17 ik_qwen3vl.cpp -I$IK/src/include -I$IK/src/ggml/include -I$IK/src/examples/mtmd \
//       -I$IK/src/vendor -L$IK/build/src -L$IK/build/ggml/src -L$IK/build/examples/mtmd \
//       -lmtmd -lllama -lggml -Wl,-rpath,$IK/build/src:$IK/build/ggml/src:$IK/build/examples/mtmd -o ik_qwen3vl
// Run (in this folder):
//   ./ik_qwen3vl qwen3vl-tiny.gguf qwen3vl-tiny-mmproj.gguf . HF_DIR golden.json golden.f32 [DUMP_DIR]
// (HF_DIR: where make_qwen3vl_mmproj.py wrote hf_preproc.f32 / hf_preproc.json)
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
const int IMG_MIN_TOKENS = 8;   // = ik's built-in default for Qwen-VL (set_limit_image_tokens(8, 4096))
const int IMG_MAX_TOKENS = 64;  // custom (ik default 4096): max_pixels = 64 * (4*2)^2 = 4096
const int LOGIT_STRIDE = 16;    // first-step logits stored for ids 0, 16, 32, ...
const int N_STEPS = 16;

const char* IMAGES[] = {"grid.png", "wide.png", "tall.jpg", "small.png", "big.png", "rgba.png"};

struct Env {
  llama_model* model;
  mtmd_context* mctx;
  std::string dir;
  int n_vocab;
  int n_embd;  // llama_model_n_embd: 192 for qwen3vl (64 x (1 + n_deepstack))
};

llama_context* new_ctx(Env& e, bool flash_attn, bool two_seqs) {
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = 512;
  cp.n_batch = cp.n_ubatch = 512;
  cp.n_threads = cp.n_threads_batch = 1;
  cp.flash_attn = flash_attn;
  cp.type_k = GGML_TYPE_F16;
  cp.type_v = GGML_TYPE_F16;
  if (two_seqs) cp.n_seq_max = 2;  // sequence 1 only for warm_single_token
  return llama_init_from_model(e.model, cp);
}

json topk(const float* lg, int n_vocab, int k) {
  std::vector<float> v(lg, lg + n_vocab);
  json t = json::array();
  for (int j = 0; j < k; ++j) {
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

// Decode modes.
//  HELPER_BATCHED:   mtmd_helper_eval_chunks(n_batch 512): each image in ONE llama_decode (golden a)
//  HELPER_PER_TOKEN: per chunk mtmd_helper_eval_chunk_single: text n_batch 512, image n_batch 1, i.e. one
//                    image token per llama_decode (golden b)
//  HAND_BATCHED / HAND_PER_TOKEN: the same, but the image batch is built here from mtmd_get_output_embd and
//                    OUR position rule (t = n_past, h = n_past + y, w = n_past + x, e = 0; n_past += 1)
enum Mode { HELPER_BATCHED, HELPER_PER_TOKEN, HAND_BATCHED, HAND_PER_TOKEN };

struct PromptResult {
  json chunks = json::array();
  std::vector<llama_token> gen;
  json steps = json::array();
  std::vector<float> first_logits;
  int n_past_after_prompt = 0;
  std::vector<uint8_t> kv_state;  // when stop_after_first_image
};

// hand-made M-RoPE embd batch for tokens [k0, k0+n) of an image chunk
int decode_image_hand(Env& e, llama_context* ctx, const float* embd, int nx, int ny, int k0, int n, llama_pos n_past) {
  const int ne = e.n_embd;
  std::vector<float> emb(embd + size_t(k0) * ne, embd + size_t(k0 + n) * ne);
  std::vector<llama_pos> pos(size_t(n) * 4);
  std::vector<int32_t> nseq(n, 1);
  llama_seq_id s0 = 0;
  std::vector<llama_seq_id*> sids(n + 1, &s0);
  sids[n] = nullptr;
  std::vector<int8_t> lg(n, 0);
  for (int i = 0; i < n; ++i) {
    const int k = k0 + i, y = k / nx, x = k % nx;
    pos[i] = n_past;
    pos[i + n] = n_past + y;
    pos[i + 2 * n] = n_past + x;
    pos[i + 3 * n] = 0;
  }
  (void)ny;
  llama_batch b = {};
  b.n_tokens = n;
  b.token = nullptr;
  b.embd = emb.data();
  b.pos = pos.data();
  b.n_seq_id = nseq.data();
  b.seq_id = sids.data();
  b.logits = lg.data();
  return llama_decode(ctx, b);
}

// ik bug workaround: llm_build_context::llama_build_graph reads batch.token[0] (warm-up detection) whenever
// n_tokens == 1 and the context has not yet counted a single-token eval (lctx.n_eval == 0); for a 1-token
// EMBEDDING batch batch.token is null -> segfault. So before the first 1-token image batch we decode one
// throwaway text token in sequence 1, synchronize (n_eval becomes 1) and remove sequence 1 from the KV cache.
// (check_warmup_* in golden.json: it leaves the results bit-identical.)
bool warm_single_token(llama_context* ctx) {
  llama_token t = 11;  // any token
  llama_pos p0 = 0;
  int32_t ns = 1;
  llama_seq_id s1 = 1;
  llama_seq_id* sp[2] = {&s1, nullptr};
  int8_t lg = 1;
  llama_batch b = {};
  b.n_tokens = 1;
  b.token = &t;
  b.pos = &p0;
  b.n_seq_id = &ns;
  b.seq_id = sp;
  b.logits = &lg;
  if (llama_decode(ctx, b) != 0) return false;
  llama_synchronize(ctx);
  llama_kv_cache_seq_rm(ctx, 1, -1, -1);
  return true;
}

bool run_prompt(Env& e, const std::string& text, const std::vector<std::string>& imgs, Mode mode, int n_steps,
                bool flash_attn, PromptResult& r, bool stop_after_first_image = false, float perturb_last = 0.f,
                bool force_warm = false) {
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
  const size_t nc = mtmd_input_chunks_size(chunks);
  for (size_t i = 0; i < nc; ++i) {
    const mtmd_input_chunk* c = mtmd_input_chunks_get(chunks, i);
    json jc;
    if (mtmd_input_chunk_get_type(c) == MTMD_INPUT_CHUNK_TYPE_TEXT) {
      size_t n;
      const llama_token* t = mtmd_input_chunk_get_tokens_text(c, &n);
      json ids = json::array(), pieces = json::array(), pos = json::array();
      for (size_t k = 0; k < n; ++k) {
        ids.push_back(t[k]);
        pieces.push_back(piece(e.model, t[k]));
        pos.push_back(n_past++);
      }
      jc = {{"type", "text"}, {"ids", ids}, {"pieces", pieces}, {"positions", pos}};
    } else {
      const mtmd_image_tokens* it = mtmd_input_chunk_get_tokens_image(c);
      const int nt = int(mtmd_input_chunk_get_n_tokens(c));
      const int nx = int(mtmd_image_tokens_get_nx(it)), ny = int(mtmd_image_tokens_get_ny(it));
      const llama_pos np = mtmd_input_chunk_get_n_pos(c);
      json pt = json::array(), ph = json::array(), pw = json::array(), pe = json::array();
      for (int k = 0; k < nt; ++k) {
        pt.push_back(n_past);
        ph.push_back(n_past + k / nx);
        pw.push_back(n_past + k % nx);
        pe.push_back(0);
      }
      jc = {{"type", "image"},
            {"image", mtmd_input_chunk_get_id(c)},
            {"n_tokens", nt},
            {"n_pos", np},
            {"nx", nx},
            {"ny", ny},
            {"positions", {{"t", pt}, {"h", ph}, {"w", pw}, {"e", pe}}}};
      n_past += np;
    }
    r.chunks.push_back(jc);
  }

  const bool warm = mode == HELPER_PER_TOKEN || mode == HAND_PER_TOKEN || force_warm;
  llama_context* ctx = new_ctx(e, flash_attn, warm);
  if (!ctx) return false;
  if (warm && !warm_single_token(ctx)) return false;
  llama_pos p = 0;
  if (mode == HELPER_BATCHED && !stop_after_first_image) {
    if (mtmd_helper_eval_chunks(e.mctx, ctx, chunks, 0, 0, 512, true, &p) != 0) return false;
  } else {
    for (size_t i = 0; i < nc; ++i) {
      const mtmd_input_chunk* c = mtmd_input_chunks_get(chunks, i);
      const bool last = i + 1 == nc;
      if (mtmd_input_chunk_get_type(c) == MTMD_INPUT_CHUNK_TYPE_TEXT) {
        if (mtmd_helper_eval_chunk_single(e.mctx, ctx, c, p, 0, 512, last, &p) != 0) return false;
        continue;
      }
      if (mode == HELPER_BATCHED || mode == HELPER_PER_TOKEN) {
        if (mtmd_helper_eval_chunk_single(e.mctx, ctx, c, p, 0, mode == HELPER_BATCHED ? 512 : 1, last, &p) != 0)
          return false;
      } else {
        if (mtmd_encode_chunk(e.mctx, c) != 0) return false;
        const int nt = int(mtmd_input_chunk_get_n_tokens(c));
        const mtmd_image_tokens* it = mtmd_input_chunk_get_tokens_image(c);
        const int nx = int(mtmd_image_tokens_get_nx(it)), ny = int(mtmd_image_tokens_get_ny(it));
        std::vector<float> embd(mtmd_get_output_embd(e.mctx), mtmd_get_output_embd(e.mctx) + size_t(nt) * e.n_embd);
        if (perturb_last != 0.f)
          for (int j = 0; j < e.n_embd; ++j) embd[size_t(nt - 1) * e.n_embd + j] += perturb_last;
        if (mode == HAND_BATCHED) {
          if (decode_image_hand(e, ctx, embd.data(), nx, ny, 0, nt, p) != 0) return false;
        } else {
          for (int k = 0; k < nt; ++k)
            if (decode_image_hand(e, ctx, embd.data(), nx, ny, k, 1, p) != 0) return false;
        }
        p += 1;  // our rule: an M-RoPE image advances n_past by 1
        if (stop_after_first_image) {
          const size_t sz = llama_state_seq_get_size(ctx, 0, 0);
          r.kv_state.resize(sz);
          llama_state_seq_get_data(ctx, r.kv_state.data(), sz, 0, 0);
          llama_free(ctx);
          mtmd_input_chunks_free(chunks);
          for (auto* b : bms) mtmd_bitmap_free(b);
          return true;
        }
      }
    }
  }
  r.n_past_after_prompt = p;
  llama_pos pos = p;
  for (int s = 0; s < n_steps; ++s) {
    const float* lg = llama_get_logits_ith(ctx, -1);
    if (s == 0) r.first_logits.assign(lg, lg + e.n_vocab);
    llama_token t = argmax(lg, e.n_vocab);
    r.gen.push_back(t);
    r.steps.push_back({{"id", t}, {"top10", topk(lg, e.n_vocab, 10)}});
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

std::vector<float> stride_sample(const std::vector<float>& v, int stride) {
  std::vector<float> o;
  for (size_t i = 0; i < v.size(); i += size_t(stride)) o.push_back(v[i]);
  return o;
}

int count_diff_bytes(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  if (a.size() != b.size()) return -1;
  int n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
  return n;
}

// first and last differing byte offsets (relative positions tell which KV cells changed)
json diff_span(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  long first = -1, last = -1;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    if (a[i] != b[i]) {
      if (first < 0) first = long(i);
      last = long(i);
    }
  return {{"n_bytes", a.size()}, {"n_diff", count_diff_bytes(a, b)}, {"first_diff", first}, {"last_diff", last}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: ik_qwen3vl TEXT.gguf MMPROJ.gguf IMG_DIR HF_DIR OUT.json OUT.f32 [DUMP_DIR]\n");
    return 2;
  }
  const std::string text_path = argv[1], mmproj_path = argv[2], dir = argv[3], hf_dir = argv[4];
  const char* out_json = argv[5];
  const char* out_f32 = argv[6];
  const std::string dump_dir = argc > 7 ? argv[7] : "";
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  llama_model* model = llama_model_load_from_file(text_path.c_str(), mp);
  if (!model) return 1;

  mtmd_context_params mcp = mtmd_context_params_default();
  mcp.use_gpu = false;
  mcp.print_timings = false;
  mcp.n_threads = N_CLIP_THREADS;
  mcp.verbosity = GGML_LOG_LEVEL_ERROR;
  mcp.image_min_tokens = IMG_MIN_TOKENS;
  mcp.image_max_tokens = IMG_MAX_TOKENS;
  mtmd_context* mctx = mtmd_init_from_file(mmproj_path.c_str(), model, mcp);
  if (!mctx) return 1;

  // a second clip context for the clip_* calls (mtmd's own is private); same parameters as mtmd uses
  clip_context_params ccp{/*use_gpu*/ false, GGML_LOG_LEVEL_ERROR, CLIP_FLASH_ATTN_TYPE_DISABLED,
                          IMG_MIN_TOKENS,    IMG_MAX_TOKENS,       GGML_TYPE_F32};
  clip_ctx* clip = clip_init(mmproj_path.c_str(), ccp).ctx_v;
  if (!clip) return 1;
  const int n_mm = clip_n_mmproj_embd(clip);

  Env e{model, mctx, dir, llama_n_vocab(model), llama_model_n_embd(model)};
  Blob blob;
  json out;
  out["reference"] =
      "ik_llama.cpp (CPU build; the checkout ../vision/README.md names 8337e4cd3) libmtmd + libllama, "
      "ik_qwen3vl.cpp";
  out["text_model"] = "qwen3vl-tiny.gguf (make_qwen3vl_text.py from shared/models/arch/qwen3-tiny.gguf)";
  out["text_model_sha256"] = file_sha(text_path);
  out["mmproj"] = "qwen3vl-tiny-mmproj.gguf";
  out["mmproj_sha256"] = file_sha(mmproj_path);
  out["mtmd_use_mrope"] = mtmd_decode_use_mrope(mctx);
  out["mtmd_non_causal"] = mtmd_decode_use_non_causal(mctx);
  out["mtmd_default_marker"] = mtmd_default_marker();
  out["n_mmproj_embd"] = n_mm;
  out["llama_model_n_embd"] = e.n_embd;
  out["n_vocab"] = e.n_vocab;
  out["image_min_tokens"] = IMG_MIN_TOKENS;
  out["image_max_tokens"] = IMG_MAX_TOKENS;

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

  // ---- per image ----
  json images = json::array();
  for (size_t ii = 0; ii < sizeof IMAGES / sizeof *IMAGES; ++ii) {
    const std::string name = IMAGES[ii];
    json ji;
    ji["image"] = name;
    mtmd_bitmap* bm = mtmd_helper_bitmap_init_from_file(mctx, (dir + "/" + name).c_str());
    if (!bm) {
      std::fprintf(stderr, "%s: ik cannot decode\n", name.c_str());
      return 1;
    }
    const int nx = int(mtmd_bitmap_get_nx(bm)), ny = int(mtmd_bitmap_get_ny(bm));
    const unsigned char* px = mtmd_bitmap_get_data(bm);
    ji["decoded"] = {{"nx", nx}, {"ny", ny}, {"rgb_sha256", sha256(px, size_t(nx) * ny * 3)}};
    if (!dump_dir.empty()) {
      FILE* f = std::fopen((dump_dir + "/" + name + ".ik.rgb").c_str(), "wb");
      std::fwrite(px, 1, size_t(nx) * ny * 3, f);
      std::fclose(f);
    }
    clip_image_u8* u8 = clip_image_u8_init();
    clip_build_img_from_pixels(px, nx, ny, u8);
    clip_image_f32_batch* batch = clip_image_f32_batch_init();
    if (!clip_image_preprocess(clip, u8, batch)) return 1;
    if (clip_image_f32_batch_n_images(batch) != 1) return 1;
    clip_image_f32* f32 = clip_image_f32_get_img(batch, 0);
    const int n_tok = clip_n_output_tokens(clip, f32);
    std::vector<float> emb(size_t(n_tok) * n_mm);
    if (!clip_image_encode(clip, N_CLIP_THREADS, f32, emb.data())) return 1;
    ji["ik_preproc"] = {{"nx", f32->nx}, {"ny", f32->ny}, {"floats", blob.add(f32->buf.data(), f32->buf.size())}};
    ji["grid"] = {{"patches_x", f32->nx / 4},
                  {"patches_y", f32->ny / 4},
                  {"tokens_x", clip_n_output_tokens_x(clip, f32)},
                  {"tokens_y", clip_n_output_tokens_y(clip, f32)}};
    ji["ik_embd"] = {{"n_tokens", n_tok}, {"n_embd", n_mm}, {"floats", blob.add(emb.data(), emb.size())}};
    // thread dependence of clip_image_encode
    json thr = json::object();
    for (int nt : {1, 2, 3, 8}) {
      std::vector<float> e2(emb.size());
      if (!clip_image_encode(clip, nt, f32, e2.data())) return 1;
      thr[std::to_string(nt)] = max_abs_diff(e2.data(), emb.data(), emb.size());
    }
    ji["clip_threads_max_abs_diff_vs_4"] = thr;
    // the same through mtmd (tokenize + mtmd_encode_chunk + mtmd_get_output_embd)
    {
      mtmd_input_text in{mtmd_default_marker(), false, true};
      mtmd_input_chunks* ch = mtmd_input_chunks_init();
      const mtmd_bitmap* b1[1] = {bm};
      if (mtmd_tokenize(mctx, ch, &in, b1, 1) != 0) return 1;
      for (size_t c = 0; c < mtmd_input_chunks_size(ch); ++c) {
        const mtmd_input_chunk* k = mtmd_input_chunks_get(ch, c);
        if (mtmd_input_chunk_get_type(k) != MTMD_INPUT_CHUNK_TYPE_IMAGE) continue;
        if (mtmd_encode_chunk(mctx, k) != 0) return 1;
        const mtmd_image_tokens* it = mtmd_input_chunk_get_tokens_image(k);
        ji["mtmd_image_tokens"] = {{"nx", mtmd_image_tokens_get_nx(it)},
                                   {"ny", mtmd_image_tokens_get_ny(it)},
                                   {"n_tokens", mtmd_input_chunk_get_n_tokens(k)},
                                   {"n_pos", mtmd_input_chunk_get_n_pos(k)}};
        ji["mtmd_encode_max_abs_diff_vs_clip_image_encode"] = max_abs_diff(mtmd_get_output_embd(mctx), emb.data(),
                                                                           emb.size());
      }
      mtmd_input_chunks_free(ch);
    }
    // transformers-style preprocessing (make_qwen3vl_mmproj.py) through ik's encoder
    {
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
      ji["hf_embd"] = {{"n_tokens", int(emb_hf.size() / n_mm)},
                       {"n_embd", n_mm},
                       {"floats", blob.add(emb_hf.data(), emb_hf.size())}};
      if (hfimg->nx == f32->nx && hfimg->ny == f32->ny) {
        ji["preproc_max_abs_diff_ik_vs_hf"] = max_abs_diff(hfimg->buf.data(), f32->buf.data(), f32->buf.size());
        ji["embd_max_abs_diff_ik_vs_hf"] = max_abs_diff(emb_hf.data(), emb.data(), emb.size());
      } else {
        ji["preproc_max_abs_diff_ik_vs_hf"] = nullptr;  // different smart-resize size
        ji["embd_max_abs_diff_ik_vs_hf"] = nullptr;
      }
      clip_image_f32_free(hfimg);
    }
    std::fprintf(stderr, "%s: %dx%d -> %dx%d, %d tokens\n", name.c_str(), nx, ny, f32->nx, f32->ny, n_tok);
    clip_image_f32_batch_free(batch);
    clip_image_u8_free(u8);
    mtmd_bitmap_free(bm);
    images.push_back(ji);
  }
  out["images"] = images;

  // ---- end to end ----
  struct P {
    const char* name;
    const char* text;
    std::vector<std::string> imgs;
  };
  const std::vector<P> prompts = {
      {"P1", "Describe <__media__> in one line.", {"grid.png"}},
      {"P2", "<__media__>What is it?", {"wide.png"}},
      {"P3", "Compare <__media__> and <__media__> now.", {"tall.jpg", "small.png"}},
  };
  json jp = json::array();
  for (auto& p : prompts) {
    const std::string text = p.text;
    PromptResult ra, rb;
    if (!run_prompt(e, text, p.imgs, HELPER_BATCHED, N_STEPS, true, ra) ||
        !run_prompt(e, text, p.imgs, HELPER_PER_TOKEN, N_STEPS, true, rb)) {
      std::fprintf(stderr, "prompt %s failed\n", p.name);
      return 1;
    }
    auto golden = [&](PromptResult& r) {
      std::vector<float> smp = stride_sample(r.first_logits, LOGIT_STRIDE);
      return json{{"generated_ids", r.gen},
                  {"steps", r.steps},
                  {"first_logits_top32", topk(r.first_logits.data(), e.n_vocab, 32)},
                  {"first_logits_sampled", blob.add(smp.data(), smp.size())},
                  {"n_nonfinite_first_logits", n_nonfinite(r.first_logits)}};
    };
    json j = {{"name", p.name},
              {"prompt", text},
              {"images", p.imgs},
              {"chunks", ra.chunks},
              {"n_past_after_prompt", ra.n_past_after_prompt}};
    j["a_image_one_batch"] = golden(ra);
    j["b_image_token_per_batch"] = golden(rb);
    j["a_vs_b"] = {{"first_logits_max_abs_diff",
                    max_abs_diff(ra.first_logits.data(), rb.first_logits.data(), ra.first_logits.size())},
                   {"same_generated_ids", ra.gen == rb.gen},
                   {"n_past_b", rb.n_past_after_prompt}};
    // checks: our own image batches (our position rule) == the helper's
    PromptResult ha, hb;
    if (!run_prompt(e, text, p.imgs, HAND_BATCHED, 1, true, ha) ||
        !run_prompt(e, text, p.imgs, HAND_PER_TOKEN, 1, true, hb))
      return 1;
    j["check_hand_a_first_logits_max_abs_diff"] = max_abs_diff(ha.first_logits.data(), ra.first_logits.data(),
                                                               ra.first_logits.size());
    j["check_hand_b_first_logits_max_abs_diff"] = max_abs_diff(hb.first_logits.data(), rb.first_logits.data(),
                                                               rb.first_logits.size());
    PromptResult wa;  // (a) with the warm-up token too: must equal (a)
    if (!run_prompt(e, text, p.imgs, HELPER_BATCHED, N_STEPS, true, wa, false, 0.f, true)) return 1;
    j["check_warmup_a_first_logits_max_abs_diff"] = max_abs_diff(wa.first_logits.data(), ra.first_logits.data(),
                                                                 ra.first_logits.size());
    j["check_warmup_a_same_generated_ids"] = wa.gen == ra.gen;
    // flash attention off
    PromptResult fa, fb;
    if (!run_prompt(e, text, p.imgs, HELPER_BATCHED, N_STEPS, false, fa) ||
        !run_prompt(e, text, p.imgs, HELPER_PER_TOKEN, N_STEPS, false, fb))
      return 1;
    j["flash_attn_off"] = {{"a_n_nonfinite_first_logits", n_nonfinite(fa.first_logits)},
                           {"b_n_nonfinite_first_logits", n_nonfinite(fb.first_logits)},
                           {"a_first_logits_max_abs_diff_vs_fa_on",
                            max_abs_diff(fa.first_logits.data(), ra.first_logits.data(), ra.first_logits.size())},
                           {"b_first_logits_max_abs_diff_vs_fa_on",
                            max_abs_diff(fb.first_logits.data(), rb.first_logits.data(), rb.first_logits.size())},
                           {"a_same_generated_ids", fa.gen == ra.gen},
                           {"b_same_generated_ids", fb.gen == rb.gen}};
    // causality: perturb the LAST image token's embedding of the first image; KV state after that image
    {
      json cz;
      for (Mode m : {HAND_BATCHED, HAND_PER_TOKEN}) {
        PromptResult s0, s1;
        if (!run_prompt(e, text, p.imgs, m, 0, true, s0, true, 0.f) ||
            !run_prompt(e, text, p.imgs, m, 0, true, s1, true, 1.0f))
          return 1;
        cz[m == HAND_BATCHED ? "a_image_one_batch" : "b_image_token_per_batch"] = diff_span(s0.kv_state, s1.kv_state);
      }
      j["causality_kv_state_diff_after_perturbing_last_image_token"] = cz;
    }
    jp.push_back(j);
    std::fprintf(stderr, "%s: n_past %d, a first id %d, b first id %d, a==b %d\n", p.name, ra.n_past_after_prompt,
                 ra.gen[0], rb.gen[0], int(ra.gen == rb.gen));
  }
  out["prompts"] = jp;
  out["settings"] =
      "text context: n_ctx 512, n_batch = n_ubatch = 512, n_threads 1, flash_attn ON, K/V cache F16, ik defaults "
      "otherwise; mtmd and clip_image_encode: use_gpu false, n_threads 4, clip flash attention off (mtmd always), "
      "kq_type F32, image_min_tokens 8, image_max_tokens 64; mtmd_tokenize add_special true, parse_special true; "
      "(a) mtmd_helper_eval_chunks(n_past 0, seq 0, n_batch 512, logits_last true); (b) per chunk "
      "mtmd_helper_eval_chunk_single with n_batch 512 for text and 1 for images; greedy argmax (lowest id on ties), "
      "one token per llama_decode; logits to 7 significant digits in JSON";
  out["first_logits_sample_stride"] = LOGIT_STRIDE;
  out["commands"] = {
      {"text_model",
       "PYTHONPATH=$IK/src/gguf-py /usr/bin/python3 make_qwen3vl_text.py "
       "$SHARED/models/arch/qwen3-tiny.gguf $SCRATCH/qwen3vl-tiny.gguf"},
      {"mmproj_and_images", "PYTHONPATH=$IK/src/gguf-py /usr/bin/python3 make_qwen3vl_mmproj.py . $SCRATCH"},
      {"build",
       "g++ -O2 -std=c++17 ik_qwen3vl.cpp -I$IK/src/include -I$IK/src/ggml/include -I$IK/src/examples/mtmd "
       "-I$IK/src/vendor -L$IK/build/src -L$IK/build/ggml/src -L$IK/build/examples/mtmd -lmtmd -lllama -lggml "
       "-Wl,-rpath,$IK/build/src:$IK/build/ggml/src:$IK/build/examples/mtmd -o $SCRATCH/ik_qwen3vl"},
      {"run",
       "$SCRATCH/ik_qwen3vl $SCRATCH/qwen3vl-tiny.gguf qwen3vl-tiny-mmproj.gguf . $SCRATCH golden.json "
       "golden.f32"},
      {"check", "PYTHONPATH=$IK/src/gguf-py /usr/bin/python3 check_encoder_numpy.py"}};
  out["golden_f32"] = {{"file", "golden.f32"},
                       {"n_floats", blob.data.size()},
                       {"format", "little-endian float32; blocks at offset/count (in floats) given per field"}};

  FILE* bf = std::fopen(out_f32, "wb");
  std::fwrite(blob.data.data(), sizeof(float), blob.data.size(), bf);
  std::fclose(bf);
  std::ofstream(out_json) << out.dump(1) << "\n";
  clip_free(clip);
  mtmd_free(mctx);
  llama_free_model(model);
  return 0;
}
