"""The ``rgb_array`` render mode: a picture of one view of the table, drawn with Pillow.

The picture is drawn from the same text that ``render_mode="ansi"`` gives for that view
(the AEC and parallel envs: the spectator's table; the single-agent env and its gym ids:
the seat's own ``Engine.view``), so it shows exactly what that text shows and nothing a
seat may not see. Every picture of an env has the same size (WIDTH x HEIGHT, a multiple of
16 so that video encoders take it unscaled): long lines wrap, and lines past the last row
end in "…". Dark text on a light table, so it reads without colour.
"""

from __future__ import annotations

import textwrap
from functools import lru_cache

import numpy as np

WIDTH, HEIGHT = 832, 448
MARGIN, FONT_SIZE, LINE_H = 12, 14, 18
COLUMNS = 96
ROWS = (HEIGHT - 2 * MARGIN) // LINE_H - 1  # one row is the title
MONO = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"


@lru_cache(maxsize=1)
def _font():
    from PIL import ImageFont

    try:
        return ImageFont.truetype(MONO, FONT_SIZE)
    except OSError:  # no DejaVu on this system: Pillow's own font
        return ImageFont.load_default(FONT_SIZE)


def lines_of(text: str) -> list[str]:
    """The text's lines as drawn: wrapped at COLUMNS, at most ROWS of them."""
    out: list[str] = []
    for line in text.splitlines():
        out.extend(textwrap.wrap(line, COLUMNS, subsequent_indent="  ", drop_whitespace=False) or [""])
    if len(out) > ROWS:
        out = out[:ROWS - 1] + [out[ROWS - 1][:COLUMNS - 1] + "…"]
    return out


def picture(text: str, title: str) -> np.ndarray:
    """A WIDTH x HEIGHT RGB picture (uint8, shape (HEIGHT, WIDTH, 3)) of `text` under `title`."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (WIDTH, HEIGHT), (236, 242, 230))
    draw = ImageDraw.Draw(img)
    font = _font()
    draw.rectangle([0, 0, WIDTH - 1, MARGIN + LINE_H], fill=(40, 70, 50))
    draw.text((MARGIN, MARGIN // 2), title[:COLUMNS], fill=(255, 255, 255), font=font)
    y = MARGIN + LINE_H + 6
    for line in lines_of(text):
        draw.text((MARGIN, y), line, fill=(20, 20, 20), font=font)
        y += LINE_H
    draw.rectangle([0, 0, WIDTH - 1, HEIGHT - 1], outline=(40, 70, 50), width=2)
    return np.asarray(img, dtype=np.uint8).copy()
