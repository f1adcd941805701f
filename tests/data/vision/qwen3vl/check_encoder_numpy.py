#!/usr/bin/python3
"""Independent float64 numpy forward of the Qwen3-VL vision encoder + mergers (the semantics of ik's clip.cpp
build_qwen3vl, see README.md), checked against golden.json / golden.f32; also re-derives ik's smart-resize sizes.

Usage (in this folder): PYTHONPATH=<ik_llama.cpp>/gguf-py /usr/bin/python3 check_encoder_numpy.py
Prints per image the max abs difference vs ik (the spec; measured <= 1e-6), plus, for information, what two
Hugging Face differences would cost: true bilinear position-embedding interpolation (HF) instead of ik's
nearest-neighbour, and exact-erf GELU in the two kinds of mergers (HF nn.GELU()).
"""
import json
import math

import numpy as np
from gguf import GGUFReader

r = GGUFReader("qwen3vl-tiny-mmproj.gguf")
W = {t.name: np.array(t.data).astype(np.float64).reshape([int(x) for x in reversed(t.shape)]) for t in r.tensors}
g = json.load(open("golden.json"))
blob = np.fromfile("golden.f32", dtype="<f4")

PATCH, MERGE, WIDTH, HEADS, N_LAYER = 4, 2, 32, 2, 3
D_HEAD = WIDTH // HEADS          # 16
N_PER_SIDE = 6                   # sqrt(rows of v.position_embd.weight)
EPS = 1e-6                       # clip.vision.attention.layer_norm_epsilon
ROPE_THETA = 10000.0
DEEPSTACK = [il for il in range(N_LAYER) if f"v.deepstack.{il}.fc1.weight" in W]


def get(f):
    return blob[f["offset"]:f["offset"] + f["count"]]


def layer_norm(x, w, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + EPS) * w + b


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def gelu_erf(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / np.sqrt(2)))


def pos_embd_ik(px, py):
    """ik: ggml_interpolate(mode BILINEAR | ALIGN_CORNERS) - but ik's CPU upscale op treats BILINEAR exactly like
    NEAREST: src index = (int)(i / sf) in float32 with sf = (float)(n_out - 1) / (n_in - 1) (align-corners
    scale; sf = n_out / n_in when n_out or n_in is 1). Identity when the patch grid is 6x6."""
    pe = W["v.position_embd.weight"].reshape(N_PER_SIDE, N_PER_SIDE, WIDTH)  # [row y][col x]
    if px == N_PER_SIDE and py == N_PER_SIDE:
        return pe.reshape(-1, WIDTH)

    def src_idx(n_out, n_in):
        sf = np.float32(n_out - 1) / np.float32(n_in - 1) if n_out > 1 and n_in > 1 else np.float32(n_out) / np.float32(n_in)
        return [int(np.float32(i) / np.float32(sf)) for i in range(n_out)]

    xs, ys = src_idx(px, N_PER_SIDE), src_idx(py, N_PER_SIDE)
    return pe[np.ix_(ys, xs)].reshape(-1, WIDTH)


def pos_embd_bilinear(px, py):
    """Hugging Face Qwen3-VL (fast_pos_embed_interpolate): bilinear with linspace(0, n-1, size) (align corners)."""
    pe = W["v.position_embd.weight"].reshape(N_PER_SIDE, N_PER_SIDE, WIDTH)
    hy, wx = np.linspace(0, N_PER_SIDE - 1, py), np.linspace(0, N_PER_SIDE - 1, px)
    y0, x0 = np.floor(hy).astype(int), np.floor(wx).astype(int)
    y1, x1 = np.minimum(y0 + 1, N_PER_SIDE - 1), np.minimum(x0 + 1, N_PER_SIDE - 1)
    dy, dx = (hy - y0)[:, None, None], (wx - x0)[None, :, None]
    out = (pe[np.ix_(y0, x0)] * (1 - dy) * (1 - dx) + pe[np.ix_(y0, x1)] * (1 - dy) * dx +
           pe[np.ix_(y1, x0)] * dy * (1 - dx) + pe[np.ix_(y1, x1)] * dy * dx)
    return out.reshape(-1, WIDTH)


