# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The upgrade command on hostile trees: links, unreadable paths, full disks.

A run either finishes, with the report naming every path it skipped and why,
or fails before anything appears: no half-written `--outtree`, no changed
input file, and a second run works. Failures are real: the command runs in a
subprocess where a file-size limit (`RLIMIT_FSIZE`) makes writes fail as a
full disk would, and where file permissions apply even to root (the child
drops `CAP_DAC_OVERRIDE` and `CAP_DAC_READ_SEARCH`).

These tests do not import TensorFlow.
"""

import ctypes
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

from absl.testing import absltest

import contrib_mp_upgrade
from contrib_mp_upgrade import rewrite
from contrib_mp_upgrade import walk
from contrib_mp_upgrade import workers

_FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "testdata", "upgrade_fixture")
_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE = 1
_CAP_DAC_READ_SEARCH = 2


def _preexec(enforce_permissions, file_size_limit):
  """A `preexec_fn` that makes permissions bind and/or limits file sizes."""

  def fn():
    if file_size_limit is not None:
      # Writes past the limit then fail with EFBIG instead of killing us.
      signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
      resource.setrlimit(resource.RLIMIT_FSIZE,
                         (file_size_limit, file_size_limit))
    if enforce_permissions and os.geteuid() == 0:
      libc = ctypes.CDLL(None, use_errno=True)
      for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
          raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")

  return fn


def _env():
  env = dict(os.environ)
  root = os.path.dirname(os.path.dirname(
      os.path.abspath(contrib_mp_upgrade.__file__)))
  env["PYTHONPATH"] = os.pathsep.join(
      p for p in (root, env.get("PYTHONPATH")) if p)
  env["PYTHONDONTWRITEBYTECODE"] = "1"
  return env


def _run(args, cwd, enforce_permissions=False, file_size_limit=None):
  return subprocess.run(
      [sys.executable] + list(args), cwd=cwd, env=_env(),
      capture_output=True, text=True, timeout=300, check=False,
      preexec_fn=_preexec(enforce_permissions, file_size_limit))


def _listing(root):
  """Sorted relative paths of everything under `root`, links included."""
  out = []
  for directory, dirs, files in os.walk(root):
    for name in dirs + files:
      out.append(os.path.relpath(os.path.join(directory, name), root))
  return sorted(out)


class UpgradeTreeSafetyTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    self.tmp = tempfile.mkdtemp(prefix="upgrade_tree_test_")
    self.addCleanup(self._cleanup)
    self.tree = os.path.join(self.tmp, "tree")
    shutil.copytree(_FIXTURE, self.tree)
    self.out_parent = os.path.join(self.tmp, "outputs")
    os.mkdir(self.out_parent)
    self.outtree = os.path.join(self.out_parent, "out")
    self.report = os.path.join(self.tmp, "report.txt")

  def _cleanup(self):
    for directory, dirs, _ in os.walk(self.tmp):
      for name in dirs:
        path = os.path.join(directory, name)
        if not os.path.islink(path):
          os.chmod(path, 0o755)
    shutil.rmtree(self.tmp, ignore_errors=True)

  def _convert(self, *extra, **kwargs):
    return _run(["-m", "contrib_mp_upgrade", "--intree", self.tree,
                 "--outtree", self.outtree, "--reportfile", self.report] +
                list(extra), cwd=self.tmp, **kwargs)

  def _report(self):
    with open(self.report, encoding="utf-8") as f:
      return f.read()

  def _assert_nothing_written(self, proc):
    self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
    self.assertIn("contrib-mp-upgrade: error: ", proc.stderr)
    self.assertIn("Nothing was written", proc.stderr)
    self.assertFalse(os.path.lexists(self.outtree))
    # No staging directory is left beside it either.
    self.assertEqual(os.listdir(self.out_parent), [])
    self.assertFalse(os.path.exists(self.report))

  def _assert_enforced(self, path, mode):
    """Fails unless the child cannot `mode`-open `path` (root included)."""
    probe = _run(["-c", "open({!r}, {!r})".format(path, mode)],
                 cwd=self.tmp, enforce_permissions=True)
    self.assertIn("PermissionError", probe.stderr,
                  msg="This environment cannot make {} unusable for the "
                  "test.".format(path))

  # -- symbolic links ----------------------------------------------------

  def test_dangling_link_and_link_loops_are_skipped_and_reported(self):
    os.symlink("missing.py", os.path.join(self.tree, "dangling.py"))
    os.symlink("loop_b.py", os.path.join(self.tree, "loop_a.py"))
    os.symlink("loop_a.py", os.path.join(self.tree, "loop_b.py"))
    proc = self._convert()
    self.assertEqual(proc.returncode, 0, proc.stderr)
    self.assertIn("3 path(s) skipped", proc.stdout)
    report = self._report()
    self.assertIn(
        "Skipped (not in the output)\n" + "-" * 79 + "\n"
        "dangling.py: a dangling symbolic link (-> 'missing.py'): its target "
        "does not exist; not copied\n"
        "loop_a.py: a symbolic link loop (-> 'loop_b.py'); not copied\n"
        "loop_b.py: a symbolic link loop (-> 'loop_a.py'); not copied\n",
        report)
    self.assertIn("skipped: 3.", report)
    # Everything else was converted as usual.
    self.assertEqual(_listing(self.outtree), _listing(_FIXTURE))
    with open(os.path.join(self.outtree, "train_attr.py")) as f:
      self.assertIn("import contrib_mixed_precision\n", f.read())

  def test_links_inside_the_tree_are_kept_and_never_followed(self):
    os.symlink("train_attr.py", os.path.join(self.tree, "alias.py"))
    os.symlink("..", os.path.join(self.tree, "models", "up"))  # A dir loop.
    os.symlink(os.path.join(self.tree, "models"),
               os.path.join(self.tree, "legacy", "models_abs"))
    proc = self._convert()
    self.assertEqual(proc.returncode, 0, proc.stderr)
    self.assertEqual(os.readlink(os.path.join(self.outtree, "alias.py")),
                     "train_attr.py")
    self.assertEqual(os.readlink(os.path.join(self.outtree, "models", "up")),
                     "..")
    # An absolute link into the input tree now points into the output tree.
    self.assertEqual(
        os.readlink(os.path.join(self.outtree, "legacy", "models_abs")),
        os.path.join("..", "models"))
    with open(os.path.join(self.outtree, "alias.py")) as f:
      self.assertIn("contrib_mixed_precision.LossScaleOptimizer(", f.read())
    self.assertNotIn("Skipped", self._report())

  def test_link_leaving_the_tree_is_skipped_and_reported(self):
    outside = os.path.join(self.tmp, "outside.py")
    with open(outside, "w") as f:
      f.write("import tensorflow as tf\n")
    os.symlink(outside, os.path.join(self.tree, "outside.py"))
    proc = self._convert()
    self.assertEqual(proc.returncode, 0, proc.stderr)
    self.assertIn("outside.py: a symbolic link to {!r}, outside the input "
                  "tree; not copied.".format(outside), self._report())
    self.assertFalse(os.path.lexists(os.path.join(self.outtree,
                                                  "outside.py")))

  def test_copyotherfiles_false_keeps_links_to_directories(self):
    # Only data files are left out: a link to a directory of the tree is
    # kept, as a link to a `.py` file is, and the report counts both.
    os.symlink("models", os.path.join(self.tree, "models_link"))
    os.symlink("common.py", os.path.join(self.tree, "common_link.py"))
    os.symlink(os.path.join("data", "notes.txt"),
               os.path.join(self.tree, "notes_link"))
    proc = self._convert("--copyotherfiles", "false")
    self.assertEqual(proc.returncode, 0, proc.stderr)
    self.assertEqual(os.readlink(os.path.join(self.outtree, "models_link")),
                     "models")
    self.assertEqual(
        os.readlink(os.path.join(self.outtree, "common_link.py")),
        "common.py")
    self.assertFalse(os.path.lexists(os.path.join(self.outtree,
                                                  "notes_link")))
    self.assertFalse(os.path.lexists(os.path.join(self.outtree, "data",
                                                  "notes.txt")))
    self.assertIn("; other files and links: 2; skipped: 0.", self._report())

  def test_files_copied_unchanged_keep_their_times_and_modes(self):
    # `make` and build tools compare modification times: a file the run
    # did not change must not look new. A converted one must.
    old = 1_000_000_000 * 10**9
    names = ("legacy/no_api.py", "data/notes.txt", "train_attr.py")
    for name in names:
      path = os.path.join(self.tree, *name.split("/"))
      os.chmod(path, 0o750)
      os.utime(path, ns=(old, old))
    proc = self._convert()
    self.assertEqual(proc.returncode, 0, proc.stderr)
    for name in names:
      written = os.stat(os.path.join(self.outtree, *name.split("/")))
      self.assertEqual(written.st_mode & 0o777, 0o750, name)
      if name == "train_attr.py":
        self.assertGreater(written.st_mtime_ns, old, name)
      else:
        self.assertEqual(written.st_mtime_ns, old, name)
    with open(os.path.join(self.outtree, "train_attr.py")) as f:
      self.assertIn("import contrib_mixed_precision\n", f.read())

  def test_fifo_is_skipped_not_read(self):
    os.mkfifo(os.path.join(self.tree, "data", "pipe"))
    proc = self._convert()  # Reading the FIFO would block until timeout.
    self.assertEqual(proc.returncode, 0, proc.stderr)
    self.assertIn("data/pipe: a FIFO (named pipe), not a regular file; not "
                  "copied\n", self._report())

  # -- unreadable input ----------------------------------------------------

  def test_unreadable_file_and_directory_are_skipped_and_reported(self):
    secret = os.path.join(self.tree, "models", "import_as.py")
    os.chmod(secret, 0)
    locked = os.path.join(self.tree, "legacy")
    os.chmod(locked, 0)
    self._assert_enforced(secret, "rb")
    proc = self._convert(enforce_permissions=True)
    self.assertEqual(proc.returncode, 0, proc.stderr)
    report = self._report()
    self.assertIn("models/import_as.py: could not be read ([Errno 13] "
                  "Permission denied); not copied\n", report)
    self.assertIn("legacy: a directory that could not be listed ([Errno 13] "
                  "Permission denied); nothing under it was converted or "
                  "copied\n", report)
    written = _listing(self.outtree)
    self.assertNotIn("models/import_as.py", written)
    self.assertIn("models/from_import.py", written)

  # -- failures while writing: nothing appears ---------------------------

  def test_full_disk_leaves_no_outtree_and_a_rerun_works(self):
    with open(os.path.join(self.tree, "data", "weights.bin"), "wb") as f:
      f.write(b"\0" * 65536)
    proc = self._convert(file_size_limit=16384)
    self._assert_nothing_written(proc)
    self.assertIn("[Errno 27] File too large", proc.stderr)
    self.assertIn("`--outtree` {!r} was not created".format(self.outtree),
                  proc.stderr)
    proc = self._convert()
    self.assertEqual(proc.returncode, 0, proc.stderr)
    self.assertIn("data/weights.bin", _listing(self.outtree))

  def test_read_only_output_directory_fails_before_writing(self):
    os.chmod(self.out_parent, 0o555)
    self._assert_enforced(os.path.join(self.out_parent, "x"), "w")
    proc = self._convert(enforce_permissions=True)
    self._assert_nothing_written(proc)
    self.assertIn("[Errno 13] Permission denied", proc.stderr)
    self.assertIn("choose a writable location", proc.stderr)

  def test_unwritable_report_leaves_no_outtree(self):
    locked = os.path.join(self.tmp, "locked")
    os.mkdir(locked, 0o555)
    self.report = os.path.join(locked, "report.txt")
    self._assert_enforced(os.path.join(locked, "x"), "w")
    proc = self._convert(enforce_permissions=True)
    self._assert_nothing_written(proc)
    self.assertIn("`--reportfile`", proc.stderr)

  def test_failed_inplace_run_changes_no_input_file(self):
    big = os.path.join(self.tree, "models", "big.py")
    with open(big, "w") as f:
      f.write("import tensorflow as tf\n"
              "m = tf.contrib.mixed_precision.FixedLossScaleManager(2)\n")
      f.write("# padding\n" * 4000)
    before = {}
    for path in _listing(self.tree):
      full = os.path.join(self.tree, path)
      if os.path.isfile(full):
        with open(full, "rb") as f:
          before[path] = f.read()
    proc = _run(["-m", "contrib_mp_upgrade", "--intree", self.tree,
                 "--inplace", "--reportfile", self.report], cwd=self.tmp,
                file_size_limit=16384)
    self.assertEqual(proc.returncode, 1, proc.stderr)
    self.assertIn("no input file was changed", proc.stderr)
    # The same files, with the same bytes, and no temporary file left.
    after = [p for p in _listing(self.tree)
             if os.path.isfile(os.path.join(self.tree, p))]
    self.assertCountEqual(after, before)
    for path, data in before.items():
      with open(os.path.join(self.tree, path), "rb") as f:
        self.assertEqual(f.read(), data, path)


_OTHER_CONTRIB = (b"import tensorflow as tf\n"
                  b"w = tf.contrib.layers.xavier_initializer()\n")
_USES_API = (b"import tensorflow as tf\n"
             b"m = tf.contrib.mixed_precision.FixedLossScaleManager(\n"
             b"    128.0)\n")


class WorkSplitTest(absltest.TestCase):
  """Large trees: libcst only where a target can be, on every core."""

  def test_files_without_a_target_never_reach_libcst(self):
    parsed = []
    real = rewrite.cst.parse_module

    def spy(source, *args, **kwargs):
      parsed.append(source)
      return real(source, *args, **kwargs)

    rewrite.cst.parse_module = spy
    self.addCleanup(setattr, rewrite.cst, "parse_module", real)
    other = rewrite.upgrade_source(_OTHER_CONTRIB)
    self.assertEqual(parsed, [])
    # What the report lists is still read.
    self.assertEqual(other.other_contrib, {"layers": [2]})
    self.assertFalse(other.changed)
    self.assertTrue(rewrite.upgrade_source(_USES_API).changed)
    self.assertEqual(parsed, [_USES_API])

  def test_worker_processes_give_the_serial_result(self):
    sources = [_USES_API + b"x%d = 1\n" % i for i in range(3)] + [
        _OTHER_CONTRIB]

    def entries():
      return [walk.Entry(name="m%d.py" % i, path="", kind="python",
                         source=source) for i, source in enumerate(sources)]

    serial, parallel = entries(), entries()
    workers.upgrade_all(serial, jobs=1)
    seen = []
    limit = workers._PARALLEL_LINES  # pylint: disable=protected-access
    workers._PARALLEL_LINES = 0  # pylint: disable=protected-access
    try:
      workers.upgrade_all(parallel, lambda done, total: seen.append(
          (done, total)), jobs=2)
    finally:
      workers._PARALLEL_LINES = limit  # pylint: disable=protected-access
    self.assertEqual([e.output for e in parallel],
                     [e.output for e in serial])
    self.assertEqual([e.result for e in parallel],
                     [e.result for e in serial])
    self.assertEqual(seen, [(i, 4) for i in range(1, 5)])


if __name__ == "__main__":
  absltest.main()
