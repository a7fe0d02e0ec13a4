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
import resource
import signal
import subprocess
import sys
import tempfile
import time

from absl.testing import absltest
from absl.testing import parameterized

import upgrade_process_util as putil

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

  def _assert_group_ends(self, proc):
    """No process of the command's group outlives it by more than 2 s."""
    deadline = time.monotonic() + _PROMPT_S
    while putil.group_alive(proc.pid) and time.monotonic() < deadline:
      time.sleep(0.05)
    self.assertEqual(putil.group_alive(proc.pid), [], "workers left running")

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
    self._assert_group_ends(proc)

  @parameterized.named_parameters(
      ("ctrl_c_once", signal.SIGINT, False),
      ("ctrl_c_twice", signal.SIGINT, True),
      ("sigterm", signal.SIGTERM, False),
      # The terminal closed (an ssh session dropped).
      ("sighup", signal.SIGHUP, False),
  )
  def test_signal_while_converting(self, signum, twice):
    with tempfile.TemporaryDirectory() as root:
      tree = _make_tree(root)
      before = _listing(tree)
      proc = self._start(root, tree)
      # Workers are converting once both have started.
      self._wait_for(proc, lambda: len(putil.group_alive(proc.pid)) >= 3,
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


# Runs the command with one of the calls that create a staged file or
# directory wrapped: right after its first call returns, the process sends
# itself SIGINT, as a Ctrl-C that lands between creating a thing and
# recording it for removal does.
_SIGNAL_AFTER = """
import os, signal, sys, tempfile
module, name = sys.argv[1].rsplit(".", 1)
owner = {"os": os, "tempfile": tempfile}[module]
real = getattr(owner, name)
calls = []
def wrapped(*args, **kwargs):
  made = real(*args, **kwargs)
  if not calls:
    calls.append(1)
    os.kill(os.getpid(), signal.SIGINT)
  return made
setattr(owner, name, wrapped)
from contrib_mp_upgrade.__main__ import main
sys.argv[1:] = sys.argv[2:]
sys.exit(main())
"""


class SignalWhileStagingTest(parameterized.TestCase):
  """A signal right after a staged file or directory is made removes it."""

  @parameterized.named_parameters(
      ("tree", "tempfile.mkdtemp", False, "out/new"),
      ("its_parent", "os.mkdir", False, "out/new"),
      ("in_place", "tempfile.mkstemp", True, None),
      ("report", "tempfile.mkstemp", False, "out/new"),
  )
  def test_nothing_is_left(self, call, inplace, outtree):
    with tempfile.TemporaryDirectory() as root:
      tree = os.path.join(root, "in")
      os.makedirs(tree)
      # Light files: no workers, so the first calls are the staging ones.
      for i in range(3):
        with open(os.path.join(tree, "m{}.py".format(i)), "w") as f:
          f.write("import tensorflow as tf\n"
                  "m = tf.contrib.mixed_precision.FixedLossScaleManager("
                  "{}.0)\n".format(i + 1))
      args = ["--intree", tree]
      if inplace:
        args.append("--inplace")
      else:
        args += ["--outtree", os.path.join(root, outtree), "--reportfile",
                 os.path.join(root, "reports", "report.txt")]
      before = putil.contents(root)
      env = dict(os.environ, PYTHONPATH=os.pathsep.join(
          [_REPO] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
      proc = subprocess.run(
          [sys.executable, "-c", _SIGNAL_AFTER, call] + args, cwd=root,
          env=env, capture_output=True, timeout=120)
      err = proc.stderr.decode()
      self.assertEqual(proc.returncode, 130, err)
      self.assertEqual(err.strip().splitlines(), [
          "contrib-mp-upgrade: interrupted (SIGINT); nothing was written."])
      self.assertEqual(putil.contents(root), before)


# Calls the command's `main()` inside a program, as a notebook or a build
# script does; argv[1] is "interrupted" (a Ctrl-C lands at the run's first
# chmod) or "finished". Then the program's own signal handling must be
# back: its SIGHUP handler runs, Ctrl-C raises KeyboardInterrupt, and
# SIGTERM ends the program.
_MAIN_IN_A_PROGRAM = """
import os, signal, sys
from contrib_mp_upgrade import cli
got = []
signal.signal(signal.SIGHUP, lambda signum, frame: got.append(signum))
# Set here: a test run in the background inherits SIGINT ignored.
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
if sys.argv[1] == "interrupted":
  real = os.chmod
  def chmod(*args, **kwargs):
    os.chmod = real
    os.kill(os.getpid(), signal.SIGINT)
    return real(*args, **kwargs)
  os.chmod = chmod
print("status", cli.main(sys.argv[2:]), flush=True)
os.kill(os.getpid(), signal.SIGHUP)
print("own handler", got == [signal.SIGHUP], flush=True)
try:
  os.kill(os.getpid(), signal.SIGINT)
except KeyboardInterrupt:
  print("KeyboardInterrupt", flush=True)
os.kill(os.getpid(), signal.SIGTERM)
print("SIGTERM ignored", flush=True)
"""

# Calls the library's `run()` with SIGTERM blocked, as a caller does that
# holds it over a critical section; the mask must be the caller's after.
_RUN_WITH_SIGTERM_BLOCKED = """
import os, signal, sys
from contrib_mp_upgrade import cli
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])
cli.run(intree=sys.argv[1], outtree=sys.argv[2], reportfile=sys.argv[3])
print("ran", flush=True)
os.kill(os.getpid(), signal.SIGTERM)  # Held: the caller still blocks it.
print("held", signal.SIGTERM in signal.sigpending(), flush=True)
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
print("SIGTERM ignored", flush=True)
"""


class InAProgramTest(parameterized.TestCase):
  """`main()` and `run()` leave the calling program's signals as they were.

  The tests above run the command as a process, whose signal handling ends
  with it; a program that calls it keeps running after.
  """

  def _tree(self, root):
    tree = os.path.join(root, "in")
    os.makedirs(tree)
    for i in range(2):
      with open(os.path.join(tree, "m{}.py".format(i)), "w") as f:
        f.write("import tensorflow as tf\n"
                "m = tf.contrib.mixed_precision.FixedLossScaleManager(8.0)\n")
    return tree

  def _env(self):
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        [_REPO] + [p for p in [os.environ.get("PYTHONPATH")] if p]))

  @parameterized.named_parameters(("finished", "finished", 0),
                                  ("interrupted", "interrupted", 130))
  def test_main_restores_the_programs_handlers(self, how, status):
    with tempfile.TemporaryDirectory() as root:
      tree = self._tree(root)
      proc = subprocess.run(
          [sys.executable, "-c", _MAIN_IN_A_PROGRAM, how, "--intree", tree,
           "--outtree", os.path.join(root, "out"), "--reportfile",
           os.path.join(root, "report.txt")],
          cwd=root, env=self._env(), capture_output=True, timeout=120)
      out, err = proc.stdout.decode(), proc.stderr.decode()
      # The command's own summary line comes first on a finished run.
      self.assertEqual(out.splitlines()[-3:], [
          "status {}".format(status), "own handler True",
          "KeyboardInterrupt"], err)
      self.assertEqual(proc.returncode, -signal.SIGTERM, err)

  def test_run_keeps_the_callers_blocked_sigterm_blocked(self):
    with tempfile.TemporaryDirectory() as root:
      tree = self._tree(root)
      proc = subprocess.run(
          [sys.executable, "-c", _RUN_WITH_SIGTERM_BLOCKED, tree,
           os.path.join(root, "out"), os.path.join(root, "report.txt")],
          cwd=root, env=self._env(), capture_output=True, timeout=120)
      out, err = proc.stdout.decode(), proc.stderr.decode()
      self.assertEqual(out.splitlines(), ["ran", "held True"], err)
      self.assertEqual(proc.returncode, -signal.SIGTERM, err)
      self.assertTrue(os.path.isdir(os.path.join(root, "out")))


class WorkerDiesTest(_CommandTest):
  """A worker killed from outside (the OOM killer) ends the run, cleanly.

  A pool replaces a dead worker, but the file it held never comes back: the
  command waited for it forever.
  """

  def _check_ended(self, proc, root, tree, before):
    """The command ends at once, says why, and leaves nothing."""
    start = time.monotonic()
    try:
      _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
      os.killpg(proc.pid, signal.SIGKILL)
      self.fail("the command waited for its dead worker")
    err = err.decode()
    # Seen as it happens, however loaded the machine: not after the other
    # worker has converted everything.
    self.assertLess(time.monotonic() - start, _PROMPT_S + 2)
    self.assertEqual(proc.returncode, 1, err)
    self.assertRegex(err, r"(A worker process|The worker process converting "
                     r"\S+ \(\d+ KB\)) was killed by SIGKILL; nothing was "
                     r"written")
    self.assertNotIn("Traceback", err)
    self.assertEqual(sorted(os.listdir(root)), ["in"])
    self.assertEqual(_listing(tree), before)
    return err

  def test_a_ctrl_c_to_the_workers_alone_is_left_to_the_command(self):
    # The workers ignore Ctrl-C: the command decides (here it never gets
    # one), so the run goes on and finishes. A worker that took it died of
    # its KeyboardInterrupt, and the run failed.
    with tempfile.TemporaryDirectory() as root:
      tree = os.path.join(root, "in")
      subprocess.run([sys.executable, _MAKE_TREE, "--out", tree, "--files",
                      "40", "--filler", "300", "--mp_every", "1"],
                     check=True, stdout=subprocess.DEVNULL)
      proc = self._start(root, tree)
      self._wait_for(proc, lambda: len(putil.workers(proc.pid)) == 2,
                     "its workers started")
      # Held while a worker imports, the signal reaches it in its loop.
      for pid in putil.workers(proc.pid):
        os.kill(pid, signal.SIGINT)
      self.assertIsNone(proc.poll(), "the run was over too soon")
      _, err = proc.communicate(timeout=300)
      self.assertEqual(proc.returncode, 0, err.decode())
      self.assertTrue(os.path.isdir(os.path.join(root, "out")))

  def test_a_killed_worker_ends_the_run(self):
    with tempfile.TemporaryDirectory() as root:
      tree = _make_tree(root)
      before = _listing(tree)
      proc = self._start(root, tree)
      self._wait_for(proc, lambda: len(putil.workers(proc.pid)) == 2,
                     "its workers started")
      time.sleep(1.0)
      self.assertIsNone(proc.poll(), "the scan phase was over too soon")
      os.kill(putil.workers(proc.pid)[0], signal.SIGKILL)
      err = self._check_ended(proc, root, tree, before)
      # The file it held is named.
      self.assertRegex(err, r"The worker process converting "
                       r"model_\d+/layer_\d+\.py \(\d+ KB\) was killed")

  def test_a_worker_killed_while_it_waits_for_work(self):
    # One long file and two short ones: one worker converts the long file
    # while the other, done with the short ones, waits for more. A pool's
    # idle worker waits holding the lock of the queue they all read; killed
    # there, it never released it, and ending the pool waited for that lock
    # forever.
    with tempfile.TemporaryDirectory() as root:
      tree = os.path.join(root, "in")
      subprocess.run([sys.executable, _MAKE_TREE, "--out", tree, "--files",
                      "1", "--filler", "8000", "--mp_every", "1"],
                     check=True, stdout=subprocess.DEVNULL)
      source = ("import tensorflow as tf\n"
                "opt = tf.contrib.mixed_precision.LossScaleOptimizer(\n"
                "    tf.train.GradientDescentOptimizer(0.1),\n"
                "    tf.contrib.mixed_precision.FixedLossScaleManager(8.0))\n")
      for name in ("short_1.py", "short_2.py"):
        with open(os.path.join(tree, name), "w") as f:
          f.write(source)
      before = _listing(tree)
      proc = self._start(root, tree)
      target, cpu = [], {}

      def one_waits():
        # A worker whose CPU time stood still for half a second waits for
        # work while the other converts. A worker that lets go once nothing
        # is left leaves one, converting the long file: that one is killed
        # once it has worked for a second and a half (imports take 0.3 s).
        workers = putil.workers(proc.pid)
        now = {pid: putil.cpu_seconds(pid) for pid in workers}
        still = [pid for pid in workers
                 if pid in cpu and now[pid] == cpu[pid]]
        if len(workers) == 2 and len(still) == 1:
          target[:] = still
        elif len(workers) == 1 and now[workers[0]] >= 1.5:
          target[:] = workers
        cpu.clear()
        cpu.update(now)
        if not target:
          time.sleep(0.5)
        return bool(target)

      while True:
        self._wait_for(proc, one_waits, "one worker waited for work")
        try:
          os.kill(target[0], signal.SIGKILL)
          break
        except ProcessLookupError:  # It let go as it was picked.
          target.clear()
      self._check_ended(proc, root, tree, before)
      self._assert_group_ends(proc)


class OutOfMemoryTest(_CommandTest):
  """libcst cannot allocate: the command says so and which file, in its words.

  libcst's native parser aborts the whole process when an allocation fails
  (Rust's "memory allocation of N bytes failed", status 134). A large file
  converted in the command's own process (`--jobs 1`, or one file) took
  the command down with it, with nothing of ours on stderr.
  """

  @parameterized.parameters(["tree", "--jobs", "1"], ["tree"], ["file"],
                            ["file", "--dry_run"])
  def test_a_file_too_large_for_the_memory(self, how, *extra):
    with tempfile.TemporaryDirectory() as root:
      tree = os.path.join(root, "in")
      # One file of 1.6 MB that uses the API: libcst takes about 1.3 GB.
      subprocess.run([sys.executable, _MAKE_TREE, "--out", tree, "--files",
                      "1", "--filler", "60000", "--mp_every", "1"],
                     check=True, stdout=subprocess.DEVNULL)
      (name,) = [os.path.join(d, f) for d, _, files in os.walk(tree)
                 for f in files]
      name = os.path.relpath(name, tree)
      before = _listing(tree)
      env = dict(os.environ, PYTHONPATH=os.pathsep.join(
          [_REPO] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
      limit = 600 << 20  # Enough to start; a fraction of the parse.
      if how == "tree":
        args = ["--intree", tree, "--outtree", os.path.join(root, "out")]
      else:
        args = ["--infile", os.path.join(tree, name)]
        if not extra:
          args += ["--outfile", os.path.join(root, "out.py")]
      proc = subprocess.run(
          [sys.executable, "-m", "contrib_mp_upgrade"] + args + list(extra),
          cwd=root, env=env, capture_output=True, timeout=300,
          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS,
                                                (limit, limit)))
      err = proc.stderr.decode()
      self.assertEqual(proc.returncode, 1, err)
      last = err.strip().splitlines()[-1]
      self.assertTrue(last.startswith("contrib-mp-upgrade: "), err)
      self.assertIn("nothing was written", last)
      self.assertIn("converting {}{} (1.6 MB) was killed by SIGABRT".format(
          "" if how == "tree" else os.path.join(tree, ""), name), last)
      self.assertIn("memory", last)
      self.assertNotIn("--jobs 1", last)  # It was the only process.
      self.assertNotIn("Traceback", err)
      self.assertEqual(sorted(os.listdir(root)), ["in"])
      self.assertEqual(_listing(tree), before)


if __name__ == "__main__":
  absltest.main()
