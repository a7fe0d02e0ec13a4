# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Hostile runs of `contrib-mp-upgrade` that broke its all-or-nothing contract.

Each test runs the real command as a subprocess, in a session of its own,
and checks the contract: a clear one-line message, exit status 1 on an
error (128 + signum on a signal), no traceback, and nothing left behind
(no output, no staging directory, no temporary file, the input unchanged).
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import types

from absl.testing import absltest
from absl.testing import parameterized

import upgrade_process_util as putil

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_MAKE_TREE = os.path.join(_REPO, "scripts", "make_legacy_tree.py")
_SOURCE = ("import tensorflow as tf\n"
           "m = tf.contrib.mixed_precision.FixedLossScaleManager(8.0)\n")


def _env():
  return dict(os.environ, PYTHONPATH=os.pathsep.join(
      [_REPO] + [p for p in [os.environ.get("PYTHONPATH")] if p]))


def _command(*args):
  return [sys.executable, "-m", "contrib_mp_upgrade"] + list(args)


def _run_args(root: str, tree: str, dry_run: bool) -> list:
  """The arguments of a dry run of `tree`, or of a run into root/out."""
  if dry_run:
    return ["--intree", tree, "--dry_run"]
  return ["--intree", tree, "--outtree", os.path.join(root, "out"),
          "--reportfile", os.path.join(root, "report.txt")]


def _small_tree(root: str, files: int = 3) -> str:
  """Light files only: no worker processes."""
  tree = os.path.join(root, "in")
  os.makedirs(tree)
  for i in range(files):
    with open(os.path.join(tree, "m{:03d}.py".format(i)), "w") as f:
      f.write(_SOURCE)
  return tree


class ReportPathTest(parameterized.TestCase):
  """`--reportfile` that fails only when everything else is in place."""

  @parameterized.named_parameters(("outtree", False), ("inplace", True))
  def test_report_path_is_a_directory(self, inplace):
    # Staging the report writes a temporary file beside the directory; its
    # rename over the directory fails after the tree (or the in-place
    # files) were renamed into place.
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      os.mkdir(os.path.join(root, "rdir"))
      before = putil.contents(root)
      args = ["--intree", tree, "--reportfile", os.path.join(root, "rdir")]
      args += ["--inplace"] if inplace else [
          "--outtree", os.path.join(root, "out")]
      proc = subprocess.run(_command(*args), cwd=root, env=_env(),
                            capture_output=True, timeout=120)
      err = proc.stderr.decode()
      self.assertEqual(proc.returncode, 1, err)
      self.assertLen(err.strip().splitlines(), 1, err)
      self.assertEqual(putil.contents(root), before)

  @parameterized.named_parameters(("outtree", False), ("inplace", True))
  def test_report_fifo_whose_reader_left(self, inplace):
    # The FIFO has a reader when the command opens it, and none by the
    # time the report (larger than the pipe's buffer) is written, at the
    # very end: EPIPE after the renames.
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root, files=400)
      fifo = os.path.join(root, "report.fifo")
      os.mkfifo(fifo)
      before = putil.contents(root)
      reader = subprocess.Popen([sys.executable, "-c",
                                 "import sys, time; f = open(sys.argv[1], "
                                 "'rb'); time.sleep(1)", fifo])
      try:
        args = ["--intree", tree, "--reportfile", fifo]
        args += ["--inplace"] if inplace else [
            "--outtree", os.path.join(root, "out")]
        proc = subprocess.run(_command(*args), cwd=root, env=_env(),
                              capture_output=True, timeout=120)
      finally:
        reader.kill()
        reader.wait()
      err = proc.stderr.decode()
      if proc.returncode == 0:
        self.skipTest("the command finished before the reader left")
      self.assertEqual(proc.returncode, 1, err)
      self.assertEqual(putil.contents(root), before)

  def test_ctrl_c_while_the_report_pipe_is_full(self):
    # A reader that opened the FIFO but does not read (a pager, a paused
    # terminal): the report, larger than the pipe's buffer, blocks in a
    # write made with the stop signals held; Ctrl-C and SIGTERM then do
    # nothing.
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root, files=400)
      fifo = os.path.join(root, "report.fifo")
      os.mkfifo(fifo)
      reader = subprocess.Popen([sys.executable, "-c",
                                 "import sys, time; f = open(sys.argv[1], "
                                 "'rb'); time.sleep(300)", fifo])
      proc = subprocess.Popen(
          _command("--intree", tree, "--outtree", os.path.join(root, "out"),
                   "--reportfile", fifo), cwd=root, env=_env(),
          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
          start_new_session=True)
      try:
        deadline = time.monotonic() + 120
        wchan = ""
        while "pipe" not in wchan and time.monotonic() < deadline:
          self.assertIsNone(proc.poll(), "the report fit in the pipe")
          time.sleep(0.1)
          with open("/proc/{}/wchan".format(proc.pid)) as f:
            wchan = f.read()
        os.killpg(proc.pid, signal.SIGINT)
        try:
          _, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
          self.fail("Ctrl-C did not stop the command blocked on the report")
        self.assertEqual(proc.returncode, 130, err)
      finally:
        try:
          os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
          pass
        proc.communicate()
        reader.kill()
        reader.wait()


