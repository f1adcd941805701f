// Golden (c) for qwen3vlmoe-tiny.gguf (make_qwen3vlmoe_text.py from shared/models/arch/qwen3moe-tiny.gguf) fed the
// HF-faithful embeddings of ../qwen3vl (golden_hf.json / .f32 of the qwen3vl-tiny-mmproj.gguf projector): Hugging
// Face Qwen3-VL-MoE semantics (Qwen3VLMoeModel = Qwen3VLModel's get_rope_index, embedding splice and deepstack, with
// Qwen3-MoE text layers) run through ik_llama.cpp's libllama only (no mtmd, no clip):
//   - image embeddings: 192 floats per image token = [main 64 | deepstack 0 64 | deepstack 1 64]
//     (= llama_model_n_embd: ik inflates n_embd by (1 + n_deepstack_layers)), on HF's grid (wide 6x2, tall 2x6);
//   - each image token in its own llama_decode (causal over token order, as HF);
//   - positions (transformers get_rope_index): image token (y, x) of the merged grid -> (t, h, w, e) =
//     (st, st + y, st + x, 0) with st the position after <|vision_start|>; the next text token is at
//     st + max(grid_x, grid_y); text tokens (p, p, p, 0);
//   - context: n_ctx 512, n_batch = n_ubatch 512, n_threads 1, K cache F32, V cache F16, flash attention OFF (the
//     setting of shared/models/arch's qwen3moe-tiny golden: the most exact one ik runs).
// Then 16 greedy steps (one token per llama_decode, argmax, lowest id on ties).
// Checks / measurements (each a variant with ONE thing changed), stored in the JSON:
//   text check       the text-only prompts of qwen3moe-tiny.gguf.golden.json through this driver's setup (whole
//                    prompt one llama_decode, 24 greedy steps) with the derived qwen3vlmoe model (and, if given, the
//                    original qwen3moe model): ids and the two stored logit rows vs that golden;
//   c_ds_zero        (c) with both deepstack features zeroed (= no deepstack); c_ds0_zero / c_ds1_zero one of them;
//   c_bug_ds_swapped (c) with the two deepstack features swapped (feature 1 after layer 0, 0 after layer 1);
//   c_ik_pos_rule    (c) but the text after an image continues at st + 1 (ik/mtmd rule);
//   c_image_one_batch (c) but each image in one llama_decode (ik/mtmd: image tokens attend each other both ways);
//   c_fa_on_kv_f16   (c) with flash attention on and K/V F16 (the setting of ../qwen3vl's golden (c));
//   c_bug_hw_swapped (c) with the image tokens' h and w positions swapped;
//   c_bug_seq1d_positions (c) with image tokens at 1-D positions st, st+1, ... (M-RoPE ignored for images).
//
// Build (README.md):
//   g++ -O2 -std=c++17 ik_qwen3vlmoe_hf.cpp -I$IK/src/include -I$IK/src/ggml/include -I$IK/src/vendor
//       -L$IK/build/src -L$IK/build/ggml/src -lllama -lggml -Wl,-rpath,$IK/build/src:$IK/build/ggml/src
//       -o ik_qwen3vlmoe_hf
// Run (in this folder; $QV = ../qwen3vl):
//   ./ik_qwen3vlmoe_hf $SCRATCH/qwen3vlmoe-tiny.gguf $QV/golden_hf.json $QV/golden_hf.f32
//       $SHARED/models/arch/qwen3moe-tiny.gguf.golden.json $SHARED/models/arch/qwen3moe-tiny.gguf.golden.f32
//       golden_hf_llm.json golden_hf_llm.f32 [$SHARED/models/arch/qwen3moe-tiny.gguf]
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llama.h"

using json = nlohmann::ordered_json;

