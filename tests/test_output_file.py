"""Writing output files never destroys what the path names: symlinks, devices, FIFOs, modes."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import numpy as np
import pytest

from xrelay.output_file import open_output, write_output
from xrelay.tools import xrelay_opt, xrelay_run

MODEL = """\
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
"""


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_new_file_gets_the_umask_mode(tmp_path: Path):
    old = os.umask(0o027)
    try:
        write_output(tmp_path / "new.txt", "hello\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "new.txt").st_mode) == 0o640
    assert (tmp_path / "new.txt").read_text() == "hello\n"


def test_replaced_file_keeps_its_mode(tmp_path: Path, umask_022):
    path = tmp_path / "old.txt"
    path.write_text("old contents\n")
    os.chmod(path, 0o604)
    write_output(path, b"new")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o604
    assert path.read_bytes() == b"new"


def test_failure_leaves_the_old_file_and_no_temporary(tmp_path: Path):
    path = tmp_path / "out.txt"
    path.write_text("old\n")
    with pytest.raises(RuntimeError):
        with open_output(path) as f:
            f.write("half of the new")
            raise RuntimeError("writer failed")
    assert path.read_text() == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["out.txt"]


def test_failure_on_a_new_path_leaves_nothing(tmp_path: Path):
    with pytest.raises(RuntimeError):
        with open_output(tmp_path / "new.bin", "wb") as f:
            f.write(b"partial")
            raise RuntimeError
    assert os.listdir(tmp_path) == []


def test_symlink_is_written_through(tmp_path: Path, umask_022):
    target = tmp_path / "target.txt"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_output(link, "new\n")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640


def test_dangling_symlink_creates_its_target(tmp_path: Path):
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "missing.txt")
    write_output(link, "made\n")
    assert link.is_symlink()
    assert (tmp_path / "missing.txt").read_text() == "made\n"


def test_fifo_is_written_into_not_replaced(tmp_path: Path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    write_output(fifo, b"through the pipe")
    reader.join(timeout=30)
    assert received == [b"through the pipe"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs root")
def test_character_device_is_written_into_not_replaced(tmp_path: Path):
    # A private copy of /dev/null's device number (1, 3): the real /dev/null is never put at risk.
    device = tmp_path / "null"
    os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    write_output(device, "discarded\n")
    assert stat.S_ISCHR(os.stat(device).st_mode)
    assert os.listdir(tmp_path) == ["null"]


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs root")
def test_xrelay_opt_output_to_a_device_keeps_the_device(tmp_path: Path, capsys):
    (tmp_path / "in.mlir").write_text(MODEL)
    device = tmp_path / "null"
    os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    assert xrelay_opt.main([str(tmp_path / "in.mlir"), "-o", str(device)]) == 0
    assert stat.S_ISCHR(os.stat(device).st_mode)


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write a read-only file")
def test_read_only_file_is_not_replaced(tmp_path: Path):
    path = tmp_path / "ro.txt"
    path.write_text("keep\n")
    os.chmod(path, 0o444)
    with pytest.raises(PermissionError):
        write_output(path, "new\n")
    assert path.read_text() == "keep\n"


def test_xrelay_opt_output_through_a_symlink(tmp_path: Path, capsys, umask_022):
    (tmp_path / "in.mlir").write_text(MODEL)
    target = tmp_path / "out.mlir"
    target.write_text("")
    os.chmod(target, 0o600)
    link = tmp_path / "link.mlir"
    link.symlink_to(target)
    assert xrelay_opt.main([str(tmp_path / "in.mlir"), "-o", str(link)]) == 0
    assert link.is_symlink()
    assert "nn.relu" in target.read_text()
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600


def test_xrelay_opt_new_output_gets_the_umask_mode(tmp_path: Path, capsys, umask_022):
    (tmp_path / "in.mlir").write_text(MODEL)
    assert xrelay_opt.main([str(tmp_path / "in.mlir"), "-o", str(tmp_path / "out.mlir")]) == 0
    assert stat.S_IMODE(os.stat(tmp_path / "out.mlir").st_mode) == 0o644


def test_xrelay_run_output_through_a_symlink_keeps_mode(tmp_path: Path, capsys, umask_022):
    (tmp_path / "in.mlir").write_text(MODEL)
    np.save(tmp_path / "x.npy", np.array([-1.0, 2.0], dtype=np.float32))
    target = tmp_path / "result.npy"
    target.write_bytes(b"")
    os.chmod(target, 0o664)
    link = tmp_path / "link.npy"
    link.symlink_to(target)
    argv = [str(tmp_path / "in.mlir"), "--input", f"x={tmp_path / 'x.npy'}", "-o", str(link)]
    assert xrelay_run.main(argv) == 0
    assert link.is_symlink()
    np.testing.assert_array_equal(np.load(target), [0.0, 2.0])
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o664
