#!/usr/bin/python3
"""Independent float64 numpy forward of the Hugging Face Qwen3-VL-MoE text model (Qwen3VLMoeTextModel semantics)
for golden_hf_llm.*: checks ik_llama.cpp's qwen3vlmoe graph (IMROPE, deepstack injection, MoE routing) on the image
prompts, teacher-forced over the golden's own prompt layout and greedy ids.

Usage: PYTHONPATH=<ik_llama.cpp>/gguf-py /usr/bin/python3 check_text_numpy.py qwen3vlmoe-tiny.gguf \
           ../qwen3vl/golden_hf.json ../qwen3vl/golden_hf.f32 golden_hf_llm.json golden_hf_llm.f32
Env: ACT_Q8=1 (default) rounds the activations entering the Q8_0 output matmul as ik does (Q8_2_X4 rows: per
32-block d = bf16(max|x|/127), q = round-half-even(x/d) saturated to int8); VF16=1 (default) rounds V to f16 (ik's
V cache; K stays F32); DS=0 drops the deepstack injection; BUG_HW=1 swaps h and w of image tokens; POS_IK=1 puts
the text after an image at st + 1.

Semantics (HF): per layer x += o(attn(rms(x)*attn_norm)); q, k per-head RMSNorm * q_norm/k_norm; rotate-half rope,
pair (i, i+16), angle = pos_c * base^(-2i/32), c = h for i%3==1 and i<3*s1, w for i%3==2 and i<3*s2, t otherwise
(apply_interleaved_mrope, mrope_section = [s0, s1, s2]); causal GQA attention (q head j reads kv head j // 2),
scale 1/sqrt(32); MoE: router softmax over all experts, top-k, renormalised, sum_e w_e * down_e(silu(gate_e h) *
up_e h), h = rms(x)*ffn_norm; x += moe; after decoder layer l < n_deepstack: image positions += deepstack[l];
final rms * output_norm, lm_head (untied).
"""
import json
import os
import sys

import numpy as np
from gguf import GGUFReader, GGUFValueType


def fval(f):
    t = f.types[0]
    if t == GGUFValueType.STRING:
        return bytes(f.parts[f.data[0]]).decode("utf-8")
    if t == GGUFValueType.ARRAY:
        return [f.parts[i].tolist()[0] for i in f.data]
    return f.parts[f.data[0]].tolist()[0]


def bf16_rne(x):
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)


def q8_rows(x):
    """ik's Q8_2_X4 activation rounding of float32 rows (n, k): returns d (n, k/32) and q (n, k) as float64."""
    x = np.asarray(x, dtype=np.float32).reshape(x.shape[0], -1, 32)
    amax = np.abs(x).max(axis=2)
    d = bf16_rne((amax / np.float32(127)).astype(np.float32))
    idv = np.where(d > 0, np.float32(1) / np.where(d > 0, d, 1), np.float32(0)).astype(np.float32)
    q = np.rint((x * idv[:, :, None]).astype(np.float32))
    q = np.clip(q, -128, 127)
    return d.astype(np.float64), q.astype(np.float64)


