"""``python -m nasforge`` is the ``nasforge`` command."""

from nasforge.tools.cli import main

main()