class InputCrashTest(parameterized.TestCase):
  """A file whose conversion raises: a message, not a traceback."""

  @parameterized.named_parameters(
      ("rot13_one_process", "rot13", 1),
      ("rot13_in_a_worker", "rot13", 2),
      ("undefined_in_a_worker", "undefined", 2),
  )
  def test_coding_cookie_of_a_non_text_codec(self, codec, jobs):
    with tempfile.TemporaryDirectory() as root:
      tree = os.path.join(root, "in")
      # Enough libcst lines (4,000) that --jobs 2 uses worker processes.
      subprocess.run([sys.executable, _MAKE_TREE, "--out", tree, "--files",
                      "4", "--filler", "1200", "--mp_every", "1"],
                     check=True, stdout=subprocess.DEVNULL)
      with open(os.path.join(tree, "weird.py"), "w") as f:
        f.write("# coding: {}\n".format(codec) + _SOURCE)
      proc = subprocess.run(
          _command("--intree", tree, "--outtree", os.path.join(root, "out"),
                   "--reportfile", os.path.join(root, "report.txt"),
                   "--jobs", str(jobs)),
          cwd=root, env=_env(), capture_output=True, timeout=300)
      err = proc.stderr.decode()
      self.assertNotIn("Traceback", err)
      # Python refuses such a file too: it is copied unchanged, and the
      # report says why.
      self.assertEqual(proc.returncode, 0, err)
      with open(os.path.join(tree, "weird.py"), "rb") as f:
        original = f.read()
      with open(os.path.join(root, "out", "weird.py"), "rb") as f:
        self.assertEqual(f.read(), original)
      with open(os.path.join(root, "report.txt")) as f:
        report = f.read()
      self.assertIn("weird.py", report)
      self.assertIn("a coding declaration Python cannot read", report)


class StandardStreamsTest(parameterized.TestCase):

  def test_stderr_closed(self):
    # `2>&-`: sys.stderr is None; the run must still write its output.
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      proc = subprocess.run(
          _command("--intree", tree, "--outtree", os.path.join(root, "out"),
                   "--reportfile", os.path.join(root, "report.txt")),
          cwd=root, env=_env(), stdout=subprocess.PIPE, timeout=120,
          preexec_fn=lambda: os.close(2))
      self.assertEqual(proc.returncode, 0, proc.stdout)
      self.assertTrue(os.path.isfile(os.path.join(root, "out", "m000.py")))

  @parameterized.named_parameters(("dry_run", True), ("run", False))
  def test_stdout_into_a_pipe_nobody_reads(self, dry_run):
    # `contrib-mp-upgrade --dry_run ... | head -c1`, with `head` gone
    # before the command writes (how much a pipe takes before a reader
    # that left is noticed depends on the kernel).
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      args = _run_args(root, tree, dry_run)
      read_end, write_end = os.pipe()
      os.close(read_end)
      try:
        proc = subprocess.run(_command(*args), cwd=root, env=_env(),
                              stdout=write_end, stderr=subprocess.PIPE,
                              timeout=120)
      finally:
        os.close(write_end)
      err = proc.stderr.decode()
      self.assertEqual(err, "")
      # As a tool that SIGPIPE ends: 128 + 13.
      self.assertEqual(proc.returncode, 141)
      if not dry_run:  # The output was in place before the summary line.
        self.assertTrue(os.path.isfile(os.path.join(root, "out", "m000.py")))


class InPlaceRenameFailsTest(absltest.TestCase):

  def test_second_rename_fails(self):
    # An input that cannot be replaced (immutable; or owned by another user
    # in a sticky directory) while its directory is writable: the temporary
    # files are made, the first rename succeeds, the second fails.
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      locked = os.path.join(tree, "m001.py")
      # RenameFailsTest fails renames on any system; this is the real thing.
      if not shutil.which("chattr") or subprocess.run(
          ["chattr", "+i", locked], capture_output=True).returncode != 0:
        self.skipTest("chattr +i is not available here")
      try:
        before = putil.contents(root)
        proc = subprocess.run(
            _command("--intree", tree, "--inplace", "--reportfile",
                     os.path.join(root, "report.txt")),
            cwd=root, env=_env(), capture_output=True, timeout=120)
        after = putil.contents(root)
      finally:
        subprocess.run(["chattr", "-i", locked])
      err = proc.stderr.decode()
      self.assertEqual(proc.returncode, 1, err)
      self.assertEqual(after, before, "some inputs were rewritten")


