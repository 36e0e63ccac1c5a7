"""The ``rgb_array`` render mode: a picture of one view of the table, drawn with Pillow.

`table` draws the seats, one row each, with every hand as cards: face up for the seat whose
view it is (every hand for the spectator: the AEC and parallel envs), backs for the others,
as many as they hold (a public count). The seat's score and, for the viewer, a highlight
band mark each row. Below the rows is the text that ``render_mode="ansi"`` gives for the
same view (the single-agent env and its gym ids: the seat's own ``Engine.view``; the
spectator: ``Engine.render``), with the piles, offers, discards and the running total. So a
picture shows nothing that text does not, and nothing a seat may not see.

Every picture of an env has the same size, set by the env's ``render_layout``:
"landscape" (the default, 832 x 448: a row per seat, its label beside its cards) or
"portrait" (448 x 832, for phone screens: each seat's label above its cards, fewer columns
of text). Both sides are multiples of 16, so that video encoders take the picture unscaled.
Long lines wrap, lines past the last row end in "…", and a hand too long for its row
overlaps its cards. Cards name their value in dark text (suited
ones also carry the suit's letter), so the picture reads without colour.
"""

from __future__ import annotations

import textwrap
from functools import lru_cache

import numpy as np

MARGIN, FONT_SIZE, LINE_H = 12, 14, 18
CHAR_W = 8.43  # DejaVu Sans Mono's advance at FONT_SIZE
LAYOUTS = {"landscape": (832, 448), "portrait": (448, 832)}  # (width, height)
WIDTH, HEIGHT = LAYOUTS["landscape"]


def columns(width: int) -> int:
    """Characters of text in a line of a picture `width` wide."""
    return int((width - 2 * MARGIN) / CHAR_W)


def check_layout(layout: str) -> str:
    if layout not in LAYOUTS:
        raise ValueError(f"render_layout must be one of {sorted(LAYOUTS)}, got {layout!r}")
    return layout


COLUMNS = columns(WIDTH)
ROWS = (HEIGHT - 2 * MARGIN) // LINE_H - 1  # one row is the title
MONO = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"


@lru_cache(maxsize=1)
def _font():
    from PIL import ImageFont

    try:
        return ImageFont.truetype(MONO, FONT_SIZE)
    except OSError:  # no DejaVu on this system: Pillow's own font
        return ImageFont.load_default(FONT_SIZE)


def lines_of(text: str, width: int = COLUMNS, rows: int = ROWS) -> list[str]:
    """The text's lines as drawn: wrapped at `width` characters, at most `rows` of them."""
    out: list[str] = []
    for line in text.splitlines():
        out.extend(textwrap.wrap(line, width, subsequent_indent="  ", drop_whitespace=False) or [""])
    if len(out) > rows:
        out = out[:rows - 1] + [out[rows - 1][:width - 1] + "…"]
    return out


