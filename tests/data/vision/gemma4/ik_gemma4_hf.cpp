// Text-side golden for gemma4-tiny.gguf fed golden_hf's image embeddings, through ik_llama.cpp's libllama by hand
// (libmtmd only tokenizes the prompts, exactly as mtmd does, and reports ik's own image token counts):
//   - prompt layout as mtmd builds it for gemma4v: text pieces, each image wrapped in "<|image>" ... "<image|>"
//     (mtmd's img_beg / img_end, tokenized with parse_special; this SPM vocab has no such tokens, so they are text
//     pieces), BOS 1 first; the image chunk holds golden_hf's embeddings (max_soft_tokens 70), positions
//     consecutive over text and image tokens (Gemma 4 uses 1-D positions; mtmd's n_pos = n_tokens);
//   - each text chunk one llama_decode, each image one embedding batch (n <= n_ubatch);
//   - context = the shared gemma4-tiny golden's: n_ctx 512, n_batch = n_ubatch 512, n_threads 1, flash attention
//     ON, K and V cache F16; 16 greedy steps (one token per llama_decode, argmax, lowest id on ties).
// Variants (each stored or measured):
//   hf_e2b            transformers semantics for an E2B/E4B-like model (use_bidirectional_attention None):
//                     image batch CAUSAL, per-layer input at image positions = per_layer_token_embd[pad 0] * sqrt(16)
//                     -- run on TEXT_PLE4.gguf (a copy of gemma4-tiny.gguf whose per_layer_token_embd row 0 is
//                     multiplied by 4 exactly: its four Q8_0 block scales x4; patch_ple_row0.py), since ik's
//                     embedding-batch path reads row 0 unscaled;                                    [stored]
//   ik_mtmd           what ik/mtmd computes: image batch NON-causal (llama_set_causal_attn(false), as
//                     mtmd_helper_decode_image_chunk does for gemma4v), row 0 unscaled, plain gguf;  [stored]
//   ik_causal         plain gguf, image batch causal (isolates the per-layer-input difference);     [measured]
//   hf_ple_noncausal  TEXT_PLE4.gguf, image batch non-causal (isolates the attention difference);   [measured]
//   hf_e2b_repeat     hf_e2b again (determinism).
// Checks: the text prompts of gemma4-tiny.gguf.golden.json through this setup, on both ggufs, against the shared
// golden (ids and both stored rows).
//
// Build (README.md):
//   g++ -O2 -std=c++17 ik_gemma4_hf.cpp -I$IK/src/include -I$IK/src/ggml/include -I$IK/src/examples/mtmd
//       -I$IK/src/vendor -L$IK/build/src -L$IK/build/ggml/src -L$IK/build/examples/mtmd -lmtmd -lllama -lggml
//       -Wl,-rpath,$IK/build/src:$IK/build/ggml/src:$IK/build/examples/mtmd -o ik_gemma4_hf
// Run (in this folder):
//   ./ik_gemma4_hf $SHARED/models/arch/gemma4-tiny.gguf $SCRATCH/gemma4-tiny-ple4.gguf gemma4-tiny-mmproj.gguf
//       golden_hf.json golden_hf.f32 $SHARED/models/arch/gemma4-tiny.gguf.golden.json
//       $SHARED/models/arch/gemma4-tiny.gguf.golden.f32 golden_hf_llm.json golden_hf_llm.f32
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llama.h"
#include "mtmd-helper.h"
#include "mtmd.h"

using json = nlohmann::ordered_json;