namespace {

const int N_STEPS = 16;
const int LOGIT_STRIDE = 2;  // last-prompt logits stored for ids 0, 2, 4, ... (as ../qwen3vl)
const int N_DEEPSTACK = 2;   // features per image token after the main embedding
const char* MARKER = "<__media__>";

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
  int nx, ny;               // merged token grid
  std::vector<float> embd;  // nx*ny*n_embd
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

std::vector<float> slice(const std::vector<float>& blob, const json& j) {
  size_t o = j["offset"], c = j["count"];
  return std::vector<float>(blob.begin() + long(o), blob.begin() + long(o + c));
}

int argmax(const float* v, int n) {
  int b = 0;
  for (int i = 1; i < n; ++i)
    if (v[i] > v[b]) b = i;
  return b;
}

json topk(const float* lg, int n_vocab, int k) {  // logits as the exact float32 value (printed as double)
  std::vector<float> v(lg, lg + n_vocab);
  json t = json::array();
  for (int j = 0; j < k; ++j) {
    int b = argmax(v.data(), n_vocab);  // lowest id on ties
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

std::vector<llama_token> tokenize(const llama_model* m, const std::string& s, bool parse_special) {
  std::vector<llama_token> t(s.size() + 16);
  int n = llama_tokenize(m, s.c_str(), int(s.size()), t.data(), int(t.size()), /*add_special*/ true, parse_special);
  if (n < 0) return {};
  t.resize(size_t(n));
  return t;
}

// ik bug workaround (../qwen3vl/README.md): a 1-token embedding batch as the context's first single-token eval
// segfaults (llama_build_graph reads batch.token[0] while n_eval == 0); decode one throwaway token in sequence 1
// first, then drop it.
bool warm_single_token(llama_context* ctx) {
  llama_token t = 11;
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

// text tokens at positions p0.. (ik expands a token batch's pos to (p, p, p, 0) for IMROPE)
int decode_text(llama_context* ctx, const std::vector<llama_token>& toks, llama_pos p0, bool logits_last) {
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

struct Opts {
  bool hf_pos_rule = true;  // text after image at st + max(nx, ny); false: st + 1 (ik)
  bool per_token = true;    // image tokens one per llama_decode; false: whole image in one batch
  bool fa_f16 = false;      // flash attention on + K/V F16 (else FA off, K F32, V F16)
  bool hw_swap = false;     // bug variant: h and w sections swapped for image tokens
  bool seq1d = false;       // bug variant: image tokens at sequential 1-D positions, text continues after them
  int ds_zero_mask = 0;     // bit k: deepstack feature k zeroed
  bool ds_swap = false;     // bug variant: deepstack features 0 and 1 swapped
};

// image tokens [k0, k0+n): embedding batch, positions section-major [t..][h..][w..][e..]
int decode_image(llama_context* ctx, const Img& im, int n_embd, int k0, int n, llama_pos st, bool logits_last,
                 const Opts& o) {
  std::vector<float> emb(im.embd.begin() + long(size_t(k0) * n_embd), im.embd.begin() + long(size_t(k0 + n) * n_embd));
  const int n_main = n_embd / (1 + N_DEEPSTACK);
  for (int i = 0; i < n; ++i) {
    float* e = emb.data() + size_t(i) * n_embd;
    if (o.ds_swap)
      for (int j = 0; j < n_main; ++j) std::swap(e[n_main + j], e[2 * n_main + j]);
    for (int k = 0; k < N_DEEPSTACK; ++k)
      if (o.ds_zero_mask & (1 << k)) std::fill(e + n_main * (k + 1), e + n_main * (k + 2), 0.0f);
  }
  std::vector<llama_pos> pos(size_t(n) * 4);
  std::vector<int32_t> ns(size_t(n), 1);
  llama_seq_id s0 = 0;
  std::vector<llama_seq_id*> sid(size_t(n) + 1, &s0);
  sid[size_t(n)] = nullptr;
  std::vector<int8_t> lg(size_t(n), 0);
  if (logits_last) lg[size_t(n - 1)] = 1;
  for (int i = 0; i < n; ++i) {
    const int k = k0 + i, y = k / im.nx, x = k % im.nx;
    pos[size_t(i)] = o.seq1d ? st + k : st;
    pos[size_t(i + n)] = o.seq1d ? st + k : st + (o.hw_swap ? x : y);
    pos[size_t(i + 2 * n)] = o.seq1d ? st + k : st + (o.hw_swap ? y : x);
    pos[size_t(i + 3 * n)] = 0;
  }
  llama_batch b = {};
  b.n_tokens = n;
  b.token = nullptr;
  b.embd = emb.data();
  b.pos = pos.data();
  b.n_seq_id = ns.data();
  b.seq_id = sid.data();
  b.logits = lg.data();
  return llama_decode(ctx, b);
}

llama_context* make_ctx(llama_model* model, bool fa_f16, int n_seq_max) {
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = 512;
  cp.n_batch = cp.n_ubatch = 512;
  cp.n_threads = cp.n_threads_batch = 1;
  cp.flash_attn = fa_f16;
  cp.type_k = fa_f16 ? GGML_TYPE_F16 : GGML_TYPE_F32;
  cp.type_v = GGML_TYPE_F16;
  cp.n_seq_max = uint32_t(n_seq_max);
  return llama_init_from_model(model, cp);
}

struct Result {
  json chunks = json::array();
  int n_past_after_prompt = 0;
  int n_prompt_tokens = 0;
  std::vector<float> last_logits;
  std::vector<llama_token> gen;
  json steps = json::array();
  double min_gap = INFINITY;
};

bool run(llama_model* model, const Prompt& P, const std::map<std::string, Img>& imgs, const Opts& o, Result& r) {
  const int n_embd = llama_model_n_embd(model), n_vocab = llama_n_vocab(model);
  std::vector<std::string> texts;
  {
    std::string s = P.text;
    size_t at;
    while ((at = s.find(MARKER)) != std::string::npos) {
      texts.push_back(s.substr(0, at));
      s = s.substr(at + std::strlen(MARKER));
    }
    texts.push_back(s);
  }
  struct Chunk {
    bool image;
    std::vector<llama_token> ids;
    std::string img;
  };
  std::vector<Chunk> ch;
  for (size_t i = 0; i < texts.size(); ++i) {
    std::string t = (i > 0 ? "<|vision_end|>" : "") + texts[i] + (i + 1 < texts.size() ? "<|vision_start|>" : "");
    if (!t.empty()) ch.push_back({false, tokenize(model, t, true), ""});
    if (i + 1 < texts.size()) ch.push_back({true, {}, P.images[i]});
  }
  llama_context* ctx = make_ctx(model, o.fa_f16, 2);  // sequence 1 only for warm_single_token
  if (!ctx || !warm_single_token(ctx)) return false;
  llama_pos p = 0;
  for (size_t i = 0; i < ch.size(); ++i) {
    const bool last = i + 1 == ch.size();
    json jc;
    if (!ch[i].image) {
      json ids = json::array(), pieces = json::array(), pt = json::array(), pe = json::array();
      for (size_t k = 0; k < ch[i].ids.size(); ++k) {
        ids.push_back(ch[i].ids[k]);
        pieces.push_back(piece(model, ch[i].ids[k]));
        pt.push_back(p + llama_pos(k));
        pe.push_back(0);
      }
      jc = {{"type", "text"},
            {"ids", ids},
            {"pieces", pieces},
            {"positions", {{"t", pt}, {"h", pt}, {"w", pt}, {"e", pe}}}};
      if (decode_text(ctx, ch[i].ids, p, last) != 0) return false;
      p += llama_pos(ch[i].ids.size());
      r.n_prompt_tokens += int(ch[i].ids.size());
    } else {
      const Img& im = imgs.at(ch[i].img);
      const int nt = im.nx * im.ny;
      json pt = json::array(), ph = json::array(), pw = json::array(), pe = json::array();
      for (int k = 0; k < nt; ++k) {
        pt.push_back(p);
        ph.push_back(p + k / im.nx);
        pw.push_back(p + k % im.nx);
        pe.push_back(0);
      }
      const llama_pos adv = o.seq1d ? nt : o.hf_pos_rule ? std::max(im.nx, im.ny) : 1;
      jc = {{"type", "image"},     {"image", ch[i].img},
            {"n_tokens", nt},      {"nx", im.nx},
            {"ny", im.ny},         {"st", p},
            {"next_pos", p + adv}, {"positions", {{"t", pt}, {"h", ph}, {"w", pw}, {"e", pe}}}};
      if (o.per_token) {
        for (int k = 0; k < nt; ++k)
          if (decode_image(ctx, im, n_embd, k, 1, p, last && k + 1 == nt, o) != 0) return false;
      } else if (decode_image(ctx, im, n_embd, 0, nt, p, last, o) != 0) {
        return false;
      }
      p += adv;
      r.n_prompt_tokens += nt;
    }
    r.chunks.push_back(jc);
  }
  r.n_past_after_prompt = p;
  for (int s = 0; s < N_STEPS; ++s) {
    const float* lg = llama_get_logits_ith(ctx, -1);
    if (s == 0) r.last_logits.assign(lg, lg + n_vocab);
    llama_token t = argmax(lg, n_vocab);
    const double gap = top12_gap(lg, n_vocab);
    r.min_gap = std::min(r.min_gap, gap);
    r.gen.push_back(t);
    r.steps.push_back({{"id", t}, {"pos", p}, {"top1_top2_gap", gap}, {"top10", topk(lg, n_vocab, 10)}});
    if (s + 1 == N_STEPS) break;
    if (decode_text(ctx, {t}, p++, true) != 0) return false;
  }
  llama_free(ctx);
  return true;
}

// text-only greedy run in the setup of shared/models/arch's golden (whole prompt one llama_decode, then one token
// per call); returns ids and the logits rows that chose the first and the last generated id
bool run_text(llama_model* model, const std::vector<llama_token>& ids, int n_gen, bool warm,
              std::vector<llama_token>& gen, std::vector<float>& first, std::vector<float>& lastrow) {
  const int n_vocab = llama_n_vocab(model);
  llama_context* ctx = make_ctx(model, false, warm ? 2 : 1);
  if (!ctx || (warm && !warm_single_token(ctx))) return false;
  if (decode_text(ctx, ids, 0, true) != 0) return false;
  llama_pos p = llama_pos(ids.size());
  for (int s = 0; s < n_gen; ++s) {
    const float* lg = llama_get_logits_ith(ctx, -1);
    if (s == 0) first.assign(lg, lg + n_vocab);
    if (s + 1 == n_gen) lastrow.assign(lg, lg + n_vocab);
    llama_token t = argmax(lg, n_vocab);
    gen.push_back(t);
    if (s + 1 == n_gen) break;
    if (decode_text(ctx, {t}, p++, true) != 0) return false;
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

json steps_top10_diff(const json& a, const json& b) {
  double m = 0;
  int same = 0;
  for (size_t s = 0; s < a.size() && s < b.size(); ++s) {
    bool eq = true;
    for (size_t j = 0; j < 10; ++j) {
      eq = eq && a[s]["top10"][j][0] == b[s]["top10"][j][0];
      for (size_t l = 0; l < 10; ++l)
        if (a[s]["top10"][j][0] == b[s]["top10"][l][0])
          m = std::max(m, std::fabs(a[s]["top10"][j][1].get<double>() - b[s]["top10"][l][1].get<double>()));
    }
    same += eq;
  }
  return {{"max_abs_diff_common_ids", m}, {"n_steps_same_top10_ids", same}};
}

// the text-only prompts of the shared golden through this driver's setup
json text_check(llama_model* model, const json& gtext, const std::vector<float>& btext,
                std::vector<std::vector<float>>* rows_out) {
  const int n_vocab = llama_n_vocab(model);
  json tchk = json::array();
  for (auto& q : gtext["prompts"]) {
    const std::string text = q["prompt"];
    std::vector<llama_token> ids = tokenize(model, text, false);
    const int n_gen = gtext["n_gen"];
    const size_t pi = tchk.size();
    std::vector<float> g0(btext.begin() + long(pi * 2 * n_vocab), btext.begin() + long((pi * 2 + 1) * n_vocab));
    std::vector<float> g1(btext.begin() + long((pi * 2 + 1) * n_vocab), btext.begin() + long((pi * 2 + 2) * n_vocab));
    json jt = {{"name", q["name"]}, {"same_prompt_ids", json(ids) == q["prompt_ids"]}};
    for (int warm = 0; warm < 2; ++warm) {
      std::vector<llama_token> gen;
      std::vector<float> f, l;
      if (!run_text(model, ids, n_gen, warm, gen, f, l)) return nullptr;
      int n_same = 0;
      for (size_t s = 0; s < gen.size() && s < q["generated_ids"].size(); ++s)
        n_same += gen[s] == q["generated_ids"][s];
      json r = {{"same_generated_ids", json(gen) == q["generated_ids"]},
                {"n_steps_same_id", n_same},
                {"first_row_max_abs_diff", max_abs_diff(f, g0)},
                {"last_row_max_abs_diff", max_abs_diff(l, g1)}};
      if (!warm) {
        r["first8_ids"] = std::vector<llama_token>(gen.begin(), gen.begin() + 8);
        if (rows_out) {
          rows_out->push_back(f);
          rows_out->push_back(l);
        }
      }
      jt[warm ? "with_warmup_ctx" : "plain_ctx"] = r;
    }
    std::fprintf(stderr, "text check %s\n", jt.dump().c_str());
    tchk.push_back(jt);
  }
  return tchk;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 8) {
    std::fprintf(stderr,
                 "usage: ik_qwen3vlmoe_hf TEXT.gguf golden_hf.json golden_hf.f32 SHARED.golden.json SHARED.golden.f32 "
                 "OUT.json OUT.f32 [ORIG_qwen3moe.gguf]\n");
    return 2;
  }
  json ghf, gtext;
  std::ifstream(argv[2]) >> ghf;
  std::ifstream(argv[4]) >> gtext;
  const std::vector<float> bhf = read_f32(argv[3]), btext = read_f32(argv[5]);

  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (!model) return 1;
  const int n_embd = llama_model_n_embd(model), n_vocab = llama_n_vocab(model);
  char arch[64] = "", nds[32] = "";
  llama_model_meta_val_str(model, "general.architecture", arch, sizeof arch);
  llama_model_meta_val_str(model, "qwen3vlmoe.n_deepstack_layers", nds, sizeof nds);
  std::fprintf(stderr, "arch %s n_embd %d n_layer %d n_deepstack %s n_vocab %d\n", arch, n_embd, llama_n_layer(model),
               nds, n_vocab);
  if (std::string(arch) != "qwen3vlmoe" || std::atoi(nds) != N_DEEPSTACK) return 1;

  std::map<std::string, Img> hf_imgs;
  for (auto& im : ghf["images"]) {
    Img m{im["grid"]["tokens_x"], im["grid"]["tokens_y"], slice(bhf, im["hf_embd"]["floats"])};
    if (im["hf_embd"]["n_embd"] != n_embd || m.embd.size() != size_t(m.nx) * m.ny * n_embd) {
      std::fprintf(stderr, "embedding width %d != llama_model_n_embd %d\n", int(im["hf_embd"]["n_embd"]), n_embd);
      return 1;
    }
    hf_imgs[im["image"]] = m;
  }

  std::vector<float> blob;
  auto add = [&](const std::vector<float>& v) {
    json j = {{"offset", blob.size()}, {"count", v.size()}};
    blob.insert(blob.end(), v.begin(), v.end());
    return j;
  };
  json out;
  out["reference"] =
      "golden (c): Hugging Face Qwen3-VL-MoE semantics (../qwen3vl hf_encoder_numpy.py embeddings incl. deepstack, "
      "causal image tokens, get_rope_index positions) through ik_llama.cpp's libllama qwen3vlmoe text graph "
      "(ik_qwen3vlmoe_hf.cpp)";
  out["text_model"] =
      "qwen3vlmoe-tiny.gguf (make_qwen3vlmoe_text.py from shared/models/arch/qwen3moe-tiny.gguf; 3 layers, 8 experts "
      "top-2, n_deepstack_layers 2, rope.dimension_sections [6,5,5,0])";
  out["image_embeddings"] = "../qwen3vl/golden_hf.json / golden_hf.f32 (hf_embd: main | deepstack 0 | deepstack 1)";
  out["n_vocab"] = n_vocab;
  out["llama_model_n_embd"] = n_embd;
  out["n_layer"] = llama_n_layer(model);
  out["settings"] =
      "n_ctx 512, n_batch = n_ubatch 512, n_threads 1, flash attention OFF, K cache F32, V cache F16, n_seq_max 2 "
      "(seq 1 only for the warm-up workaround), ik defaults otherwise; text chunks one llama_decode each (ik expands "
      "token positions to (p,p,p,0)); image tokens one embedding batch each (192 floats, positions (st, st+y, st+x, "
      "0)); 16 greedy steps, one token per llama_decode, argmax, lowest id on ties";
  out["last_prompt_logits_stride"] = LOGIT_STRIDE;
  out["golden_f32"] = "golden_hf_llm.f32";

  // (a) text-only check against the shared golden (derived model; original model if given)
  std::vector<std::vector<float>> rows_derived, rows_orig;
  json tchk = text_check(model, gtext, btext, &rows_derived);
  if (tchk.is_null()) return 1;
  out["text_check_vs_shared_golden"] = tchk;
  if (argc > 8) {
    llama_model* orig = llama_model_load_from_file(argv[8], mp);
    if (!orig) return 1;
    json t2 = text_check(orig, gtext, btext, &rows_orig);
    if (t2.is_null()) return 1;
    out["text_check_orig_qwen3moe_vs_shared_golden"] = t2;
    float m = 0;
    for (size_t i = 0; i < rows_derived.size() && i < rows_orig.size(); ++i)
      m = std::max(m, max_abs_diff(rows_derived[i], rows_orig[i]));
    out["text_check_derived_vs_orig_rows_max_abs_diff"] = m;
    llama_free_model(orig);
  }

  json prompts = json::array();
  for (const Prompt& P : PROMPTS) {
    json jp;
    jp["name"] = P.name;
    jp["prompt"] = P.text;
    jp["images"] = P.images;
    Opts o_ik, o_one, o_fa, o_sw, o_1d, o_dz, o_d0, o_d1, o_dsw;
    o_ik.hf_pos_rule = false;
    o_one.per_token = false;
    o_fa.fa_f16 = true;
    o_sw.hw_swap = true;
    o_1d.seq1d = true;
    o_dz.ds_zero_mask = 3;
    o_d0.ds_zero_mask = 1;
    o_d1.ds_zero_mask = 2;
    o_dsw.ds_swap = true;
    Result c, c_ik, c_one, c_fa, c_sw, c_1d, c_dz, c_d0, c_d1, c_dsw;
    if (!run(model, P, hf_imgs, Opts{}, c)) return 1;
    const std::pair<const Opts*, Result*> variants[] = {{&o_ik, &c_ik}, {&o_one, &c_one}, {&o_fa, &c_fa},
                                                        {&o_sw, &c_sw}, {&o_1d, &c_1d},   {&o_dz, &c_dz},
                                                        {&o_d0, &c_d0}, {&o_d1, &c_d1},   {&o_dsw, &c_dsw}};
    for (auto& v : variants)
      if (!run(model, P, hf_imgs, *v.first, *v.second)) return 1;
    jp["chunks"] = c.chunks;
    jp["n_prompt_tokens"] = c.n_prompt_tokens;
    jp["n_past_after_prompt"] = c.n_past_after_prompt;
    jp["hf_image_pad_token"] = 151655;
    jp["generated_ids"] = c.gen;
    jp["min_top1_top2_gap"] = c.min_gap;
    jp["steps"] = c.steps;
    jp["last_prompt_logits_top32"] = topk(c.last_logits.data(), n_vocab, 32);
    jp["last_prompt_logits_sampled"] = add(stride_sample(c.last_logits, LOGIT_STRIDE));
    int nnf = 0;
    for (float x : c.last_logits) nnf += !std::isfinite(x);
    jp["n_nonfinite_last_prompt_logits"] = nnf;
    json chk;
    auto variant = [&](const std::string& name, const Result& v) {
      chk["c_vs_" + name + "_last_logits_max_abs_diff"] = max_abs_diff(c.last_logits, v.last_logits);
      chk[name + "_same_generated_ids"] = c.gen == v.gen;
      int n = 0;
      for (size_t s = 0; s < c.gen.size(); ++s) n += c.gen[s] == v.gen[s];
      chk[name + "_n_steps_same_id"] = n;
      chk[name + "_first8_ids"] = std::vector<llama_token>(v.gen.begin(), v.gen.begin() + 8);
      chk["c_vs_" + name + "_steps_top10"] = steps_top10_diff(c.steps, v.steps);
    };
    variant("c_ds_zero", c_dz);
    variant("c_ds0_zero", c_d0);
    variant("c_ds1_zero", c_d1);
    variant("c_bug_ds_swapped", c_dsw);
    variant("c_ik_pos_rule", c_ik);
    chk["c_ik_pos_rule_n_past_after_prompt"] = c_ik.n_past_after_prompt;
    variant("c_image_one_batch", c_one);
    variant("c_fa_on_kv_f16", c_fa);
    variant("c_bug_hw_swapped", c_sw);
    variant("c_bug_seq1d_positions", c_1d);
    jp["checks"] = chk;
    std::fprintf(stderr, "%s: n_prompt %d n_past %d gen[0..3] %d %d %d min_gap %.3g  %s\n", P.name.c_str(),
                 c.n_prompt_tokens, c.n_past_after_prompt, c.gen[0], c.gen[1], c.gen[2], c.min_gap, chk.dump().c_str());
    prompts.push_back(jp);
  }
  out["prompts"] = prompts;
  {
    std::ofstream f(argv[7], std::ios::binary);
    f.write(reinterpret_cast<const char*>(blob.data()), std::streamsize(blob.size() * 4));
  }
  std::ofstream(argv[6]) << out.dump(1) << "\n";
  llama_free_model(model);
  llama_backend_free();
  return 0;
}
