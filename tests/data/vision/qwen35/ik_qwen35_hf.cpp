// Golden (c) for qwen35-tiny.gguf + qwen35-tiny-mmproj.gguf: Hugging Face Qwen3.5 semantics (Qwen3_5Model =
// Qwen3VLModel's get_rope_index and embedding splice, no deepstack) run through ik_llama.cpp's libllama only
// (no mtmd, no clip):
//   - image embeddings = the HF-faithful numpy embeddings of hf_encoder_numpy.py (golden_hf.json / .f32), 64 floats
//     per token (= llama_model_n_embd: qwen35 has no deepstack, so no inflated embedding width), on HF's grid;
//   - each image token in its own llama_decode (causal over token order, as HF);
//   - positions (transformers get_rope_index): image token (y, x) of the merged grid -> (t, h, w, e) =
//     (st, st + y, st + x, 0) with st the position after <|vision_start|>; the next text token is at
//     st + max(grid_x, grid_y); text tokens (p, p, p, 0);
//   - context: n_ctx 512, n_batch = n_ubatch 512, n_threads 1, K cache F32, V cache F16, flash attention OFF (the
//     setting of shared/models/arch's qwen35-tiny golden: the most exact one ik runs).
// Then 16 greedy steps (one token per llama_decode, argmax, lowest id on ties).
// Checks / measurements (each a variant with ONE thing changed), stored under "checks":
//   text_check      the text-only prompts of qwen35-tiny.gguf.golden.json through this driver's setup (whole prompt
//                   one llama_decode, 24 greedy steps): ids and the two stored logit rows vs that golden, also with
//                   the warm-up workaround context used for the image prompts;
//   c_ik_pos_rule   (c) but the text after an image continues at st + 1 (ik/mtmd rule);
//   c_image_one_batch (c) but each image in one llama_decode (ik/mtmd: image tokens attend each other both ways);
//   c_fa_on_kv_f16  (c) with flash attention on and K/V F16 (the setting of ../qwen3vl's golden (c));
//   c_bug_hw_swapped  (c) with the image tokens' h and w positions swapped (what that port bug costs);
//   c_bug_seq1d_positions (c) with image tokens at 1-D positions st, st+1, ... (M-RoPE ignored for images).
//
// Build (README.md):
//   g++ -O2 -std=c++17 ik_qwen35_hf.cpp -I$IK/src/include -I$IK/src/ggml/include -I$IK/src/vendor
//       -L$IK/build/src -L$IK/build/ggml/src -lllama -lggml -Wl,-rpath,$IK/build/src:$IK/build/ggml/src
//       -o ik_qwen35_hf
// Run (in this folder):
//   ./ik_qwen35_hf $SHARED/models/arch/qwen35-tiny.gguf golden_hf.json golden_hf.f32
//       $SHARED/models/arch/qwen35-tiny.gguf.golden.json $SHARED/models/arch/qwen35-tiny.gguf.golden.f32
//       golden_hf_llm.json golden_hf_llm.f32
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

using json = nlohmann::ordered_json;

namespace {

const int N_STEPS = 16;
const int LOGIT_STRIDE = 2;  // last-prompt logits stored for ids 0, 2, 4, ... (as ../qwen3vl)
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
// first, then drop it. (Sequence 1 has its own DeltaNet state slot; sequence 0's state is reset by its first batch,
// which starts at position 0.)
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

// image tokens [k0, k0+n): embedding batch, positions section-major [t..][h..][w..][e..]
// bug variants (measurements only): hw_swap puts x in the h and y in the w section; seq1d gives image token k the
// 1-D position (st + k, st + k, st + k, 0) as if it were text
int decode_image(llama_context* ctx, const Img& im, int n_embd, int k0, int n, llama_pos st, bool logits_last,
                 bool hw_swap = false, bool seq1d = false) {
  std::vector<float> emb(im.embd.begin() + long(size_t(k0) * n_embd), im.embd.begin() + long(size_t(k0 + n) * n_embd));
  std::vector<llama_pos> pos(size_t(n) * 4);
  std::vector<int32_t> ns(size_t(n), 1);
  llama_seq_id s0 = 0;
  std::vector<llama_seq_id*> sid(size_t(n) + 1, &s0);
  sid[size_t(n)] = nullptr;
  std::vector<int8_t> lg(size_t(n), 0);
  if (logits_last) lg[size_t(n - 1)] = 1;
  for (int i = 0; i < n; ++i) {
    const int k = k0 + i, y = k / im.nx, x = k % im.nx;
    pos[size_t(i)] = seq1d ? st + k : st;
    pos[size_t(i + n)] = seq1d ? st + k : st + (hw_swap ? x : y);
    pos[size_t(i + 2 * n)] = seq1d ? st + k : st + (hw_swap ? y : x);
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

struct Opts {
  bool hf_pos_rule = true;  // text after image at st + max(nx, ny); false: st + 1 (ik)
  bool per_token = true;    // image tokens one per llama_decode; false: whole image in one batch
  bool fa_f16 = false;      // flash attention on + K/V F16 (else FA off, K F32, V F16)
  bool hw_swap = false;     // bug variant: h and w sections swapped for image tokens
  bool seq1d = false;       // bug variant: image tokens at sequential 1-D positions, text continues after them
};

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
          if (decode_image(ctx, im, n_embd, k, 1, p, last && k + 1 == nt, o.hw_swap, o.seq1d) != 0) return false;
      } else if (decode_image(ctx, im, n_embd, 0, nt, p, last) != 0) {
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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 8) {
    std::fprintf(stderr,
                 "usage: ik_qwen35_hf TEXT.gguf golden_hf.json golden_hf.f32 TEXT.golden.json TEXT.golden.f32 "
                 "OUT.json OUT.f32\n");
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
      "golden (c): Hugging Face Qwen3.5 semantics (hf_encoder_numpy.py embeddings, causal image tokens, "
      "get_rope_index positions, no deepstack) through ik_llama.cpp's libllama (ik_qwen35_hf.cpp)";
  out["text_model"] = "shared/models/arch/qwen35-tiny.gguf";
  out["image_embeddings"] = "golden_hf.json / golden_hf.f32 (hf_embd)";
  out["n_vocab"] = n_vocab;
  out["llama_model_n_embd"] = n_embd;
  out["settings"] =
      "n_ctx 512, n_batch = n_ubatch 512, n_threads 1, flash attention OFF, K cache F32, V cache F16, n_seq_max 2 "
      "(seq 1 only for the warm-up workaround), ik defaults otherwise; text chunks one llama_decode each (ik expands "
      "token positions to (p,p,p,0)); image tokens one embedding batch each (64 floats, positions (st, st+y, st+x, "
      "0)); 16 greedy steps, one token per llama_decode, argmax, lowest id on ties";
  out["last_prompt_logits_stride"] = LOGIT_STRIDE;
  out["golden_f32"] = "golden_hf_llm.f32";

  // (a) text-only check against the shared golden
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
      if (!run_text(model, ids, n_gen, warm, gen, f, l)) return 1;
      json r = {{"same_generated_ids", json(gen) == q["generated_ids"]},
                {"first_row_max_abs_diff", max_abs_diff(f, g0)},
                {"last_row_max_abs_diff", max_abs_diff(l, g1)}};
      if (!warm) r["first8_ids"] = std::vector<llama_token>(gen.begin(), gen.begin() + 8);
      jt[warm ? "with_warmup_ctx" : "plain_ctx"] = r;
    }
    std::fprintf(stderr, "text check %s\n", jt.dump().c_str());
    tchk.push_back(jt);
  }
  out["text_check_vs_shared_golden"] = tchk;

