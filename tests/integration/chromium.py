"""Pages rendered as a person sees them: Debian's Chromium, headless,
takes a screenshot of a URL or dumps its DOM after its scripts ran, and
a screenshot's colours are counted from the PNG itself (zlib and struct:
no imaging library to install).

Chosen: one chromium process per picture, its flags those that keep it
off the network (this machine has none) and a profile directory of its
own; --virtual-time-budget lets the page's scripts and timers run before
the picture is taken, without a fixed sleep.  On a busy machine a page
can still be dumped before its last frame (1 run in 4 of speedscope's
sandwich table, beside other tests): a DOM that lacks what the caller
waits for is read again with a larger budget.  Rejected: a WebDriver
session (chromedriver and a client library for three pictures)."""
import os
import shutil
import struct
import subprocess
import zlib

CHROMIUM = shutil.which("chromium")
WINDOW = (1280, 900)
# Off the network (Chromium's background connections fail here, many at
# a time), software WebGL (speedscope draws with it), no sandbox (root).
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu",
         "--enable-unsafe-swiftshader", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--window-size={WINDOW[0]},{WINDOW[1]}"]
BUDGETS_MS = (5000, 20000, 60000)


class Chromium:
    """Headless Chromium with a profile directory under workdir."""

    def __init__(self, workdir, timeout):
        self.workdir = workdir
        self.timeout = timeout
        self.runs = 0

    def _run(self, *args, budget_ms=BUDGETS_MS[0]):
        self.runs += 1
        profile = os.path.join(self.workdir, f"chromium-profile-{self.runs}")
        proc = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}",
                               f"--virtual-time-budget={budget_ms}", *args],
                              capture_output=True, timeout=self.timeout)
        if proc.returncode != 0:
            raise AssertionError(f"chromium {' '.join(args)} exited "
                                 f"{proc.returncode}: {proc.stderr.decode()[-2000:]}")
        return proc.stdout.decode(errors="replace")

    def screenshot(self, url, path):
        """The page at url, as a WINDOW-sized PNG at path."""
        self._run(f"--screenshot={path}", url)
        if not os.path.exists(path):
            raise AssertionError(f"chromium wrote no screenshot of {url}")
        return path

    def dom(self, url, ready=lambda dom: True):
        """The page's DOM, serialized once its scripts ran: the first
        that ready(dom) accepts, or the last."""
        for budget in BUDGETS_MS:
            dom = self._run("--dump-dom", url, budget_ms=budget)
            if ready(dom):
                break
        return dom


def _chunks(data):
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos = 8
    while pos + 8 <= len(data):
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        yield kind, data[pos + 8:pos + 8 + size]
        pos += 12 + size


def _add_bytes(a, b):
    """a + b bytewise, modulo 256 (PNG's Up filter), on whole rows as
    integers: the low seven bits add without crossing into the next
    byte, the top bit is their xor."""
    n = len(a)
    x, y = int.from_bytes(a, "big"), int.from_bytes(b, "big")
    low = int.from_bytes(b"\x7f" * n, "big")
    s = ((x & low) + (y & low)) ^ ((x ^ y) & ~low & ((1 << (8 * n)) - 1))
    return s.to_bytes(n, "big")


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def _unfilter(kind, row, prev, bpp):
    if kind == 0:
        return row
    if kind == 2:
        return _add_bytes(row, prev)
    out = bytearray(row)
    for i in range(len(out)):
        left = out[i - bpp] if i >= bpp else 0
        if kind == 1:
            out[i] = (out[i] + left) & 0xFF
        elif kind == 3:
            out[i] = (out[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif kind == 4:
            up_left = prev[i - bpp] if i >= bpp else 0
            out[i] = (out[i] + _paeth(left, prev[i], up_left)) & 0xFF
        else:
            raise ValueError(f"PNG filter {kind}")
    return bytes(out)


def png_pixels(path, skip_top=0):
    """(width, height, {(r, g, b): pixels}) of an 8-bit RGB or RGBA,
    non-interlaced PNG (what Chromium writes), its first skip_top rows
    left out of the counts."""
    with open(path, "rb") as f:
        data = f.read()
    idat = b""
    for kind, body in _chunks(data):
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(
                ">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError(f"{path}: depth {depth}, colour type {ctype}, "
                         f"interlace {interlace}: not read here")
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    counts, prev = {}, bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        row = _unfilter(raw[start], raw[start + 1:start + 1 + stride], prev, bpp)
        for x in range(0, stride if y >= skip_top else 0, bpp):
            pixel = row[x:x + 3]
            counts[pixel] = counts.get(pixel, 0) + 1
        prev = row
    return width, height, {tuple(p): n for p, n in counts.items()}


def colour_areas(path, skip_top=0, min_pixels=200, min_chroma=24):
    """The colours (not greys: channels at least min_chroma apart) that
    cover min_pixels or more of the screenshot below its first skip_top
    rows (a page's toolbar): a flame graph's boxes, not text's
    anti-aliasing."""
    _, _, counts = png_pixels(path, skip_top)
    return {c: n for c, n in counts.items()
            if n >= min_pixels and max(c) - min(c) >= min_chroma}
