#!/usr/bin/python3
"""HF-faithful float64 numpy forward of the Gemma 4 vision tower + embedder (transformers Gemma4ImageProcessorPil +
Gemma4VisionModel + Gemma4MultimodalEmbedder) for gemma4-tiny-mmproj.gguf; writes golden_hf.json, golden_hf.f32
(embeddings) and golden_hf_pixels.u8 (the resized RGB bytes; the preprocessed floats are float32(u8 * (1/255))).

Semantics (transformers modeling_gemma4.py / image_processing_pil_gemma4.py; where ik_llama.cpp's clip
(build_gemma4 / build_vit) differs it is marked != ik):
  - preprocessing: convert('RGB') (alpha dropped), get_aspect_ratio_preserving_size(h, w, patch 4, max_patches =
    max_soft_tokens * 9, pooling 3): factor = sqrt(max_patches * 16 / (h * w)), each side floor(side * factor / 12)
    * 12; a side that becomes 0 is set to 12 and the other to min(floor(long / short) * 12, (max_patches // 9) * 12);
    PIL BICUBIC resize of the RGB image only if the size changes; rescale uint8 * (1/255) in float64 -> float32;
    no normalize (!= ik: ik's own size rule / resampler / min 252 tokens, see README);
  - patch embedding: 2 * (x - 0.5), patches flattened (ky, kx, channel), input_proj without bias (ik: conv_2d,
    im2col in F16 -> pixels rounded to half precision, != here), + table[0][column] + table[1][row];
  - 2 pre/post-norm blocks: RMSNorm(x) * w (no "1 +"), eps 1e-6; q/k/v projections through Gemma4ClippableLinear
    (clamp input, linear, clamp output; != ik, which ignores every block clamp); q, k RMS-normed per head with
    weight, v per head without weight; 2-D RoPE, theta 100, head dims [0, 8) turned by the patch column, [8, 16) by
    the row, each half NEOX (pair (i, i + 4), angle pos * 100^(-2i/8)); scores q.k with scale 1.0, softmax over all
    patches of the image (bidirectional); o_proj (clamped); x += RMSNorm(attn) * post_attention_layernorm;
    x += RMSNorm(down(gelu_tanh(gate(h)) * up(h))) * post_feedforward_layernorm, h = RMSNorm(x) * pre_ffw_norm,
    gate/up/down clamped (ik: GELU-quick unless the GGUF has clip.use_gelu, which the converter does not write);
  - pooler: mean over 3x3 patch blocks, tokens row-major over the pooled grid, * sqrt(32);
  - standardize: (h - std_bias) * std_scale; embedder: RMSNorm without weight (eps 1e-6), embedding_projection
    (plain Linear, no clamp) -> 64.

Usage: PYTHONPATH=<ik_llama.cpp>/gguf-py /usr/bin/python3 hf_encoder_numpy.py [IMAGE_DIR] [IK_OUT_DIR]
  IMAGE_DIR: where the six ../qwen3vl test images are (default ../qwen3vl); strip.png is read from this folder.
  IK_OUT_DIR (optional): ik_clip_encode's output folder: ik_clip.f32 (ik's clip_image_encode of golden_hf's
  preprocessed floats, images in golden order, 64 floats per token), ik_own.json / ik_own_same_size.f32 (ik's own
  preprocessing); when given, the numpy forward with ik's choices is compared to ik and the results are added to
  each image's "checks" and "ik_preprocessing_rule" (golden_hf.f32 / .u8 do not change).
  CALIBRATE=1 in the environment: print per-linear activation ranges of the unclamped forward and exit.
Reads gemma4-tiny-mmproj.gguf in the current folder; writes golden_hf.json / golden_hf.f32 / golden_hf_pixels.u8.
"""
import hashlib
import json
import math
import os
import sys

import numpy as np
import PIL
from PIL import Image
from gguf import GGUFReader

MMPROJ = "gemma4-tiny-mmproj.gguf"
# (image, directory key, max_soft_tokens); "qwen3vl" = IMAGE_DIR, "here" = this folder
IMAGES = [("grid.png", "qwen3vl", 70), ("wide.png", "qwen3vl", 70), ("tall.jpg", "qwen3vl", 70),
          ("small.png", "qwen3vl", 70), ("big.png", "qwen3vl", 70), ("rgba.png", "qwen3vl", 70),
          ("strip.png", "here", 70), ("big.png", "qwen3vl", 280)]
LINEARS = ["attn_q", "attn_k", "attn_v", "attn_out", "ffn_gate", "ffn_up", "ffn_down"]

