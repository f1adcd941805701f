#!/usr/bin/python3
"""Writes gemma3-tiny-mmproj.gguf (a tiny random-weight Gemma 3 vision projector) and the test images.

Usage (ik_llama.cpp 8337e4cd's gguf-py on the path; see README.md):
  PYTHONPATH=<ik_llama.cpp>/gguf-py /usr/bin/python3 make_gemma3_mmproj.py <out_dir> [<hf_dir>]

Writes into <out_dir>: gemma3-tiny-mmproj.gguf, square.png, wide.png, tall.jpg, small.webp, rgba.png,
gray.png; into <hf_dir> (default <out_dir>; scratch): hf_preproc.f32 + hf_preproc.json (transformers'
Gemma3ImageProcessor preprocessing of every image, re-done here with PIL + numpy; ik_vision reads
them and copies them into golden.f32) and <image>.pil.png (PIL's decoded RGB of each image).

Keys and tensor names as ik_llama.cpp's examples/mtmd/clip.cpp reads them for projector type
"gemma3" (clip_model_loader::load_hparams / load_tensors, clip-impl.h macros). The pairing with
../shared/models/arch/gemma3-tiny.gguf: projection 32 -> 64 = the text model's hidden size.
"""
import hashlib
import json
import os
import sys

import numpy as np
from PIL import Image
from gguf import GGUFWriter, GGMLQuantizationType

IMAGE_SIZE = 32
PATCH = 4
MERGE = 2  # clip.vision.projector.scale_factor: avg-pool kernel 2x2 over the 8x8 patch grid
N_EMBD = 32
N_FF = 48  # a multiple of 16: ik's AVX-512 GELU does whole 16-lanes, no fp16-table tail
N_HEAD = 2
N_LAYER = 2
EPS = 1e-6
TEXT_EMBD = 64
SEED = 20261206


