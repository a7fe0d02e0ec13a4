# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Ctrl-C and SIGTERM stop `contrib-mp-upgrade` at once, and leave nothing.

Contract 14. The real command runs as a subprocess in a session of its own,
with worker processes, and is signalled the way a terminal does it, once or
twice, while it converts (the scan phase) and while it writes the new tree
(the write phase). Whatever the phase: it exits within 2 s of the first
signal with 128 + the signal's number, says in one line that nothing was
written, leaves no worker behind, and leaves no output, no staging tree and
no temporary file.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time

from absl.testing import absltest
from absl.testing import parameterized

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_MAKE_TREE = os.path.join(_REPO, "scripts", "make_legacy_tree.py")
_PROMPT_S = 2.0


def _make_tree(root: str, data_files: int = 0) -> str:
  tree = os.path.join(root, "in")
  # Without data files, every file uses the API, so each goes through
  # libcst: a scan phase of several seconds on two workers. With them, the
  # scan is short and the write phase long.
  subprocess.run([sys.executable, _MAKE_TREE, "--out", tree, "--files",
                  "160", "--filler", "300", "--mp_every",
                  "40" if data_files else "1"], check=True,
                 stdout=subprocess.DEVNULL)
  if data_files:
    # Many small files make the write phase long enough to signal in it.
    data = os.path.join(tree, "data")
    os.makedirs(data)
    for i in range(data_files):
      with open(os.path.join(data, "{:05d}.txt".format(i)), "w") as f:
        f.write("row {}\n".format(i))
  return tree


def _listing(root: str):
  found = []
  for directory, dirs, files in os.walk(root):
    for name in dirs + files:
      path = os.path.join(directory, name)
      found.append((os.path.relpath(path, root), os.lstat(path).st_mtime_ns))
  return sorted(found)


def _group_alive(pgid: int) -> list:
  alive = []
  for pid in os.listdir("/proc"):
    if not pid.isdigit():
      continue
    try:
      with open("/proc/{}/stat".format(pid)) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
      continue
    # Fields after the name: state, ppid, pgrp; a zombie is gone already.
    if int(fields[2]) == pgid and fields[0] != "Z":
      alive.append(int(pid))
  return alive


class _CommandTest(parameterized.TestCase):
  """Starts the real command in a session of its own, and waits on it."""

  def _start(self, root, tree, *extra):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [_REPO] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    return subprocess.Popen(
        [sys.executable, "-m", "contrib_mp_upgrade", "--intree", tree,
         "--outtree", os.path.join(root, "out"), "--reportfile",
         os.path.join(root, "report.txt"), "--jobs", "2"] + list(extra),
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True)

  def _wait_for(self, proc, condition, what):
    deadline = time.monotonic() + 120
    while not condition():
      if proc.poll() is not None or time.monotonic() > deadline:
        proc.kill()
        self.fail("the command {} before {}: {}".format(
            "ended" if proc.returncode is not None else "took too long",
            what, proc.communicate()))
      time.sleep(0.01)