# Runs the command with several `os` calls failing: each argument before
# `--` is `name:nth:what`, nth a number or `all`, what an errno name or a
# signal name (sent to the command itself just before that call).
_FAIL_CALLS = """
import errno, os, signal, sys
end = sys.argv.index("--")
rules = [spec.split(":") for spec in sys.argv[1:end]]
counts = {}
def wrap(name):
  real = getattr(os, name)
  def call(*args, **kwargs):
    counts[name] = counts.get(name, 0) + 1
    for rule_name, nth, what in rules:
      if rule_name == name and nth in ("all", str(counts[name])):
        if what.startswith("SIG"):
          os.kill(os.getpid(), getattr(signal, what))
          break
        code = getattr(errno, what)
        raise OSError(code, os.strerror(code), args[-1] if args else None)
    return real(*args, **kwargs)
  return call
from contrib_mp_upgrade.__main__ import main
for name in {rule[0] for rule in rules}:
  setattr(os, name, wrap(name))
sys.argv[1:] = sys.argv[end + 1:]
sys.exit(main())
"""


def _run_failing(root, rules, *args):
  return subprocess.run(
      [sys.executable, "-c", _FAIL_CALLS] + list(rules) + ["--"] + list(args),
      cwd=root, env=_env(), capture_output=True, timeout=120)


def _leftovers(root):
  return sorted(os.path.join(directory, name)
                for directory, dirs, files in os.walk(root)
                for name in dirs + files if "contrib-mp-upgrade" in name)


class RenameFailsTest(parameterized.TestCase):
  """A rename into place that fails takes back the ones before it."""

  @parameterized.named_parameters(
      # In place: three files, the second one's replace fails.
      ("second_of_three_in_place", "replace", 2, True, False),
      # The tree is renamed into place, then the report's replace fails.
      ("report_after_the_tree", "replace", 1, False, False),
      # The same over a report that already exists.
      ("report_over_an_old_one", "replace", 1, False, True),
  )
  def test_nothing_changes(self, call, nth, inplace, old_report):
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      report = os.path.join(root, "report.txt")
      if old_report:
        with open(report, "w") as f:
          f.write("the last run's report\n")
      args = ["--intree", tree, "--reportfile", report]
      if not inplace:
        args += ["--outtree", os.path.join(root, "out")]
      else:
        args.append("--inplace")
      before = putil.contents(root)
      proc = _run_failing(root, ["{}:{}:EPERM".format(call, nth)], *args)
      err = proc.stderr.decode()
      self.assertEqual(proc.returncode, 1, err)
      self.assertEqual(err.strip().splitlines(), [
          "contrib-mp-upgrade: error: {!r} could not be put in place "
          "([Errno 1] Operation not permitted). Nothing was written: what "
          "was already renamed was put back; fix the cause and run the "
          "command again.".format(
              os.path.join(tree, "m001.py") if inplace else report)])
      self.assertEqual(putil.contents(root), before)


