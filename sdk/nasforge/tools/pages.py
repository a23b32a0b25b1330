"""One static HTML page: the skeleton of every page nasforge writes (the run report,
a plugin's page such as insight's).

A page is mailed, archived or opened from a CI artifact as it is: no server and no
network (no CDN, no font or script fetched), every figure embedded as PNG data. What the
pages share lives here once: the document and its head, the base style, embedded
figures and escaping; each page adds its own style and script.
"""

from __future__ import annotations

import base64
import html

#: The style every page starts from; a page appends its own rules.
BASE_STYLE = """
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 17px; margin-top: 28px; }
p.lead { color: #555; margin-top: 0; }
code { font-size: 12px; word-break: break-all; }
img.figure { max-width: 100%; border: 1px solid #ddd; }
"""


def escape(text: object) -> str:
    """``text`` as HTML text (markup shown, never parsed)."""
    return html.escape(str(text))


def embedded_png(png: bytes, alt: str) -> str:
    """An ``img.figure`` whose picture travels in the page itself."""
    data = base64.b64encode(png).decode("ascii")
    return f'<img class="figure" alt="{escape(alt)}" src="data:image/png;base64,{data}">'


def page(title: str, body: str, *, style: str = "", script: str = "") -> str:
    """The whole document: ``body`` under the base style plus ``style``, then ``script``."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{BASE_STYLE}{style}</style></head><body>"
        f"{body}<script>{script}</script></body></html>\n"
    )
