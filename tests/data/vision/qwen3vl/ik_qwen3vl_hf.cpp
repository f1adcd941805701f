// Golden (c) for qwen3vl-tiny.gguf: the prompts of golden (a)/(b) (README.md) with Hugging Face Qwen3-VL semantics,
// run through ik_llama.cpp's libllama only (no mtmd, no clip):
//   - image embeddings = the HF-faithful numpy embeddings of hf_encoder_numpy.py (golden_hf.json / .f32), on HF's
//     preprocessed grid (wide.png 6x2, tall.jpg 2x6: Python round);
//   - each image token in its own llama_decode (causal over token order, as HF; ik's "one image = one batch"
//     makes the image tokens attend each other both ways), embedding batches of 192 floats (main | ds0 | ds1);
//   - positions (transformers get_rope_index): image token (y, x) of the merged grid -> (t, h, w, e) =
//     (st, st + y, st + x, 0) with st the position where the image starts; the next text token is at
//     st + max(grid_x, grid_y); text tokens (p, p, p, 0).
// Then 16 greedy steps (one token per llama_decode, argmax, lowest id on ties).
// Also (for the README's measurements, each a variant of (c) with ONE thing changed):
//   b_repro          ik's clip embeddings + ik grid + ik position rule (image advances 1), per token: must equal
//                    golden.json's (b) (check of this driver);
//   c_ik_pos_rule    (c) but the text after an image continues at st + 1 (ik/mtmd rule);
//   c_image_one_batch (c) but each image in one llama_decode (ik's bidirectional image attention);
//   c_fa_off         (c) with flash attention off;
//   c_ik_embd        (c) with ik's clip embeddings (golden.json ik_embd), only where the token grids agree (P1).
//
// Build: as ik_qwen3vl.cpp (README.md), e.g.
//   g++ -O2 -std=c++17 ik_qwen3vl_hf.cpp -I$IK/src/include -I$IK/src/ggml/include -I$IK/src/vendor
//       -L$IK/build/src -L$IK/build/ggml/src -lllama -lggml -Wl,-rpath,$IK/build/src:$IK/build/ggml/src -o
//       ik_qwen3vl_hf
// Run (in this folder):
//   ./ik_qwen3vl_hf qwen3vl-tiny.gguf golden_hf.json golden_hf.f32 golden.json golden.f32 golden_hf_llm.json
//   golden_hf_llm.f32
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
const int LOGIT_STRIDE = 2;       // last-prompt logits stored for ids 0, 2, 4, ... (f32 file < 1 MB)
const int OLD_LOGIT_STRIDE = 16;  // golden.json's first_logits_sampled
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
  std::vector<float> embd;  // nx*ny*192
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

std::string piece(const llama_model* m, llama_token t) {
  char buf[256];
  int n = llama_token_to_piece(m, t, buf, sizeof buf, 0, true);
  return std::string(buf, n > 0 ? n : 0);
}

std::vector<llama_token> tokenize(const llama_model* m, const std::string& s) {
  std::vector<llama_token> t(s.size() + 16);
  int n = llama_tokenize(m, s.c_str(), int(s.size()), t.data(), int(t.size()), /*add_special*/ true,
                         /*parse_special*/ true);
  if (n < 0) return {};
  t.resize(size_t(n));
  return t;
}

// ik bug workaround (README): a 1-token embedding batch as the context's first single-token eval segfaults
// (llama_build_graph reads batch.token[0]); decode one throwaway token in sequence 1 first, then drop it.
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
int decode_image(llama_context* ctx, const Img& im, int n_embd, int k0, int n, llama_pos st, bool logits_last) {
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
    pos[size_t(i)] = st;
    pos[size_t(i + n)] = st + y;
    pos[size_t(i + 2 * n)] = st + x;
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
  bool flash_attn = true;
};

struct Result {
  json chunks = json::array();
  int n_past_after_prompt = 0;
  int n_prompt_tokens = 0;
  std::vector<float> last_logits;
  std::vector<llama_token> gen;
  json steps = json::array();
};