class CtrlCWhileWorkersStartTest(absltest.TestCase):

  def test_ctrl_c_to_the_group_while_workers_import(self):
    # A worker ignored SIGINT only once it ran `_serve`; before, it imported
    # libcst (tenths of a second) with Python's default handler, and a
    # Ctrl-C from the terminal printed its KeyboardInterrupt traceback.
    # Signalled 0 to 200 ms after the first worker appears, into its
    # imports.
    with tempfile.TemporaryDirectory() as root:
      base = os.path.join(root, "base")
      subprocess.run([sys.executable, _MAKE_TREE, "--out", base, "--files",
                      "40", "--filler", "300", "--mp_every", "1"],
                     check=True, stdout=subprocess.DEVNULL)
      errors = []
      for attempt in range(10):
        work = os.path.join(root, "run{}".format(attempt))
        os.makedirs(work)
        proc = subprocess.Popen(
            _command("--intree", base, "--outtree",
                     os.path.join(work, "out"), "--reportfile",
                     os.path.join(work, "report.txt"), "--jobs", "2"),
            cwd=work, env=_env(), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + 60
        while (not putil.workers(proc.pid) and proc.poll() is None and
               time.monotonic() < deadline):
          time.sleep(0.002)
        time.sleep(0.05 * (attempt % 5))
        os.killpg(proc.pid, signal.SIGINT)
        try:
          _, err = proc.communicate(timeout=30)
        finally:
          try:
            os.killpg(proc.pid, signal.SIGKILL)
          except ProcessLookupError:
            pass
        err = err.decode()
        self.assertEqual(proc.returncode, 130, err)
        if err.strip().splitlines() != [
            "contrib-mp-upgrade: interrupted (SIGINT); nothing was "
            "written."]:
          errors.append(err)
        self.assertEqual(os.listdir(work), [])
      self.assertEqual(errors, [], "a starting worker printed a traceback")


class StandardOutputTest(parameterized.TestCase):
  """The report sent to stdout, and stdout that cannot be written."""

  def test_report_to_stdout_redirected_to_a_file(self):
    # `--reportfile /dev/stdout > log.txt`: /dev/stdout -> /proc/self/fd/1
    # -> a regular file, so the report was staged beside /dev/stdout and
    # renamed over it: as root the system's /dev/stdout link became a
    # regular file holding the report, and log.txt never got it. A link of
    # our own to /proc/self/fd/1 stands in for /dev/stdout here.
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      link = os.path.join(root, "stdout")
      os.symlink("/proc/self/fd/1", link)
      log = os.path.join(root, "log.txt")
      with open(log, "wb") as out:
        proc = subprocess.run(
            _command("--intree", tree, "--outtree", os.path.join(root, "out"),
                     "--reportfile", link),
            cwd=root, env=_env(), stdout=out, stderr=subprocess.PIPE,
            timeout=120)
      err = proc.stderr.decode()
      self.assertNotIn("Traceback", err)
      self.assertTrue(os.path.islink(link), "the stdout link was replaced")
      self.assertEqual(proc.returncode, 0, err)
      with open(log) as f:
        self.assertIn("mixed_precision", f.read(), "no report in stdout")

  @parameterized.named_parameters(("run", False), ("dry_run", True))
  def test_stdout_on_a_full_device(self, dry_run):
    # `> /dev/full`: print raised OSError (ENOSPC), a traceback.
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      args = _run_args(root, tree, dry_run)
      with open("/dev/full", "wb") as full:
        proc = subprocess.run(_command(*args), cwd=root, env=_env(),
                              stdout=full, stderr=subprocess.PIPE,
                              timeout=120)
      err = proc.stderr.decode()
      self.assertNotIn("Traceback", err)
      self.assertLen(err.strip().splitlines(), 1, err)
      self.assertNotEqual(proc.returncode, 0, err)


class FinishFailsTest(parameterized.TestCase):
  """`Commit.finish` and its undo, when more than one thing goes wrong."""

  @parameterized.named_parameters(
      # copy2 fails in copystat, after the copy was made.
      ("utime", "utime:1:EPERM"),
      # The disk fills while the backup is copied.
      ("sendfile", "sendfile:1:ENOSPC"),
  )
  def test_backup_copy_fails(self, failure):
    # No hard links here (FAT, some FUSE file systems): the backup is a
    # copy; a copy that failed half-way was left beside the input.
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      report = os.path.join(root, "report.txt")
      with open(report, "w") as f:
        f.write("the last run's report\n")
      before = putil.contents(root)
      proc = _run_failing(root, ["link:all:EPERM", failure], "--intree",
                          tree, "--inplace", "--reportfile", report)
      err = proc.stderr.decode()
      self.assertEqual(proc.returncode, 1, err)
      self.assertLen(err.strip().splitlines(), 1, err)
      self.assertEqual(_leftovers(root), [])
      self.assertEqual(putil.contents(root), before)

  def test_staging_directory_inside_the_outtree_not_removed(self):
    # The parent of an existing, empty --outtree refuses the staging
    # directory (the first mkdir, mkdtemp's): the tree is built inside the
    # outtree and moved up. The last step, removing that staging directory,
    # failed outside the undo: exit 1 and "nothing was changed", with the
    # tree and the report in place.
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      out = os.path.join(root, "out")
      os.mkdir(out)
      before = putil.contents(root)
      proc = _run_failing(root, ["mkdir:1:EACCES", "rmdir:1:EPERM"],
                          "--intree", tree, "--outtree", out, "--reportfile",
                          os.path.join(root, "report.txt"))
      err = proc.stderr.decode()
      self.assertNotIn("Traceback", err)
      if proc.returncode != 0:
        self.assertEqual(putil.contents(root), before, err)

  @parameterized.named_parameters(
      # The report's replace fails; renaming the tree back fails too.
      ("tree", False, ["replace:1:EPERM", "rename:2:EPERM"]),
      # The third in-place replace fails; putting the second back fails.
      ("in_place", True, ["replace:3:EPERM", "replace:4:EPERM"]),
      # The same, with a Ctrl-C held during the renames.
      ("in_place_ctrl_c", True,
       ["replace:2:SIGINT", "replace:3:EPERM", "replace:4:EPERM"]),
  )
  def test_undo_fails(self, inplace, rules):
    # Whatever is left changed must be named, and never called "nothing".
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      report = os.path.join(root, "report.txt")
      with open(report, "w") as f:
        f.write("the last run's report\n")
      before = dict(putil.contents(root))
      args = ["--intree", tree, "--reportfile", report]
      args += ["--inplace"] if inplace else [
          "--outtree", os.path.join(root, "out")]
      proc = _run_failing(root, rules, *args)
      err = proc.stderr.decode()
      self.assertNotIn("Traceback", err)
      self.assertLen(err.strip().splitlines(), 1, err)
      after = dict(putil.contents(root))
      differ = {name for name in set(before) | set(after)
                if before.get(name, 0) != after.get(name, 0)}
      # A new tree is named by its top directory.
      changed = sorted(name for name in differ
                       if os.path.dirname(name) not in differ)
      if changed:
        self.assertNotIn("nothing was written", err.lower())
        self.assertNotIn("them: .", err)
        for name in changed:
          self.assertIn(os.path.join(root, name), err)

  def test_failed_undo_keeps_the_backup_it_names(self):
    # The third in-place replace fails, and putting the second file back
    # fails too: the message says where its original is. That backup must
    # still be there, holding the original, and restoring from it as the
    # message says must give back every file as it was.
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      before = putil.contents(root)
      proc = _run_failing(root, ["replace:3:EPERM", "replace:4:EPERM"],
                          "--intree", tree, "--inplace", "--reportfile",
                          os.path.join(root, "report.txt"))
      err = proc.stderr.decode()
      self.assertEqual(proc.returncode, 1, err)
      stuck = os.path.join(tree, "m001.py")
      match = re.search(re.escape(repr(stuck)) + r" holds the new version "
                        r"\([^)]*\), its original is '([^']+)'", err)
      self.assertIsNotNone(match, err)
      backup = match.group(1)
      with open(backup) as f:
        self.assertEqual(f.read(), _SOURCE)
      os.replace(backup, stuck)
      self.assertEqual(putil.contents(root), before)

  def test_backup_not_removed_after_success(self):
    # The run succeeded but one backup could not be removed: it stayed, a
    # hidden hard link of the old file in the source tree, without a word.
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      proc = _run_failing(root, ["remove:2:EPERM"], "--intree", tree,
                          "--inplace", "--reportfile",
                          os.path.join(root, "report.txt"))
      err = proc.stderr.decode()
      self.assertNotIn("Traceback", err)
      for path in _leftovers(root):
        self.assertIn(path, err, "left behind, unnamed")


def _run_without_libcst(test, args):
  """Runs `python args` from this tree in a virtualenv without libcst.

  The virtualenv has no pip and no site-packages of the environment that
  runs the tests; the test first proves that libcst cannot be imported.
  """
  with tempfile.TemporaryDirectory() as root:
    venv = os.path.join(root, "venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv],
                   check=True, capture_output=True, timeout=120)
    python = os.path.join(venv, "bin", "python")
    env = dict(os.environ, PYTHONPATH=_REPO)
    test.assertNotEqual(subprocess.run(
        [python, "-c", "import libcst"], env=env, capture_output=True,
        timeout=60).returncode, 0)
    return subprocess.run([python] + args, cwd=root, env=env,
                          capture_output=True, text=True, timeout=60)


def _version_in_source():
  """`__version__` as version.py sets it, found with a regular expression."""
  with open(os.path.join(_REPO, "contrib_mixed_precision",
                         "version.py")) as f:
    return re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M).group(1)


