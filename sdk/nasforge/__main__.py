"""``python -m nasforge`` is the ``nasforge`` command."""

from nasforge.cli import main

main()