r = GGUFReader(MMPROJ)
W = {t.name: np.array(t.data).astype(np.float64).reshape([int(x) for x in reversed(t.shape)]) for t in r.tensors}


def kv(name):
    f = r.fields[name]
    return [f.parts[i].tolist()[0] if len(f.parts[i]) == 1 else f.parts[i].tolist() for i in f.data]


PATCH = int(kv("clip.vision.patch_size")[0])                      # 4
WIDTH = int(kv("clip.vision.embedding_length")[0])                # 32
HEADS = int(kv("clip.vision.attention.head_count")[0])            # 2
N_LAYER = int(kv("clip.vision.block_count")[0])                   # 2
EPS = float(kv("clip.vision.attention.layer_norm_epsilon")[0])    # 1e-6
D_HEAD = WIDTH // HEADS                                           # 16
K_POOL = 3                                                        # pooling_kernel_size (no GGUF key; ik default 3)
ROPE_THETA = 100.0                                                # Gemma4VisionConfig default_theta
N_POS = W["v.position_embd.weight"].shape[1]                      # 512
OUT = W["mm.input_projection.weight"].shape[0]                    # 64
# HF input_proj (WIDTH, 48) with columns (ky, kx, c) from the GGUF conv kernel (WIDTH, c, ky, kx)
W_PATCH = W["v.patch_embd.weight"].transpose(0, 2, 3, 1).reshape(WIDTH, -1)
CLAMP = {(il, lin): tuple(float(W[f"v.blk.{il}.{lin}.{s}"][0]) for s in ("input_min", "input_max", "output_min", "output_max"))
         for il in range(N_LAYER) for lin in LINEARS}


