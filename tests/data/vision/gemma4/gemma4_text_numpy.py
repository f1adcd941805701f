#!/usr/bin/python3
"""Independent float64 numpy forward of shared/models/arch/gemma4-tiny.gguf (transformers Gemma4TextModel semantics,
as shared/models/arch/README.md states them for ik_llama.cpp's build_gemma4), extended to image-embedding positions.

Used as a module by make_golden_llm_numpy.py and runnable on its own:
  PYTHONPATH=<ik_llama.cpp>/gguf-py /usr/bin/python3 gemma4_text_numpy.py $SHARED/models/arch/gemma4-tiny.gguf
checks (i): the three text prompts of gemma4-tiny.gguf.golden.json teacher-forced, both stored logit rows and every
step's top-5 against ik's golden (KV rounded to f16, output activations rounded as ik's Q8_2_X4).

Model (gemma4-tiny): 8 layers [S,G,S,S,G,S,S,G], window 6 (masked where pos_q - pos_k >= 6), local head 64 x 4 heads
/ 2 KV heads, rope NEOX base 1e4 over 64; global head 128 x 4 / 1 KV head, NEOX base 1e6 over 128 with rope_freqs
(frequency i divided by rope_freqs[i]; 1e30 = not rotated); q/k RMSNorm per head with weight, v RMSNorm without
weight; layer 4 has no attn_v (V = raw K projection); layers 5-7 read the KV of layer 3 (local) / 4 (global);
attention scale 1.0; sandwich norms; FFN down(gelu_tanh(gate h) * up h); per-layer embeddings (PLE);
layer_output_scale; final norm, tied Q8_0 output, softcap 1.0. Text embeddings x sqrt(64) = 8.

Per-layer embedding input P[t] (16 per layer) = (rms(Wproj e_t / 8) * per_layer_proj_norm + tok_part_t) / sqrt(2),
e_t = the model input row (scaled token embedding, or the raw image embedding), tok_part_t:
  text token id:  per_layer_token_embd[id] * 4                       (HF and ik)
  image position: per_layer_token_embd[pad_token_id = 0] * 4          (HF: Gemma4Model.forward replaces image ids by
                                                                       pad before get_per_layer_inputs, which scales)
                  per_layer_token_embd[0] (unscaled)                  (ik build_gemma4, "TODO verify")
Attention among image tokens (mask modes):
  "causal"     HF with use_bidirectional_attention None (E2B/E4B): causal, window on sliding layers;
  "hf_vision"  HF with use_bidirectional_attention "vision" (26B/31B): causal-with-window OR same image block (the
               soft image tokens of one image; boi/eoi are text), i.e. an image sees all of itself on every layer;
  "ik_nc"      ik/mtmd (the image batch decoded with causal attention off): an image token sees every cell of its
               sequence present after the batch (past + whole image) on global layers, and on sliding layers those
               with pos_q - pos_k < 6 (so all later image tokens, but earlier ones only within the window).
"""
import json
import math
import sys

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize


def bf16_round(x):
    """float32 -> bf16 (round to nearest even) -> float32."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.astype(np.uint32).view(np.float32)


def act_q8(x):
    """ik's Q8_2_X4 activation rounding before a Q8_0 matmul: per 32-block d = bf16(max|x|/127), q = rint(x/d)."""
    x = np.asarray(x, dtype=np.float32)
    sh = x.shape
    b = x.reshape(-1, 32)
    amax = np.abs(b).max(axis=1, keepdims=True)
    d = bf16_round(amax / np.float32(127)).astype(np.float64)
    q = np.where(d > 0, np.clip(np.rint(b.astype(np.float64) / np.where(d > 0, d, 1)), -127, 127), 0)
    return (q * d).reshape(sh)