def make_weights():
    rng = np.random.default_rng(SEED)
    t = {}  # name -> (numpy array in ggml order reversed, i.e. numpy shape = ne reversed, dtype)

    def mat(name, n_out, n_in):
        t[name] = (rng.normal(0, 1 / np.sqrt(n_in), size=(n_out, n_in)).astype(np.float16), "f16")

    def vec(name, n, kind):
        if kind == "norm":
            v = rng.uniform(0.8, 1.2, size=n)
        else:
            v = rng.normal(0, 0.05, size=n)
        t[name] = (v.astype(np.float32), "f32")

    n_patches = (IMAGE_SIZE // PATCH) ** 2
    # conv kernel: ggml ne [PATCH, PATCH, 3, N_EMBD] = numpy (N_EMBD, 3, PATCH, PATCH)
    fan_in = 3 * PATCH * PATCH
    t["v.patch_embd.weight"] = (rng.normal(0, 1 / np.sqrt(fan_in), size=(N_EMBD, 3, PATCH, PATCH)).astype(np.float16), "f16")
    vec("v.patch_embd.bias", N_EMBD, "bias")
    # ggml ne [N_EMBD, n_patches] = numpy (n_patches, N_EMBD)
    t["v.position_embd.weight"] = (rng.normal(0, 0.3, size=(n_patches, N_EMBD)).astype(np.float32), "f32")
    for il in range(N_LAYER):
        p = f"v.blk.{il}."
        vec(p + "ln1.weight", N_EMBD, "norm")
        vec(p + "ln1.bias", N_EMBD, "bias")
        for w in ("attn_q", "attn_k", "attn_v", "attn_out"):
            mat(p + w + ".weight", N_EMBD, N_EMBD)
            vec(p + w + ".bias", N_EMBD, "bias")
        vec(p + "ln2.weight", N_EMBD, "norm")
        vec(p + "ln2.bias", N_EMBD, "bias")
        mat(p + "ffn_up.weight", N_FF, N_EMBD)      # ggml ne [32, 48]: 32 -> 48 (HF fc1)
        vec(p + "ffn_up.bias", N_FF, "bias")
        mat(p + "ffn_down.weight", N_EMBD, N_FF)    # ggml ne [48, 32]: 48 -> 32 (HF fc2)
        vec(p + "ffn_down.bias", N_EMBD, "bias")
    vec("v.post_ln.weight", N_EMBD, "norm")
    vec("v.post_ln.bias", N_EMBD, "bias")
    # ggml ne [TEXT_EMBD, N_EMBD] = numpy (N_EMBD, TEXT_EMBD), as HF's mm_input_projection_weight (vision, text)
    t["mm.input_projection.weight"] = (rng.normal(0, 1 / np.sqrt(N_EMBD), size=(N_EMBD, TEXT_EMBD)).astype(np.float16), "f16")
    # stored as the converter stores it: HF's Gemma3RMSNorm weight + 1 (so ik multiplies by it directly)
    vec("mm.soft_emb_norm.weight", N_EMBD, "norm")
    return t


def write_gguf(path):
    w = GGUFWriter(path, "clip")
    w.add_string("general.name", "gemma3-tiny-mmproj")
    w.add_uint32("general.file_type", 1)
    w.add_bool("clip.has_vision_encoder", True)
    w.add_string("clip.projector_type", "gemma3")
    w.add_bool("clip.use_gelu", True)
    w.add_uint32("clip.vision.image_size", IMAGE_SIZE)
    w.add_uint32("clip.vision.patch_size", PATCH)
    w.add_uint32("clip.vision.embedding_length", N_EMBD)
    w.add_uint32("clip.vision.feed_forward_length", N_FF)
    w.add_uint32("clip.vision.block_count", N_LAYER)
    w.add_uint32("clip.vision.attention.head_count", N_HEAD)
    w.add_float32("clip.vision.attention.layer_norm_epsilon", EPS)
    w.add_uint32("clip.vision.projection_dim", TEXT_EMBD)
    w.add_uint32("clip.vision.projector.scale_factor", MERGE)
    w.add_array("clip.vision.image_mean", [0.5, 0.5, 0.5])
    w.add_array("clip.vision.image_std", [0.5, 0.5, 0.5])
    for name, (arr, kind) in make_weights().items():
        w.add_tensor(name, arr, raw_dtype=GGMLQuantizationType.F16 if kind == "f16" else GGMLQuantizationType.F32)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def make_images(out):
    def pattern(w, h, c):
        y, x = np.mgrid[0:h, 0:w]
        r = (x * 255 // max(w - 1, 1))
        g = (y * 255 // max(h - 1, 1))
        b = ((x * 7 + y * 13) * 37) % 256
        chans = [r, g, b]
        if c == 4:
            chans.append((((x // 3) + (y // 3)) % 4) * 85)  # alpha 0, 85, 170, 255
        return np.stack(chans, axis=-1).astype(np.uint8)

    sq = pattern(32, 32, 3)
    sq[8:16, 8:24] = [250, 30, 60]  # a red bar
    sq[20:28, 4:12] = [20, 200, 220]  # a cyan block
    Image.fromarray(sq, "RGB").save(os.path.join(out, "square.png"))
    Image.fromarray(pattern(45, 29, 3), "RGB").save(os.path.join(out, "wide.png"))
    Image.fromarray(pattern(20, 50, 3), "RGB").save(os.path.join(out, "tall.jpg"), quality=90)
    Image.fromarray(pattern(17, 17, 3), "RGB").save(os.path.join(out, "small.webp"), lossless=True)
    Image.fromarray(pattern(24, 24, 4), "RGBA").save(os.path.join(out, "rgba.png"))
    y, x = np.mgrid[0:40, 0:16]
    gray = ((x * 16 + y * 6 + (x * y) % 7 * 9) % 256).astype(np.uint8)
    Image.fromarray(gray, "L").save(os.path.join(out, "gray.png"))


IMAGES = ["square.png", "wide.png", "tall.jpg", "small.webp", "rgba.png", "gray.png"]


def hf_preprocess(out, hf_dir):
    """transformers Gemma3ImageProcessor, default settings, size -> IMAGE_SIZE:
    convert_rgb (PIL .convert("RGB"): alpha is DROPPED, not composited), resize to (size, size) with
    PIL BILINEAR (stretch, no aspect keeping, no padding), rescale 1/255, normalize (x - 0.5) / 0.5.
    Output layout here: HWC interleaved RGB, row-major (as clip_image_f32 stores it)."""
    meta, blobs = [], []
    for name in IMAGES:
        im = Image.open(os.path.join(out, name))
        mode = im.mode
        rgb = im.convert("RGB")
        pil_sha = hashlib.sha256(rgb.tobytes()).hexdigest()
        rgb.save(os.path.join(hf_dir, name + ".pil.png"))  # PIL's decoded RGB, for comparing decoders
        res = rgb.resize((IMAGE_SIZE, IMAGE_SIZE), resample=Image.BILINEAR)
        # transformers image_transforms.rescale: uint8 -> float64 * (1/255) -> float32;
        # normalize: (x - mean) / std with mean/std as float32 arrays
        a = (np.asarray(res).astype(np.float64) * (1 / 255)).astype(np.float32)
        a = ((a - np.float32(0.5)) / np.float32(0.5)).astype(np.float32)
        meta.append({"image": name, "pil_mode": mode, "pil_rgb_sha256": pil_sha, "nx": IMAGE_SIZE, "ny": IMAGE_SIZE,
                     "offset": sum(b.size for b in blobs)})
        blobs.append(a.reshape(-1))
    np.concatenate(blobs).astype("<f4").tofile(os.path.join(hf_dir, "hf_preproc.f32"))
    with open(os.path.join(hf_dir, "hf_preproc.json"), "w") as f:
        json.dump(meta, f, indent=1)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    hf_dir = sys.argv[2] if len(sys.argv) > 2 else out
    os.makedirs(out, exist_ok=True)
    os.makedirs(hf_dir, exist_ok=True)
    write_gguf(os.path.join(out, "gemma3-tiny-mmproj.gguf"))
    make_images(out)
    hf_preprocess(out, hf_dir)


if __name__ == "__main__":
    main()
