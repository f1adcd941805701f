#!/usr/bin/env python3
"""Writes CMYK JPEG test pictures and Pillow's RGB reading of each.

A 40x24 CMYK picture (smooth ramps in C, M, Y, K and a few flat patches) saved by Pillow as a
JPEG (quality 95): cmyk_adobe.jpg carries the Adobe APP14 marker Pillow writes (its CMYK stored
inverted, as Photoshop stores it); cmyk_plain.jpg is the same file with the APP14 segment removed
(the same inks; Pillow reads every CMYK JPEG as stored inverted, rawmode "CMYK;I", marker or not).
golden.json lists each file with its size; golden.rgb holds the pixels of
Image.open(file).convert("RGB") (8-bit RGB, row-major), file after file in that order.
Run in this folder: /usr/bin/python3 make_cmyk_images.py  (Pillow 9.4.0).
"""
import json

from PIL import Image

W, H = 40, 24
img = Image.new("CMYK", (W, H))
for y in range(H):
    for x in range(W):
        c = (x * 255) // (W - 1)
        m = (y * 255) // (H - 1)
        yy = ((x + y) * 255) // (W + H - 2)
        k = 0 if x < W // 2 else (y * 200) // (H - 1)
        if 4 <= x < 10 and 4 <= y < 10:
            c, m, yy, k = 0, 255, 255, 0  # red ink
        img.putpixel((x, y), (c, m, yy, k))
img.save("cmyk_adobe.jpg", "JPEG", quality=95)


def strip_app14(data):
    """The JPEG without its APP14 (Adobe) segment."""
    out, i = bytearray(data[:2]), 2
    while i < len(data):
        marker = data[i + 1]
        if marker == 0xDA:  # start of scan: the rest is entropy-coded data
            out += data[i:]
            break
        length = int.from_bytes(data[i + 2:i + 4], "big")
        if marker != 0xEE:
            out += data[i:i + 2 + length]
        i += 2 + length
    return bytes(out)


with open("cmyk_adobe.jpg", "rb") as f:
    adobe = f.read()
with open("cmyk_plain.jpg", "wb") as f:
    f.write(strip_app14(adobe))

entries, raw = [], b""
for name in ("cmyk_adobe.jpg", "cmyk_plain.jpg"):
    opened = Image.open(name)
    assert opened.mode == "CMYK", opened.mode
    rgb = opened.convert("RGB")
    entries.append({"file": name, "width": rgb.width, "height": rgb.height, "offset": len(raw),
                    "adobe": "adobe" in opened.info})
    raw += rgb.tobytes()
with open("golden.json", "w") as f:
    json.dump({"images": entries, "pillow": Image.__version__}, f, indent=1)
with open("golden.rgb", "wb") as f:
    f.write(raw)
