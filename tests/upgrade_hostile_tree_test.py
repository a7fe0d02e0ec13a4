# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""`contrib-mp-upgrade` on the trees nobody cleaned: names, depth, links.

Each test runs the real command as a subprocess on a tree written here, the
way old trees are: file names that are not UTF-8, a vendored tree 1,000
directories deep, a symbolic link given to `--infile --inplace`, a directory
that cannot be listed. Each checks what the user sees: the exit status, no
traceback, the converted file, the report's words, and that nothing is left
beside the output.
"""

import os
import shutil
import subprocess
import sys
import tempfile

from absl.testing import absltest
from absl.testing import parameterized

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_USE = ("import tensorflow as tf\n"
        "manager = tf.contrib.mixed_precision.FixedLossScaleManager(8)\n")
_CONVERTED = ("import tensorflow as tf\nimport contrib_mixed_precision\n"
              "manager = contrib_mixed_precision.FixedLossScaleManager(8)\n")
_LATIN1_NAME = b"caf\xe9.py"  # "café.py" as a latin-1 file system has it.


def _command(cwd, *argv, prefix=()):
  env = dict(os.environ, PYTHONPATH=os.pathsep.join(
      [_REPO] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
  proc = subprocess.run(
      list(prefix) + [sys.executable, "-m", "contrib_mp_upgrade"] +
      list(argv), cwd=cwd, env=env, stdout=subprocess.PIPE,
      stderr=subprocess.PIPE, timeout=600, check=False)
  return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def _write(path, data: bytes):
  # Not os.makedirs, which recurses once per missing level.
  missing, parent = [], os.path.dirname(path)
  while not os.path.isdir(parent):
    missing.append(parent)
    parent = os.path.dirname(parent)
  for directory in reversed(missing):
    os.mkdir(directory)
  with open(path, "wb") as f:
    f.write(data)


def _read(path) -> bytes:
  with open(path, "rb") as f:
    return f.read()


class HostileTreeTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    self.root = tempfile.mkdtemp()
    self.addCleanup(subprocess.run, ["rm", "-rf", self.root])
    self.broot = os.fsencode(self.root)

  def _listing(self, directory):
    return sorted(os.listdir(os.fsencode(directory)))

  @parameterized.named_parameters(("outtree", False), ("inplace", True))
  def test_name_that_is_not_utf8(self, inplace):
    tree = os.path.join(self.broot, b"in")
    _write(os.path.join(tree, _LATIN1_NAME), _USE.encode())
    _write(os.path.join(tree, b"ok.py"), _USE.encode())
    argv = [b"--intree", tree, b"--reportfile",
            os.path.join(self.broot, b"report.txt")]
    argv += [b"--inplace"] if inplace else [
        b"--outtree", os.path.join(self.broot, b"out")]
    status, out, err = _command(self.root, *argv)
    self.assertEqual(status, 0, err)
    self.assertNotIn("Traceback", err + out)
    result = tree if inplace else os.path.join(self.broot, b"out")
    self.assertEqual(_read(os.path.join(result, _LATIN1_NAME)),
                     _CONVERTED.encode())
    self.assertEqual(_read(os.path.join(result, b"ok.py")),
                     _CONVERTED.encode())
    report = _read(os.path.join(self.broot, b"report.txt")).decode("utf-8")
    # Named readably: the odd byte as \xe9, the rest as it is.
    self.assertIn("caf\\xe9.py", report)
    # No staging tree, no temporary copy, beside the output or inside it.
    self.assertEqual(self._listing(self.broot), sorted(
        [b"in", b"report.txt"] + ([] if inplace else [b"out"])))
    self.assertEqual(self._listing(result), [_LATIN1_NAME, b"ok.py"])

  def test_name_that_is_not_utf8_in_a_directory_name(self):
    tree = os.path.join(self.broot, b"in")
    _write(os.path.join(tree, b"mod\xff", b"train.py"), _USE.encode())
    status, out, err = _command(
        self.root, b"--intree", tree, b"--outtree",
        os.path.join(self.broot, b"out"), b"--dry_run")
    self.assertEqual(status, 0, err)
    self.assertNotIn("Traceback", err + out)
    self.assertIn("mod\\xff/train.py", out)  # In the diff and the report.

  def test_a_tree_1000_directories_deep(self):
    deep = [b"d"] * 1000
    tree = os.path.join(self.broot, b"in")
    _write(os.path.join(tree, *deep, b"train.py"), _USE.encode())
    out = os.path.join(self.broot, b"out")
    status, stdout, err = _command(self.root, b"--intree", tree,
                                   b"--outtree", out)
    self.assertEqual(status, 0, err)
    self.assertNotIn("Traceback", err + stdout)
    self.assertEqual(_read(os.path.join(out, *deep, b"train.py")),
                     _CONVERTED.encode())
    self.assertEqual(self._listing(self.broot),
                     [b"contrib_mp_upgrade_report.txt", b"in", b"out"])

  def test_inplace_on_a_symlink_converts_its_target(self):
    target = os.path.join(self.root, "lib", "train.py")
    _write(target, _USE.encode())
    link = os.path.join(self.root, "train.py")
    os.symlink(os.path.join("lib", "train.py"), link)
    status, _, err = _command(self.root, "--infile", "train.py",
                              "--inplace")
    self.assertEqual(status, 0, err)
    self.assertTrue(os.path.islink(link), "the link was replaced")
    self.assertEqual(os.readlink(link), os.path.join("lib", "train.py"))
    self.assertEqual(_read(target), _CONVERTED.encode())
    self.assertEqual(sorted(os.listdir(os.path.join(self.root, "lib"))),
                     ["train.py"])
    with open(os.path.join(self.root, "contrib_mp_upgrade_report.txt")) as f:
      self.assertIn("target of the link", f.read())

  def test_a_directory_that_cannot_be_listed_is_not_created(self):
    tree = os.path.join(self.root, "in")
    _write(os.path.join(tree, "ok.py"), _USE.encode())
    _write(os.path.join(tree, "secret", "hidden.py"), _USE.encode())
    os.chmod(os.path.join(tree, "secret"), 0o000)
    self.addCleanup(os.chmod, os.path.join(tree, "secret"), 0o755)
    prefix = ()
    if os.geteuid() == 0:
      # Root lists anything: run it without the capabilities that let it.
      if shutil.which("setpriv") is None:
        self.skipTest("running as root without util-linux's setpriv")
      prefix = ("setpriv", "--bounding-set",
                "-dac_override,-dac_read_search")
    out = os.path.join(self.root, "out")
    status, _, err = _command(self.root, "--intree", tree, "--outtree", out,
                              prefix=prefix)
    self.assertEqual(status, 0, err)
    self.assertEqual(sorted(os.listdir(out)), ["ok.py"])
    with open(os.path.join(self.root, "contrib_mp_upgrade_report.txt")) as f:
      report = f.read()
    self.assertIn("secret", report)
    self.assertIn("could not be listed", report)


if __name__ == "__main__":
  absltest.main()
