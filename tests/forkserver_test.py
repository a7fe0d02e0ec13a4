# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""tests/forkserver.py: a forked child is as isolated as a fresh interpreter.

Each check runs the same programs twice: forked from the server (which has
imported TensorFlow) and in a fresh interpreter, and compares what the
programs saw and printed. A program that calls `disable_v2_behavior()`, adds
to a graph collection, sets an environment variable and puts a module in
`sys.modules` leaves nothing for the next program; a training program's
output is byte for byte the same; `sys.argv`, `__main__`, the working
directory, the environment, standard input, exit codes and signals are a
fresh interpreter's.
"""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import textwrap

from absl.testing import absltest
from absl.testing import parameterized

import forkserver

_ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
_IMPORT_MESSAGES = (b"absl::InitializeLog", b"oneDNN",
                    b"mkdir -p failed for path",
                    b"Matplotlib created a temporary cache directory")

_LEAKER = textwrap.dedent("""\
    import json, os, sys, types
    import tensorflow as tf
    tf.compat.v1.disable_v2_behavior()
    tf.compat.v1.add_to_collection("cmp_leak", tf.constant(1.0))
    os.environ["CMP_LEAK"] = "set by the first program"
    sys.modules["cmp_leak_module"] = types.ModuleType("cmp_leak_module")
    json.cmp_leak = True
    print(json.dumps({
        "v2": tf.compat.v1.executing_eagerly(),
        "collection": len(tf.compat.v1.get_collection("cmp_leak")),
        "env": os.environ.get("CMP_LEAK"),
        "module": "cmp_leak_module" in sys.modules}))
    """)

_OBSERVER = textwrap.dedent("""\
    import json, os, sys, threading
    import tensorflow as tf
    print(json.dumps({
        "v2": tf.executing_eagerly(),
        "tf2": tf.compat.v1.executing_eagerly_outside_functions(),
        "collection": len(tf.compat.v1.get_collection("cmp_leak")),
        "env": os.environ.get("CMP_LEAK"),
        "module": "cmp_leak_module" in sys.modules,
        "json_attr": hasattr(json, "cmp_leak"),
        "python_threads": threading.active_count(),
        "keras": tf.keras.optimizers.SGD.__module__.split(".")[0],
        "ppid": os.getppid(),
        }))
    """)

# Grappler on, float16 and float32, a graph and a few steps: digits that
# differ if anything about the process differed.
_TRAIN = textwrap.dedent("""\
    import sys
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
    tf.set_random_seed(3)
    x = tf.constant(np.linspace(-1, 1, 32).reshape(8, 4), tf.float32)
    w = tf.get_variable("w", [4, 1], initializer=tf.random_normal_initializer())
    y = tf.matmul(tf.cast(x, tf.float16), tf.cast(w, tf.float16))
    loss = tf.reduce_mean(tf.square(tf.cast(y, tf.float32) - 0.5))
    op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
    with tf.Session() as sess:
      sess.run(tf.global_variables_initializer())
      for step in range(int(sys.argv[1])):
        _, l = sess.run([op, loss])
        print(step, repr(float(l)), sess.run(w).ravel().tolist())
    """)

_PROCESS = textwrap.dedent("""\
    import json, os, sys
    print(json.dumps({
        "argv": sys.argv, "cwd": os.getcwd(), "path0": sys.path[0],
        "path": sys.path[1:], "name": __name__,
        "file": globals().get("__file__"), "spec": repr(__spec__),
        "env": dict(os.environ), "stdin": sys.stdin.read(),
        "main": sys.modules["__main__"].__dict__ is globals(),
        "forkserver": "forkserver" in sys.modules,
        "ppid_alive": os.getppid() > 1}))
    """)


def setUpModule():
  # Keras 3's import loads matplotlib, which warns (on every import) where
  # its config directory cannot be written, as in Bazel's sandbox under a
  # read-only HOME. The programs here get one that can be.
  _ENV["MPLCONFIGDIR"] = tempfile.mkdtemp(prefix="forkserver-test-mpl-")


def tearDownModule():
  shutil.rmtree(_ENV.pop("MPLCONFIGDIR"), ignore_errors=True)


def _without_import_lines(stderr):
  # What importing TensorFlow prints (a forked child gets the server's
  # first, a fresh program that never imports it prints none): absl's and
  # oneDNN's notes, and matplotlib's where its config directory cannot be
  # written.
  return [l for l in stderr.splitlines()
          if not any(m in l for m in _IMPORT_MESSAGES)]


class ForkServerTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    self.tmp = tempfile.mkdtemp(prefix="forkserver-test-")
    self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

  def _write(self, name, text):
    path = os.path.join(self.tmp, name)
    with open(path, "w") as f:
      f.write(text)
    return path

  def _run(self, mode, args, **kwargs):
    before = dict(forkserver.stats)
    kwargs.setdefault("env", _ENV)
    proc = forkserver.run_python(args, mode=mode, capture_output=True,
                                 **kwargs)
    # The path taken was the one asked for.
    key = "forked" if mode == "fork" else "fresh"
    self.assertEqual(forkserver.stats[key], before[key] + 1)
    return proc

  def _json(self, proc):
    self.assertEqual(proc.returncode, 0, proc.stderr.decode()[-3000:])
    return json.loads(proc.stdout.decode().splitlines()[-1])

  def test_one_programs_global_state_never_reaches_the_next(self):
    leaker = self._write("leaker.py", _LEAKER)
    observer = self._write("observer.py", _OBSERVER)
    seen = {}
    for mode in ("fork", "fresh"):
      # The first program did change its own process's state...
      self.assertEqual(self._json(self._run(mode, [leaker])), {
          "v2": False, "collection": 1, "env": "set by the first program",
          "module": True})
      seen[mode] = self._json(self._run(mode, [observer]))
      seen[mode].pop("ppid")
    # ... and the next one sees none of it, as in a fresh interpreter.
    self.assertEqual(seen["fork"], seen["fresh"])
    self.assertEqual(
        {k: seen["fork"][k] for k in ("v2", "tf2", "collection", "env",
                                      "module", "json_attr")},
        {"v2": True, "tf2": True, "collection": 0, "env": None,
         "module": False, "json_attr": False})
    self.assertEqual(seen["fork"]["python_threads"], 1)

  def test_import_time_variables_get_a_server_of_their_own(self):
    # TF_USE_LEGACY_KERAS is read when TensorFlow is imported: with it,
    # tf.keras is tf-keras (where installed); the child must agree with a
    # fresh interpreter either way.
    # Without tf-keras (TF 2.15) the variable makes `tf.keras` fail: it must
    # fail the same way forked.
    observer = self._write("observer.py", _OBSERVER)
    parents = {}
    for legacy in ("0", "1", "0"):
      env = dict(_ENV, TF_USE_LEGACY_KERAS=legacy)
      procs = [self._run(mode, [observer], env=env)
               for mode in ("fork", "fresh")]
      self.assertEqual(procs[0].returncode, procs[1].returncode)
      if procs[0].returncode == 0:
        forked, fresh = self._json(procs[0]), self._json(procs[1])
        self.assertEqual(forked["keras"], fresh["keras"])
        parents.setdefault(legacy, set()).add(forked["ppid"])
      else:
        self.assertEqual(procs[0].stderr.splitlines()[-1],
                         procs[1].stderr.splitlines()[-1])
    # A child's parent is its server: one per value, and reused.
    self.assertLen(parents["0"], 1)
    self.assertNotIn(parents["0"].pop(), parents.get("1", set()))

  def test_a_training_programs_output_is_byte_identical(self):
    train = self._write("train.py", _TRAIN)
    outputs = [self._run(mode, [train, "6"]).stdout
               for mode in ("fork", "fresh")]
    self.assertEqual(outputs[0], outputs[1])
    self.assertLen(outputs[0].splitlines(), 6)

  def test_argv_main_cwd_path_environment_and_stdin(self):
    script = self._write("process.py", _PROCESS)
    work = tempfile.mkdtemp(dir=self.tmp)
    stdin = self._write("stdin.txt", "line one\nline two\n")
    env = dict(_ENV, CMP_ONLY_HERE="x y")
    seen = {}
    for mode in ("fork", "fresh"):
      with open(stdin) as f:
        seen[mode] = self._json(self._run(
            mode, [os.path.relpath(script, work), "a", "--b"], cwd=work,
            env=env, stdin=f))
      with open(stdin) as f:
        seen[mode + "-c"] = self._json(self._run(
            mode, ["-c", _PROCESS, "x"], cwd=work, env=env, stdin=f))
    self.assertEqual(seen["fork"], seen["fresh"])
    self.assertEqual(seen["fork-c"], seen["fresh-c"])
    self.assertEqual(seen["fork"]["argv"], ["../process.py", "a", "--b"])
    self.assertEqual(seen["fork"]["env"], env)
    self.assertEqual(seen["fork"]["stdin"], "line one\nline two\n")
    self.assertFalse(seen["fork"]["forkserver"])
    self.assertEqual(seen["fork-c"]["path0"], "")

  @parameterized.named_parameters(
      ("exit_code", "import sys; sys.exit(3)", 3),
      ("exit_message", "import sys; sys.exit('no')", 1),
      ("exception", "def f():\n  raise ValueError('bad')\nf()", 1),
      ("syntax_error", "x = (", 1),
      ("signal", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)",
       -signal.SIGTERM),
      ("atexit_and_thread",
       "import atexit, threading, time\n"
       "atexit.register(print, 'atexit ran')\n"
       "threading.Thread(target=lambda: (time.sleep(0.2), print('joined')))"
       ".start()", 0),
  )
  def test_exit_as_a_fresh_interpreter_exits(self, code, returncode):
    script = self._write("exits.py", code)
    procs = [self._run(mode, [script]) for mode in ("fork", "fresh")]
    for proc in procs:
      self.assertEqual(proc.returncode, returncode)
    self.assertEqual(procs[0].stdout, procs[1].stdout)
    # The traceback starts at the program, as the interpreter prints it.
    # What TensorFlow's import printed (a child gets the server's first)
    # carries a time and a thread id: left out.
    self.assertEqual(_without_import_lines(procs[0].stderr),
                     _without_import_lines(procs[1].stderr))

  def test_what_the_import_made_outlives_every_child(self):
    # Keras 3's import (through matplotlib) makes a temporary config
    # directory where the configured one cannot be written, and registers
    # its removal at exit. In the server that directory is the server's:
    # the first child to exit must not remove it from under the others.
    unwritable = self._write("not_a_directory", "")
    env = dict(_ENV, MPLCONFIGDIR=unwritable)
    script = self._write("uses_it.py", textwrap.dedent("""\
        import os
        import tensorflow as tf
        import matplotlib
        print(os.path.isdir(matplotlib.get_configdir()))
        """))
    for _ in range(3):
      procs = [self._run(mode, [script], env=env)
               for mode in ("fork", "fresh")]
      for proc in procs:
        self.assertEqual((proc.returncode, proc.stdout), (0, b"True\n"),
                         proc.stderr.decode())
      self.assertEqual(_without_import_lines(procs[0].stderr), [])
      self.assertEqual(_without_import_lines(procs[1].stderr), [])

  def test_a_program_that_sets_the_environment_runs_fresh(self):
    script = self._write("sets_env.py", "import os\n"
                         "os.environ['TF_USE_LEGACY_KERAS'] = '1'\n")
    before = dict(forkserver.stats)
    proc = forkserver.run_python([script], env=_ENV, capture_output=True)
    self.assertEqual(proc.returncode, 0)
    self.assertEqual(forkserver.stats["fresh"], before["fresh"] + 1)
    self.assertEqual(forkserver.stats["forked"], before["forked"])

  def test_timeout_kills_the_child(self):
    script = self._write("sleeps.py", "import time; time.sleep(60)")
    with self.assertRaises(subprocess.TimeoutExpired):
      forkserver.run_python([script], env=_ENV, capture_output=True,
                            timeout=2, mode="fork")
    # The server still serves.
    proc = self._run("fork", ["-c", "print('after')"])
    self.assertEqual(proc.stdout, b"after\n")


if __name__ == "__main__":
  absltest.main()