class InterruptTest(_CommandTest):

  def _interrupt(self, proc, signum, twice):
    # As a terminal does: to the whole process group, workers included.
    os.killpg(proc.pid, signum)
    start = time.monotonic()
    if twice:
      time.sleep(0.2)
      try:
        os.killpg(proc.pid, signum)
      except ProcessLookupError:
        pass  # It had already finished: the second one found nothing.
    try:
      out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
      os.killpg(proc.pid, signal.SIGKILL)
      self.fail("the command hung after {}".format(
          signal.Signals(signum).name))
    return time.monotonic() - start, out.decode(), err.decode()

  def _check_stopped(self, root, tree, before, proc, elapsed, err, signum):
    self.assertEqual(proc.returncode, 128 + signum, err)
    self.assertLess(elapsed, _PROMPT_S)
    lines = err.strip().splitlines()
    self.assertEqual(lines, [
        "contrib-mp-upgrade: interrupted ({}); nothing was written.".format(
            signal.Signals(signum).name)])
    self.assertNotIn("Traceback", err)
    # Nothing beside the input: no output tree, no report, no staging.
    self.assertEqual(sorted(os.listdir(root)), ["in"])
    self.assertEqual(_listing(tree), before)
    deadline = time.monotonic() + _PROMPT_S
    while _group_alive(proc.pid) and time.monotonic() < deadline:
      time.sleep(0.05)
    self.assertEqual(_group_alive(proc.pid), [], "workers left running")

  @parameterized.named_parameters(
      ("ctrl_c_once", signal.SIGINT, False),
      ("ctrl_c_twice", signal.SIGINT, True),
      ("sigterm", signal.SIGTERM, False),
  )
  def test_signal_while_converting(self, signum, twice):
    with tempfile.TemporaryDirectory() as root:
      tree = _make_tree(root)
      before = _listing(tree)
      proc = self._start(root, tree)
      # Workers are converting once both have started.
      self._wait_for(proc, lambda: len(_group_alive(proc.pid)) >= 3,
                     "its workers started")
      time.sleep(1.0)
      self.assertIsNone(proc.poll(), "the scan phase was over too soon")
      elapsed, _, err = self._interrupt(proc, signum, twice)
      self._check_stopped(root, tree, before, proc, elapsed, err, signum)

  @parameterized.named_parameters(
      ("ctrl_c_once", signal.SIGINT, False),
      ("ctrl_c_twice", signal.SIGINT, True),
  )
  def test_signal_while_writing(self, signum, twice):
    with tempfile.TemporaryDirectory() as root:
      tree = _make_tree(root, data_files=6000)
      before = _listing(tree)
      proc = self._start(root, tree)
      # The new tree is built in a staging directory beside `out`.
      self._wait_for(proc, lambda: any(
          n.startswith(".out.") for n in os.listdir(root)),
                     "it started writing")
      elapsed, _, err = self._interrupt(proc, signum, twice)
      self._check_stopped(root, tree, before, proc, elapsed, err, signum)


def _workers(pgid: int) -> list:
  found = []
  for pid in _group_alive(pgid):
    try:
      with open("/proc/{}/cmdline".format(pid), "rb") as f:
        if b"spawn_main" in f.read():
          found.append(pid)
    except OSError:
      pass
  return found


def _catches(pid: int, signum: int) -> bool:
  """Whether process `pid` has a handler for `signum` (its SigCgt mask)."""
  try:
    with open("/proc/{}/status".format(pid)) as f:
      for line in f:
        if line.startswith("SigCgt:"):
          return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
  except OSError:
    pass
  return False


class StartingTest(_CommandTest):

  def test_ctrl_c_while_starting(self):
    # Before the command's code is imported (libcst takes a few tenths of a
    # second), Python's default handler printed a KeyboardInterrupt
    # traceback. The entry point's first act is to catch SIGTERM too, which
    # Python alone never does: from then on Ctrl-C must be clean.
    with tempfile.TemporaryDirectory() as root:
      tree = _make_tree(root)
      proc = self._start(root, tree)
      self._wait_for(proc, lambda: _catches(proc.pid, signal.SIGTERM),
                     "it handled signals")
      proc.send_signal(signal.SIGINT)
      _, err = proc.communicate(timeout=30)
      err = err.decode()
      self.assertEqual(proc.returncode, 130, err)
      self.assertEqual(err.strip().splitlines(), [
          "contrib-mp-upgrade: interrupted (SIGINT); nothing was written."])
      self.assertEqual(sorted(os.listdir(root)), ["in"])


class WorkerDiesTest(_CommandTest):
  """A worker killed from outside (the OOM killer) ends the run, cleanly.

  A pool replaces a dead worker, but the file it held never comes back: the
  command waited for it forever.
  """

  def test_a_killed_worker_ends_the_run(self):
    with tempfile.TemporaryDirectory() as root:
      tree = _make_tree(root)
      before = _listing(tree)
      proc = self._start(root, tree)
      self._wait_for(proc, lambda: len(_workers(proc.pid)) == 2,
                     "its workers started")
      time.sleep(1.0)
      self.assertIsNone(proc.poll(), "the scan phase was over too soon")
      os.kill(_workers(proc.pid)[0], signal.SIGKILL)
      start = time.monotonic()
      try:
        _, err = proc.communicate(timeout=30)
      except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        self.fail("the command waited for its dead worker")
      err = err.decode()
      # Found within a poll of the pool (half a second), however loaded the
      # machine: not after the other workers have converted everything.
      self.assertLess(time.monotonic() - start, _PROMPT_S + 2)
      self.assertEqual(proc.returncode, 1, err)
      self.assertIn("worker process converting the tree was killed by "
                    "SIGKILL; nothing was written", err)
      self.assertNotIn("Traceback", err)
      self.assertEqual(sorted(os.listdir(root)), ["in"])
      self.assertEqual(_listing(tree), before)


if __name__ == "__main__":
  absltest.main()