_SCRIPT = os.path.join(_REPO, "scripts", "contrib_mp_upgrade.py")


class FlagsWithoutLibcstTest(parameterized.TestCase):
  """`--help`, `--version` and a bad flag need no libcst, and no TensorFlow.

  libcst is the `[upgrade]` extra; right after a plain install, `--help`
  answered with the install paragraph (status 1) instead of the help.
  """

  @parameterized.named_parameters(
      ("module", ["-m", "contrib_mp_upgrade"]),
      ("script", [_SCRIPT]))
  def test_help(self, command):
    proc = _run_without_libcst(self, command + ["--help"])
    self.assertEqual(proc.returncode, 0, proc.stderr)
    self.assertEqual(proc.stderr, "")
    self.assertTrue(proc.stdout.startswith("usage: contrib-mp-upgrade "),
                    proc.stdout)
    for flag in ("--intree", "--outtree", "--check", "--tf_upgrade_v2",
                 "--version"):
      self.assertIn(flag, proc.stdout)

  @parameterized.named_parameters(
      ("module", ["-m", "contrib_mp_upgrade"]),
      ("script", [_SCRIPT]))
  def test_version(self, command):
    proc = _run_without_libcst(self, command + ["--version"])
    self.assertEqual(proc.returncode, 0, proc.stderr)
    self.assertEqual(proc.stdout,
                     "contrib-mp-upgrade {}\n".format(_version_in_source()))

  def test_bad_flag_is_a_usage_error(self):
    proc = _run_without_libcst(
        self, ["-m", "contrib_mp_upgrade", "--no-such-flag"])
    self.assertEqual(proc.returncode, 2, proc.stderr)
    self.assertIn("unrecognized arguments: --no-such-flag", proc.stderr)
    self.assertNotIn("libcst", proc.stderr)
    self.assertNotIn("Traceback", proc.stderr)


