#!/usr/bin/python3
"""HF-faithful float64 numpy forward of the Qwen3-VL vision tower (transformers Qwen2VLImageProcessor (slow) +
Qwen3VLVisionModel semantics) for qwen3vl-tiny-mmproj.gguf; writes golden_hf.json + golden_hf.f32.

Differences from ik's build_qwen3vl (check_encoder_numpy.py = ik's semantics), all on purpose:
  - preprocessing: smart_resize with Python round (half to even), PIL BICUBIC resize of the RGB image (always
    called, also at unchanged size: a copy then), rescale 1/255 (float64 -> float32), normalize (x - mean)/std in
    float32 (Qwen2VLImageProcessor); NO F16 rounding of the pixels before the patch conv (ik's im2col is F16);
  - learned position embedding: bilinear, align corners, as Qwen3VLVisionModel.fast_pos_embed_interpolate
    (linspace(0, n-1, h/w), floor / floor+1 clipped, four weights), NOT ik's nearest;
  - GELU of both kinds of mergers (deepstack_merger_list.K and merger): exact erf (nn.GELU()), NOT tanh;
    the blocks' MLP keeps gelu_pytorch_tanh (hidden_act), as ik.
Equal to ik: the two temporal kernels summed (HF tiles the frame temporal_patch_size = 2 times) + bias, merge-block
patch order, vision 2-D RoPE (Qwen3VLVisionRotaryEmbedding(head_dim/2 = 8), theta 10000, rot_pos_emb per patch
(row, col) in merge-block order, emb = cat(freqs, freqs), rotate_half), bidirectional attention within the image,
deepstack on the outputs of blocks 0, 1 (LayerNorm over 4*width after the merge), post-norm per patch then merge.

Usage (in this folder): PYTHONPATH=<ik_llama.cpp>/gguf-py /usr/bin/python3 hf_encoder_numpy.py
Reads qwen3vl-tiny-mmproj.gguf, the six images, golden.json/golden.f32 (only for the comparisons it prints/stores).
"""
import hashlib
import json
import math

import numpy as np
import PIL
from PIL import Image
from gguf import GGUFReader

MMPROJ = "qwen3vl-tiny-mmproj.gguf"
IMAGES = ["grid.png", "wide.png", "tall.jpg", "small.png", "big.png", "rgba.png"]
r = GGUFReader(MMPROJ)
W = {t.name: np.array(t.data).astype(np.float64).reshape([int(x) for x in reversed(t.shape)]) for t in r.tensors}


def kv(name):
    f = r.fields[name]
    return [f.parts[i].tolist()[0] if len(f.parts[i]) == 1 else f.parts[i].tolist() for i in f.data]


PATCH = int(kv("clip.vision.patch_size")[0])                # 4
MERGE = int(kv("clip.vision.spatial_merge_size")[0])        # 2
WIDTH = int(kv("clip.vision.embedding_length")[0])          # 32
HEADS = int(kv("clip.vision.attention.head_count")[0])      # 2
N_LAYER = int(kv("clip.vision.block_count")[0])             # 3
EPS = float(kv("clip.vision.attention.layer_norm_epsilon")[0])  # 1e-6
MEAN = [float(x) for x in kv("clip.vision.image_mean")]
STD = [float(x) for x in kv("clip.vision.image_std")]
D_HEAD = WIDTH // HEADS                                      # 16
N_PER_SIDE = int(round(math.sqrt(W["v.position_embd.weight"].shape[0])))  # 6
ROPE_THETA = 10000.0
DEEPSTACK = [il for il in range(N_LAYER) if f"v.deepstack.{il}.fc1.weight" in W]  # HF deepstack_visual_indexes
FACTOR = PATCH * MERGE                                       # 8
MIN_PIXELS = 8 * FACTOR * FACTOR                             # 512  (README: image_min_tokens 8)
MAX_PIXELS = 64 * FACTOR * FACTOR                            # 4096 (README: image_max_tokens 64)


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
    """convert_rgb (alpha dropped: PIL convert("RGB")), smart_resize, PIL resize((w, h), BICUBIC), rescale
    uint8 * (1/255) in float64 -> float32, normalize (x - mean) / std in float32. Returns (ny, nx, 3) float32
    (HWC, as clip_image_f32 stores it), the PIL mode, sha256 of the RGB bytes before resizing."""
    im = Image.open(path)
    mode = im.mode
    rgb = im.convert("RGB")
    h, w = smart_resize(rgb.height, rgb.width)
    res = rgb.resize((w, h), resample=Image.BICUBIC)
    a = (np.asarray(res).astype(np.float64) * (1 / 255)).astype(np.float32)
    a = ((a - np.array(MEAN, dtype=np.float32)) / np.array(STD, dtype=np.float32)).astype(np.float32)
    return a, mode, hashlib.sha256(rgb.tobytes()).hexdigest(), (rgb.width, rgb.height)


