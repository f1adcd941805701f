#!/usr/bin/env python3
"""Float64 numpy reference forward for EXAONE 4 (transformers' Exaone4ForCausalLM), goldens and bug probes.

Written from transformers' src/transformers/models/exaone4/modeling_exaone4.py and
configuration_exaone4.py and masking_utils.py (read, not copied). What those files say, and what
forward() below does:

  Exaone4DecoderLayer.forward   NO input_layernorm. residual = x; h = self_attn(x);
                                h = post_attention_layernorm(h); x = residual + h; residual = x;
                                h = mlp(x); h = post_feedforward_layernorm(h); x = residual + h.
  Exaone4RMSNorm                w * x / sqrt(mean(x^2) + eps), eps = rms_norm_eps (weight is the
                                multiplier itself, no 1+w).
  Exaone4Attention.forward      q/k/v = x @ W^T viewed [T, heads, head_dim] (head_dim from config);
                                q = q_norm(q), k = k_norm(k): RMSNorm over head_dim, per head,
                                BEFORE RoPE; RoPE only `if self.sliding_window is None or
                                self.is_sliding` (is_sliding = layer_types[i] == "sliding_attention"),
                                i.e. with a window configured the full-attention layers get NO RoPE
                                (NoPE), and without one (EXAONE-4.0-1.2B) every layer gets RoPE;
                                scaling = head_dim**-0.5; GQA via repeat_kv (query head h reads KV
                                head h // (heads/kv_heads)); softmax; o_proj. No biases.
  apply_rotary_pos_emb          rotate_half (NEOX) over the whole head_dim: x*cos + rotate_half(x)*sin,
                                rotate_half(x) = cat(-x[d/2:], x[:d/2]); inv_freq = theta^(-2i/d)
                                (compute_default_rope_parameters; 'llama3' rope_scaling would divide
                                low frequencies, not used here).
  masks (masking_utils)         full layers: causal_mask_function kv_idx <= q_idx; sliding layers:
                                sliding_window_causal_mask_function = causal AND sliding_window_overlay
                                kv_idx > q_idx - sliding_window, i.e. query p sees key k iff
                                0 <= p - k < sliding_window (the window holds `sliding_window` keys,
                                the query's own included).
  Exaone4MLP                    down(silu(gate(x)) * up(x)).
  Exaone4Model / ForCausalLM    embed (no scaling) -> layers -> norm -> lm_head; tied: lm_head = embed.

    exaone4_numpy_ref.py golden HF_DIR SLIDING.gguf FULL.gguf PROMPTS.json OUTDIR
    exaone4_numpy_ref.py gguf-equal HF_DIR SLIDING.gguf FULL.gguf
    exaone4_numpy_ref.py probe HF_DIR GOLDEN.json [--full]        # bug / tolerance table
    exaone4_numpy_ref.py olmo2-check CHECK_DIR BIN PROMPTS.json    # vs llama.cpp b4747's OLMo2 graph
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import exaone4_common as C  # noqa: E402

N_GEN = 24


# ---------------------------------------------------------------------------------------------
# model
# ---------------------------------------------------------------------------------------------
class Model:
    def __init__(self, hf_dir: Path, full: bool = False):
        self.cfg = json.loads((Path(hf_dir) / "config.json").read_text())
        if full:  # the EXAONE-4.0-1.2B arrangement: no window, every layer full attention
            self.cfg["sliding_window"] = None
            self.cfg["sliding_window_pattern"] = None
            self.cfg["layer_types"] = ["full_attention"] * self.cfg["num_hidden_layers"]
        self.w32 = C.read_safetensors(Path(hf_dir) / "model.safetensors")
        self.w = {k: v.astype(np.float64) for k, v in self.w32.items()}
        c = self.cfg
        self.H, self.KV, self.D = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        assert c["tie_word_embeddings"] and "lm_head.weight" not in self.w


def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope(x, pos, theta, style="neox"):
    """x [T, heads, d]; NEOX = HF rotate_half; 'norm' = adjacent pairs (GPT-J / llama.cpp NORM) for a bug."""
    d = x.shape[-1]
    inv = 1.0 / theta ** (np.arange(0, d, 2, dtype=np.float64) / d)
    ang = pos[:, None].astype(np.float64) * inv[None, :]  # [T, d/2]
    cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    if style == "neox":
        x1, x2 = x[..., : d // 2], x[..., d // 2 :]
        return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x1 * cos - x2 * sin
    out[..., 1::2] = x2 * cos + x1 * sin
    return out


def forward(m: Model, ids, bug: dict | None = None) -> np.ndarray:
    """Logits [T, vocab] (float64) for the whole sequence `ids`, no cache. `bug` switches deliberate
    deviations on (see BUGS) and the arithmetic variants f32 / kv16 / kvbf16."""
    bug = bug or {}
    c, w = m.cfg, m.w
    if bug.get("f32"):
        w = {k: v.astype(np.float32) for k, v in m.w32.items()}
    ft = np.float32 if bug.get("f32") else np.float64
    eps = ft(c["rms_norm_eps"] * (10.0 if bug.get("eps_x10") else 1.0))
    theta = c["rope_theta"] if not bug.get("theta_1e4") else 1e4
    window = c["sliding_window"]
    if window is not None and bug.get("window_delta"):
        window += bug["window_delta"]
    H, KV, D = m.H, m.KV, m.D
    T = len(ids)
    pos = np.arange(T)
    x = w["model.embed_tokens.weight"][np.asarray(ids)].astype(ft)
    qi, ki = np.arange(T)[:, None], np.arange(T)[None, :]
    causal = ki <= qi
    for L in range(c["num_hidden_layers"]):
        p = f"model.layers.{L}."
        sliding = c["layer_types"][L] == "sliding_attention"
        if bug.get("swap_layer_kind"):
            sliding = not sliding if window is not None else sliding
        use_rope = window is None or sliding
        if bug.get("rope_all"):
            use_rope = True
        if bug.get("rope_none"):
            use_rope = False
        if bug.get("nope_every_4th") and L % 4 == 3:
            use_rope = False
        h = x
        if bug.get("prenorm"):  # Llama-style: norm the block input instead of the block output
            h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        q = (h @ w[p + "self_attn.q_proj.weight"].T).reshape(T, H, D)
        k = (h @ w[p + "self_attn.k_proj.weight"].T).reshape(T, KV, D)
        v = (h @ w[p + "self_attn.v_proj.weight"].T).reshape(T, KV, D)
        if not bug.get("no_qk_norm") and not bug.get("qk_norm_after_rope"):
            q = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
        if use_rope:
            style = "norm" if bug.get("rope_norm_style") else "neox"
            q, k = rope(q, pos, theta, style).astype(ft), rope(k, pos, theta, style).astype(ft)
        if bug.get("qk_norm_after_rope"):
            q = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
        if bug.get("kv16"):
            k, v = k.astype(np.float16).astype(ft), v.astype(np.float16).astype(ft)
        if bug.get("kvbf16"):
            k, v = C.bf16_round(k).astype(ft), C.bf16_round(v).astype(ft)
        mask = causal
        if sliding and window is not None and not bug.get("no_window"):
            mask = causal & (qi - ki < window)
        if bug.get("window_on_full") and not sliding and window is not None:
            mask = causal & (qi - ki < window)
        rep = H // KV
        out = np.empty((T, H, D), dtype=ft)
        for hh in range(H):
            kv = hh % KV if bug.get("gqa_modulo") else hh // rep
            s = (q[:, hh, :] @ k[:, kv, :].T) * ft(D ** -0.5)
            s = np.where(mask, s, -np.inf)
            s = s - s.max(axis=-1, keepdims=True)
            e = np.exp(s)
            out[:, hh, :] = (e / e.sum(axis=-1, keepdims=True)) @ v[:, kv, :]
        a = out.reshape(T, H * D) @ w[p + "self_attn.o_proj.weight"].T
        if bug.get("prenorm"):
            x = x + a
        else:
            x = x + rms_norm(a, w[p + "post_attention_layernorm.weight"], eps)
        h = x
        if bug.get("prenorm"):
            h = rms_norm(x, w[p + "post_feedforward_layernorm.weight"], eps)
        g = h @ w[p + "mlp.gate_proj.weight"].T
        u = h @ w[p + "mlp.up_proj.weight"].T
        f = ((g / (1.0 + np.exp(-g))) * u) @ w[p + "mlp.down_proj.weight"].T
        if bug.get("prenorm"):
            x = x + f
        else:
            x = x + rms_norm(f, w[p + "post_feedforward_layernorm.weight"], eps)
    x = rms_norm(x, w["model.norm.weight"], eps)
    return (x @ w["model.embed_tokens.weight"].T).astype(np.float64)


# ---------------------------------------------------------------------------------------------
# GGUF equality
# ---------------------------------------------------------------------------------------------
def gguf_tensors(path: Path) -> tuple[dict, dict]:
    gguf = C.import_gguf()
    r = gguf.GGUFReader(str(path))
    kv = {}
    for name, f in r.fields.items():
        if not f.types:
            continue
        if f.types[0] == gguf.GGUFValueType.STRING:
            kv[name] = bytes(f.parts[f.data[0]]).decode()
        elif f.types[0] == gguf.GGUFValueType.ARRAY:
            if f.types[-1] == gguf.GGUFValueType.STRING:
                kv[name] = [bytes(f.parts[i]).decode() for i in f.data]
            else:
                kv[name] = [f.parts[i].tolist()[0] for i in f.data]
        else:
            kv[name] = f.parts[f.data[0]].tolist()[0]
    t = {x.name: np.array(x.data, dtype=np.float32).reshape([int(d) for d in reversed(x.shape.tolist())])
         for x in r.tensors}
    return kv, t


def check_gguf(m: Model, path: Path, sliding: bool) -> None:
    import make_exaone4_tiny as MK

    kv, t = gguf_tensors(path)
    c = m.cfg
    want = {
        "general.architecture": "exaone4", "exaone4.block_count": c["num_hidden_layers"],
        "exaone4.embedding_length": c["hidden_size"], "exaone4.feed_forward_length": c["intermediate_size"],
        "exaone4.attention.head_count": c["num_attention_heads"],
        "exaone4.attention.head_count_kv": c["num_key_value_heads"],
        "exaone4.attention.key_length": c["head_dim"], "exaone4.attention.value_length": c["head_dim"],
        "exaone4.rope.freq_base": c["rope_theta"], "exaone4.vocab_size": c["vocab_size"],
        "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "exaone4",
        "tokenizer.ggml.bos_token_id": c["bos_token_id"], "tokenizer.ggml.eos_token_id": c["eos_token_id"],
    }
    for k, v in want.items():
        assert kv[k] == v, (path, k, kv.get(k), v)
    assert abs(kv["exaone4.attention.layer_norm_rms_epsilon"] - c["rms_norm_eps"]) < 1e-12
    if sliding:
        assert kv["exaone4.attention.sliding_window"] == c["sliding_window"]
        assert kv["exaone4.attention.sliding_window_pattern"] == [x == "sliding_attention" for x in c["layer_types"]]
    else:
        assert "exaone4.attention.sliding_window" not in kv
        assert "exaone4.attention.sliding_window_pattern" not in kv
    assert "output.weight" not in t and "rope_freqs.weight" not in t
    assert len(t) == len(m.w32), (len(t), len(m.w32))
    for hf, a in m.w32.items():
        g = t[MK.gguf_name(hf)]
        assert g.shape == a.shape and np.array_equal(g, a), hf
    print(f"{path.name}: metadata as expected, {len(t)} tensors equal to model.safetensors bit for bit")


# ---------------------------------------------------------------------------------------------
# golden
# ---------------------------------------------------------------------------------------------
def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def greedy(m: Model, prompt_ids):
    seq = list(prompt_ids)
    rows, gen = [], []
    for _ in range(N_GEN):
        lg = forward(m, seq)[-1]  # whole sequence recomputed every step (no cache)
        t = int(np.argmax(lg))  # lowest id wins exact ties
        rows.append(lg)
        gen.append(t)
        seq.append(t)
    return gen, np.stack(rows)


def top5(row):
    idx = sorted(range(len(row)), key=lambda i: (-row[i], i))[:5]
    return [[int(i), float(row[i])] for i in idx]


def make_golden(m: Model, prompts, tokens, types, name, model_file, gguf_file, outdir: Path, hf_dir: Path):
    entries, f32, steps = [], [], []
    for p in prompts:
        gen, rows = greedy(m, p["prompt_ids"])
        tops = [top5(r) for r in rows]
        gaps = [t[0][1] - t[1][1] for t in tops]
        pieces = [C.piece_bytes(tokens[i], types[i]) for i in gen]
        text = b"".join(pieces)
        entries.append({
            "name": p["name"], "prompt": p["prompt"], "prompt_ids": p["prompt_ids"], "generated_ids": gen,
            "generated_text": text.decode("utf-8", errors="replace"), "generated_text_hex": text.hex(),
            "generated_pieces_hex": [x.hex() for x in pieces], "top5_per_step": tops,
            "top1_top2_gap_per_step": gaps, "min_top1_top2_gap": min(gaps),
            "first_logits_argmax": int(np.argmax(rows[0])), "last_logits_argmax": int(np.argmax(rows[-1])),
        })
        f32.append(np.stack([rows[0], rows[-1]]))
        steps.append(rows)
    c = m.cfg
    base = name
    (outdir / f"{base}.golden.f32").write_bytes(np.stack(f32).astype("<f4").tobytes())
    (outdir / f"{base}.golden.steps.f32").write_bytes(np.stack(steps).astype("<f4").tobytes())
    sliding = c["sliding_window"] is not None
    golden = {
        "model": model_file,
        "model_sha256": sha256(hf_dir / "model.safetensors"),
        "gguf": gguf_file,
        "gguf_sha256": sha256(outdir / gguf_file),
        "reference": "numpy float64 forward written from transformers' models/exaone4/modeling_exaone4.py "
                     "(+ configuration_exaone4.py, masking_utils.py), not llama.cpp",
        "how": "tools/exaone4/exaone4_numpy_ref.py: float64 numpy, weights = the BF16 values of "
               "exaone4-tiny-hf/model.safetensors (= the GGUF tensors bit for bit); the whole sequence is "
               "recomputed for each step (no K/V cache); greedy = argmax of the raw logits (lowest id wins "
               "exact ties); prompt ids from tools/exaone4/make_exaone4_tiny.py (GPT-2 byte-level BPE with "
               "this vocabulary, no BOS), equal to llama.cpp b4747's llama_tokenize(add_special=true, "
               "parse_special=false); pieces = llama_token_to_piece(special=true) rules"
               + ("" if sliding else "; this golden runs the same weights with NO sliding window: every "
                  "layer full attention WITH RoPE (config sliding_window null, layer_types all "
                  "full_attention), as EXAONE-4.0-1.2B"),
        "attention": ("layers 0,1,2 sliding_attention (window %d: query p sees keys p-%d..p; RoPE), layer 3 "
                      "full_attention (causal, NO RoPE)" % (c["sliding_window"], c["sliding_window"] - 1))
        if sliding else "all layers full_attention (causal) with RoPE",
        "n_gen": N_GEN,
        "logits_file": f"{base}.golden.f32",
        "logits_layout": "float32 little-endian, shape [3 prompts][2][n_vocab]; [p][0] = logits at the last "
                         "prompt position (they choose generated_ids[0]); [p][1] = logits that choose "
                         "generated_ids[23] (after feeding prompt + generated_ids[0..22]); float64 values "
                         "rounded to float32",
        "steps_logits_file": f"{base}.golden.steps.f32",
        "steps_logits_layout": "float32 little-endian, shape [3 prompts][24 steps][n_vocab]; [p][s] = logits "
                               "that choose generated_ids[s] (after prompt + generated_ids[0..s-1])",
        "deterministic": True,
        "n_vocab": c["vocab_size"],
        "add_bos": False,
        "bos_id": c["bos_token_id"],
        "eos_id": c["eos_token_id"],
        "prompts": entries,
    }
    (outdir / f"{base}.golden.json").write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n",
                                               encoding="utf-8")
    for e in entries:
        print(f"{base} {e['name']}: {len(e['prompt_ids'])} prompt ids; generated {e['generated_ids']}; "
              f"distinct {len(set(e['generated_ids']))}; min gap {e['min_top1_top2_gap']:.2e}")


# ---------------------------------------------------------------------------------------------
# probe: teacher-forced comparison of variants against a golden
# ---------------------------------------------------------------------------------------------
BUGS = [
    ("f32", {"f32": True}, "float32 weights and activations (not a bug: arithmetic reference)"),
    ("kv16", {"kv16": True}, "K and V rounded to f16 (16-bit K/V cache; not a bug)"),
    ("kvbf16", {"kvbf16": True}, "K and V rounded to bf16 (not a bug)"),
    ("rope_all", {"rope_all": True}, "BUG RoPE on the full-attention layer too (NoPE ignored)"),
    ("rope_none", {"rope_none": True}, "BUG no RoPE on any layer"),
    ("nope_every_4th", {"nope_every_4th": True}, "BUG layer 3 without RoPE although no window is configured"),
    ("mainline_llamacpp", {"no_window": True, "rope_all": True},
     "llama.cpp mainline's reading of exaone4-tiny.gguf (SWA only for n_layer 64): all layers full + RoPE"),
    ("window6", {"window_delta": 1}, "BUG window 6 instead of 5 (p - k <= window instead of <)"),
    ("window4", {"window_delta": -1}, "BUG window 4 instead of 5"),
    ("no_window", {"no_window": True}, "BUG sliding layers attend the whole causal prefix"),
    ("window_on_full", {"window_on_full": True}, "BUG the full-attention layer is windowed too"),
    ("swap_kind", {"swap_layer_kind": True}, "BUG layer kinds inverted (layer 3 sliding, 0-2 full)"),
    ("prenorm", {"prenorm": True}, "BUG pre-norm (norm the block input) instead of post-norm"),
    ("no_qk_norm", {"no_qk_norm": True}, "BUG q_norm/k_norm dropped"),
    ("qk_norm_after_rope", {"qk_norm_after_rope": True}, "BUG q/k norm applied after RoPE"),
    ("rope_norm_style", {"rope_norm_style": True}, "BUG adjacent-pair RoPE (GGML NORM) instead of NEOX"),
    ("gqa_modulo", {"gqa_modulo": True}, "BUG query head h reads KV head h % 2 instead of h // 2"),
    ("eps_x10", {"eps_x10": True}, "BUG rms eps 1e-4 instead of 1e-5"),
    ("theta_1e4", {"theta_1e4": True}, "BUG rope theta 1e4 instead of 1e6"),
]


def probe(m: Model, golden_path: Path, only=None):
    g = json.loads(golden_path.read_text())
    V = g["n_vocab"]
    f32 = np.frombuffer((golden_path.parent / g["logits_file"]).read_bytes(), dtype="<f4").reshape(-1, 2, V)
    steps = np.frombuffer((golden_path.parent / g["steps_logits_file"]).read_bytes(), dtype="<f4").reshape(-1, N_GEN, V)
    rows_out = []
    sel = [("exact", {}, "the reference itself, teacher-forced in one pass")] + [b for b in BUGS if not only or b[0] in only]
    for key, bug, desc in sel:
        dmax = dgap = dsteps = 0.0
        mism = 0
        for pi, p in enumerate(g["prompts"]):
            seq = p["prompt_ids"] + p["generated_ids"][:-1]
            lg = forward(m, seq, bug)[len(p["prompt_ids"]) - 1 :]  # [24, V], teacher-forced
            dmax = max(dmax, np.abs(lg[0] - f32[pi, 0].astype(np.float64)).max(),
                       np.abs(lg[-1] - f32[pi, 1].astype(np.float64)).max())
            dsteps = max(dsteps, np.abs(lg - steps[pi].astype(np.float64)).max())
            for s, t5 in enumerate(p["top5_per_step"]):
                ids = [a for a, _ in t5]
                ref = np.array([b for _, b in t5])
                dmax = max(dmax, np.abs(lg[s, ids] - ref).max())
                gap_ref = ref[0] - ref[1]
                gap = lg[s, ids[0]] - lg[s, ids[1]]
                dgap = max(dgap, abs(gap - gap_ref))
                if int(np.argmax(lg[s])) != p["generated_ids"][s]:
                    mism += 1
        n = len(g["prompts"]) * N_GEN
        rows_out.append((key, desc, dmax, dsteps, dgap, mism, n))
        print(f"{key:20s} max|dlogit| rows+top5 {dmax:.1e}  all steps {dsteps:.1e}  max d(gap) {dgap:.1e}  "
              f"argmax mismatches {mism}/{n}   {desc}")
    return rows_out


def olmo2_check(check_dir: Path, binary: str, prompts_path: Path) -> None:
    """Single-head EXAONE 4 (no window) vs llama.cpp b4747 running the same weights as arch olmo2:
    the numpy forward's own greedy continuation of each prompt is fed to llama.cpp in one batch and
    every position's logits are compared."""
    import subprocess

    m = Model(check_dir / "exaone4-h1-hf")
    assert m.cfg["sliding_window"] is None and m.H == 1 and m.KV == 1
    worst, agree, total = 0.0, 0, 0
    for p in json.loads(prompts_path.read_text())["prompts"]:
        gen, _ = greedy(m, p["prompt_ids"])
        seq = p["prompt_ids"] + gen[:-1]
        ref = forward(m, seq)
        res = subprocess.run([binary, str(check_dir / "exaone4-h1-as-olmo2.gguf")] + [str(t) for t in seq],
                             capture_output=True, text=True, check=True)
        rows = [ln.split() for ln in res.stdout.splitlines() if ln.startswith("R ")]
        got = np.array([[float(v) for v in r[2:]] for r in rows])
        assert got.shape == ref.shape, (got.shape, ref.shape)
        d = np.abs(got - ref).max()
        worst = max(worst, d)
        agree += int((got.argmax(-1) == ref.argmax(-1)).sum())
        total += len(seq)
        print(f"olmo2-check {p['name']}: {len(seq)} positions, max |dlogit| {d:.2e}, "
              f"logit std {ref.std():.3f}")
    print(f"olmo2-check: max |dlogit| {worst:.2e}, argmax equal at {agree}/{total} positions")


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("golden")
    a.add_argument("hf_dir")
    a.add_argument("gguf_sliding")
    a.add_argument("gguf_full")
    a.add_argument("prompts")
    a.add_argument("outdir")
    b = sub.add_parser("gguf-equal")
    b.add_argument("hf_dir")
    b.add_argument("gguf_sliding")
    b.add_argument("gguf_full")
    c = sub.add_parser("probe")
    c.add_argument("hf_dir")
    c.add_argument("golden")
    c.add_argument("--full", action="store_true")
    c.add_argument("--only", nargs="*")
    d = sub.add_parser("olmo2-check")
    d.add_argument("check_dir")
    d.add_argument("binary")
    d.add_argument("prompts")
    args = ap.parse_args()

    if args.cmd == "olmo2-check":
        olmo2_check(Path(args.check_dir), args.binary, Path(args.prompts))
        return
    if args.cmd == "probe":
        probe(Model(Path(args.hf_dir), full=args.full), Path(args.golden), args.only)
        return
    hf = Path(args.hf_dir)
    ms, mf = Model(hf), Model(hf, full=True)
    check_gguf(ms, Path(args.gguf_sliding), True)
    check_gguf(mf, Path(args.gguf_full), False)
    if args.cmd == "gguf-equal":
        return
    kv, _ = gguf_tensors(Path(args.gguf_sliding))
    tokens, types = kv["tokenizer.ggml.tokens"], kv["tokenizer.ggml.token_type"]
    prompts = json.loads(Path(args.prompts).read_text())["prompts"]
    out = Path(args.outdir)
    make_golden(ms, prompts, tokens, types, "exaone4-tiny", "exaone4-tiny-hf", Path(args.gguf_sliding).name, out, hf)
    make_golden(mf, prompts, tokens, types, "exaone4-tiny-full",
                "exaone4-tiny-hf (config overridden: sliding_window null, layer_types all full_attention)",
                Path(args.gguf_full).name, out, hf)


if __name__ == "__main__":
    main()
