"""Produced files appear only when complete (issue 8, defect 6)."""

from __future__ import annotations

import os
import stat

import pytest

from nasforge.kernel.files import atomic_path, atomic_write_text


def test_complete_write_replaces_target_with_shareable_mode(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    atomic_write_text(target, "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(os.stat(target).st_mode) & 0o044 == 0o044  # group/other can read
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_failed_write_leaves_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"finished")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("parity check refused")
    assert target.read_bytes() == b"finished"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin"]


def test_failed_first_write_leaves_nothing(tmp_path):
    target = tmp_path / "model.onnx"
    with pytest.raises(OSError), atomic_path(target) as tmp:
        tmp.write_bytes(b"x")
        raise OSError(28, "No space left on device")
    assert list(tmp_path.iterdir()) == []