def hf_pixel_values(img):
    """The flattened pixel_values rows transformers would feed the model, for reference: one row per patch in
    merge-block order, 3 * 2 * P * P floats ordered (channel, temporal, py, px) with both temporal copies equal."""
    ny, nx, _ = img.shape
    gh, gw = ny // PATCH, nx // PATCH
    p = img.transpose(2, 0, 1)[None].repeat(2, 0)  # (T=2, C, H, W): the frame tiled temporal_patch_size times
    p = p.reshape(1, 2, 3, gh // MERGE, MERGE, PATCH, gw // MERGE, MERGE, PATCH)
    p = p.transpose(0, 3, 6, 4, 7, 2, 1, 5, 8)
    return p.reshape(gh * gw, 3 * 2 * PATCH * PATCH)


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
    """Qwen3VLVisionModel.fast_pos_embed_interpolate for one image (t = 1), row-major (gh, gw, WIDTH) before the
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


def merge_order(gh, gw):
    """row-major patch index of each sequence position: (block row, block col, intra row, intra col)."""
    return np.array([(MERGE * by + dy) * gw + MERGE * bx + dx for by in range(gh // MERGE)
                     for bx in range(gw // MERGE) for dy in range(MERGE) for dx in range(MERGE)])


def rot_pos_emb(gh, gw):
    """Qwen3VLVisionModel.rot_pos_emb: Qwen3VLVisionRotaryEmbedding(dim = head_dim // 2 = 8):
    inv_freq = 1 / theta^(arange(0, 8, 2) / 8) (4 freqs); freq_table[pos] = pos * inv_freq; per patch in merge-block
    order pos_ids = (row, col); embeddings = cat(freq_table[row], freq_table[col]) -> (n, 8)."""
    dim = D_HEAD // 2
    inv_freq = 1.0 / ROPE_THETA ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
    order = merge_order(gh, gw)
    rows, cols = order // gw, order % gw
    return np.concatenate([rows[:, None] * inv_freq, cols[:, None] * inv_freq], axis=1), rows, cols


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return np.concatenate([-x2, x1], axis=-1)


def apply_rotary_pos_emb_vision(x, cos, sin):
    """x: (n, HEADS, D_HEAD); cos/sin: (n, D_HEAD) from emb = cat(rotary, rotary)."""
    return x * cos[:, None] + rotate_half(x) * sin[:, None]


def encode(img, f16_pixels=False, merger_gelu=gelu_erf, pos="hf"):
    """img (ny, nx, 3) preprocessed floats. Returns (n_tokens, 64 * (1 + len(DEEPSTACK))) =
    [merger | deepstack 0 | deepstack 1] per merged token (row-major over the token grid).
    The keyword arguments exist only for the diagnostics (f16_pixels / gelu_tanh / pos="ik" = ik's choices)."""
    ny, nx, _ = img.shape
    gw, gh = nx // PATCH, ny // PATCH
    x = img.astype(np.float64)
    if f16_pixels:
        x = img.astype(np.float16).astype(np.float64)
    # Conv3d(3 -> WIDTH, kernel (2, P, P), stride same) over 2 identical frames = sum of the two temporal kernels
    patches = x.reshape(gh, PATCH, gw, PATCH, 3).transpose(0, 2, 4, 1, 3).reshape(gh * gw, 3 * PATCH * PATCH)
    K = W["v.patch_embd.weight"].reshape(WIDTH, -1) + W["v.patch_embd.weight.1"].reshape(WIDTH, -1)
    order = merge_order(gh, gw)
    h = (patches @ K.T + W["v.patch_embd.bias"])[order]
    if pos == "hf":
        h = h + fast_pos_embed_interpolate(gh, gw)[order]
    else:  # ik nearest (diagnostic only)
        def src_idx(n_out, n_in):
            if n_out == n_in:
                return list(range(n_out))
            sf = np.float32(n_out - 1) / np.float32(n_in - 1) if n_out > 1 and n_in > 1 else np.float32(n_out) / np.float32(n_in)
            return [int(np.float32(i) / np.float32(sf)) for i in range(n_out)]
        pe = W["v.position_embd.weight"].reshape(N_PER_SIDE, N_PER_SIDE, WIDTH)
        h = h + pe[np.ix_(src_idx(gh, N_PER_SIDE), src_idx(gw, N_PER_SIDE))].reshape(-1, WIDTH)[order]
    rot, _, _ = rot_pos_emb(gh, gw)
    emb = np.concatenate([rot, rot], axis=-1)
    cos, sin = np.cos(emb), np.sin(emb)
    n = len(order)
    feats = []
    for il in range(N_LAYER):
        b = f"v.blk.{il}."
        t = layer_norm(h, W[b + "ln1.weight"], W[b + "ln1.bias"])
        qkv = (t @ W[b + "attn_qkv.weight"].T + W[b + "attn_qkv.bias"]).reshape(n, 3, HEADS, D_HEAD)
        q, k, v = qkv[:, 0], qkv[:, 1], qkv[:, 2]
        q, k = apply_rotary_pos_emb_vision(q, cos, sin), apply_rotary_pos_emb_vision(k, cos, sin)
        a = np.einsum("qhd,khd->hqk", q, k) / math.sqrt(D_HEAD)     # full attention within the image (cu_seqlens)
        a = np.exp(a - a.max(-1, keepdims=True))
        a = a / a.sum(-1, keepdims=True)
        o = np.einsum("hqk,khd->qhd", a, v).reshape(n, WIDTH)
        h = h + o @ W[b + "attn_out.weight"].T + W[b + "attn_out.bias"]
        t = layer_norm(h, W[b + "ln2.weight"], W[b + "ln2.bias"])
        t = gelu_tanh(t @ W[b + "ffn_up.weight"].T + W[b + "ffn_up.bias"])
        h = h + t @ W[b + "ffn_down.weight"].T + W[b + "ffn_down.bias"]
        if il in DEEPSTACK:  # Qwen3VLVisionPatchMerger(use_postshuffle_norm=True) on the block output
            d = f"v.deepstack.{il}."
            f = layer_norm(h.reshape(n // 4, 4 * WIDTH), W[d + "norm.weight"], W[d + "norm.bias"])
            f = merger_gelu(f @ W[d + "fc1.weight"].T + W[d + "fc1.bias"])
            feats.append(f @ W[d + "fc2.weight"].T + W[d + "fc2.bias"])
    m = layer_norm(h, W["v.post_ln.weight"], W["v.post_ln.bias"]).reshape(n // 4, 4 * WIDTH)  # norm, then view
    m = merger_gelu(m @ W["mm.0.weight"].T + W["mm.0.bias"])
    m = m @ W["mm.2.weight"].T + W["mm.2.bias"]
    return np.concatenate([m] + feats, axis=1)


def ik_rope_angles(rows, cols):
    """ik's GGML_ROPE_TYPE_VISION mapping from README: pair (j, j+8) angle y*10000^(-j/4) (j<4), x*10000^(-(j-4)/4)."""
    j = np.arange(8)
    return np.where(j < 4, rows[:, None] * ROPE_THETA ** (-(j % 4) / 4.0), cols[:, None] * ROPE_THETA ** (-(j % 4) / 4.0))


def main():
    g = json.load(open("golden.json"))
    blob = np.fromfile("golden.f32", dtype="<f4")
    get = lambda f: blob[f["offset"]:f["offset"] + f["count"]]
    gi = {im["image"]: im for im in g["images"]}
    out_f = []
    n_out = 0

    def add(a):
        nonlocal n_out
        a = np.ascontiguousarray(a, dtype="<f4").ravel()
        out_f.append(a)
        j = {"offset": n_out, "count": int(a.size)}
        n_out += a.size
        return j

    images = []
    rope_equal = True
    for name in IMAGES:
        img, mode, sha, (w0, h0) = hf_preprocess(name)
        ny, nx, _ = img.shape
        gh, gw = ny // PATCH, nx // PATCH
        emb = encode(img)
        rot, rows, cols = rot_pos_emb(gh, gw)
        rope_equal &= bool(np.array_equal(rot, ik_rope_angles(rows, cols))) or bool(np.abs(rot - ik_rope_angles(rows, cols)).max() < 1e-12)
        old = gi[name]
        hp = old["hf_preproc"]
        same_pre = (hp["nx"], hp["ny"]) == (nx, ny)
        chk = {"preproc_max_abs_diff_vs_golden_hf_preproc":
               float(np.abs(get(hp["floats"]).reshape(ny, nx, 3) - img).max()) if same_pre else None}
        ik = get(old["ik_embd"]["floats"]).reshape(old["ik_embd"]["n_tokens"], old["ik_embd"]["n_embd"])
        ikpre = old["ik_preproc"]
        same_ik = (ikpre["nx"], ikpre["ny"]) == (nx, ny)
        if same_ik:
            chk["embd_max_abs_diff_vs_ik_embd"] = float(np.abs(emb - ik).max())
            chk["preproc_max_abs_diff_vs_ik_preproc"] = float(np.abs(get(ikpre["floats"]).reshape(ny, nx, 3) - img).max())
        else:
            chk["embd_max_abs_diff_vs_ik_embd"] = None
        if same_pre:  # ik's encoder on the same (HF) pixels: golden hf_embd
            ikh = get(old["hf_embd"]["floats"]).reshape(-1, 192)
            chk["embd_max_abs_diff_vs_ik_encoder_on_hf_preproc"] = float(np.abs(emb - ikh).max())
            # decomposition on the same pixels: max |numpy - ik encoder| with ik's choices except the one named
            chk["vs_ik_encoder_on_hf_preproc_decomposed"] = {
                "none_hf (ik semantics)": float(np.abs(encode(img, True, gelu_tanh, "ik") - ikh).max()),
                "only_bilinear_pos_hf": float(np.abs(encode(img, True, gelu_tanh) - ikh).max()),
                "only_erf_merger_gelu_hf": float(np.abs(encode(img, True, gelu_erf, "ik") - ikh).max()),
                "only_no_f16_pixels_hf": float(np.abs(encode(img, False, gelu_tanh, "ik") - ikh).max()),
            }
        print(f"{name:10s} {w0}x{h0} -> HF {nx}x{ny} tokens {gw // MERGE}x{gh // MERGE}  |embd| max {np.abs(emb).max():.2f}  {json.dumps(chk)}")
        images.append({
            "image": name, "pil_mode": mode, "pil_rgb_sha256": sha, "orig": {"nx": w0, "ny": h0},
            "hf_preproc": {"nx": nx, "ny": ny, "floats": add(img)},
            "grid": {"patches_x": gw, "patches_y": gh, "tokens_x": gw // MERGE, "tokens_y": gh // MERGE},
            "image_grid_thw": [1, gh, gw],
            "hf_embd": {"n_tokens": int(emb.shape[0]), "n_embd": int(emb.shape[1]), "floats": add(emb)},
            "checks": chk,
        })
    print("HF vision rope (rot_pos_emb) == ik's mapping (README):", rope_equal)
    out = {
        "reference": "HF-faithful numpy float64 forward (hf_encoder_numpy.py): transformers Qwen2VLImageProcessor "
                     "(slow, PIL) + Qwen3VLVisionModel semantics on qwen3vl-tiny-mmproj.gguf's weights",
        "mmproj": MMPROJ, "mmproj_sha256": hashlib.sha256(open(MMPROJ, "rb").read()).hexdigest(),
        "pil_version": PIL.__version__, "numpy_version": np.__version__,
        "preprocessing": {"factor": FACTOR, "min_pixels": MIN_PIXELS, "max_pixels": MAX_PIXELS,
                          "round": "python round (half to even)", "resample": "PIL BICUBIC on convert('RGB')",
                          "rescale": "uint8 * (1/255) float64 -> float32", "image_mean": MEAN, "image_std": STD,
                          "normalize": "(x - mean) / std in float32", "f16_pixel_rounding": False,
                          "layout": "hf_preproc floats: (ny, nx, 3) HWC interleaved RGB row-major"},
        "encoder": {"patch_conv": "kernel.0 + kernel.1 (2 identical frames) + bias",
                    "pos_embd": "bilinear align-corners (fast_pos_embed_interpolate)",
                    "vision_rope": "rot_pos_emb: cat(row*inv_freq, col*inv_freq), inv_freq = 10000^(-[0,2,4,6]/8), "
                                   "emb = cat(r, r), rotate_half; == ik's mapping: %s" % rope_equal,
                    "block_mlp_gelu": "tanh", "merger_gelu": "erf", "deepstack_blocks": DEEPSTACK,
                    "output": "per merged token (row-major over the token grid): [merger 64 | deepstack 0 64 | deepstack 1 64]"},
        "vision_rope_equals_ik": rope_equal,
        "images": images,
        "golden_f32": "golden_hf.f32",
    }
    np.concatenate(out_f).astype("<f4").tofile("golden_hf.f32")
    json.dump(out, open("golden_hf.json", "w"), indent=1)
    print(f"wrote golden_hf.json, golden_hf.f32 ({n_out} floats)")


if __name__ == "__main__":
    main()