def main():
    model_path, ghf_path, ghf_f32, gl_path, gl_f32 = sys.argv[1:6]
    act_q8 = os.environ.get("ACT_Q8", "1") == "1"
    vf16 = os.environ.get("VF16", "1") == "1"
    use_ds = os.environ.get("DS", "1") == "1"
    bug_hw = os.environ.get("BUG_HW", "0") == "1"
    pos_ik = os.environ.get("POS_IK", "0") == "1"

    r = GGUFReader(model_path)
    kv = {k: fval(f) for k, f in r.fields.items() if not k.startswith("tokenizer.")}
    A = kv["general.architecture"]
    assert A == "qwen3vlmoe", A
    n_layer = kv[A + ".block_count"]
    n_head, n_kv = kv[A + ".attention.head_count"], kv[A + ".attention.head_count_kv"]
    hd = kv[A + ".attention.key_length"]
    base = kv[A + ".rope.freq_base"]
    eps = kv[A + ".attention.layer_norm_rms_epsilon"]
    n_used = kv[A + ".expert_used_count"]
    sections = kv[A + ".rope.dimension_sections"]
    n_ds = kv[A + ".n_deepstack_layers"]
    T = {}
    raw_out = None
    for t in r.tensors:
        if t.tensor_type == 8:  # Q8_0: (rows, 34*nb) bytes
            b = np.asarray(t.data).reshape(t.data.shape[0], -1, 34)
            d = b[:, :, :2].copy().view(np.float16)[:, :, 0].astype(np.float64)
            q = b[:, :, 2:].copy().view(np.int8).astype(np.float64)
            T[t.name] = (q * d[:, :, None]).reshape(t.data.shape[0], -1)
            if t.name == "output.weight":
                raw_out = (d, q)
        else:
            T[t.name] = np.asarray(t.data, dtype=np.float64)
    n_embd = T["token_embd.weight"].shape[1]

    # rope angle table per pair i: which component and the inverse frequency (float64)
    half = hd // 2
    comp = []
    for i in range(half):
        if i % 3 == 1 and i < 3 * sections[1]:
            comp.append(1)
        elif i % 3 == 2 and i < 3 * sections[2]:
            comp.append(2)
        else:
            comp.append(0)  # t (sections[3] = 0: e never used)
    comp = np.array(comp)
    inv = base ** (-2.0 * np.arange(half) / hd)

    def rms(x, w):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w

    def rope(x, pos3):  # x (..., hd); pos3 (t, h, w)
        ang = np.array([pos3[c] for c in comp], dtype=np.float64) * inv
        c, s = np.cos(ang), np.sin(ang)
        a, b = x[..., :half], x[..., half:]
        return np.concatenate([a * c - b * s, a * s + b * c], -1)

    ghf = json.load(open(ghf_path))
    bhf = np.fromfile(ghf_f32, dtype="<f4")
    imgs = {}
    for im in ghf["images"]:
        o, c = im["hf_embd"]["floats"]["offset"], im["hf_embd"]["floats"]["count"]
        imgs[im["image"]] = (im["grid"]["tokens_x"], im["grid"]["tokens_y"],
                             bhf[o:o + c].astype(np.float64).reshape(-1, n_embd * (1 + n_ds)))
    gl = json.load(open(gl_path))
    bgl = np.fromfile(gl_f32, dtype="<f4")
    stride = gl["last_prompt_logits_stride"]

    def forward(seq):
        """seq: list of (embedding (n_embd), deepstack list or None, (t, h, w)); returns logits of every position."""
        n = len(seq)
        x = np.stack([s[0] for s in seq])
        K = np.zeros((n_layer, n, n_kv, hd))
        V = np.zeros((n_layer, n, n_kv, hd))
        for l in range(n_layer):
            p = "blk.%d." % l
            h = rms(x, T[p + "attn_norm.weight"])
            q = (h @ T[p + "attn_q.weight"].T).reshape(n, n_head, hd)
            k = (h @ T[p + "attn_k.weight"].T).reshape(n, n_kv, hd)
            v = (h @ T[p + "attn_v.weight"].T).reshape(n, n_kv, hd)
            q = rms(q, T[p + "attn_q_norm.weight"])
            k = rms(k, T[p + "attn_k_norm.weight"])
            for i, s in enumerate(seq):
                q[i] = rope(q[i], s[2])
                k[i] = rope(k[i], s[2])
            if vf16:
                v = v.astype(np.float32).astype(np.float16).astype(np.float64)
            att = np.zeros((n, n_head, hd))
            for j in range(n_head):
                kj = k[:, j // (n_head // n_kv)]
                vj = v[:, j // (n_head // n_kv)]
                sc = (q[:, j] @ kj.T) / np.sqrt(hd)
                sc = sc + np.triu(np.full((n, n), -np.inf), 1)
                sc = np.exp(sc - sc.max(1, keepdims=True))
                sc /= sc.sum(1, keepdims=True)
                att[:, j] = sc @ vj
            x = x + att.reshape(n, -1) @ T[p + "attn_output.weight"].T
            h = rms(x, T[p + "ffn_norm.weight"])
            lg = h @ T[p + "ffn_gate_inp.weight"].T
            pr = np.exp(lg - lg.max(1, keepdims=True))
            pr /= pr.sum(1, keepdims=True)
            y = np.zeros_like(x)
            for i in range(n):
                top = np.argsort(-pr[i], kind="stable")[:n_used]
                w = pr[i, top] / pr[i, top].sum()
                for e, we in zip(top, w):
                    g = T[p + "ffn_gate_exps.weight"][e] @ h[i]
                    u = T[p + "ffn_up_exps.weight"][e] @ h[i]
                    y[i] += we * (T[p + "ffn_down_exps.weight"][e] @ (g / (1 + np.exp(-g)) * u))
            x = x + y
            if use_ds and l < n_ds:
                for i, s in enumerate(seq):
                    if s[1] is not None:
                        x[i] += s[1][l]
        h = rms(x, T["output_norm.weight"])
        if act_q8:
            dw, qw = raw_out  # (V, nb), (V, nb, 32)
            da, qa = q8_rows(h.astype(np.float32))  # (n, nb), (n, nb*32)
            qa = qa.reshape(n, -1, 32)
            return np.einsum("vb,nb,vbk,nbk->nv", dw, da, qw, qa)
        return h @ T["output.weight"].T

    worst = 0.0
    for P in gl["prompts"]:
        seq = []
        for ch in P["chunks"]:
            if ch["type"] == "text":
                for tid, pt in zip(ch["ids"], ch["positions"]["t"]):
                    seq.append((T["token_embd.weight"][tid], None, (pt, pt, pt)))
            else:
                nx, ny, e = imgs[ch["image"]]
                st = ch["st"]
                for kk in range(nx * ny):
                    y, xx = kk // nx, kk % nx
                    if bug_hw:
                        y, xx = xx, y
                    ds = [e[kk, n_embd * (j + 1):n_embd * (j + 2)] for j in range(n_ds)]
                    seq.append((e[kk, :n_embd], ds, (st, st + y, st + xx)))
        # positions after an image (POS_IK: st + 1): recompute text positions sequentially from the chunks
        if pos_ik:
            seq2, pcur, idx = [], 0, 0
            for ch in P["chunks"]:
                if ch["type"] == "text":
                    for _ in ch["ids"]:
                        s = seq[idx]
                        seq2.append((s[0], None, (pcur, pcur, pcur)))
                        pcur += 1
                        idx += 1
                else:
                    nx, ny, _ = imgs[ch["image"]]
                    for kk in range(nx * ny):
                        s = seq[idx]
                        d = np.array(s[2]) - ch["st"] + pcur
                        seq2.append((s[0], s[1], tuple(int(v) for v in d)))
                        idx += 1
                    pcur += 1
            seq = seq2
        assert P["chunks"][-1]["type"] == "text"
        p_next = seq[-1][2][0] + 1
        assert pos_ik or p_next == P["n_past_after_prompt"]
        n_prompt = len(seq)
        for sidx, st in enumerate(P["steps"][:-1]):
            pp = p_next + sidx
            seq.append((T["token_embd.weight"][st["id"]], None, (pp, pp, pp)))
        L = forward(seq)
        o, c = P["last_prompt_logits_sampled"]["offset"], P["last_prompt_logits_sampled"]["count"]
        g_last = bgl[o:o + c].astype(np.float64)
        d_last = np.abs(L[n_prompt - 1][::stride] - g_last).max()
        d_steps, d_gap, bad = 0.0, 0.0, []
        for sidx, st in enumerate(P["steps"]):
            row = L[n_prompt - 1 + sidx]
            for tid, v in st["top10"]:
                d_steps = max(d_steps, abs(row[tid] - v))
            srt = np.sort(row)[::-1]
            d_gap = max(d_gap, abs((srt[0] - srt[1]) - st["top1_top2_gap"]))
            if int(np.argmax(row)) != st["id"]:
                bad.append(sidx)
        worst = max(worst, d_last, d_steps)
        print("%s: n=%d last-prompt logits (every %d-th id) max|d| %.3g; steps top10 max|d| %.3g; gap max|d| %.3g; "
              "argmax != golden id at %d of %d steps %s" % (P["name"], len(seq), stride, d_last, d_steps, d_gap,
                                                             len(bad), len(P["steps"]), bad))
    print("settings: ACT_Q8=%d VF16=%d DS=%d BUG_HW=%d POS_IK=%d; worst %.3g" % (act_q8, vf16, use_ds, bug_hw,
                                                                              pos_ik, worst))


if __name__ == "__main__":
    main()