def rope_vision(x, pos_y, pos_x):
    """x: (n, HEADS*16). ggml_rope_multi(GGML_ROPE_TYPE_VISION, n_dims = 8, sections [4,4,4,4], base 10000):
    per head, pair (j, j+8) for j = 0..7 is rotated by angle pos * 10000^(-2k/8) where
    j = 0..3: pos = pos_y (position component 0), k = j;  j = 4..7: pos = pos_x (component 1), k = j - 4."""
    out = x.copy()
    inv = ROPE_THETA ** (-2.0 * np.arange(4) / 8)
    ang = np.concatenate([pos_y[:, None] * inv, pos_x[:, None] * inv], axis=1)  # (n, 8)
    c, s = np.cos(ang), np.sin(ang)
    for h in range(HEADS):
        a = x[:, h * D_HEAD:h * D_HEAD + 8]
        b = x[:, h * D_HEAD + 8:(h + 1) * D_HEAD]
        out[:, h * D_HEAD:h * D_HEAD + 8] = a * c - b * s
        out[:, h * D_HEAD + 8:(h + 1) * D_HEAD] = a * s + b * c
    return out


def encode(img, hf_pos=False, hf_merger_gelu=False):
    """img: (ny, nx, 3) floats as clip_image_f32 holds them (interleaved RGB, row-major). Returns
    (n_tokens, 64 * (1 + len(DEEPSTACK))): [merger output | deepstack(DEEPSTACK[0]) | deepstack(DEEPSTACK[1])]."""
    ny, nx, _ = img.shape
    PX, PY = nx // PATCH, ny // PATCH
    img = img.astype(np.float16).astype(np.float64)  # ggml_conv_2d's im2col is F16 (F16 kernels): pixels rounded
    patches = img.reshape(PY, PATCH, PX, PATCH, 3).transpose(0, 2, 4, 1, 3).reshape(PY * PX, 3 * PATCH * PATCH)
    K = W["v.patch_embd.weight"].reshape(WIDTH, -1) + W["v.patch_embd.weight.1"].reshape(WIDTH, -1)
    x = patches @ K.T + W["v.patch_embd.bias"]                               # row-major patch order p = py*PX + px
    x = x + (pos_embd_bilinear(PX, PY) if hf_pos else pos_embd_ik(PX, PY))
    # 2x2 merge-block order: token-block (by, bx) row-major, inside it (dy, dx) row-major
    order = [(2 * by + dy) * PX + 2 * bx + dx for by in range(PY // 2) for bx in range(PX // 2)
             for dy in range(2) for dx in range(2)]
    x = x[order]
    pos_y = np.array([o // PX for o in order], dtype=np.float64)
    pos_x = np.array([o % PX for o in order], dtype=np.float64)
    n = len(order)
    act = gelu_erf if hf_merger_gelu else gelu_tanh
    feats = []
    for il in range(N_LAYER):
        b = f"v.blk.{il}."
        h = layer_norm(x, W[b + "ln1.weight"], W[b + "ln1.bias"])
        qkv = h @ W[b + "attn_qkv.weight"].T + W[b + "attn_qkv.bias"]
        q, k, v = qkv[:, :WIDTH], qkv[:, WIDTH:2 * WIDTH], qkv[:, 2 * WIDTH:]
        q, k = rope_vision(q, pos_y, pos_x), rope_vision(k, pos_y, pos_x)
        o = np.zeros_like(q)
        for hd in range(HEADS):  # no mask: bidirectional over all patches of the image; scale 1/sqrt(16)
            s = slice(D_HEAD * hd, D_HEAD * (hd + 1))
            a = q[:, s] @ k[:, s].T / np.sqrt(D_HEAD)
            a = np.exp(a - a.max(-1, keepdims=True))
            o[:, s] = (a / a.sum(-1, keepdims=True)) @ v[:, s]
        x = x + o @ W[b + "attn_out.weight"].T + W[b + "attn_out.bias"]
        h = layer_norm(x, W[b + "ln2.weight"], W[b + "ln2.bias"])
        h = gelu_tanh(h @ W[b + "ffn_up.weight"].T + W[b + "ffn_up.bias"])  # use_gelu -> ggml_gelu (tanh)
        x = x + h @ W[b + "ffn_down.weight"].T + W[b + "ffn_down.bias"]
        if il in DEEPSTACK:  # on the block OUTPUT (after both residuals); LayerNorm over the merged 128
            d = f"v.deepstack.{il}."
            f = layer_norm(x.reshape(n // 4, 4 * WIDTH), W[d + "norm.weight"], W[d + "norm.bias"])
            f = act(f @ W[d + "fc1.weight"].T + W[d + "fc1.bias"])
            feats.append(f @ W[d + "fc2.weight"].T + W[d + "fc2.bias"])
    x = layer_norm(x, W["v.post_ln.weight"], W["v.post_ln.bias"])  # per patch (32), THEN merge
    x = x.reshape(n // 4, 4 * WIDTH)
    x = act(x @ W["mm.0.weight"].T + W["mm.0.bias"])
    x = x @ W["mm.2.weight"].T + W["mm.2.bias"]
    return np.concatenate([x] + feats, axis=1)


def smart_resize(w, h, factor=8, min_pixels=8 * 64, max_pixels=64 * 64, py_round=False):
    """ik's img_tool::calc_size_preserved_ratio (float32 arithmetic, std::round = half away from zero);
    py_round=True: Python's round (half to even) as transformers' smart_resize uses."""
    f32 = np.float32
    rnd = (lambda v: round(float(v))) if py_round else (lambda v: int(math.floor(float(v) + 0.5)))
    h_bar = max(factor, rnd(f32(h) / f32(factor)) * factor)
    w_bar = max(factor, rnd(f32(w) / f32(factor)) * factor)
    if h_bar * w_bar > max_pixels:
        beta = f32(math.sqrt(f32(h * w) / f32(max_pixels)))
        h_bar = max(factor, int(math.floor(f32(f32(h) / beta) / f32(factor))) * factor)
        w_bar = max(factor, int(math.floor(f32(f32(w) / beta) / f32(factor))) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = f32(math.sqrt(f32(min_pixels) / f32(h * w)))
        h_bar = int(math.ceil(f32(f32(h) * beta) / f32(factor))) * factor
        w_bar = int(math.ceil(f32(f32(w) * beta) / f32(factor))) * factor
    return w_bar, h_bar


worst = 0.0
for im in g["images"]:
    pre = im["ik_preproc"]
    nx, ny = pre["nx"], pre["ny"]
    img = get(pre["floats"]).reshape(ny, nx, 3).astype(np.float64)
    ref = get(im["ik_embd"]["floats"]).reshape(im["ik_embd"]["n_tokens"], im["ik_embd"]["n_embd"])
    out = encode(img)
    d = np.abs(out - ref).max()
    worst = max(worst, d)
    d_pos = np.abs(encode(img, hf_pos=True) - ref).max()
    d_gelu = np.abs(encode(img, hf_merger_gelu=True) - ref).max()
    dec = im["decoded"]
    sz = smart_resize(dec["nx"], dec["ny"])
    szp = smart_resize(dec["nx"], dec["ny"], py_round=True)
    print(f"{im['image']:10s} {dec['nx']}x{dec['ny']} -> ik {nx}x{ny} (numpy rule {sz[0]}x{sz[1]}"
          f"{', python-round rule %dx%d' % szp if szp != sz else ''}): max abs diff {d:.2e} "
          f"[|embd| max {np.abs(ref).max():.2f}; with HF bilinear pos-embd {d_pos:.2e}; with erf GELU in mergers {d_gelu:.2e}]")
    assert sz == (nx, ny)
    hp = im["hf_preproc"]  # transformers-style floats through ik's encoder: same encoder, other input
    hout = encode(get(hp["floats"]).reshape(hp["ny"], hp["nx"], 3).astype(np.float64))
    href = get(im["hf_embd"]["floats"]).reshape(im["hf_embd"]["n_tokens"], im["hf_embd"]["n_embd"])
    dh = np.abs(hout - href).max()
    worst = max(worst, dh)
    print(f"{'':10s} hf_preproc {hp['nx']}x{hp['ny']}: max abs diff {dh:.2e}; ik vs hf preproc "
          f"{im['preproc_max_abs_diff_ik_vs_hf']}, embd {im['embd_max_abs_diff_ik_vs_hf']}")
    assert smart_resize(dec["nx"], dec["ny"], py_round=True) == (hp["nx"], hp["ny"])
print(f"worst {worst:.2e}")
assert worst < 1e-3