namespace {

const int N_STEPS = 16;
const int LOGIT_STRIDE = 2;
const int MST = 70;  // golden_hf entries used (max_soft_tokens)

struct Prompt {
  std::string name, text;
  std::vector<std::string> images;
};
const Prompt PROMPTS[] = {
    {"P1", "Describe <__media__> in one line.", {"grid.png"}},
    {"P2", "<__media__>What is it?", {"wide.png"}},
    {"P3", "Compare <__media__> and <__media__> now.", {"tall.jpg", "small.png"}},
};

struct Img {
  int nx, ny;
  std::vector<float> embd;
};

std::vector<float> read_f32(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  f.seekg(0, std::ios::end);
  size_t n = size_t(f.tellg()) / 4;
  f.seekg(0);
  std::vector<float> v(n);
  f.read(reinterpret_cast<char*>(v.data()), std::streamsize(n * 4));
  return v;
}

int argmax(const float* v, int n) {
  int b = 0;
  for (int i = 1; i < n; ++i)
    if (v[i] > v[b]) b = i;
  return b;
}

json topk(const float* lg, int n_vocab, int k) {
  std::vector<float> v(lg, lg + n_vocab);
  json t = json::array();
  for (int j = 0; j < k; ++j) {
    int b = argmax(v.data(), n_vocab);
    t.push_back(json::array({b, double(lg[b])}));
    v[b] = -INFINITY;
  }
  return t;
}

double top12_gap(const float* lg, int n_vocab) {
  int b = argmax(lg, n_vocab);
  float s = -INFINITY;
  for (int i = 0; i < n_vocab; ++i)
    if (i != b && lg[i] > s) s = lg[i];
  return double(lg[b]) - double(s);
}

std::string piece(const llama_model* m, llama_token t) {
  char buf[256];
  int n = llama_token_to_piece(m, t, buf, sizeof buf, 0, true);
  return std::string(buf, n > 0 ? n : 0);
}

llama_context* make_ctx(llama_model* model) {
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = 512;
  cp.n_batch = cp.n_ubatch = 512;
  cp.n_threads = cp.n_threads_batch = 1;
  cp.flash_attn = true;
  cp.type_k = GGML_TYPE_F16;
  cp.type_v = GGML_TYPE_F16;
  cp.n_seq_max = 1;
  return llama_init_from_model(model, cp);
}

int decode_tokens(llama_context* ctx, const std::vector<llama_token>& toks, llama_pos p0, bool logits_last) {
  const int n = int(toks.size());
  std::vector<llama_token> t(toks);
  std::vector<llama_pos> pos(static_cast<size_t>(n));
  std::vector<int32_t> ns(size_t(n), 1);
  llama_seq_id s0 = 0;
  std::vector<llama_seq_id*> sid(size_t(n) + 1, &s0);
  sid[size_t(n)] = nullptr;
  std::vector<int8_t> lg(size_t(n), 0);
  for (int i = 0; i < n; ++i) pos[size_t(i)] = p0 + i;
  if (logits_last) lg[size_t(n - 1)] = 1;
  llama_batch b = {};
  b.n_tokens = n;
  b.token = t.data();
  b.pos = pos.data();
  b.n_seq_id = ns.data();
  b.seq_id = sid.data();
  b.logits = lg.data();
  return llama_decode(ctx, b);
}

int decode_embd(llama_context* ctx, const Img& im, int n_embd, llama_pos p0, bool causal, bool logits_last) {
  const int n = im.nx * im.ny;
  std::vector<float> emb(im.embd);
  std::vector<llama_pos> pos(static_cast<size_t>(n));
  std::vector<int32_t> ns(size_t(n), 1);
  llama_seq_id s0 = 0;
  std::vector<llama_seq_id*> sid(size_t(n) + 1, &s0);
  sid[size_t(n)] = nullptr;
  std::vector<int8_t> lg(size_t(n), 0);
  for (int i = 0; i < n; ++i) pos[size_t(i)] = p0 + i;
  if (logits_last) lg[size_t(n - 1)] = 1;
  llama_batch b = {};
  b.n_tokens = n;
  b.token = nullptr;
  b.embd = emb.data();
  b.pos = pos.data();
  b.n_seq_id = ns.data();
  b.seq_id = sid.data();
  b.logits = lg.data();
  (void)n_embd;
  if (!causal) llama_set_causal_attn(ctx, false);
  const int r = llama_decode(ctx, b);
  if (!causal) llama_set_causal_attn(ctx, true);
  return r;
}

struct Chunk {
  bool image = false;
  std::vector<llama_token> ids;
  std::string img;
  int ik_n_tokens = 0, ik_nx = 0, ik_ny = 0;  // what ik's own preprocessing would give
};

struct Result {
  std::vector<float> last_logits;
  std::vector<llama_token> gen;
  json steps = json::array();
  double min_gap = INFINITY;
  int n_prompt = 0;
};

bool run(llama_model* model, const std::vector<Chunk>& ch, const std::map<std::string, Img>& imgs, bool causal_img,
         Result& r) {
  const int n_embd = llama_model_n_embd(model), n_vocab = llama_n_vocab(model);
  llama_context* ctx = make_ctx(model);
  if (!ctx) return false;
  llama_pos p = 0;
  for (size_t i = 0; i < ch.size(); ++i) {
    const bool last = i + 1 == ch.size();
    if (!ch[i].image) {
      if (decode_tokens(ctx, ch[i].ids, p, last) != 0) return false;
      p += llama_pos(ch[i].ids.size());
    } else {
      const Img& im = imgs.at(ch[i].img);
      if (decode_embd(ctx, im, n_embd, p, causal_img, last) != 0) return false;
      p += im.nx * im.ny;
    }
  }
  r.n_prompt = p;
  for (int s = 0; s < N_STEPS; ++s) {
    const float* lg = llama_get_logits_ith(ctx, -1);
    if (s == 0) r.last_logits.assign(lg, lg + n_vocab);
    llama_token t = argmax(lg, n_vocab);
    const double gap = top12_gap(lg, n_vocab);
    r.min_gap = std::min(r.min_gap, gap);
    r.gen.push_back(t);
    r.steps.push_back({{"id", t}, {"pos", p}, {"top1_top2_gap", gap}, {"top10", topk(lg, n_vocab, 10)}});
    if (s + 1 == N_STEPS) break;
    if (decode_tokens(ctx, {t}, p++, true) != 0) return false;
  }
  llama_free(ctx);
  return true;
}

bool run_text(llama_model* model, const std::vector<llama_token>& ids, int n_gen, std::vector<llama_token>& gen,
              std::vector<float>& first, std::vector<float>& lastrow) {
  const int n_vocab = llama_n_vocab(model);
  llama_context* ctx = make_ctx(model);
  if (!ctx) return false;
  if (decode_tokens(ctx, ids, 0, true) != 0) return false;
  llama_pos p = llama_pos(ids.size());
  for (int s = 0; s < n_gen; ++s) {
    const float* lg = llama_get_logits_ith(ctx, -1);
    if (s == 0) first.assign(lg, lg + n_vocab);
    if (s + 1 == n_gen) lastrow.assign(lg, lg + n_vocab);
    llama_token t = argmax(lg, n_vocab);
    gen.push_back(t);
    if (s + 1 == n_gen) break;
    if (decode_tokens(ctx, {t}, p++, true) != 0) return false;
  }
  llama_free(ctx);
  return true;
}

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return NAN;
  float m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

std::vector<float> stride_sample(const std::vector<float>& v, int stride) {
  std::vector<float> o;
  for (size_t i = 0; i < v.size(); i += size_t(stride)) o.push_back(v[i]);
  return o;
}

json compare(const Result& a, const Result& b) {
  double m = 0;
  int same_top10 = 0, same_id = 0, first_diff = -1;
  for (size_t s = 0; s < a.steps.size() && s < b.steps.size(); ++s) {
    bool eq = true;
    for (size_t j = 0; j < 10; ++j) {
      eq = eq && a.steps[s]["top10"][j][0] == b.steps[s]["top10"][j][0];
      for (size_t l = 0; l < 10; ++l)
        if (a.steps[s]["top10"][j][0] == b.steps[s]["top10"][l][0])
          m = std::max(m, std::fabs(a.steps[s]["top10"][j][1].get<double>() - b.steps[s]["top10"][l][1].get<double>()));
    }
    same_top10 += eq;
    if (a.gen[s] == b.gen[s])
      ++same_id;
    else if (first_diff < 0)
      first_diff = int(s);
  }
  return {{"last_prompt_logits_max_abs_diff", max_abs_diff(a.last_logits, b.last_logits)},
          {"steps_top10_max_abs_diff_common_ids", m},
          {"n_steps_same_top10_ids", same_top10},
          {"n_steps_same_id", same_id},
          {"first_differing_step", first_diff},
          {"first8_ids", std::vector<llama_token>(b.gen.begin(), b.gen.begin() + 8)}};
}

json variant_json(const Result& r, int n_vocab, std::vector<float>* blob) {
  json j;
  j["generated_ids"] = r.gen;
  j["min_top1_top2_gap"] = r.min_gap;
  j["steps"] = r.steps;
  j["last_prompt_logits_top32"] = topk(r.last_logits.data(), n_vocab, 32);
  if (blob) {
    std::vector<float> s = stride_sample(r.last_logits, LOGIT_STRIDE);
    j["last_prompt_logits_sampled"] = {{"offset", blob->size()}, {"count", s.size()}};
    blob->insert(blob->end(), s.begin(), s.end());
  }
  int nnf = 0;
  for (float x : r.last_logits) nnf += !std::isfinite(x);
  j["n_nonfinite_last_prompt_logits"] = nnf;
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 10) {
    std::fprintf(stderr,
                 "usage: ik_gemma4_hf TEXT.gguf TEXT_PLE4.gguf MMPROJ golden_hf.json golden_hf.f32 TEXT.golden.json "
                 "TEXT.golden.f32 OUT.json OUT.f32\n");
    return 2;
  }
  json ghf, gtext;
  std::ifstream(argv[4]) >> ghf;
  std::ifstream(argv[6]) >> gtext;
  const std::vector<float> bhf = read_f32(argv[5]), btext = read_f32(argv[7]);

  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  llama_model* model4 = llama_model_load_from_file(argv[2], mp);
  if (!model || !model4) return 1;
  const int n_embd = llama_model_n_embd(model), n_vocab = llama_n_vocab(model);

