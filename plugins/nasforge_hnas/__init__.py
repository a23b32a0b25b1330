"""placeholder; filled in by its plugin work."""
