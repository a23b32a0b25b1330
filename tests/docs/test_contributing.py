"""CONTRIBUTING.md's worked examples are code that runs: every Python block of the guide,
in order, is this module's code, so the conformance kits its examples subclass
(``TestMlpSpace``, ``TestFirstImprovement``, ...) are collected and run here, and a guide
whose example no longer works fails the suite."""

from __future__ import annotations

import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "CONTRIBUTING.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", GUIDE.read_text(encoding="utf-8"), flags=re.S | re.M)

exec(compile("\n".join(BLOCKS), str(GUIDE), "exec"))  # noqa: S102 - the guide's own examples


def test_the_guide_has_an_example_of_every_contract() -> None:
    kits = {name for name in globals() if name.startswith("Test")}
    assert {"TestMlpSpace", "TestFirstImprovement", "TestOutputSpread", "TestParameterCount"} <= kits
    assert "TestRandomPaths" in kits
    assert len(GUIDE.read_text(encoding="utf-8").splitlines()) <= 250, "the guide stays short"