  std::map<std::string, Img> imgs;  // key: image file name (max_soft_tokens 70 entries)
  for (auto& im : ghf["images"]) {
    if (int(im["max_soft_tokens"]) != MST) continue;
    std::string name = im["image"];
    name = name.substr(name.find_last_of('/') + 1);
    const size_t o = im["hf_embd"]["floats"]["offset"], c = im["hf_embd"]["floats"]["count"];
    Img m{im["grid"]["tokens_x"], im["grid"]["tokens_y"],
          std::vector<float>(bhf.begin() + long(o), bhf.begin() + long(o + c))};
    if (int(im["hf_embd"]["n_embd"]) != n_embd) return 1;
    imgs[name] = m;
  }

  mtmd_context_params mcp = mtmd_context_params_default();
  mcp.use_gpu = false;
  mcp.n_threads = 1;
  mcp.print_timings = false;
  mcp.verbosity = GGML_LOG_LEVEL_ERROR;
  mtmd_context* mctx = mtmd_init_from_file(argv[3], model, mcp);
  if (!mctx) return 1;

  std::vector<float> blob;
  json out;
  out["reference"] =
      "gemma4-tiny.gguf fed golden_hf.json's HF-faithful image embeddings (max_soft_tokens 70), driven through "
      "ik_llama.cpp 8337e4cd3's libllama by hand (ik_gemma4_hf.cpp); prompt tokens exactly as ik's mtmd_tokenize";
  out["text_model"] = "shared/models/arch/gemma4-tiny.gguf";
  out["text_model_ple4"] = "gemma4-tiny.gguf with per_layer_token_embd row 0 x 4 (patch_ple_row0.py; not stored)";
  out["image_embeddings"] = "golden_hf.json / golden_hf.f32 (hf_embd, the max_soft_tokens 70 entries)";
  out["n_vocab"] = n_vocab;
  out["llama_model_n_embd"] = n_embd;
  out["settings"] =
      "n_ctx 512, n_batch = n_ubatch 512, n_threads 1, flash attention ON, K cache F16, V cache F16, n_seq_max 1, "
      "ik defaults otherwise (as the shared gemma4-tiny golden); each text chunk one llama_decode, each image one "
      "embedding batch at consecutive positions; 16 greedy steps, one token per llama_decode, argmax, lowest id on "
      "ties";
  out["mtmd_non_causal_for_gemma4v"] = mtmd_decode_use_non_causal(mctx);
  out["last_prompt_logits_stride"] = LOGIT_STRIDE;
  out["golden_f32"] = "golden_hf_llm.f32";