// segments of a prompt: text pieces and images, as mtmd lays them out (and HF's processor: the markers around the
// image; HF puts n_tokens <|image_pad|> between them, whose rows the image embeddings replace)
bool run(llama_model* model, const Prompt& P, const std::map<std::string, Img>& imgs, const Opts& o, Result& r) {
  const int n_embd = llama_model_n_embd(model), n_vocab = llama_n_vocab(model);
  // split at the marker
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
    if (!t.empty()) ch.push_back({false, tokenize(model, t), ""});
    if (i + 1 < texts.size()) ch.push_back({true, {}, P.images[i]});
  }
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = 512;
  cp.n_batch = cp.n_ubatch = 512;
  cp.n_threads = cp.n_threads_batch = 1;
  cp.flash_attn = o.flash_attn;
  cp.type_k = GGML_TYPE_F16;
  cp.type_v = GGML_TYPE_F16;
  cp.n_seq_max = 2;  // sequence 1 only for warm_single_token
  llama_context* ctx = llama_init_from_model(model, cp);
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
      const llama_pos adv = o.hf_pos_rule ? std::max(im.nx, im.ny) : 1;
      jc = {{"type", "image"},     {"image", ch[i].img},
            {"n_tokens", nt},      {"nx", im.nx},
            {"ny", im.ny},         {"st", p},
            {"next_pos", p + adv}, {"positions", {{"t", pt}, {"h", ph}, {"w", pw}, {"e", pe}}}};
      if (o.per_token) {
        for (int k = 0; k < nt; ++k)
          if (decode_image(ctx, im, n_embd, k, 1, p, last && k + 1 == nt) != 0) return false;
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
    r.gen.push_back(t);
    r.steps.push_back({{"id", t}, {"pos", p}, {"top10", topk(lg, n_vocab, 10)}});
    if (s + 1 == N_STEPS) break;
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

// over the greedy steps: max |logit difference| of the ids present in both top-10 lists, and the number of steps
// whose top-10 id lists are identical
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
    std::fprintf(
        stderr,
        "usage: ik_qwen3vl_hf TEXT.gguf golden_hf.json golden_hf.f32 golden.json golden.f32 OUT.json OUT.f32\n");
    return 2;
  }
  json ghf, gik;
  std::ifstream(argv[2]) >> ghf;
  std::ifstream(argv[4]) >> gik;
  const std::vector<float> bhf = read_f32(argv[3]), bik = read_f32(argv[5]);

  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (!model) return 1;
  const int n_embd = llama_model_n_embd(model), n_vocab = llama_n_vocab(model);

  std::map<std::string, Img> hf_imgs, ik_imgs;
  for (auto& im : ghf["images"]) {
    Img m{im["grid"]["tokens_x"], im["grid"]["tokens_y"], slice(bhf, im["hf_embd"]["floats"])};
    if (im["hf_embd"]["n_embd"] != n_embd || m.embd.size() != size_t(m.nx) * m.ny * n_embd) return 1;
    hf_imgs[im["image"]] = m;
  }
  for (auto& im : gik["images"]) {
    Img m{im["grid"]["tokens_x"], im["grid"]["tokens_y"], slice(bik, im["ik_embd"]["floats"])};
    ik_imgs[im["image"]] = m;
  }

  std::vector<float> blob;
  auto add = [&](const std::vector<float>& v) {
    json j = {{"offset", blob.size()}, {"count", v.size()}};
    blob.insert(blob.end(), v.begin(), v.end());
    return j;
  };
  json out;
  out["reference"] =
      "golden (c): Hugging Face Qwen3-VL semantics (hf_encoder_numpy.py embeddings, causal image tokens, "
      "get_rope_index positions) through ik_llama.cpp's libllama (ik_qwen3vl_hf.cpp)";
  out["text_model"] = "qwen3vl-tiny.gguf (make_qwen3vl_text.py from shared/models/arch/qwen3-tiny.gguf)";
  out["image_embeddings"] = "golden_hf.json / golden_hf.f32 (hf_embd)";
  out["n_vocab"] = n_vocab;
  out["llama_model_n_embd"] = n_embd;
  out["settings"] =
      "n_ctx 512, n_batch = n_ubatch 512, n_threads 1, flash attention on, K/V F16, n_seq_max 2 (seq 1 only for the "
      "warm-up workaround); text chunks one llama_decode each (ik expands token positions to (p,p,p,0)); image "
      "tokens one embedding batch each (192 floats, positions (st, st+y, st+x, 0)); 16 greedy steps, one token "
      "per llama_decode, argmax, lowest id on ties";
  out["last_prompt_logits_stride"] = LOGIT_STRIDE;
  out["golden_f32"] = "golden_hf_llm.f32";
  json prompts = json::array();
  for (const Prompt& P : PROMPTS) {
    json jp;
    jp["name"] = P.name;
    jp["prompt"] = P.text;
    jp["images"] = P.images;
    Result c, b, c_ik, c_one, c_fa;
    if (!run(model, P, hf_imgs, Opts{}, c)) return 1;
    if (!run(model, P, ik_imgs, Opts{false, true, true}, b)) return 1;
    if (!run(model, P, hf_imgs, Opts{false, true, true}, c_ik)) return 1;
    if (!run(model, P, hf_imgs, Opts{true, false, true}, c_one)) return 1;
    if (!run(model, P, hf_imgs, Opts{true, true, false}, c_fa)) return 1;
    jp["chunks"] = c.chunks;
    jp["n_prompt_tokens"] = c.n_prompt_tokens;
    jp["n_past_after_prompt"] = c.n_past_after_prompt;
    jp["hf_image_pad_token"] = 151655;
    jp["generated_ids"] = c.gen;
    jp["steps"] = c.steps;
    jp["last_prompt_logits_top32"] = topk(c.last_logits.data(), n_vocab, 32);
    jp["last_prompt_logits_sampled"] = add(stride_sample(c.last_logits, LOGIT_STRIDE));
    int nnf = 0;
    for (float x : c.last_logits) nnf += !std::isfinite(x);
    jp["n_nonfinite_last_prompt_logits"] = nnf;
    // checks / measurements
    json old;
    for (auto& q : gik["prompts"])
      if (q["name"] == P.name) old = q;
    const json& ob = old["b_image_token_per_batch"];
    const std::vector<float> ob_s = slice(bik, ob["first_logits_sampled"]);
    json chk;
    chk["b_repro_vs_golden_b_first_logits_sampled_max_abs_diff"] = max_abs_diff(
        stride_sample(b.last_logits, OLD_LOGIT_STRIDE), ob_s);
    chk["b_repro_same_generated_ids_as_golden_b"] = json(b.gen) == ob["generated_ids"];
    chk["b_repro_same_chunk_text_ids_as_golden"] = [&] {
      size_t k = 0;
      for (auto& jc : old["chunks"])
        if (jc["type"] == "text") {
          while (k < c.chunks.size() && c.chunks[k]["type"] != "text") ++k;
          if (k >= c.chunks.size() || c.chunks[k]["ids"] != jc["ids"]) return false;
          ++k;
        }
      return true;
    }();
    chk["c_vs_golden_b_last_prompt_logits_sampled16_max_abs_diff"] = max_abs_diff(
        stride_sample(c.last_logits, OLD_LOGIT_STRIDE), ob_s);
    chk["c_same_generated_ids_as_golden_b"] = json(c.gen) == ob["generated_ids"];
    chk["c_vs_c_ik_pos_rule_last_logits_max_abs_diff"] = max_abs_diff(c.last_logits, c_ik.last_logits);
    chk["c_ik_pos_rule_same_generated_ids"] = c.gen == c_ik.gen;
    chk["c_vs_c_image_one_batch_last_logits_max_abs_diff"] = max_abs_diff(c.last_logits, c_one.last_logits);
    chk["c_image_one_batch_same_generated_ids"] = c.gen == c_one.gen;
    chk["c_vs_c_fa_off_last_logits_max_abs_diff"] = max_abs_diff(c.last_logits, c_fa.last_logits);
    chk["c_fa_off_same_generated_ids"] = c.gen == c_fa.gen;
    chk["c_vs_c_fa_off_steps_top10"] = steps_top10_diff(c.steps, c_fa.steps);
    chk["c_vs_c_image_one_batch_steps_top10"] = steps_top10_diff(c.steps, c_one.steps);
    chk["c_vs_c_ik_pos_rule_steps_top10"] = steps_top10_diff(c.steps, c_ik.steps);
    chk["c_ik_pos_rule_n_past_after_prompt"] = c_ik.n_past_after_prompt;
    // (c) with ik's clip embeddings instead of the HF-mode ones, where every image has the same token grid in both
    bool same_grid = true;
    for (auto& f : P.images) same_grid = same_grid && hf_imgs[f].nx == ik_imgs[f].nx && hf_imgs[f].ny == ik_imgs[f].ny;
    if (same_grid) {
      Result c_ike;
      if (!run(model, P, ik_imgs, Opts{}, c_ike)) return 1;
      chk["c_vs_c_ik_embd_last_logits_max_abs_diff"] = max_abs_diff(c.last_logits, c_ike.last_logits);
      chk["c_ik_embd_same_generated_ids"] = c.gen == c_ike.gen;
    } else {
      chk["c_vs_c_ik_embd_last_logits_max_abs_diff"] = nullptr;  // token grids differ (Python vs std::round)
    }
    jp["checks"] = chk;
    std::fprintf(stderr, "%s: n_past %d gen[0] %d  %s\n", P.name.c_str(), c.n_past_after_prompt, c.gen[0],
                 chk.dump().c_str());
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