class Gemma4Tiny:
    def __init__(self, path):
        r = GGUFReader(path)
        self.W = {}
        for t in r.tensors:
            shape = [int(x) for x in reversed(t.shape)]
            if t.tensor_type.name in ("F32", "F16"):
                a = np.array(t.data).astype(np.float64).reshape(shape)
            else:
                a = dequantize(np.array(t.data), t.tensor_type).astype(np.float64).reshape(shape)
            self.W[t.name] = a

        def kv(name):
            f = r.fields[name]
            return [f.parts[i].tolist()[0] if len(f.parts[i]) == 1 else f.parts[i].tolist() for i in f.data]
        a = "gemma4."
        self.n_layer = int(kv(a + "block_count")[0])
        self.n_embd = int(kv(a + "embedding_length")[0])
        self.n_head = int(kv(a + "attention.head_count")[0])
        self.eps = float(kv(a + "attention.layer_norm_rms_epsilon")[0])
        self.swa = [bool(x) for x in kv(a + "attention.sliding_window_pattern")]
        self.window = int(kv(a + "attention.sliding_window")[0])
        self.n_shared = int(kv(a + "attention.shared_kv_layers")[0])
        self.n_kv_heads = [int(x) for x in kv(a + "attention.head_count_kv")]
        self.hd_full = int(kv(a + "attention.key_length")[0])
        self.hd_swa = int(kv(a + "attention.key_length_swa")[0])
        self.base_full = float(kv(a + "rope.freq_base")[0])
        self.base_swa = float(kv(a + "rope.freq_base_swa")[0])
        self.n_pl = int(kv(a + "embedding_length_per_layer_input")[0])
        self.softcap = float(kv(a + "final_logit_softcapping")[0])
        self.rope_freqs = self.W["rope_freqs.weight"]
        n_kv = self.n_layer - self.n_shared
        # which layer's KV a layer uses (ik: the last KV layer of the same kind)
        self.kv_src = []
        for il in range(self.n_layer):
            if il < n_kv:
                self.kv_src.append(il)
            else:
                self.kv_src.append(max(j for j in range(n_kv) if self.swa[j] == self.swa[il]))

    def rms(self, x, w=None, eps=None):
        y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + (self.eps if eps is None else eps))
        return y * w if w is not None else y

    @staticmethod
    def gelu(x):
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))

    def rope(self, x, pos, il):
        """x (T, H, D) NEOX over the whole head dim D (local 64 base 1e4; global 128 base 1e6 / rope_freqs)."""
        D = x.shape[-1]
        i = np.arange(D // 2, dtype=np.float64)
        if self.swa[il]:
            inv = self.base_swa ** (-2.0 * i / D)
        else:
            inv = self.base_full ** (-2.0 * i / D) / self.rope_freqs[: D // 2]
        ang = pos[:, None].astype(np.float64) * inv[None, :]
        c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
        x1, x2 = x[..., : D // 2], x[..., D // 2:]
        return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)

    def forward(self, seq, mask_mode="causal", ple_image="hf", kv_f16=True, act_q8_out=True, pad_id=0, want=None,
                bug=None):
        """seq: list of ("tok", id) / ("img", vec64, block_id) items, positions 0..T-1 in order (Gemma 4 positions
        are consecutive over text and image tokens, both in HF and in ik/mtmd). Returns logits (len(want), vocab)."""
        W = self.W
        T = len(seq)
        pos = np.arange(T)
        E = W["token_embd.weight"]
        PL = W["per_layer_token_embd.weight"]
        x = np.zeros((T, self.n_embd))
        tokpart = np.zeros((T, self.n_layer * self.n_pl))
        block = np.full(T, -1)
        for t, it in enumerate(seq):
            if it[0] == "tok":
                x[t] = E[it[1]] * math.sqrt(self.n_embd)
                tokpart[t] = PL[it[1]] * math.sqrt(self.n_pl)
            else:
                x[t] = it[1]
                block[t] = it[2]
                tokpart[t] = PL[pad_id] * (math.sqrt(self.n_pl) if ple_image == "hf" else 1.0)
        if bug == "ple_image_zero":
            tokpart[block >= 0] = 0.0
        proj = (x @ W["per_layer_model_proj.weight"].T) / math.sqrt(self.n_embd)
        proj = self.rms(proj.reshape(T, self.n_layer, self.n_pl), W["per_layer_proj_norm.weight"])
        P = (proj + tokpart.reshape(T, self.n_layer, self.n_pl)) / math.sqrt(2.0)

        # visibility: allowed[q, k]
        q_i, k_i = np.meshgrid(np.arange(T), np.arange(T), indexing="ij")
        causal = k_i <= q_i
        same_block = (block[q_i] >= 0) & (block[q_i] == block[k_i])
        if mask_mode == "causal":
            full_vis = causal
        elif mask_mode == "hf_vision":
            full_vis = causal | same_block
        elif mask_mode == "ik_nc":
            last = np.arange(T)
            for b in set(block[block >= 0].tolist()):
                idx = np.where(block == b)[0]
                last[idx] = idx.max()
            full_vis = k_i <= last[q_i]
        else:
            raise ValueError(mask_mode)
        in_win = (pos[q_i] - pos[k_i]) < self.window
        if mask_mode == "hf_vision":
            swa_vis = (causal & in_win) | same_block
        else:
            swa_vis = full_vis & in_win

        kv_cache = {}
        for il in range(self.n_layer):
            p = f"blk.{il}."
            hd = self.hd_swa if self.swa[il] else self.hd_full
            res = x
            h = self.rms(x, W[p + "attn_norm.weight"])
            q = (h @ W[p + "attn_q.weight"].T).reshape(T, self.n_head, hd)
            q = self.rope(self.rms(q, W[p + "attn_q_norm.weight"]), pos, il)
            src = self.kv_src[il]
            if src == il:
                nkv = self.n_kv_heads[il]
                kraw = (h @ W[p + "attn_k.weight"].T).reshape(T, nkv, hd)
                vraw = (h @ W[p + "attn_v.weight"].T).reshape(T, nkv, hd) if p + "attn_v.weight" in W else kraw
                k = self.rope(self.rms(kraw, W[p + "attn_k_norm.weight"]), pos, il)
                v = self.rms(vraw)
                if kv_f16:
                    k = k.astype(np.float16).astype(np.float64)
                    v = v.astype(np.float16).astype(np.float64)
                kv_cache[il] = (k, v)
            k, v = kv_cache[src]
            nkv = k.shape[1]
            rep = self.n_head // nkv
            kk = np.repeat(k, rep, axis=1)
            vv = np.repeat(v, rep, axis=1)
            sc = np.einsum("qhd,khd->hqk", q, kk)            # scale 1.0
            vis = swa_vis if self.swa[il] else full_vis
            sc = np.where(vis[None], sc, -np.inf)
            sc = sc - sc.max(axis=-1, keepdims=True)
            pr = np.exp(sc)
            pr /= pr.sum(axis=-1, keepdims=True)
            att = np.einsum("hqk,khd->qhd", pr, vv).reshape(T, self.n_head * hd)
            x = res + self.rms(att @ W[p + "attn_output.weight"].T, W[p + "post_attention_norm.weight"])
            res = x
            h = self.rms(x, W[p + "ffn_norm.weight"])
            f = (self.gelu(h @ W[p + "ffn_gate.weight"].T) * (h @ W[p + "ffn_up.weight"].T)) @ W[p + "ffn_down.weight"].T
            x = res + self.rms(f, W[p + "post_ffw_norm.weight"])
            g = self.gelu(x @ W[p + "inp_gate.weight"].T) * P[:, il, :]
            x = x + self.rms(g @ W[p + "proj.weight"].T, W[p + "post_norm.weight"])
            x = x * W[p + "layer_output_scale.weight"][0]
        rows = np.arange(T) if want is None else np.asarray(want)
        hN = self.rms(x[rows], W["output_norm.weight"])
        if act_q8_out:
            hN = act_q8(hN)
        lg = hN @ E.T
        if self.softcap > 0:
            lg = self.softcap * np.tanh(lg / self.softcap)
        return lg


def check_text_golden(model_path):
    m = Gemma4Tiny(model_path)
    g = json.load(open(model_path + ".golden.json"))
    blob = np.fromfile(model_path + ".golden.f32", dtype="<f4")
    nv = g["n_vocab"]
    out = []
    for pi, pr in enumerate(g["prompts"]):
        ids = pr["prompt_ids"] + pr["generated_ids"][:-1]
        seq = [("tok", i) for i in ids]
        n0 = len(pr["prompt_ids"])
        want = list(range(n0 - 1, len(ids)))
        lg = m.forward(seq, want=want)
        r0 = blob[(2 * pi) * nv:(2 * pi + 1) * nv]
        r1 = blob[(2 * pi + 1) * nv:(2 * pi + 2) * nv]
        d0 = float(np.abs(lg[0] - r0).max())
        d1 = float(np.abs(lg[-1] - r1).max())
        dt = 0.0
        mism = 0
        for s, t5 in enumerate(pr["top5_per_step"]):
            for tid, val in t5:
                dt = max(dt, abs(float(lg[s][tid]) - val))
            mism += int(np.argmax(lg[s]) != pr["generated_ids"][s])
        out.append({"name": pr["name"], "row0_max_abs_diff": d0, "row_last_max_abs_diff": d1,
                    "steps_top5_max_abs_diff": dt, "argmax_mismatches": mism, "n_steps": len(pr["top5_per_step"])})
    return out


if __name__ == "__main__":
    for r in check_text_golden(sys.argv[1]):
        print(json.dumps(r))
