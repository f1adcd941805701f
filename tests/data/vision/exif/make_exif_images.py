#!/usr/bin/env python3
"""Writes the EXIF-orientation test pictures and Pillow's upright reading of each.

A 48x32 picture of four flat quadrants (red, green, blue, white) saved with EXIF Orientation
1..8 as JPEG (quality 95), and with 6 as PNG (eXIf chunk) and 8 as WebP (lossless, EXIF chunk).
golden.json lists each file with the size Pillow's ImageOps.exif_transpose gives it;
golden.rgb holds those upright pixels (8-bit RGB, row-major), file after file in that order.
Run in this folder: /usr/bin/python3 make_exif_images.py  (Pillow 9.4.0).
"""
import json

from PIL import Image, ImageOps

W, H = 48, 32
base = Image.new("RGB", (W, H))
for y in range(H):
    for x in range(W):
        base.putpixel((x, y), [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)][(y >= H // 2) * 2 + (x >= W // 2)])

files = []
for o in range(1, 9):
    files.append((f"orient{o}.jpg", o, "JPEG", {"quality": 95}))
files.append(("orient6.png", 6, "PNG", {}))
files.append(("orient8.webp", 8, "WEBP", {"lossless": True}))

entries, raw = [], b""
for name, o, fmt, opts in files:
    exif = Image.Exif()
    exif[0x0112] = o
    base.save(name, fmt, exif=exif.tobytes(), **opts)
    upright = ImageOps.exif_transpose(Image.open(name)).convert("RGB")
    entries.append({"file": name, "orientation": o, "width": upright.width, "height": upright.height,
                    "offset": len(raw)})
    raw += upright.tobytes()
with open("golden.rgb", "wb") as f:
    f.write(raw)
with open("golden.json", "w") as f:
    json.dump({"pillow": Image.__version__, "images": entries}, f, indent=1)