  // text check against the shared golden, on both ggufs
  json tchk = json::array();
  for (auto& q : gtext["prompts"]) {
    std::vector<llama_token> ids(q["prompt_ids"].begin(), q["prompt_ids"].end());
    const int n_gen = gtext["n_gen"];
    const size_t pi = tchk.size();
    std::vector<float> g0(btext.begin() + long(pi * 2 * n_vocab), btext.begin() + long((pi * 2 + 1) * n_vocab));
    std::vector<float> g1(btext.begin() + long((pi * 2 + 1) * n_vocab), btext.begin() + long((pi * 2 + 2) * n_vocab));
    json jt = {{"name", q["name"]}};
    for (int w = 0; w < 2; ++w) {
      std::vector<llama_token> gen;
      std::vector<float> f, l;
      if (!run_text(w ? model4 : model, ids, n_gen, gen, f, l)) return 1;
      jt[w ? "ple4_gguf" : "plain_gguf"] = {{"same_generated_ids", json(gen) == q["generated_ids"]},
                                            {"first_row_max_abs_diff", max_abs_diff(f, g0)},
                                            {"last_row_max_abs_diff", max_abs_diff(l, g1)}};
    }
    std::fprintf(stderr, "text check %s\n", jt.dump().c_str());
    tchk.push_back(jt);
  }
  out["text_check_vs_shared_golden"] = tchk;

