#!/usr/bin/env python3
"""Renders resources/icons/io.github.pagedchat.PagedChat.svg (rsvg-convert, librsvg2-bin) into the
committed Windows and macOS icons: installer/windows/pagedchat.ico and installer/macos/PagedChat.icns.
The .ico holds BMP images below 256 px and a PNG at 256 px (what every Windows tool reads);
the .icns holds PNGs. Run after changing the SVG:  python3 resources/icons/make_platform_icons.py
(Linux PNGs are rendered at build time by installer/Packaging.cmake.)"""
import pathlib
import struct
import subprocess
import tempfile
import zlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
SVG = ROOT / "resources/icons/io.github.pagedchat.PagedChat.svg"


def render(size: int, tmp: pathlib.Path) -> bytes:
    out = tmp / f"{size}.png"
    subprocess.run(["rsvg-convert", "-w", str(size), "-h", str(size), "-o", str(out), str(SVG)], check=True)
    return out.read_bytes()


def png_rgba(png: bytes):
    """Decodes an 8-bit RGBA, non-interlaced PNG (what rsvg-convert writes): (width, height, rows)."""
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        chunk = png[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            assert depth == 8 and color == 6 and interlace == 0, "expected 8-bit RGBA"
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), width * 4, [], bytearray(width * 4)
    for y in range(height):
        ftype, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - 4] if i >= 4 else 0
            b, c = prev[i], prev[i - 4] if i >= 4 else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def ico_bmp(png: bytes) -> bytes:
    """A 32-bit BGRA DIB (bottom-up, height doubled for the AND mask) as .ico entries hold it."""
    w, h, rows = png_rgba(png)
    header = struct.pack("<IiiHHIIiiII", 40, w, 2 * h, 1, 32, 0, 0, 0, 0, 0, 0)
    pixels = b"".join(bytes(v for px in range(w) for v in (r[4 * px + 2], r[4 * px + 1], r[4 * px], r[4 * px + 3]))
                      for r in reversed(rows))
    mask = bytes(((w + 31) // 32) * 4 * h)  # all 0: the alpha channel decides
    return header + pixels + mask


def ico(images: dict) -> bytes:
    sizes = sorted(images)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = 6 + 16 * len(sizes)
    entries, data = b"", b""
    for s in sizes:
        png = images[s] if s >= 256 else ico_bmp(images[s])
        dim = 0 if s >= 256 else s  # 0 means 256
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(png), offset + len(data))
        data += png
    return header + entries + data


def icns(images: dict) -> bytes:
    types = {16: b"icp4", 32: b"icp5", 64: b"icp6", 128: b"ic07", 256: b"ic08", 512: b"ic09", 1024: b"ic10"}
    body = b"".join(t + struct.pack(">I", 8 + len(images[s])) + images[s] for s, t in types.items())
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        win = {s: render(s, tmp) for s in (16, 24, 32, 48, 64, 256)}
        mac = {s: render(s, tmp) for s in (16, 32, 64, 128, 256, 512, 1024)}
    (ROOT / "installer/windows/pagedchat.ico").write_bytes(ico(win))
    (ROOT / "installer/macos/PagedChat.icns").write_bytes(icns(mac))


if __name__ == "__main__":
    main()
