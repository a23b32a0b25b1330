"""MkDocs hook: the docstrings are written for Sphinx-style readers (``:class:`Name```);
on the API pages such a role would show as literal text before the name, so it is
dropped and the name keeps its code formatting (as does Sphinx's ``~`` shortening)."""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj|const):(?=<code>)")


def on_page_content(html: str, **_: Any) -> str:
    # ``~pkg.Name`` (Sphinx: show the last part) shows as written; drop the tilde
    return _ROLE.sub("", html).replace("<code>~", "<code>")
