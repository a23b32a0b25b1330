"""``python -m nasforge_darts ...`` (see :mod:`nasforge_darts.cli`)."""

from nasforge_darts.cli import main

main()
