#!/usr/bin/python3
"""Text-side goldens and checks from the independent float64 numpy forward (gemma4_text_numpy.py):
  (ii)  numpy with ik's rules (image batch non-causal as ik masks it, per-layer input row 0 unscaled) vs ik's
        ik_mtmd golden, and numpy with transformers' E2B rules (causal, row 0 x 4) vs ik's hf_e2b golden
        (teacher-forced along ik's greedy ids; K/V rounded to f16, output activations as ik's Q8_2_X4);
  (iii) the transformers golden for a use_bidirectional_attention = "vision" model (26B/31B style: the soft tokens of
        an image attend each other both ways on every layer, OR-ed with the sliding-window causal mask), which ik
        cannot compute -> golden_hf_llm_numpy.json / .f32 (16 greedy steps of the numpy forward itself);
  and what each semantic difference / plausible port bug moves the logits by.
Reads golden_hf_llm.json/.f32 (layouts and ik's goldens), golden_hf.json/.f32 (image embeddings).

Usage: PYTHONPATH=<ik_llama.cpp>/gguf-py /usr/bin/python3 make_golden_llm_numpy.py $SHARED/models/arch/gemma4-tiny.gguf
"""
import hashlib
import json
import sys

import numpy as np

from gemma4_text_numpy import Gemma4Tiny, check_text_golden

N_STEPS = 16
STRIDE = 2


def load_images():
    g = json.load(open("golden_hf.json"))
    blob = np.fromfile("golden_hf.f32", dtype="<f4")
    out = {}
    for im in g["images"]:
        if im["max_soft_tokens"] != 70:
            continue
        o, c = im["hf_embd"]["floats"]["offset"], im["hf_embd"]["floats"]["count"]
        out[im["image"]] = blob[o:o + c].astype(np.float64).reshape(-1, im["hf_embd"]["n_embd"])
    return out


def build_seq(prompt, imgs):
    seq = []
    for ch in prompt["chunks"]:
        if ch["type"] == "text":
            seq += [("tok", i) for i in ch["ids"]]
        else:
            e = imgs[ch["image"]]
            assert e.shape[0] == ch["n_tokens"]
            seq += [("img", e[k], ch["block"]) for k in range(ch["n_tokens"])]
    assert len(seq) == prompt["n_prompt_tokens"]
    return seq


def teacher(m, seq, gen, **kw):
    """logits at the last prompt position and after each of gen[:N_STEPS-1] (rows that choose gen[s])."""
    full = seq + [("tok", t) for t in gen[:N_STEPS - 1]]
    want = list(range(len(seq) - 1, len(seq) - 1 + N_STEPS))
    return m.forward(full, want=want, **kw)


def greedy(m, seq, **kw):
    gen, rows = [], []
    for s in range(N_STEPS):
        lg = m.forward(seq + [("tok", t) for t in gen], want=[len(seq) + len(gen) - 1], **kw)[0]
        rows.append(lg)
        gen.append(int(np.argmax(lg)))
    return gen, np.array(rows)


def top(lg, k):
    idx = np.argsort(-lg, kind="stable")[:k]
    return [[int(i), float(np.float32(lg[i]))] for i in idx]


def gap(lg):
    s = np.sort(lg)
    return float(s[-1] - s[-2])


def vs_ik(rows, variant, blob):
    """numpy rows (teacher-forced on the variant's ids) vs ik's stored variant."""
    lp = variant["last_prompt_logits_sampled"]
    ik_last = blob[lp["offset"]:lp["offset"] + lp["count"]].astype(np.float64)
    d_last = float(np.abs(rows[0][::STRIDE] - ik_last).max())
    d_steps, n_arg = 0.0, 0
    for s, st in enumerate(variant["steps"]):
        for tid, val in st["top10"]:
            d_steps = max(d_steps, abs(rows[s][tid] - val))
        n_arg += int(np.argmax(rows[s]) == st["id"])
    return {"last_prompt_logits_max_abs_diff": d_last, "steps_top10_max_abs_diff": d_steps,
            "n_steps_same_argmax": n_arg, "ik_min_top1_top2_gap": variant["min_top1_top2_gap"]}


def diff(a, b):
    return {"last_prompt_logits_max_abs_diff": float(np.abs(a[0] - b[0]).max()),
            "all_steps_max_abs_diff": float(np.abs(a - b).max()),
            "n_steps_same_argmax": int(sum(np.argmax(a[s]) == np.argmax(b[s]) for s in range(len(a))))}