  json prompts = json::array();
  for (const Prompt& P : PROMPTS) {
    json jp;
    jp["name"] = P.name;
    jp["prompt"] = P.text;
    jp["images"] = P.images;
    Result c, c_ik, c_one, c_fa, c_sw, c_1d;
    if (!run(model, P, hf_imgs, Opts{}, c)) return 1;
    if (!run(model, P, hf_imgs, Opts{false, true, false}, c_ik)) return 1;
    if (!run(model, P, hf_imgs, Opts{true, false, false}, c_one)) return 1;
    if (!run(model, P, hf_imgs, Opts{true, true, true}, c_fa)) return 1;
    if (!run(model, P, hf_imgs, Opts{true, true, false, true, false}, c_sw)) return 1;
    if (!run(model, P, hf_imgs, Opts{true, true, false, false, true}, c_1d)) return 1;
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
    chk["c_vs_c_ik_pos_rule_last_logits_max_abs_diff"] = max_abs_diff(c.last_logits, c_ik.last_logits);
    chk["c_ik_pos_rule_same_generated_ids"] = c.gen == c_ik.gen;
    chk["c_ik_pos_rule_n_steps_same_id"] = [&] {
      int n = 0;
      for (size_t s = 0; s < c.gen.size(); ++s) n += c.gen[s] == c_ik.gen[s];
      return n;
    }();
    chk["c_ik_pos_rule_first8_ids"] = std::vector<llama_token>(c_ik.gen.begin(), c_ik.gen.begin() + 8);
    chk["c_ik_pos_rule_n_past_after_prompt"] = c_ik.n_past_after_prompt;
    chk["c_vs_c_ik_pos_rule_steps_top10"] = steps_top10_diff(c.steps, c_ik.steps);
    chk["c_vs_c_image_one_batch_last_logits_max_abs_diff"] = max_abs_diff(c.last_logits, c_one.last_logits);
    chk["c_image_one_batch_same_generated_ids"] = c.gen == c_one.gen;
    chk["c_vs_c_image_one_batch_steps_top10"] = steps_top10_diff(c.steps, c_one.steps);
    chk["c_vs_c_fa_on_kv_f16_last_logits_max_abs_diff"] = max_abs_diff(c.last_logits, c_fa.last_logits);
    chk["c_fa_on_kv_f16_same_generated_ids"] = c.gen == c_fa.gen;
    chk["c_vs_c_fa_on_kv_f16_steps_top10"] = steps_top10_diff(c.steps, c_fa.steps);
    chk["c_vs_c_bug_hw_swapped_last_logits_max_abs_diff"] = max_abs_diff(c.last_logits, c_sw.last_logits);
    chk["c_bug_hw_swapped_same_generated_ids"] = c.gen == c_sw.gen;
    chk["c_vs_c_bug_hw_swapped_steps_top10"] = steps_top10_diff(c.steps, c_sw.steps);
    chk["c_vs_c_bug_seq1d_positions_last_logits_max_abs_diff"] = max_abs_diff(c.last_logits, c_1d.last_logits);
    chk["c_bug_seq1d_positions_same_generated_ids"] = c.gen == c_1d.gen;
    chk["c_vs_c_bug_seq1d_positions_steps_top10"] = steps_top10_diff(c.steps, c_1d.steps);
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