class NewDirectoriesTest(parameterized.TestCase):
  """`--outfile`, `--reportfile` and `--outtree` below new directories.

  Each missing directory is made, outermost first; a failed run removes
  every one it made.
  """

  def test_two_new_directories_deep(self):
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      outfile = os.path.join(root, "a", "b", "m000.py")
      report = os.path.join(root, "c", "d", "report.txt")
      proc = subprocess.run(
          _command("--infile", os.path.join(tree, "m000.py"), "--outfile",
                   outfile, "--reportfile", report),
          cwd=root, env=_env(), capture_output=True, timeout=120)
      self.assertEqual(proc.returncode, 0, proc.stderr.decode())
      with open(outfile) as f:
        self.assertIn("import contrib_mixed_precision", f.read())
      with open(report) as f:
        self.assertIn("m000.py", f.read())
      outtree = os.path.join(root, "e", "f", "out")
      report = os.path.join(root, "g", "h", "report.txt")
      proc = subprocess.run(
          _command("--intree", tree, "--outtree", outtree, "--reportfile",
                   report), cwd=root, env=_env(), capture_output=True,
          timeout=120)
      self.assertEqual(proc.returncode, 0, proc.stderr.decode())
      self.assertEqual(sorted(os.listdir(outtree)),
                       ["m000.py", "m001.py", "m002.py"])
      self.assertTrue(os.path.isfile(report))
      self.assertEqual(_leftovers(root), [])

  @parameterized.named_parameters(("outfile", False), ("outtree", True))
  def test_a_failed_run_removes_the_directories_it_made(self, tree_mode):
    # The output's two new directories are made; then the report cannot
    # be written (its path is a directory): both must go again.
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      os.mkdir(os.path.join(root, "taken"))
      before = putil.contents(root)
      if tree_mode:
        args = ["--intree", tree, "--outtree",
                os.path.join(root, "a", "b", "out")]
      else:
        args = ["--infile", os.path.join(tree, "m000.py"), "--outfile",
                os.path.join(root, "a", "b", "m000.py")]
      proc = subprocess.run(
          _command(*args, "--reportfile", os.path.join(root, "taken")),
          cwd=root, env=_env(), capture_output=True, timeout=120)
      err = proc.stderr.decode()
      self.assertEqual(proc.returncode, 1, err)
      self.assertIn("is a directory; nothing was written", err)
      self.assertEqual(putil.contents(root), before)


class OutputModesTest(absltest.TestCase):
  """What the command writes gets the modes a plain write would give it.

  Staged in temporary files and directories (made 0600 and 0700), then
  renamed: the new file must not be private, and a converted script must
  stay executable.
  """

  def test_modes(self):
    umask = os.umask(0o022)
    os.umask(umask)
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      script = os.path.join(tree, "m000.py")
      os.chmod(script, 0o751)
      outfile = os.path.join(root, "m000_tf2.py")
      report = os.path.join(root, "report.txt")
      proc = subprocess.run(
          _command("--infile", script, "--outfile", outfile, "--reportfile",
                   report), cwd=root, env=_env(), capture_output=True,
          timeout=120)
      self.assertEqual(proc.returncode, 0, proc.stderr.decode())
      self.assertEqual(os.stat(outfile).st_mode & 0o777, 0o751)
      self.assertEqual(os.stat(report).st_mode & 0o777, 0o666 & ~umask)
      outtree = os.path.join(root, "out")
      proc = subprocess.run(
          _command("--intree", tree, "--outtree", outtree, "--reportfile",
                   os.path.join(outtree, "report.txt")),
          cwd=root, env=_env(), capture_output=True, timeout=120)
      self.assertEqual(proc.returncode, 0, proc.stderr.decode())
      self.assertEqual(os.stat(outtree).st_mode & 0o777, 0o777 & ~umask)
      self.assertEqual(
          os.stat(os.path.join(outtree, "report.txt")).st_mode & 0o777,
          0o666 & ~umask)
      self.assertEqual(
          os.stat(os.path.join(outtree, "m000.py")).st_mode & 0o777, 0o751)


class MissingLibcstTest(parameterized.TestCase):
  """Issue 43, item 14: `pip install contrib_mixed_precision`, no `[upgrade]`.

  libcst is an extra: right after the quick start's install the command
  printed a 20-line `ModuleNotFoundError` traceback, even for `--help`.
  """

  @parameterized.named_parameters(
      ("run", ["-m", "contrib_mp_upgrade", "--infile", "x.py", "--dry_run"]),
      ("check", ["-m", "contrib_mp_upgrade", "--check", "x.py"]),
      # The source checkout's script, run the same way.
      ("script_run", [os.path.join(_REPO, "scripts", "contrib_mp_upgrade.py"),
                      "--infile", "x.py", "--dry_run"]))
  def test_one_paragraph_with_the_install_command(self, args):
    proc = _run_without_libcst(self, args)
    self.assertEqual(proc.returncode, 1, proc.stderr)
    self.assertEqual(proc.stdout, "")
    self.assertNotIn("Traceback", proc.stderr)
    paragraph = proc.stderr.strip()
    self.assertNotIn("\n\n", paragraph)
    self.assertLessEqual(len(paragraph.splitlines()), 5, paragraph)
    self.assertTrue(paragraph.startswith("contrib-mp-upgrade: "), paragraph)
    self.assertIn("libcst", paragraph)
    self.assertIn("pip install 'contrib_mixed_precision[upgrade]'",
                  paragraph)