def main():
    model_path = sys.argv[1]
    m = Gemma4Tiny(model_path)
    imgs = load_images()
    gl = json.load(open("golden_hf_llm.json"))
    blob = np.fromfile("golden_hf_llm.f32", dtype="<f4")
    out_blob = []
    n_out = 0
    res = {
        "reference": "independent float64 numpy forward of gemma4-tiny.gguf (gemma4_text_numpy.py) fed golden_hf's "
                     "image embeddings; layouts from golden_hf_llm.json (mtmd tokenization)",
        "text_model_sha256": hashlib.sha256(open(model_path, "rb").read()).hexdigest(),
        "arithmetic": "float64; K and V rounded to f16 (as ik's F16 cache); the final hidden state rounded as ik's "
                      "Q8_2_X4 activations before the tied Q8_0 output matmul; everything else float64",
        "hf_vision_semantics": "use_bidirectional_attention 'vision': mask = (causal AND pos_q - pos_k < 6 on sliding "
                               "layers) OR (q, k soft tokens of the same image); per-layer input at image positions "
                               "= per_layer_token_embd[0] * 4",
        "last_prompt_logits_stride": STRIDE,
        "golden_f32": "golden_hf_llm_numpy.f32",
        "text_check_vs_shared_golden": check_text_golden(model_path),
        "prompts": [],
    }
    for p in gl["prompts"]:
        seq = build_seq(p, imgs)
        hf_ids = p["hf_e2b"]["generated_ids"]
        ik_ids = p["ik_mtmd"]["generated_ids"]
        # (ii) numpy vs ik, each along ik's own ids
        n_hf = teacher(m, seq, hf_ids, mask_mode="causal", ple_image="hf")
        n_ik = teacher(m, seq, ik_ids, mask_mode="ik_nc", ple_image="ik")
        # (iii) hf_vision golden: numpy greedy
        gen_v, rows_v = greedy(m, seq, mask_mode="hf_vision", ple_image="hf")
        # semantic differences, all along hf_e2b's ids (numpy vs numpy)
        along = {
            "hf_vision": teacher(m, seq, hf_ids, mask_mode="hf_vision", ple_image="hf"),
            "ik_mtmd_rules": teacher(m, seq, hf_ids, mask_mode="ik_nc", ple_image="ik"),
            "ik_per_layer_input_only": teacher(m, seq, hf_ids, mask_mode="causal", ple_image="ik"),
            "ik_noncausal_only": teacher(m, seq, hf_ids, mask_mode="ik_nc", ple_image="hf"),
            "bug_image_per_layer_token_part_zero": teacher(m, seq, hf_ids, mask_mode="causal", ple_image="hf",
                                                           bug="ple_image_zero"),
            "no_kv_f16_rounding": teacher(m, seq, hf_ids, mask_mode="causal", ple_image="hf", kv_f16=False),
        }
        sem = {k: diff(n_hf, v) for k, v in along.items()}
        sem["hf_vision_vs_ik_noncausal_with_hf_per_layer_input"] = diff(along["hf_vision"], along["ik_noncausal_only"])
        # bug: image embeddings scaled by sqrt(n_embd) like text embeddings
        seq_bug = [(it[0], it[1] * 8.0, it[2]) if it[0] == "img" else it for it in seq]
        sem["bug_image_embeddings_scaled_by_8"] = diff(n_hf, teacher(m, seq_bug, hf_ids, mask_mode="causal",
                                                                     ple_image="hf"))
        last = rows_v[0][::STRIDE].astype("<f4")
        entry = {
            "name": p["name"],
            "numpy_hf_e2b_vs_ik_hf_e2b": vs_ik(n_hf, p["hf_e2b"], blob),
            "numpy_ik_rules_vs_ik_mtmd": vs_ik(n_ik, p["ik_mtmd"], blob),
            "hf_vision": {
                "generated_ids": gen_v,
                "min_top1_top2_gap": min(gap(r) for r in rows_v),
                "steps": [{"id": gen_v[s], "pos": p["n_prompt_tokens"] + s, "top1_top2_gap": gap(rows_v[s]),
                           "top10": top(rows_v[s], 10)} for s in range(N_STEPS)],
                "last_prompt_logits_top32": top(rows_v[0], 32),
                "last_prompt_logits_sampled": {"offset": n_out, "count": int(last.size)},
                "same_ids_as_ik_hf_e2b": gen_v == hf_ids,
            },
            "semantic_differences_vs_numpy_hf_e2b_along_its_ids": sem,
        }
        out_blob.append(last)
        n_out += last.size
        res["prompts"].append(entry)
        print(p["name"], json.dumps({k: entry[k] for k in ("numpy_hf_e2b_vs_ik_hf_e2b", "numpy_ik_rules_vs_ik_mtmd")}))
        print("  vision ids", gen_v[:8], "gap", entry["hf_vision"]["min_top1_top2_gap"])
        for k, v in sem.items():
            print("  ", k, v)
    np.concatenate(out_blob).astype("<f4").tofile("golden_hf_llm_numpy.f32")
    with open("golden_hf_llm_numpy.json", "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