def _canvas(title: str, layout: str):
    from PIL import Image, ImageDraw

    width, height = LAYOUTS[check_layout(layout)]
    img = Image.new("RGB", (width, height), (236, 242, 230))
    draw = ImageDraw.Draw(img)
    draw.rectangle([0, 0, width - 1, MARGIN + LINE_H], fill=(40, 70, 50))
    draw.text((MARGIN, MARGIN // 2), title[:columns(width)], fill=(255, 255, 255), font=_font())
    return img, draw


def _text(img, draw, text: str, y: int) -> np.ndarray:
    """`text` from `y` down to the foot of the picture, framed; the picture as an array."""
    width, height = img.size
    for line in lines_of(text, columns(width), max(1, (height - MARGIN - y) // LINE_H)):
        draw.text((MARGIN, y), line, fill=(20, 20, 20), font=_font())
        y += LINE_H
    draw.rectangle([0, 0, width - 1, height - 1], outline=(40, 70, 50), width=2)
    return np.asarray(img, dtype=np.uint8).copy()


def picture(text: str, title: str, layout: str = "landscape") -> np.ndarray:
    """An RGB picture (uint8, shape (height, width, 3) of `layout`) of `text` under `title`."""
    img, draw = _canvas(title, layout)
    return _text(img, draw, text, MARGIN + LINE_H + 6)


# -- the table ------------------------------------------------------------------------------
SUITS = {"Red": (198, 40, 40), "Blue": (21, 101, 192), "Green": (46, 125, 50), "Yellow": (150, 110, 0)}
LABEL_W = 150  # the seat labels' column
BACK = (52, 78, 130)


@lru_cache(maxsize=4)
def _bold(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf", size)
    except OSError:
        return ImageFont.load_default(size)


def card_face(name: str) -> tuple[str, str, tuple[int, int, int], bool]:
    """How a card name ("Red 3", "-10", "W", "double", "Autumn") is drawn: its value, its suit's
    letter ("" for none), the ink, and whether it is a dark (action or special) card."""
    words = name.split(" ")
    if len(words) == 2 and words[0] in SUITS:
        return words[1], words[0][0], SUITS[words[0]], False
    if name.lstrip("-").isdigit():
        return name, "", (20, 20, 20), False
    return name, "", (255, 255, 255), True


def _value_font(value: str, h: int):
    return _bold(max(10, h // 3) if len(value) < 4 else max(9, h // 4))


def _card_width(h: int, name: str | None) -> int:
    """A card's width at height `h`: wide enough for its value."""
    if name is None:
        return int(h * 0.7)
    value = card_face(name)[0]
    return max(int(h * 0.7), int(_value_font(value, h).getlength(value)) + 8)


def _card(draw, x: int, y: int, h: int, name: str | None) -> None:
    """One card at (x, y), `h` high: its face, or its back for None."""
    w = _card_width(h, name)
    if name is None:
        draw.rounded_rectangle([x, y, x + w, y + h], radius=4, fill=BACK, outline=(230, 230, 240))
        draw.rounded_rectangle([x + 4, y + 4, x + w - 4, y + h - 4], radius=2, outline=(150, 170, 210))
        return
    value, suit, ink, dark = card_face(name)
    font = _value_font(value, h)
    text_w = int(draw.textlength(value, font=font))
    draw.rounded_rectangle([x, y, x + w, y + h], radius=4, fill=(45, 51, 59) if dark else (255, 255, 255),
                           outline=ink if suit else (120, 130, 140), width=2 if suit else 1)
    draw.text((x + (w - text_w) // 2, y + h // 2 - font.size // 2 - 1), value, fill=ink, font=font)
    if suit:
        draw.text((x + 3, y + 1), suit, fill=ink, font=_bold(max(8, h // 5)))


def _hand(draw, x: int, y: int, h: int, cards: list, right: int) -> None:
    """A row of cards from x, overlapped as much as needed to end before `right`."""
    if not cards:
        draw.text((x, y + h // 2 - 8), "no cards", fill=(93, 104, 117), font=_font())
        return
    widths = [_card_width(h, c) for c in cards]
    gap = 4
    room = right - x - widths[-1]
    step = [w + gap for w in widths[:-1]]
    if sum(step) > room:  # overlap: every card keeps the same share of the room
        step = [room / len(step)] * len(step)
    at = float(x)
    for c, s in zip(cards, step + [0]):
        _card(draw, int(at), y, h, c)
        at += s


def seat_rows(num_players: int, layout: str = "landscape") -> tuple[int, int]:
    """(top, height) of the seats' rows: seat s's row starts at top + s * height."""
    width, height = LAYOUTS[layout]
    if width > height:
        return MARGIN + LINE_H + 6, max(26, min(50, int(height * 0.5) // num_players))
    return MARGIN + LINE_H + 6, LINE_H + max(30, min(60, int(height * 0.45) // num_players - LINE_H))


def table(engine, viewer: int | None, title: str, layout: str = "landscape") -> np.ndarray:
    """An RGB picture (uint8, shape (height, width, 3) of `layout`) of the table as `viewer`
    sees it (None: the spectator, who sees every hand)."""
    img, draw = _canvas(title, layout)
    width, height = img.size
    n = engine.num_players
    top, row_h = seat_rows(n, layout)
    beside = width > height  # landscape: the label beside the cards; portrait: above them
    for s in range(n):
        y = top + s * row_h
        if s == viewer:
            draw.rectangle([4, y - 2, width - 5, y + row_h - 3], fill=(255, 244, 204))
        seen = viewer is None or viewer == s
        cards = engine.hand_cards(s)  # its length is public; its names only where `seen`
        cards = cards if seen else [None] * len(cards)
        label = f"player_{s}" + (" (you)" if s == viewer else "")
        score = f"score {engine.scores[s]}"
        draw.text((MARGIN, y + 2), label, fill=(20, 20, 20), font=_bold(13))
        if beside:
            draw.text((MARGIN, y + 18), score, fill=(70, 80, 90), font=_font())
            _hand(draw, LABEL_W, y + 2, row_h - 8, cards, width - MARGIN)
        else:
            draw.text((MARGIN + int(_bold(13).getlength(label)) + 12, y + 2), score, fill=(70, 80, 90), font=_font())
            _hand(draw, MARGIN, y + LINE_H + 2, row_h - LINE_H - 8, cards, width - MARGIN)
    y = top + n * row_h + 2
    draw.line([MARGIN, y, width - MARGIN, y], fill=(160, 175, 160), width=1)
    return _text(img, draw, engine.render() if viewer is None else engine.view(viewer), y + 6)