# ---------------- preprocessing (transformers Gemma4ImageProcessorPil) ----------------
def hf_target_size(height, width, max_soft_tokens, patch=PATCH, k=K_POOL):
    """get_aspect_ratio_preserving_size(height, width, patch_size, max_patches, pooling_kernel_size)."""
    max_patches = max_soft_tokens * k * k
    total_px = height * width
    target_px = max_patches * patch * patch
    factor = math.sqrt(target_px / total_px)
    side = k * patch
    th = int(math.floor(factor * height / side)) * side
    tw = int(math.floor(factor * width / side)) * side
    branch = "floor"
    if th == 0 and tw == 0:
        raise ValueError("0 x 0")
    max_side = (max_patches // (k * k)) * side
    if th == 0:
        th = side
        tw = min(int(math.floor(width / height)) * side, max_side)
        branch = "height_rounded_to_0"
    elif tw == 0:
        tw = side
        th = min(int(math.floor(height / width)) * side, max_side)
        branch = "width_rounded_to_0"
    assert th * tw <= target_px
    return th, tw, branch


def ik_target_size(height, width, patch=PATCH, k=K_POOL, min_tokens=252, max_tokens=280):
    """ik clip.cpp img_tool::calc_size_preserved_ratio(size, patch*n_merge, image_min_pixels, image_max_pixels) with
    gemma4v's set_limit_image_tokens(252, 280) (float math as ik: std::round / floor / ceil of float quotients)."""
    f = patch * k
    amin, amax = min_tokens * f * f, max_tokens * f * f
    f32 = np.float32

    def rnd(x):  # std::round(x / f) * f, float
        return int(np.floor(np.abs(f32(x) / f32(f)) + f32(0.5)) * np.sign(x)) * f
    h_bar = max(f, rnd(height))
    w_bar = max(f, rnd(width))
    if h_bar * w_bar > amax:
        beta = np.sqrt(f32(height * width) / f32(amax))
        h_bar = max(f, int(np.floor(f32(height) / beta / f32(f))) * f)
        w_bar = max(f, int(np.floor(f32(width) / beta / f32(f))) * f)
    elif h_bar * w_bar < amin:
        beta = np.sqrt(f32(amin) / f32(height * width))
        h_bar = int(np.ceil(f32(height) * beta / f32(f))) * f
        w_bar = int(np.ceil(f32(width) * beta / f32(f))) * f
    return h_bar, w_bar


def hf_preprocess(path, max_soft_tokens):
    img = Image.open(path)
    mode = img.mode
    rgb = img if mode == "RGB" else img.convert("RGB")
    w0, h0 = rgb.size
    th, tw, branch = hf_target_size(h0, w0, max_soft_tokens)
    resized = (th, tw) != (h0, w0)
    out = rgb.resize((tw, th), Image.BICUBIC) if resized else rgb
    u8 = np.asarray(out, dtype=np.uint8).copy()                   # (th, tw, 3)
    floats = (u8.astype(np.float64) * (1 / 255)).astype(np.float32)
    rgb_sha = hashlib.sha256(np.asarray(rgb, dtype=np.uint8).tobytes()).hexdigest()
    return dict(mode=mode, orig=(w0, h0), size=(tw, th), branch=branch, resized=resized, u8=u8, floats=floats,
                rgb_sha=rgb_sha)


# ---------------- forward ----------------
def rms(x, w=None):
    y = x * np.power(np.mean(x * x, axis=-1, keepdims=True) + EPS, -0.5)
    return y * w if w is not None else y


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_quick(x):
    return x / (1.0 + np.exp(-1.702 * x))


def gelu_quick_ik(x):
    """ik's ggml_vec_geglu_quick_f32 (GGML_GELU_QUICK_FP16): table lookup = f16(gelu_quick(f16(x)))."""
    x16 = x.astype(np.float16).astype(np.float64)
    return gelu_quick(x16).astype(np.float16).astype(np.float64)


def rope_half(x, pos):
    """NEOX rope over the last dim (8 channels): pair (i, i+4), angle pos * 100^(-2i/8)."""
    n = x.shape[-1]
    inv = 1.0 / (ROPE_THETA ** (np.arange(0, n, 2, dtype=np.float64) / n))   # 4 frequencies
    ang = pos[:, None].astype(np.float64) * inv[None, :]                       # (N, 4)
    c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]                   # broadcast over heads
    x1, x2 = x[..., : n // 2], x[..., n // 2:]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)


def forward(floats, gelu="tanh", clamp=True, f16_pixels=False, stats=None, act_f16=False):
    """floats (H, W, 3) float32 in [0, 1] -> (n_tokens, OUT) float64, tokens row-major over the pooled grid."""
    H, Wd, _ = floats.shape
    ph, pw = H // PATCH, Wd // PATCH
    x = 2.0 * (floats.astype(np.float64) - 0.5)
    if f16_pixels:
        x = x.astype(np.float16).astype(np.float64)
    patches = x.reshape(ph, PATCH, pw, PATCH, 3).transpose(0, 2, 1, 3, 4).reshape(ph * pw, -1)  # (ky, kx, c)
    py, px = np.divmod(np.arange(ph * pw), pw)
    tab = W["v.position_embd.weight"]
    h = patches @ W_PATCH.T + tab[0][px] + tab[1][py]
    n = ph * pw

    def clin(il, lin, a):
        imin, imax, omin, omax = CLAMP[(il, lin)]
        if stats is not None:
            st = stats.setdefault((il, lin), [np.inf, -np.inf, np.inf, -np.inf, 0, 0, 0, 0, 0, 0])
            st[0] = min(st[0], a.min()); st[1] = max(st[1], a.max())
            st[4] += int((a < imin).sum()); st[5] += int((a > imax).sum()); st[8] += a.size
            if "_acts" in stats:
                stats["_acts"].setdefault((il, lin, "in"), []).append(a.ravel())
        if clamp:
            a = np.clip(a, imin, imax)
        if act_f16:
            a = a.astype(np.float16).astype(np.float64)
        y = a @ W[f"v.blk.{il}.{lin}.weight"].T
        if stats is not None:
            st[2] = min(st[2], y.min()); st[3] = max(st[3], y.max())
            st[6] += int((y < omin).sum()); st[7] += int((y > omax).sum()); st[9] += y.size
            if "_acts" in stats:
                stats["_acts"].setdefault((il, lin, "out"), []).append(y.ravel())
        if clamp:
            y = np.clip(y, omin, omax)
        return y

    for il in range(N_LAYER):
        p = f"v.blk.{il}."
        res = h
        t = rms(h, W[p + "ln1.weight"])
        q = rms(clin(il, "attn_q", t).reshape(n, HEADS, D_HEAD), W[p + "attn_q_norm.weight"])
        k = rms(clin(il, "attn_k", t).reshape(n, HEADS, D_HEAD), W[p + "attn_k_norm.weight"])
        v = rms(clin(il, "attn_v", t).reshape(n, HEADS, D_HEAD))
        half = D_HEAD // 2
        q = np.concatenate([rope_half(q[..., :half], px), rope_half(q[..., half:], py)], axis=-1)
        k = np.concatenate([rope_half(k[..., :half], px), rope_half(k[..., half:], py)], axis=-1)
        sc = np.einsum("qhd,khd->hqk", q, k)                      # scale 1.0
        sc = sc - sc.max(axis=-1, keepdims=True)
        pr = np.exp(sc)
        pr /= pr.sum(axis=-1, keepdims=True)
        att = np.einsum("hqk,khd->qhd", pr, v).reshape(n, WIDTH)
        h = res + rms(clin(il, "attn_out", att), W[p + "attn_post_norm.weight"])
        res = h
        t = rms(h, W[p + "ln2.weight"])
        g = clin(il, "ffn_gate", t)
        u = clin(il, "ffn_up", t)
        a = {"tanh": gelu_tanh, "quick": gelu_quick, "quick_ik": gelu_quick_ik}[gelu](g) * u
        h = res + rms(clin(il, "ffn_down", a), W[p + "ffn_post_norm.weight"])
    ty, tx = ph // K_POOL, pw // K_POOL
    pooled = h.reshape(ty, K_POOL, tx, K_POOL, WIDTH).mean(axis=(1, 3)).reshape(ty * tx, WIDTH)
    pooled = pooled * math.sqrt(WIDTH)
    pooled = (pooled - W["v.std_bias"]) * W["v.std_scale"]
    return rms(pooled) @ W["mm.input_projection.weight"].T


def sha256_file(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def main():
    image_dir = sys.argv[1] if len(sys.argv) > 1 else "../qwen3vl"
    ik_dir = sys.argv[2] if len(sys.argv) > 2 else None
    ik_f32 = np.fromfile(os.path.join(ik_dir, "ik_clip.f32"), dtype="<f4") if ik_dir else None
    ik_own = json.load(open(os.path.join(ik_dir, "ik_own.json"))) if ik_dir else None
    ik_same = np.fromfile(os.path.join(ik_dir, "ik_own_same_size.f32"), dtype="<f4") if ik_dir else None
    ik_1t = np.fromfile(os.path.join(ik_dir, "ik_clip_1thread.f32"), dtype="<f4") if ik_dir else None
    pre = []
    for name, where, mst in IMAGES:
        path = os.path.join(image_dir if where == "qwen3vl" else ".", name)
        pre.append(hf_preprocess(path, mst))

    if os.environ.get("CALIBRATE"):
        stats = {"_acts": {}}
        for p in pre:
            forward(p["floats"], clamp=False, stats=stats)
        acts = stats.pop("_acts")
        for key in sorted(acts):
            a = np.concatenate(acts[key])
            print(key, "p0.5 %.3f p1 %.3f p99 %.3f p99.5 %.3f" % tuple(np.percentile(a, [0.5, 1, 99, 99.5])))
        for (il, lin), st in sorted(stats.items()):
            print(f"blk{il} {lin:9s} in [{st[0]:+.3f}, {st[1]:+.3f}] out [{st[2]:+.3f}, {st[3]:+.3f}]  "
                  f"clip in {st[4]}/{st[5]} out {st[6]}/{st[7]} of {st[8]}/{st[9]}")
        return

    f32 = []        # golden_hf.f32 (embeddings)
    u8s = []        # golden_hf_pixels.u8
    n_f32 = n_u8 = 0
    images = []
    ik_off = 0
    for idx, ((name, where, mst), p) in enumerate(zip(IMAGES, pre)):
        th_w = p["size"]
        ph, pw = th_w[1] // PATCH, th_w[0] // PATCH
        stats = {}
        emb = forward(p["floats"], stats=stats)
        v_quick = forward(p["floats"], gelu="quick")
        v_noclamp = forward(p["floats"], clamp=False)
        v_f16 = forward(p["floats"], f16_pixels=True)
        v_ik = forward(p["floats"], gelu="quick_ik", clamp=False, f16_pixels=True)
        v_ik_tanh = forward(p["floats"], gelu="tanh", clamp=False, f16_pixels=True)
        fl = p["floats"]
        # the documented reconstruction of the floats from the stored bytes must be exact
        assert np.array_equal((p["u8"].astype(np.float64) * (1 / 255)).astype(np.float32), fl)
        ik_h, ik_w = ik_target_size(p["orig"][1], p["orig"][0])
        clamped = {f"blk{il}.{lin}": {"input_below_min": st[4], "input_above_max": st[5], "output_below_min": st[6],
                                      "output_above_max": st[7], "n_input": st[8], "n_output": st[9]}
                   for (il, lin), st in sorted(stats.items())}
        entry = {
            "image": name if where == "here" else f"../qwen3vl/{name}",
            "max_soft_tokens": mst,
            "pil_mode": p["mode"],
            "pil_rgb_sha256": p["rgb_sha"],
            "orig": {"nx": p["orig"][0], "ny": p["orig"][1]},
            "hf_resize": {"nx": th_w[0], "ny": th_w[1], "branch": p["branch"], "resized": p["resized"]},
            "hf_preproc": {"nx": th_w[0], "ny": th_w[1],
                           "bytes": {"file": "golden_hf_pixels.u8", "offset": n_u8, "count": int(p["u8"].size)}},
            "grid": {"patches_x": pw, "patches_y": ph, "tokens_x": pw // K_POOL, "tokens_y": ph // K_POOL},
            "hf_embd": {"n_tokens": int(emb.shape[0]), "n_embd": OUT, "floats": {"offset": n_f32, "count": int(emb.size)}},
            "ik_preprocessing_rule": {"nx": ik_w, "ny": ik_h, "patches_x": ik_w // PATCH, "patches_y": ik_h // PATCH,
                                      "n_tokens": (ik_w // PATCH // K_POOL) * (ik_h // PATCH // K_POOL),
                                      "note": "computed here from ik's calc_size_preserved_ratio (limits 252..280 tokens)"},
            "clamp_counts_hf": clamped,
            "checks": {
                "embd_max_abs": float(np.abs(emb).max()),
                "ik_choices_vs_hf_max_abs_diff": float(np.abs(v_ik - emb).max()),
                "only_gelu_quick_max_abs_diff": float(np.abs(v_quick - emb).max()),
                "only_no_block_clamps_max_abs_diff": float(np.abs(v_noclamp - emb).max()),
                "only_f16_pixels_max_abs_diff": float(np.abs(v_f16 - emb).max()),
                "ik_choices_but_tanh_gelu_vs_hf_max_abs_diff": float(np.abs(v_ik_tanh - emb).max()),
            },
        }
        if ik_f32 is not None:
            cnt = emb.size
            got = ik_f32[ik_off:ik_off + cnt].astype(np.float64).reshape(emb.shape)
            got1 = ik_1t[ik_off:ik_off + cnt].astype(np.float64).reshape(emb.shape)
            entry["checks"]["ik_clip_1_thread_vs_4_threads_max_abs_diff (ik cont_4d transpose bug)"] = float(np.abs(got1 - got).max())
            entry["checks"]["ik_clip_on_hf_preproc_vs_numpy_ik_choices_median_abs_diff"] = float(np.median(np.abs(got - v_ik)))
            ik_off += cnt
            entry["checks"]["ik_clip_on_hf_preproc_vs_numpy_ik_choices_max_abs_diff"] = float(np.abs(got - v_ik).max())
            entry["checks"]["ik_clip_on_hf_preproc_vs_hf_max_abs_diff"] = float(np.abs(got - emb).max())
            own = ik_own[idx]
            assert own["image"] == entry["image"] and own["max_soft_tokens"] == mst
            rule = entry["ik_preprocessing_rule"]
            rule["ik_measured"] = {"nx": own["ik_preproc"]["nx"], "ny": own["ik_preproc"]["ny"],
                                   "n_tokens": own["n_tokens"], "stb_decoded": own["decoded"]}
            rule["note"] = "ik_clip_encode: stb_image decode + clip_image_preprocess (defaults 252..280 tokens)"
            assert (rule["nx"], rule["ny"], rule["n_tokens"]) == (own["ik_preproc"]["nx"], own["ik_preproc"]["ny"], own["n_tokens"])
            if own["same_size_as_hf"]:
                o, c = own["same_size_embd"]["offset"], own["same_size_embd"]["count"]
                ik_full = ik_same[o:o + c].astype(np.float64).reshape(emb.shape)
                rule["same_size_as_hf"] = True
                rule["pixel_bytes_differing"] = own["pixel_n_bytes_differing"]
                rule["pixel_n_bytes"] = own["pixel_n_bytes"]
                rule["pixel_max_abs_diff_bytes"] = round(own["pixel_max_abs_diff_bytes"])
                entry["checks"]["ik_own_preprocessing_and_encoder_vs_hf_max_abs_diff"] = float(np.abs(ik_full - emb).max())
                entry["checks"]["only_ik_resampler_bytes_max_abs_diff (ik encoder on ik vs HF pixels)"] = float(np.abs(ik_full - got).max())
        images.append(entry)
        f32.append(emb.astype("<f4").ravel())
        n_f32 += emb.size
        u8s.append(p["u8"].ravel())
        n_u8 += p["u8"].size
    if ik_f32 is not None:
        assert ik_off == ik_f32.size, (ik_off, ik_f32.size)

    np.concatenate(f32).astype("<f4").tofile("golden_hf.f32")
    np.concatenate(u8s).astype(np.uint8).tofile("golden_hf_pixels.u8")
    doc = {
        "reference": "HF-faithful numpy float64 forward (hf_encoder_numpy.py): transformers Gemma4ImageProcessorPil + "
                     "Gemma4VisionModel + Gemma4MultimodalEmbedder semantics on gemma4-tiny-mmproj.gguf's weights",
        "mmproj": MMPROJ,
        "mmproj_sha256": sha256_file(MMPROJ),
        "pil_version": PIL.__version__,
        "numpy_version": np.__version__,
        "vision": {"patch_size": PATCH, "hidden": WIDTH, "heads": HEADS, "head_dim": D_HEAD, "depth": N_LAYER,
                   "intermediate": int(W["v.blk.0.ffn_up.weight"].shape[0]), "pooling_kernel_size": K_POOL,
                   "position_embedding_size": N_POS, "rope_theta": ROPE_THETA, "rms_norm_eps": EPS, "out": OUT,
                   "use_clipped_linears": True, "standardize": True, "hidden_activation": "gelu_pytorch_tanh"},
        "clamp_bounds": {f"blk{il}.{lin}": list(CLAMP[(il, lin)]) for il in range(N_LAYER) for lin in LINEARS},
        "preprocessing": {
            "size_rule": "get_aspect_ratio_preserving_size(h, w, patch 4, max_patches = max_soft_tokens*9, pooling 3)",
            "resample": "PIL BICUBIC on convert('RGB'), only when the size changes",
            "rescale": "float32(uint8 * (1/255) computed in float64)",
            "normalize": "none (the model maps x -> 2x - 1)",
            "f16_pixel_rounding": False,
            "pixels_file": "golden_hf_pixels.u8: resized RGB bytes, (ny, nx, 3) HWC interleaved, row-major; "
                           "hf_preproc floats = float32(byte * (1.0/255.0)) with the product in double",
        },
        "encoder": {
            "patch_embedding": "2*(x-0.5), patch vector (ky, kx, c), input_proj no bias, + table[0][col] + table[1][row]",
            "rope": "2-D: head dims [0,8) by column, [8,16) by row, each NEOX (i, i+4), angle pos*100^(-2i/8)",
            "attention": "q,k RMSNorm per head with weight, v RMSNorm no weight, scale 1.0, bidirectional within the image",
            "mlp": "down(gelu_tanh(gate(x)) * up(x))",
            "clamps": "every q/k/v/o/gate/up/down: clamp(input) -> linear -> clamp(output); none on the embedder",
            "pooler": "mean over 3x3 patch blocks, row-major over the pooled grid, * sqrt(32)",
            "standardize": "(x - std_bias) * std_scale",
            "embedder": "RMSNorm without weight (eps 1e-6) -> embedding_projection (32 -> 64)",
            "output": "per token (row-major over the pooled grid): 64 floats",
        },
        "ik_choices": "GELU-quick in the blocks (no clip.use_gelu key) via ik's f16 table (f16(gelu_quick(f16(x)))), "
                      "no block clamps, pixels rounded to F16 in im2col",
        "golden_f32": "golden_hf.f32 (little-endian float32)",
        "images": images,
    }
    with open("golden_hf.json", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    for e in images:
        c = e["checks"]
        print(f"{e['image']:22s} mst {e['max_soft_tokens']:3d} {e['orig']['nx']}x{e['orig']['ny']} -> "
              f"{e['hf_resize']['nx']}x{e['hf_resize']['ny']} tok {e['grid']['tokens_x']}x{e['grid']['tokens_y']} "
              f"ik {c['ik_choices_vs_hf_max_abs_diff']:.3g} quick {c['only_gelu_quick_max_abs_diff']:.3g} "
              f"noclamp {c['only_no_block_clamps_max_abs_diff']:.3g} f16 {c['only_f16_pixels_max_abs_diff']:.3g} "
              + (f"IKCLIP {c['ik_clip_on_hf_preproc_vs_numpy_ik_choices_max_abs_diff']:.3g}"
                 if "ik_clip_on_hf_preproc_vs_numpy_ik_choices_max_abs_diff" in c else ""))


if __name__ == "__main__":
    main()