# Runs the command; `module.name` (argv[1]) is wrapped so that its nth call
# (argv[2]) first appends argv[4] to the file argv[3]: a user's editor save
# at a known moment of the run.
_EDIT_DURING_RUN = """
import importlib, sys
owner, name = sys.argv[1].rsplit(".", 1)
module = importlib.import_module(owner)
real = getattr(module, name)
nth, path, text = int(sys.argv[2]), sys.argv[3], sys.argv[4]
calls = [0]
def call(*args, **kwargs):
  calls[0] += 1
  if calls[0] == nth and text.startswith("s/"):
    # An edit in place, "s/old/new/": the size may stay the same.
    _, old, new, _ = text.split("/")
    with open(path) as f:
      edited = f.read().replace(old, new)
    with open(path, "w") as f:
      f.write(edited)
  elif calls[0] == nth:
    with open(path, "a") as f:
      f.write(text)
  return real(*args, **kwargs)
setattr(module, name, call)
from contrib_mp_upgrade.__main__ import main
sys.argv[1:] = sys.argv[5:]
sys.exit(main())
"""


class EditedDuringTheRunTest(parameterized.TestCase):
  """Issue 43, item 13: `--inplace` kept a user's edit made meanwhile? No.

  An editor save (or a `git checkout`) into a file while the command
  converted it was replaced by the conversion of what was read before:
  the edit was gone, with exit status 0. The run is all or nothing
  (contract 14): every file is left as the user left it, the changed one
  is named, and the status is 1.
  """

  @parameterized.named_parameters(
      # While the converted files are staged (after every file was read).
      ("while_staging", "tempfile.mkstemp", 1, "m001.py"),
      # Among the renames: the second file, after the first is replaced.
      ("among_the_renames", "os.link", 2, "m001.py"),
      # The last file, after the first two are replaced.
      ("the_last_file", "os.link", 3, "m002.py"),
  )
  def test_the_edit_is_kept_and_named(self, call, nth, edited):
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      report = os.path.join(root, "report.txt")
      before = dict(putil.contents(root))
      edit = "print('the user saved this')\n"
      path = os.path.join(tree, edited)
      proc = subprocess.run(
          [sys.executable, "-c", _EDIT_DURING_RUN, call, str(nth), path,
           edit, "--intree", tree, "--inplace", "--reportfile", report],
          cwd=root, env=_env(), capture_output=True, timeout=120)
      err = proc.stderr.decode()
      self.assertEqual(proc.returncode, 1, err)
      self.assertNotIn("Traceback", err)
      self.assertLen(err.strip().splitlines(), 1, err)
      self.assertIn(repr(path), err)
      self.assertIn("changed while the command ran", err)
      with open(path) as f:
        self.assertEqual(f.read(), _SOURCE + edit)
      after = dict(putil.contents(root))
      del before[os.path.relpath(path, root)], after[
          os.path.relpath(path, root)]
      self.assertEqual(after, before)
      self.assertEqual(_leftovers(root), [])

  def test_an_edit_of_the_same_size_is_kept(self):
    # 8.0 -> 9.0: the file's size is what it was when it was read.
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      path = os.path.join(tree, "m001.py")
      proc = subprocess.run(
          [sys.executable, "-c", _EDIT_DURING_RUN, "os.link", "2", path,
           "s/8.0/9.0/", "--intree", tree, "--inplace", "--reportfile",
           os.path.join(root, "report.txt")],
          cwd=root, env=_env(), capture_output=True, timeout=120)
      err = proc.stderr.decode()
      self.assertEqual(proc.returncode, 1, err)
      self.assertIn(repr(path), err)
      with open(path) as f:
        self.assertEqual(f.read(), _SOURCE.replace("8.0", "9.0"))
      self.assertEqual(_leftovers(root), [])

  def test_a_file_replaced_by_the_same_bytes_is_no_edit(self):
    # `git checkout` of an unchanged file writes the same bytes again.
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      path = os.path.join(tree, "m001.py")
      proc = subprocess.run(
          [sys.executable, "-c", _EDIT_DURING_RUN, "tempfile.mkstemp", "1",
           path, "", "--intree", tree, "--inplace", "--reportfile",
           os.path.join(root, "report.txt")],
          cwd=root, env=_env(), capture_output=True, timeout=120)
      self.assertEqual(proc.returncode, 0, proc.stderr.decode())
      with open(path) as f:
        self.assertIn("contrib_mixed_precision", f.read())


