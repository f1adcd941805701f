#!/usr/bin/env python3
"""Float64 numpy reference forward for phi4mini-tiny.gguf and smollm3-tiny.gguf (shared/models/arch/),
float activations, no activation rounding, K/V in float64 — the reference the ik_llama goldens are not.

Written for this project from transformers' src/transformers/models/phi3/modeling_phi3.py and
src/transformers/models/smollm3/modeling_smollm3.py (read, not copied) and the GGUF conventions of
shared/models/arch/README.md. What the forward does:

  both      x = dequant(token_embd)[ids]; per layer (pre-norm):
              h = RMSNorm(x) * attn_norm;  x = x + attn_output @ attention(h)
              h = RMSNorm(x) * ffn_norm;   x = x + ffn_down @ (silu(gate) * up)
            logits = output @ (RMSNorm(x) * output_norm).   RMSNorm(x) = x / sqrt(mean(x^2) + eps)
            attention: q scaled by head_dim^-0.5, causal softmax, GQA: q head h reads kv head h // (H/KV).
  phi3      (Phi3Attention / Phi3MLP) fused attn_qkv rows = [q (H*hd) | k (KV*hd) | v (KV*hd)];
            fused ffn_up rows = [gate (F) | up (F)], silu(gate) * up (Phi3MLP: chunk(2), up * act(gate));
            partial rotary (apply_rotary_pos_emb: rotary_dim = cos.shape[-1]): rotate-half (NEOX) over the
            first n_rot = rope.dimension_count dims, pairs (i, i + n_rot/2), inv_freq_i = base^(-2i/n_rot);
            dims n_rot..hd pass through. Untied output.weight.
  smollm3   (SmolLM3Attention) separate q/k/v; rope only where use_rope = no_rope_layers[l] (ik hard-codes:
            layer l has NO rope iff (l+1) % 4 == 0); GGUF q/k rows are llama-permuted, so in GGUF order the
            rotation is over adjacent pairs (2i, 2i+1) (ggml rope NORM), inv_freq_i = base^(-2i/hd).
            Tied output (token_embd).
  weights   Q8_0 dequantized from the raw blocks (ggml block_q8_0: f16 d, 32 x int8 q; value = d * q),
            F32 as stored; everything computed in float64.

Options for the probes only (never in the written references):
  bug="rope_all_dims"  phi3: rope over the whole head (16 dims, freqs base^(-2i/16)) instead of 12 dims
  bug="rope_all_layers" smollm3: rope on every layer (NoPE ignored)
  act_q8=True          emulate ik_llama's Q8_2_X4 activation rows before the Q8_0 output matmul
                       (per 32-block d = bf16(max|x|/127), q = round-half-even(x/d) clipped to int8)
  v_f16=True           round V to f16 (ik's V cache)
  k_f16=True           round K (after rope) to f16

Usage:
  arch_float_ref.py make  ARCH_DIR OUT_DIR     # writes <stem>.float.json (+ phi4mini-tiny.float.f32)
  arch_float_ref.py probe ARCH_DIR OUT_DIR     # sanity vs the ik goldens + bug table (prints)
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import types
from pathlib import Path

import numpy as np

GGUF_PY = os.environ.get("GGUF_PY", "/work/llama.cpp-b4747/gguf-py")
MODELS = ["phi4mini-tiny", "smollm3-tiny"]
TOPK = 8            # top-k ids by our logits, every step
TOPK_NO_ROWS = 64   # for models whose full rows are not stored (smollm3: vocab 128256)
ROWS_FOR = {"phi4mini-tiny"}  # models whose step-0 / last-step full rows go to the .f32 sidecar


def import_gguf():
    if GGUF_PY not in sys.path:
        sys.path.insert(0, GGUF_PY)
    try:
        import sentencepiece  # noqa: F401
    except ImportError:  # gguf-py's vocab.py imports it at load; unused here
        stub = types.ModuleType("sentencepiece")
        stub.SentencePieceProcessor = None
        sys.modules["sentencepiece"] = stub
    import gguf
    return gguf


def field(r, key):
    f = r.fields[key]
    v = f.parts[f.data[0]]
    return v.tobytes().decode() if v.dtype == np.uint8 else v[0].item()


def dequant(t) -> np.ndarray:
    name = t.tensor_type.name
    if name == "F32":
        return np.asarray(t.data, dtype=np.float64).reshape([int(x) for x in reversed(t.shape)])
    if name == "Q8_0":
        raw = np.asarray(t.data, dtype=np.uint8)          # [rows, n_blocks * 34]
        rows = raw.shape[0]
        blk = raw.reshape(rows, -1, 34)
        d = blk[:, :, :2].copy().view(np.float16)[:, :, 0].astype(np.float64)   # [rows, nb]
        q = blk[:, :, 2:].copy().view(np.int8).astype(np.float64)               # [rows, nb, 32]
        return (d[:, :, None] * q).reshape(rows, -1)
    raise ValueError(f"{t.name}: unsupported type {name}")


class Model:
    def __init__(self, path: Path, dtype=np.float64):
        gguf = import_gguf()
        self.dtype = dtype
        r = gguf.GGUFReader(str(path))
        self.arch = field(r, "general.architecture")
        a = self.arch
        self.n_layer = field(r, f"{a}.block_count")
        self.dim = field(r, f"{a}.embedding_length")
        self.H = field(r, f"{a}.attention.head_count")
        self.KV = field(r, f"{a}.attention.head_count_kv")
        self.hd = self.dim // self.H
        self.n_rot = field(r, f"{a}.rope.dimension_count")
        self.base = float(field(r, f"{a}.rope.freq_base"))
        self.eps = float(field(r, f"{a}.attention.layer_norm_rms_epsilon"))
        self.w = {t.name: dequant(t).astype(dtype) for t in r.tensors}
        if "output.weight" not in self.w:
            self.w["output.weight"] = self.w["token_embd.weight"]
        self.vocab = self.w["output.weight"].shape[0]

    # --- pieces -------------------------------------------------------------------------------
    def rms(self, x, w):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.eps) * w

    def rope(self, x, layer, bug):
        """x: [T, heads, hd]; positions 0..T-1."""
        T = x.shape[0]
        pos = np.arange(T, dtype=np.float64)[:, None]
        dt = self.dtype
        if self.arch == "phi3":
            n = self.hd if bug == "rope_all_dims" else self.n_rot
            inv = self.base ** (-np.arange(0, n, 2, dtype=np.float64) / n)      # [n/2]
            ang = pos * inv[None, :]                                            # [T, n/2]
            c, s = np.cos(ang)[:, None, :].astype(dt), np.sin(ang)[:, None, :].astype(dt)
            h = n // 2
            x1, x2 = x[..., :h], x[..., h:n]
            out = x.copy()
            out[..., :h] = x1 * c - x2 * s
            out[..., h:n] = x2 * c + x1 * s
            return out
        if self.arch == "smollm3":
            if (layer + 1) % 4 == 0 and bug != "rope_all_layers":
                return x  # NoPE layer
            n = self.n_rot
            inv = self.base ** (-np.arange(0, n, 2, dtype=np.float64) / n)
            ang = pos * inv[None, :]
            c, s = np.cos(ang)[:, None, :].astype(dt), np.sin(ang)[:, None, :].astype(dt)
            x0, x1 = x[..., 0:n:2], x[..., 1:n:2]
            out = x.copy()
            out[..., 0:n:2] = x0 * c - x1 * s
            out[..., 1:n:2] = x1 * c + x0 * s
            return out
        raise ValueError(self.arch)

    @staticmethod
    def act_q8_2_x4(x):
        """ik_llama Q8_2_X4 activation rounding (probe only)."""
        x32 = x.astype(np.float32).reshape(x.shape[0], -1, 32)
        amax = np.max(np.abs(x32), axis=-1, keepdims=True) / np.float32(127)
        u = amax.astype(np.float32).view(np.uint32).astype(np.uint64)
        u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
        d = u.astype(np.uint32).view(np.float32)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.where(d > 0, np.clip(np.rint(x32 / d), -127, 127), 0)
        return (d.astype(np.float64) * q.astype(np.float64)).reshape(x.shape)

    # --- forward ------------------------------------------------------------------------------
    def forward(self, ids, bug=None, act_q8=False, v_f16=False, k_f16=False):
        """Logits (float64) at the last position of ids."""
        w = self.w
        T = len(ids)
        H, KV, hd = self.H, self.KV, self.hd
        x = w["token_embd.weight"][np.asarray(ids)]
        mask = np.triu(np.ones((T, T), dtype=bool), 1)
        for l in range(self.n_layer):
            p = f"blk.{l}."
            h = self.rms(x, w[p + "attn_norm.weight"])
            if self.arch == "phi3":
                qkv = h @ w[p + "attn_qkv.weight"].T
                q, k, v = np.split(qkv, [H * hd, H * hd + KV * hd], axis=-1)
            else:
                q = h @ w[p + "attn_q.weight"].T
                k = h @ w[p + "attn_k.weight"].T
                v = h @ w[p + "attn_v.weight"].T
            q = self.rope(q.reshape(T, H, hd), l, bug)
            k = self.rope(k.reshape(T, KV, hd), l, bug)
            v = v.reshape(T, KV, hd)
            if k_f16:
                k = k.astype(np.float32).astype(np.float16).astype(self.dtype)
            if v_f16:
                v = v.astype(np.float32).astype(np.float16).astype(self.dtype)
            att = np.empty((T, H, hd), dtype=self.dtype)
            for hh in range(H):
                g = hh // (H // KV)
                sc = (q[:, hh, :] * self.dtype(hd ** -0.5)) @ k[:, g, :].T
                sc[mask] = -np.inf
                sc = sc - sc.max(axis=-1, keepdims=True)
                pr = np.exp(sc)
                pr /= pr.sum(axis=-1, keepdims=True)
                att[:, hh, :] = pr @ v[:, g, :]
            x = x + att.reshape(T, H * hd) @ w[p + "attn_output.weight"].T
            h = self.rms(x, w[p + "ffn_norm.weight"])
            if self.arch == "phi3":
                gu = h @ w[p + "ffn_up.weight"].T
                gate, up = np.split(gu, 2, axis=-1)
            else:
                gate = h @ w[p + "ffn_gate.weight"].T
                up = h @ w[p + "ffn_up.weight"].T
            x = x + (gate / (self.dtype(1) + np.exp(-gate)) * up) @ w[p + "ffn_down.weight"].T
        h = self.rms(x[-1:], w["output_norm.weight"])
        if act_q8:
            h = self.act_q8_2_x4(h)
            h = h.astype(self.dtype)
        return (h @ w["output.weight"].T)[0].astype(np.float64)


def sha256(path: Path) -> str:
    hsh = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            hsh.update(chunk)
    return hsh.hexdigest()


def topk(row, k):
    # descending logit, lowest id first on exact ties (stable sort on -row)
    idx = np.argsort(-row, kind="stable")[:k]
    return [[int(i), float(row[i])] for i in idx]


def teacher_forced(model, p, **kw):
    """The 24 logits rows of one golden prompt: step s feeds prompt + generated_ids[:s]."""
    ids = list(p["prompt_ids"])
    rows = []
    for s in range(len(p["generated_ids"])):
        rows.append(model.forward(ids, **kw))
        ids.append(p["generated_ids"][s])
    return np.stack(rows)


def load_golden(arch_dir: Path, stem: str):
    g = json.loads((arch_dir / f"{stem}.gguf.golden.json").read_text())
    f32 = np.fromfile(arch_dir / g["logits_file"], dtype="<f4").reshape(len(g["prompts"]), 2, g["n_vocab"])
    return g, f32


# ---------------------------------------------------------------------------------------------
def cmd_make(arch_dir: Path, out_dir: Path):
    out_dir.mkdir(parents=True, exist_ok=True)
    for stem in MODELS:
        gpath = arch_dir / f"{stem}.gguf"
        model = Model(gpath)
        g, _ = load_golden(arch_dir, stem)
        rows_mode = stem in ROWS_FOR
        k = TOPK if rows_mode else TOPK_NO_ROWS
        side = []
        prompts = []
        for p in g["prompts"]:
            L = teacher_forced(model, p)
            steps = []
            for s in range(L.shape[0]):
                row = L[s]
                tk = topk(row, k)
                steps.append({
                    "step": s,
                    "argmax": tk[0][0],
                    "top1_top2_gap": tk[0][1] - tk[1][1],
                    f"top{k}": tk,
                    "golden_top5": [[int(i), float(row[int(i)]), float(gl)] for i, gl in p["top5_per_step"][s]],
                })
            prompts.append({
                "name": p["name"],
                "prompt_ids": p["prompt_ids"],
                "generated_ids": p["generated_ids"],
                "argmax_equals_golden_next": [int(np.argmax(L[s]) == p["generated_ids"][s]) for s in range(L.shape[0])],
                "min_top1_top2_gap": min(st["top1_top2_gap"] for st in steps),
                "steps": steps,
            })
            if rows_mode:
                side.append(np.stack([L[0], L[-1]]).astype("<f4"))
        doc = {
            "model": f"{stem}.gguf",
            "model_sha256": sha256(gpath),
            "golden": f"{stem}.gguf.golden.json",
            "golden_sha256": sha256(arch_dir / f"{stem}.gguf.golden.json"),
            "reference": "float64 numpy forward, tools/arch-float/arch_float_ref.py (float activations, no "
                         "activation rounding, K/V float64; weights: Q8_0 -> d*q, F32 as stored)",
            "teacher_forced": "step s feeds prompt_ids + generated_ids[:s] (whole sequence recomputed, no cache); "
                              "its logits choose generated_ids[s] in the golden",
            "n_vocab": model.vocab,
            "n_steps": len(g["prompts"][0]["generated_ids"]),
            "topk": k,
            "step_fields": {
                "argmax": "argmax of our float64 logits (lowest id on ties)",
                "top1_top2_gap": "our logit[top1] - logit[top2]",
                f"top{k}": f"[id, float64 logit] for our top-{k} ids, descending (lowest id first on ties)",
                "golden_top5": "[id, our float64 logit at that id, the ik golden's logit] for the golden's top-5 ids",
            },
            "logits_file": f"{stem}.float.f32" if rows_mode else None,
            "logits_layout": ("float32 little-endian [prompts][2][n_vocab]: [p][0] = step 0 (last prompt position), "
                              "[p][1] = last step (feeds prompt + generated_ids[:-1])") if rows_mode else
                             f"no full rows stored (vocab {model.vocab} too large): top{k} per step instead",
            "prompts": prompts,
        }
        (out_dir / f"{stem}.float.json").write_text(json.dumps(doc, indent=1) + "\n")
        if rows_mode:
            np.stack(side).astype("<f4").tofile(out_dir / f"{stem}.float.f32")
        print(f"wrote {stem}", flush=True)


def visible_ids(stem, ref_L, golden_p):
    """Per step, the ids a port can check against the written files (top-k by the float reference + golden top-5)."""
    k = TOPK if stem in ROWS_FOR else TOPK_NO_ROWS
    return [sorted({i for i, _ in topk(ref_L[s], k)} | {int(i) for i, _ in golden_p["top5_per_step"][s]})
            for s in range(ref_L.shape[0])]


def diff_vs_ref(stem, cand, ref, g):
    """(max |d| over every logit of every step, max |d| over what the files store, argmax changes)."""
    full = max(np.max(np.abs(a - b)) for a, b in zip(cand, ref))
    vis = 0.0
    for pi, p in enumerate(g["prompts"]):
        for s, ids in enumerate(visible_ids(stem, ref[pi], p)):
            vis = max(vis, np.max(np.abs(cand[pi][s][ids] - ref[pi][s][ids])))
        if stem in ROWS_FOR:
            vis = max(vis, np.max(np.abs(cand[pi][0] - ref[pi][0])), np.max(np.abs(cand[pi][-1] - ref[pi][-1])))
    mism = sum(int(np.argmax(a[s]) != np.argmax(b[s])) for a, b in zip(cand, ref) for s in range(a.shape[0]))
    return full, vis, mism


def diff_vs_golden(L, g, gf):
    mrow = mtop = 0.0
    mism = 0
    for pi, p in enumerate(g["prompts"]):
        mrow = max(mrow, np.max(np.abs(L[pi][0] - gf[pi, 0])), np.max(np.abs(L[pi][-1] - gf[pi, 1])))
        for s, t5 in enumerate(p["top5_per_step"]):
            for i, gl in t5:
                mtop = max(mtop, abs(L[pi][s][int(i)] - gl))
        mism += sum(int(np.argmax(L[pi][s]) != p["generated_ids"][s]) for s in range(L[pi].shape[0]))
    return mrow, mtop, mism


def cmd_probe(arch_dir: Path, out_dir: Path):
    bugs = {"phi4mini-tiny": "rope_all_dims", "smollm3-tiny": "rope_all_layers"}
    for stem in MODELS:
        model = Model(arch_dir / f"{stem}.gguf")
        g, gf = load_golden(arch_dir, stem)
        n = sum(len(p["generated_ids"]) for p in g["prompts"])
        tf = lambda m, **kw: [teacher_forced(m, p, **kw) for p in g["prompts"]]  # noqa: E731
        ref = tf(model)
        # 1) vs the ik golden: its 2 stored rows + every step's golden top-5; argmax vs the golden's ids
        for label, L in [("float64 (this reference)", ref),
                         ("float64, V rounded to f16", tf(model, v_f16=True)),
                         ("ik emulation: ACT_Q8 + V f16", tf(model, act_q8=True, v_f16=True)),
                         (f"BUG {bugs[stem]}, ik emulation", tf(model, act_q8=True, v_f16=True, bug=bugs[stem]))]:
            mrow, mtop, mism = diff_vs_golden(L, g, gf)
            print(f"{stem} vs ik golden [{label}]: max|dlogit| rows {mrow:.2e} top5 {mtop:.2e} "
                  f"-> {max(mrow, mtop):.2e}; argmax != golden id {mism}/{n}", flush=True)
        # 2) vs our float64 reference
        m32 = Model(arch_dir / f"{stem}.gguf", dtype=np.float32)
        for label, L in [("float32 forward (correct port, F32 everything)", tf(m32)),
                         ("float64, V rounded to f16", tf(model, v_f16=True)),
                         ("float64, K and V rounded to f16 (16-bit K/V cache)", tf(model, v_f16=True, k_f16=True)),
                         (f"BUG {bugs[stem]}", tf(model, bug=bugs[stem]))]:
            full, vis, mism = diff_vs_ref(stem, L, ref, g)
            print(f"{stem} vs float ref [{label}]: max|dlogit| every logit {full:.2e}, stored entries {vis:.2e}; "
                  f"argmax changes {mism}/{n}", flush=True)
        # 3) the written files reproduce
        jpath = out_dir / f"{stem}.float.json"
        if jpath.exists():
            doc = json.loads(jpath.read_text())
            dd = 0.0
            for pi, p in enumerate(doc["prompts"]):
                for st in p["steps"]:
                    for i, v in st[f"top{doc['topk']}"]:
                        dd = max(dd, abs(ref[pi][st["step"]][i] - v))
                    for i, v, _ in st["golden_top5"]:
                        dd = max(dd, abs(ref[pi][st["step"]][i] - v))
            print(f"{stem}: {jpath.name} reproduces: max |d| {dd:.1e}", flush=True)
            if doc["logits_file"]:
                side = np.fromfile(out_dir / doc["logits_file"], dtype="<f4").reshape(len(ref), 2, -1)
                dd = max(max(np.max(np.abs(side[pi, 0] - ref[pi][0])), np.max(np.abs(side[pi, 1] - ref[pi][-1])))
                         for pi in range(len(ref)))
                print(f"{stem}: {doc['logits_file']} vs float64: max |d| {dd:.1e} (float32 storage)", flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("make", "probe"):
        print(__doc__)
        sys.exit(2)
    {"make": cmd_make, "probe": cmd_probe}[sys.argv[1]](Path(sys.argv[2]), Path(sys.argv[3]))
