"""How the fuzz tests run a case and what they assert, in one place.

Settings are deterministic (``derandomize=True``, no example database) so that CI and a
laptop try the same inputs, and modest (``max_examples`` per test) so that the suite
stays under a minute. Tests that drive the CLI do not shrink: an example costs tens of
milliseconds and the failure message already carries a reproducer; the pure-parser
tests do shrink, because there it is cheap and yields the minimal input.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings

from fuzz.cases import Case, execute
from fuzz.harness import describe


def fuzz_settings(max_examples: int, *, shrink: bool = False) -> settings:
    phases = [Phase.explicit, Phase.generate] + ([Phase.shrink] if shrink else [])
    return settings(
        max_examples=max_examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=phases,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )


def assert_case_ok(case: Case, *, timeout: float = 60.0) -> None:
    """Run ``case`` in a fresh directory; fail with the reproducer and every violation."""
    with tempfile.TemporaryDirectory(prefix="nasforge-fuzz-") as d:
        outcome, found = execute(case, Path(d), timeout=timeout)
    if found:
        message = f"{case.reproducer()}\n{describe(found)}\nstderr: {outcome.err.strip()[:500]}"
        if outcome.tb:
            message += f"\n{outcome.tb[-3000:]}"
        raise AssertionError(message)