  json prompts = json::array();
  for (const Prompt& P : PROMPTS) {
    std::vector<mtmd_bitmap*> bms;
    for (auto& f : P.images) {
      mtmd_bitmap* b = mtmd_helper_bitmap_init_from_file(mctx, ("../qwen3vl/" + f).c_str());
      if (!b) return 1;
      bms.push_back(b);
    }
    mtmd_input_chunks* chunks = mtmd_input_chunks_init();
    mtmd_input_text it{P.text.c_str(), true, true};
    if (mtmd_tokenize(mctx, chunks, &it, const_cast<const mtmd_bitmap**>(bms.data()), bms.size()) != 0) return 1;
    std::vector<Chunk> ch;
    size_t i_img = 0;
    for (size_t i = 0; i < mtmd_input_chunks_size(chunks); ++i) {
      const mtmd_input_chunk* c = mtmd_input_chunks_get(chunks, i);
      Chunk k;
      if (mtmd_input_chunk_get_type(c) == MTMD_INPUT_CHUNK_TYPE_TEXT) {
        size_t n = 0;
        const llama_token* t = mtmd_input_chunk_get_tokens_text(c, &n);
        k.ids.assign(t, t + n);
      } else {
        const mtmd_image_tokens* itok = mtmd_input_chunk_get_tokens_image(c);
        k.image = true;
        k.img = P.images[i_img++];
        k.ik_n_tokens = int(mtmd_image_tokens_get_n_tokens(itok));
        k.ik_nx = int(mtmd_image_tokens_get_nx(itok));
        k.ik_ny = int(mtmd_image_tokens_get_ny(itok));
      }
      ch.push_back(k);
    }
    mtmd_input_chunks_free(chunks);
    for (auto* b : bms) mtmd_bitmap_free(b);

    json jp, jch = json::array();
    jp["name"] = P.name;
    jp["prompt"] = P.text;
    jp["images"] = P.images;
    llama_pos p = 0;
    int block = 0;
    for (auto& k : ch) {
      if (!k.image) {
        json ids = json::array(), pieces = json::array(), pos = json::array();
        for (size_t j = 0; j < k.ids.size(); ++j) {
          ids.push_back(k.ids[j]);
          pieces.push_back(piece(model, k.ids[j]));
          pos.push_back(p + llama_pos(j));
        }
        jch.push_back({{"type", "text"}, {"ids", ids}, {"pieces", pieces}, {"positions", pos}});
        p += llama_pos(k.ids.size());
      } else {
        const Img& im = imgs.at(k.img);
        const int nt = im.nx * im.ny;
        jch.push_back({{"type", "image"},
                       {"image", "../qwen3vl/" + k.img},
                       {"max_soft_tokens", MST},
                       {"n_tokens", nt},
                       {"tokens_x", im.nx},
                       {"tokens_y", im.ny},
                       {"block", block++},
                       {"first_pos", p},
                       {"last_pos", p + nt - 1},
                       {"ik_mtmd_own_preprocessing", {{"n_tokens", k.ik_n_tokens}, {"nx", k.ik_nx}, {"ny", k.ik_ny}}}});
        p += nt;
      }
    }
    jp["chunks"] = jch;
    jp["n_prompt_tokens"] = p;
    Result hf, hf2, ikm, ikc, hfnc;
    if (!run(model4, ch, imgs, true, hf)) return 1;
    if (!run(model4, ch, imgs, true, hf2)) return 1;
    if (!run(model, ch, imgs, false, ikm)) return 1;
    if (!run(model, ch, imgs, true, ikc)) return 1;
    if (!run(model4, ch, imgs, false, hfnc)) return 1;
    jp["hf_e2b"] = variant_json(hf, n_vocab, &blob);
    jp["ik_mtmd"] = variant_json(ikm, n_vocab, &blob);
    json chk;
    chk["hf_e2b_repeat_identical"] = hf.last_logits == hf2.last_logits && hf.steps == hf2.steps;
    chk["hf_e2b_vs_ik_mtmd"] = compare(hf, ikm);
    chk["hf_e2b_vs_ik_causal (per-layer input row 0 x4 vs x1 only)"] = compare(hf, ikc);
    chk["hf_e2b_vs_hf_ple_noncausal (image attention causal vs ik non-causal only)"] = compare(hf, hfnc);
    chk["ik_mtmd_vs_ik_causal (attention only, ik per-layer input)"] = compare(ikm, ikc);
    jp["checks"] = chk;
    std::fprintf(stderr, "%s: n_prompt %d hf gen %d %d %d min_gap %.3g | ik_mtmd gen %d %d %d\n  %s\n", P.name.c_str(),
                 p, hf.gen[0], hf.gen[1], hf.gen[2], hf.min_gap, ikm.gen[0], ikm.gen[1], ikm.gen[2],
                 chk.dump().c_str());
    prompts.push_back(jp);
  }
  out["prompts"] = prompts;
  {
    std::ofstream f(argv[9], std::ios::binary);
    f.write(reinterpret_cast<const char*>(blob.data()), std::streamsize(blob.size() * 4));
  }
  std::ofstream(argv[8]) << out.dump(1) << "\n";
  mtmd_free(mctx);
  llama_free_model(model);
  llama_free_model(model4);
  llama_backend_free();
  return 0;
}
