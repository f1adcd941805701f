#!/usr/bin/python3
"""HF-faithful float64 numpy forward of the Qwen3.5 / Qwen3.6 vision tower (transformers Qwen2VLImageProcessor
(slow, PIL) + Qwen3_5VisionModel semantics = Qwen3VLVisionModel without deepstack) for qwen35-tiny-mmproj.gguf;
writes golden_hf.json + golden_hf.f32.

Semantics (each HF's; where ik_llama.cpp's build_qwen3vl differs it is marked != ik):
  - preprocessing: convert('RGB') (alpha dropped), smart_resize(factor = patch*merge = 8, min_pixels 512,
    max_pixels 4096) with Python round (half to even, != ik's std::round), PIL BICUBIC resize of the RGB image
    (always called, also at unchanged size: a copy then; != ik's stb Catmull-Rom bytes when resized), rescale 1/255
    (float64 -> float32), normalize (x - mean)/std in float32; NO F16 rounding of the pixels (!= ik's F16 im2col);
  - patch conv = kernel.0 + kernel.1 (HF tiles the frame temporal_patch_size = 2 times) + bias;
  - learned position embedding: bilinear, align corners (fast_pos_embed_interpolate: linspace(0, n-1, h/w),
    floor / floor+1 clipped, four weights) (!= ik's CPU upscale, which does nearest);
  - merge-block patch order; vision 2-D RoPE rot_pos_emb (Qwen3VLVisionRotaryEmbedding(head_dim/2 = 12), theta
    10000: pair (j, j+12) turns by row*10000^(-j/6) for j < 6, col*10000^(-(j-6)/6) for j >= 6), rotate_half;
    full (bidirectional) attention within the image; pre-norm LayerNorm eps 1e-6; block MLP gelu_pytorch_tanh;
  - NO deepstack (Qwen3_5VisionModel deletes deepstack_visual_indexes / deepstack_merger_list);
  - merger: LayerNorm(width) per patch, view (n/4, 4*width), linear_fc1, exact-erf GELU (nn.GELU(), != ik's tanh),
    linear_fc2 -> out_hidden_size 64.
Output per merged token, row-major over the token grid (= merge-block order): 64 floats (no deepstack).

Usage: PYTHONPATH=<ik_llama.cpp>/gguf-py /usr/bin/python3 hf_encoder_numpy.py [IMAGE_DIR] [IK_CLIP_F32]
  IMAGE_DIR: where the six test images are (default ../qwen3vl, their home in the repository);
  IK_CLIP_F32 (optional): ik_clip_encode's output (ik's clip_image_encode of this script's hf_preproc floats, the
  images in golden order, 64 floats per token); when given, the numpy forward with ik's choices is compared to it.
Reads qwen35-tiny-mmproj.gguf in the current folder; writes golden_hf.json / golden_hf.f32 there.
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

MMPROJ = "qwen35-tiny-mmproj.gguf"
IMAGES = ["grid.png", "wide.png", "tall.jpg", "small.png", "big.png", "rgba.png"]
r = GGUFReader(MMPROJ)
W = {t.name: np.array(t.data).astype(np.float64).reshape([int(x) for x in reversed(t.shape)]) for t in r.tensors}


def kv(name):
    f = r.fields[name]
    return [f.parts[i].tolist()[0] if len(f.parts[i]) == 1 else f.parts[i].tolist() for i in f.data]


PATCH = int(kv("clip.vision.patch_size")[0])                # 4
MERGE = int(kv("clip.vision.spatial_merge_size")[0])        # 2
WIDTH = int(kv("clip.vision.embedding_length")[0])          # 48
HEADS = int(kv("clip.vision.attention.head_count")[0])      # 2
N_LAYER = int(kv("clip.vision.block_count")[0])             # 2
EPS = float(kv("clip.vision.attention.layer_norm_epsilon")[0])  # 1e-6
MEAN = [float(x) for x in kv("clip.vision.image_mean")]
STD = [float(x) for x in kv("clip.vision.image_std")]
D_HEAD = WIDTH // HEADS                                      # 24
N_PER_SIDE = int(round(math.sqrt(W["v.position_embd.weight"].shape[0])))  # 5
OUT = W["mm.2.weight"].shape[0]                              # 64
ROPE_THETA = 10000.0
assert not any(n.startswith("v.deepstack.") for n in W), "a Qwen3.5 projector has no deepstack mergers"
FACTOR = PATCH * MERGE                                       # 8
MIN_PIXELS = 8 * FACTOR * FACTOR                             # 512  (as ../qwen3vl: image_min_tokens 8)
MAX_PIXELS = 64 * FACTOR * FACTOR                            # 4096 (as ../qwen3vl: image_max_tokens 64)


# ---------------- preprocessing (transformers Qwen2VLImageProcessor, slow path) ----------------
def smart_resize(height, width, factor=FACTOR, min_pixels=MIN_PIXELS, max_pixels=MAX_PIXELS):
    """transformers models/qwen2_vl/image_processing_qwen2_vl.py smart_resize; Python round = half to even."""
    if max(height, width) / min(height, width) > 200:
        raise ValueError("absolute aspect ratio must be smaller than 200")
    h_bar = round(height / factor) * factor
    w_bar = round(width / factor) * factor
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def hf_preprocess(path):
    """convert_rgb, smart_resize, PIL resize((w, h), BICUBIC), uint8 * (1/255) in float64 -> float32,
    (x - mean) / std in float32. Returns (ny, nx, 3) float32 (HWC), the PIL mode, sha256 of the RGB bytes before
    resizing, the original size."""
    im = Image.open(path)
    mode = im.mode
    rgb = im.convert("RGB")
    h, w = smart_resize(rgb.height, rgb.width)
    res = rgb.resize((w, h), resample=Image.BICUBIC)
    a = (np.asarray(res).astype(np.float64) * (1 / 255)).astype(np.float32)
    a = ((a - np.array(MEAN, dtype=np.float32)) / np.array(STD, dtype=np.float32)).astype(np.float32)
    return a, mode, hashlib.sha256(rgb.tobytes()).hexdigest(), (rgb.width, rgb.height)


# ---------------- encoder ----------------
def layer_norm(x, w, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + EPS) * w + b


def gelu_tanh(x):  # gelu_pytorch_tanh
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def gelu_erf(x):  # nn.GELU()
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / np.sqrt(2)))


def fast_pos_embed_interpolate(gh, gw):
    """Qwen3VLVisionModel.fast_pos_embed_interpolate for one image (t = 1), row-major (gh*gw, WIDTH) before the
    merge-block permutation. linspace in float64 here (torch: float32; differences ~1e-7 relative)."""
    n = N_PER_SIDE
    pe = W["v.position_embd.weight"]                     # (n*n, WIDTH), row = y*n + x
    h_idxs, w_idxs = np.linspace(0, n - 1, gh), np.linspace(0, n - 1, gw)
    h_f, w_f = h_idxs.astype(np.int64), w_idxs.astype(np.int64)      # .int(): truncation (non-negative: floor)
    h_c, w_c = np.minimum(h_f + 1, n - 1), np.minimum(w_f + 1, n - 1)
    dh, dw = h_idxs - h_f, w_idxs - w_f
    idx = [(h_f[:, None] * n + w_f[None]).ravel(), (h_f[:, None] * n + w_c[None]).ravel(),
           (h_c[:, None] * n + w_f[None]).ravel(), (h_c[:, None] * n + w_c[None]).ravel()]
    wt = [((1 - dh)[:, None] * (1 - dw)[None]).ravel(), ((1 - dh)[:, None] * dw[None]).ravel(),
          (dh[:, None] * (1 - dw)[None]).ravel(), (dh[:, None] * dw[None]).ravel()]
    return sum(pe[i] * w[:, None] for i, w in zip(idx, wt))   # (gh*gw, WIDTH) row-major


def ik_nearest_pos(gh, gw):
    """ik's CPU upscale (BILINEAR | ALIGN_CORNERS implemented as nearest): src = (int)(i / sf), float32,
    sf = (n_out-1)/(n_in-1). Diagnostic only."""
    def src_idx(n_out, n_in):
        if n_out == n_in:
            return list(range(n_out))
        sf = np.float32(n_out - 1) / np.float32(n_in - 1) if n_out > 1 and n_in > 1 else np.float32(n_out) / np.float32(n_in)
        return [int(np.float32(i) / np.float32(sf)) for i in range(n_out)]
    pe = W["v.position_embd.weight"].reshape(N_PER_SIDE, N_PER_SIDE, WIDTH)
    return pe[np.ix_(src_idx(gh, N_PER_SIDE), src_idx(gw, N_PER_SIDE))].reshape(-1, WIDTH)


def merge_order(gh, gw):
    """row-major patch index of each sequence position: (block row, block col, intra row, intra col)."""
    return np.array([(MERGE * by + dy) * gw + MERGE * bx + dx for by in range(gh // MERGE)
                     for bx in range(gw // MERGE) for dy in range(MERGE) for dx in range(MERGE)])


def rot_pos_emb(gh, gw):
    """Qwen3VLVisionModel.rot_pos_emb: Qwen3VLVisionRotaryEmbedding(dim = head_dim // 2 = 12):
    inv_freq = 1 / theta^(arange(0, 12, 2) / 12) (6 freqs); per patch in merge-block order
    cat(row * inv_freq, col * inv_freq) -> (n, 12)."""
    dim = D_HEAD // 2
    inv_freq = 1.0 / ROPE_THETA ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
    order = merge_order(gh, gw)
    rows, cols = order // gw, order % gw
    return np.concatenate([rows[:, None] * inv_freq, cols[:, None] * inv_freq], axis=1), rows, cols


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return np.concatenate([-x2, x1], axis=-1)


def encode(img, f16_pixels=False, merger_gelu=gelu_erf, pos="hf"):
    """img (ny, nx, 3) preprocessed floats. Returns (n_tokens, 64) merger outputs (row-major over the token grid).
    The keyword arguments exist only for the diagnostics (True / gelu_tanh / "ik" = ik's choices)."""
    ny, nx, _ = img.shape
    gw, gh = nx // PATCH, ny // PATCH
    x = img.astype(np.float16).astype(np.float64) if f16_pixels else img.astype(np.float64)
    patches = x.reshape(gh, PATCH, gw, PATCH, 3).transpose(0, 2, 4, 1, 3).reshape(gh * gw, 3 * PATCH * PATCH)
    K = W["v.patch_embd.weight"].reshape(WIDTH, -1) + W["v.patch_embd.weight.1"].reshape(WIDTH, -1)
    order = merge_order(gh, gw)
    h = (patches @ K.T + W["v.patch_embd.bias"])[order]
    h = h + (fast_pos_embed_interpolate(gh, gw) if pos == "hf" else ik_nearest_pos(gh, gw))[order]
    rot, _, _ = rot_pos_emb(gh, gw)
    emb = np.concatenate([rot, rot], axis=-1)
    cos, sin = np.cos(emb)[:, None], np.sin(emb)[:, None]
    n = len(order)
    for il in range(N_LAYER):
        b = f"v.blk.{il}."
        t = layer_norm(h, W[b + "ln1.weight"], W[b + "ln1.bias"])
        qkv = (t @ W[b + "attn_qkv.weight"].T + W[b + "attn_qkv.bias"]).reshape(n, 3, HEADS, D_HEAD)
        q, k, v = qkv[:, 0], qkv[:, 1], qkv[:, 2]
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        a = np.einsum("qhd,khd->hqk", q, k) / math.sqrt(D_HEAD)     # full attention within the image (cu_seqlens)
        a = np.exp(a - a.max(-1, keepdims=True))
        a = a / a.sum(-1, keepdims=True)
        o = np.einsum("hqk,khd->qhd", a, v).reshape(n, WIDTH)
        h = h + o @ W[b + "attn_out.weight"].T + W[b + "attn_out.bias"]
        t = layer_norm(h, W[b + "ln2.weight"], W[b + "ln2.bias"])
        t = gelu_tanh(t @ W[b + "ffn_up.weight"].T + W[b + "ffn_up.bias"])
        h = h + t @ W[b + "ffn_down.weight"].T + W[b + "ffn_down.bias"]
    m = layer_norm(h, W["v.post_ln.weight"], W["v.post_ln.bias"]).reshape(n // 4, 4 * WIDTH)  # norm, then view
    m = merger_gelu(m @ W["mm.0.weight"].T + W["mm.0.bias"])
    return m @ W["mm.2.weight"].T + W["mm.2.bias"]


def main():
    img_dir = sys.argv[1] if len(sys.argv) > 1 else "../qwen3vl"
    ik_clip = np.fromfile(sys.argv[2], dtype="<f4") if len(sys.argv) > 2 else None
    ik_off = 0
    out_f, n_out = [], 0

    def add(a):
        nonlocal n_out
        a = np.ascontiguousarray(a, dtype="<f4").ravel()
        out_f.append(a)
        j = {"offset": n_out, "count": int(a.size)}
        n_out += a.size
        return j

    images = []
    for name in IMAGES:
        img, mode, sha, (w0, h0) = hf_preprocess(os.path.join(img_dir, name))
        ny, nx, _ = img.shape
        gh, gw = ny // PATCH, nx // PATCH
        emb = encode(img)
        ikm = encode(img, True, gelu_tanh, "ik")
        chk = {"ik_semantics_vs_hf_max_abs_diff": float(np.abs(ikm - emb).max()),
               "only_ik_nearest_pos_max_abs_diff": float(np.abs(encode(img, pos="ik") - emb).max()),
               "only_ik_tanh_merger_gelu_max_abs_diff": float(np.abs(encode(img, merger_gelu=gelu_tanh) - emb).max()),
               "only_ik_f16_pixels_max_abs_diff": float(np.abs(encode(img, f16_pixels=True) - emb).max())}
        if ik_clip is not None:
            ik = ik_clip[ik_off:ik_off + emb.size].reshape(emb.shape)
            ik_off += emb.size
            chk["ik_clip_on_hf_preproc_vs_numpy_ik_semantics_max_abs_diff"] = float(np.abs(ik - ikm).max())
            chk["ik_clip_on_hf_preproc_vs_hf_max_abs_diff"] = float(np.abs(ik - emb).max())
        print(f"{name:10s} {w0}x{h0} -> HF {nx}x{ny} tokens {gw // MERGE}x{gh // MERGE}  |embd| max "
              f"{np.abs(emb).max():.2f}  {json.dumps(chk)}")
        images.append({
            "image": name, "pil_mode": mode, "pil_rgb_sha256": sha, "orig": {"nx": w0, "ny": h0},
            "hf_preproc": {"nx": nx, "ny": ny, "floats": add(img)},
            "grid": {"patches_x": gw, "patches_y": gh, "tokens_x": gw // MERGE, "tokens_y": gh // MERGE},
            "image_grid_thw": [1, gh, gw],
            "hf_embd": {"n_tokens": int(emb.shape[0]), "n_embd": int(emb.shape[1]), "floats": add(emb)},
            "checks": chk,
        })
    if ik_clip is not None:
        assert ik_off == ik_clip.size, "ik clip file size does not match"
    out = {
        "reference": "HF-faithful numpy float64 forward (hf_encoder_numpy.py): transformers Qwen2VLImageProcessor "
                     "(slow, PIL) + Qwen3_5VisionModel semantics (Qwen3VLVisionModel without deepstack) on "
                     "qwen35-tiny-mmproj.gguf's weights",
        "mmproj": MMPROJ, "mmproj_sha256": hashlib.sha256(open(MMPROJ, "rb").read()).hexdigest(),
        "pil_version": PIL.__version__, "numpy_version": np.__version__,
        "vision": {"patch_size": PATCH, "temporal_patch_size": 2, "spatial_merge_size": MERGE, "width": WIDTH,
                   "heads": HEADS, "head_dim": D_HEAD, "depth": N_LAYER, "num_position_embeddings": N_PER_SIDE ** 2,
                   "out_hidden_size": OUT, "deepstack_visual_indexes": []},
        "preprocessing": {"factor": FACTOR, "min_pixels": MIN_PIXELS, "max_pixels": MAX_PIXELS,
                          "round": "python round (half to even)", "resample": "PIL BICUBIC on convert('RGB')",
                          "rescale": "uint8 * (1/255) float64 -> float32", "image_mean": MEAN, "image_std": STD,
                          "normalize": "(x - mean) / std in float32", "f16_pixel_rounding": False,
                          "layout": "hf_preproc floats: (ny, nx, 3) HWC interleaved RGB row-major"},
        "encoder": {"patch_conv": "kernel.0 + kernel.1 (2 identical frames) + bias",
                    "pos_embd": "bilinear align-corners (fast_pos_embed_interpolate) from the 5x5 grid",
                    "vision_rope": "rot_pos_emb: cat(row*inv_freq, col*inv_freq), inv_freq = 10000^(-[0,2,4,6,8,10]/12),"
                                   " emb = cat(r, r), rotate_half",
                    "block_mlp_gelu": "tanh", "merger_gelu": "erf", "deepstack": "none",
                    "output": "per merged token (row-major over the token grid): 64 floats (merger output only)"},
        "images": images,
        "golden_f32": "golden_hf.f32",
    }
    np.concatenate(out_f).astype("<f4").tofile("golden_hf.f32")
    json.dump(out, open("golden_hf.json", "w"), indent=1)
    print(f"wrote golden_hf.json, golden_hf.f32 ({n_out} floats)")


if __name__ == "__main__":
    main()