class CleanupAndCommitEdgesTest(parameterized.TestCase):
  """Issue 43's survivors of a mutation test of the commit and the signals.

  Each test fails with one plausible bug written into the code
  (scripts/mutation_test.py, C01 to C07).
  """

  def test_second_ctrl_c_during_the_cleanup_is_ignored(self):
    # The first Ctrl-C stops the staging (at its first chmod); the second
    # lands in the cleanup's first remove. It must not cut the cleanup
    # short: the "twice" tests of upgrade_interrupt_test send it later.
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      before = putil.contents(root)
      proc = _run_failing(root, ["chmod:1:SIGINT", "remove:1:SIGINT"],
                          *_run_args(root, tree, dry_run=False))
      err = proc.stderr.decode()
      self.assertEqual(proc.returncode, 128 + signal.SIGINT, err)
      self.assertEqual(err.strip().splitlines(), [
          "contrib-mp-upgrade: interrupted (SIGINT); nothing was written."])
      self.assertEqual(_leftovers(root), [])
      self.assertEqual(putil.contents(root), before)

  def test_failed_rename_keeps_an_existing_empty_outtree(self):
    # The tree replaces the user's empty --outtree, then the report's
    # rename fails: the undo must bring the empty directory back, as the
    # message ("Nothing was written") says.
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      os.mkdir(os.path.join(root, "out"))
      before = putil.contents(root)
      proc = _run_failing(root, ["replace:1:EPERM"],
                          *_run_args(root, tree, dry_run=False))
      err = proc.stderr.decode()
      self.assertEqual(proc.returncode, 1, err)
      self.assertIn("Nothing was written", err)
      self.assertEqual(putil.contents(root), before)
      self.assertEqual(os.listdir(os.path.join(root, "out")), [])

  def test_tree_built_inside_the_outtree_leaves_no_staging_directory(self):
    # The parent of the empty --outtree refuses the staging directory
    # (mkdtemp's mkdir): the tree is built inside the outtree and moved up.
    # A successful run must leave the outtree holding the tree only.
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      out = os.path.join(root, "out")
      os.mkdir(out)
      proc = _run_failing(root, ["mkdir:1:EACCES"], "--intree", tree,
                          "--outtree", out, "--reportfile",
                          os.path.join(root, "report.txt"))
      self.assertEqual(proc.returncode, 0, proc.stderr.decode())
      self.assertEqual(sorted(os.listdir(out)),
                       ["m000.py", "m001.py", "m002.py"])
      self.assertEqual(_leftovers(root), [])

  def test_aborted_run_removes_a_staged_link_to_a_directory(self):
    # The tree holds a link to one of its directories, recreated as a link
    # in the staging tree. The report cannot be staged (its directory would
    # be under a file): the abort must remove the link, not look into it.
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      os.mkdir(os.path.join(tree, "sub"))
      with open(os.path.join(tree, "sub", "data.txt"), "w") as f:
        f.write("data\n")
      os.symlink("sub", os.path.join(tree, "sub_link"))
      with open(os.path.join(root, "a_file"), "w") as f:
        f.write("not a directory\n")
      before = putil.contents(root)
      proc = subprocess.run(
          _command("--intree", tree, "--outtree", os.path.join(root, "out"),
                   "--reportfile",
                   os.path.join(root, "a_file", "report.txt")),
          cwd=root, env=_env(), capture_output=True, timeout=120)
      err = proc.stderr.decode()
      self.assertEqual(proc.returncode, 1, err)
      self.assertIn("Nothing was written", err)
      self.assertEqual(_leftovers(root), [])
      self.assertEqual(putil.contents(root), before)

  def test_ctrl_c_held_over_renames_that_all_succeed(self):
    # A Ctrl-C that arrives during the renames is held until they end; they
    # all succeed, so the output is in place: the run reports success, and
    # must not say "nothing was written" with exit 130.
    with tempfile.TemporaryDirectory() as root:
      tree = _small_tree(root)
      report = os.path.join(root, "report.txt")
      proc = _run_failing(root, ["replace:1:SIGINT"], "--intree", tree,
                          "--inplace", "--reportfile", report)
      err = proc.stderr.decode()
      self.assertEqual(proc.returncode, 0, err)
      self.assertNotIn("nothing was written", err.lower())
      self.assertIn(b"changed 3 file(s)", proc.stdout)
      for i in range(3):
        with open(os.path.join(tree, "m{:03d}.py".format(i))) as f:
          self.assertIn("import contrib_mixed_precision", f.read())
      self.assertTrue(os.path.isfile(report))
      self.assertEqual(_leftovers(root), [])


class AloneBytesTest(parameterized.TestCase):
  """A file of 128 KiB or more goes to a worker process even alone.

  libcst's native parser aborts the process that runs it when memory runs
  out; in a worker that death is reported with the file's name. Below the
  boundary a worker costs more than it saves. Pinned at 131072 bytes.
  """

  @parameterized.named_parameters(("below", 131071, False),
                                  ("at", 131072, True))
  def test_the_boundary(self, size, in_a_worker):
    from contrib_mp_upgrade import workers  # pylint: disable=g-import-not-at-top
    head = _SOURCE.encode()
    source = head + b"#" * (size - len(head) - 1) + b"\n"
    self.assertLen(source, size)
    started = []
    real = workers._Workers  # pylint: disable=protected-access

    class Recording(real):

      def __init__(self, count, *args):
        started.append(count)
        super().__init__(count, *args)

    entry = types.SimpleNamespace(name="big.py", source=source, result=None,
                                  output=None)
    workers._Workers = Recording  # pylint: disable=protected-access
    try:
      workers.upgrade_all([entry], jobs=1)
    finally:
      workers._Workers = real  # pylint: disable=protected-access
    self.assertEqual(started, [1] if in_a_worker else [])
    self.assertIn(b"import contrib_mixed_precision", entry.output)


if __name__ == "__main__":
  absltest.main()
