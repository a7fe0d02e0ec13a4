# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The fixture programs of tests/testdata/upgrade_fixture and their numbers.

Shared by `upgrade_test.py` (which runs the converted programs) and
`alias_test.py` (which runs them unconverted behind `install_alias()`). The
expected numbers are computed here independently of TensorFlow: plain
gradient descent in NumPy, and the TF 1.15 loss-scale policy written out from
its specification. Loss scaling with finite gradients must not change the
weights beyond float rounding, and a skipped step must change nothing.
"""

import atexit
import collections
import contextlib
import functools
import io
import json
import os
import shutil
import tempfile

import numpy as np

from contrib_mp_upgrade import cli
import forkserver

FIXTURE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "testdata", "upgrade_fixture")


def run_command(*argv):
  """Runs contrib-mp-upgrade in-process; returns (status, stdout, stderr)."""
  out, err = io.StringIO(), io.StringIO()
  with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    status = cli.main(list(argv))
  return status, out.getvalue(), err.getvalue()


def write_files(root: str, files: dict):
  """Writes {relative path: text} under `root`, making directories."""
  for name, text in files.items():
    path = os.path.join(root, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
      f.write(text)


def read_text(path: str) -> str:
  with open(path, encoding="utf-8") as f:
    return f.read()


def tree_files(root: str) -> dict:
  """{relative path: bytes} of every file under `root`.

  Python's bytecode caches are left out: a test that runs a converted
  program writes them into that tree.
  """
  out = {}
  for directory, dirs, files in os.walk(root):
    dirs[:] = [d for d in dirs if d != "__pycache__"]
    for name in files:
      path = os.path.join(directory, name)
      with open(path, "rb") as f:
        out[os.path.relpath(path, root).replace(os.sep, "/")] = f.read()
  return out


@functools.lru_cache(maxsize=None)
def real_tree(path: str) -> str:
  """A private copy of the tree at `path`, with every symlink resolved.

  Under Bazel a test's data files are symlinks into the source tree, and the
  upgrade command never follows a symlink (it skips and reports it), so the
  fixture trees are handed to it as plain files. One copy per process.
  Bytecode caches are left out: a `__pycache__` that a run of the source
  tree's programs left there is not part of the fixture (the report counts
  the files it copies).
  """
  parent = tempfile.mkdtemp(prefix="upgrade_fixture_")
  atexit.register(shutil.rmtree, parent, ignore_errors=True)
  dest = os.path.join(parent, os.path.basename(path))
  shutil.copytree(path, dest, symlinks=False,
                  ignore=shutil.ignore_patterns("__pycache__"))
  return dest


# Mirrors common.py of the fixture; the test checks they agree.
_X = np.array([1.0, 2.0, 3.0, 4.0])
_Y = 3.0 * _X + 1.0
LEARNING_RATE = 0.05

Program = collections.namedtuple(
    "Program", ["path", "steps", "bad_steps", "manager"])

# manager: ("fixed", scale) or ("exponential", init, incr_every_n_steps,
# decr_every_n_nan_or_inf, incr_ratio, decr_ratio).
PROGRAMS = (
    Program("train_attr.py", 10, (), ("exponential", 2.0**10, 3, 2, 2, 0.8)),
    Program("models/from_import.py", 10, (4, 7),
            ("exponential", 16.0, 2, 1, 2, 0.5)),
    Program("models/from_contrib.py", 10, (2,), ("fixed", 128.0)),
    Program("models/import_as.py", 10, (3, 6),
            ("exponential", 2.0**32, 1000, 2, 2, 0.5)),
    Program("models/module_paths.py", 8, (),
            ("exponential", 4.0, 3, 2, 2, 0.8)),
    Program("models/compat_attr.py", 10, (), ("fixed", 2.0**15)),
)


# Programs only the upgrade command can serve (`install_alias()` cannot fake
# `tensorflow_core`, and scoping bugs only exist in rewritten code), with
# the extra JSON fields they print and whether they need legacy Keras.
UpgradeProgram = collections.namedtuple(
    "UpgradeProgram",
    ["path", "steps", "bad_steps", "manager", "extra", "legacy_keras"])

UPGRADE_PROGRAMS = (
    UpgradeProgram("models/function_local.py", 9, (5,),
                   ("exponential", 64.0, 2, 1, 2, 0.5), {}, False),
    UpgradeProgram("models/core_paths.py", 10, (1, 2, 8),
                   ("exponential", 2.0**20, 3, 2, 4, 0.25), {}, False),
    UpgradeProgram("models/contrib_object.py", 10, (6,),
                   ("exponential", 8.0, 2, 1, 2, 0.5), {}, False),
    UpgradeProgram("models/guarded.py", 10, (3,), ("fixed", 32.0),
                   {"fallback": False, "version_branch": False}, False),
    UpgradeProgram("models/star_import.py", 6, (),
                   ("exponential", 1.0, 2, 2, 2, 0.5),
                   {"extra_names": []}, False),
    UpgradeProgram("models/crlf_train.py", 7, (0,), ("fixed", 4096.0), {},
                   False),
    UpgradeProgram("models/latin1_train.py", 5, (), ("fixed", 2.0),
                   {"author": "Fran\xe7oise M\xfcller"}, False),
    UpgradeProgram("models/dynamic_import.py", 9, (2, 3),
                   ("exponential", 2.0**12, 3, 1, 2, 0.25), {}, False),
    UpgradeProgram("models/layers_train.py", 10, (2, 4),
                   ("exponential", 256.0, 2, 2, 2, 0.5), {}, True),
)


def legacy_keras_env():
  """The environment a `tf.compat.v1.layers` program needs on this TF.

  TF 2.16+ has Keras 3, where `tf.compat.v1.layers` raises; such programs
  need tf-keras, selected by TF_USE_LEGACY_KERAS=1 before TF is imported.
  TF 2.15 runs them with its built-in Keras 2, or with tf-keras if present.

  Raises:
    AssertionError: On TF 2.16+ without tf-keras: the test environment is
      incomplete, and the test must fail rather than skip.
  """
  import importlib.util  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  major, minor = (int(p) for p in tf.__version__.split(".")[:2])
  if (major, minor) >= (2, 16) and importlib.util.find_spec(
      "tf_keras") is None:
    raise AssertionError(
        "TensorFlow {} needs tf-keras for `tf.compat.v1.layers`, and it is "
        "not installed in this environment. Install the tf-keras that "
        "matches TensorFlow (`pip install 'contrib_mixed_precision"
        "[legacy-keras]'`; the test requirements pin it).".format(
            tf.__version__))
  env = package_env()
  if importlib.util.find_spec("tf_keras") is not None:
    env["TF_USE_LEGACY_KERAS"] = "1"
  else:
    # TF 2.15 has Keras 2 built in; there the variable would make it look
    # for tf-keras and fail.
    env.pop("TF_USE_LEGACY_KERAS", None)
  return env


def expected_scale(manager, finite_flags):
  """The loss scale after `finite_flags` steps, per the TF 1.15 policy."""
  if manager[0] == "fixed":
    return manager[1]
  _, scale, incr_n, decr_n, incr_ratio, decr_ratio = manager
  good = bad = 0
  for finite in finite_flags:
    if finite:
      if good + 1 >= incr_n:
        if np.isfinite(np.float32(scale * incr_ratio)):
          scale *= incr_ratio
        good = bad = 0
      else:
        # Bad steps accumulate non-consecutively: a good one does not clear.
        good += 1
    else:
      if bad + 1 >= decr_n:
        scale = max(1.0, scale * decr_ratio)
        good = bad = 0
      else:
        bad += 1
        good = 0
  return scale


def expected_values(program):
  """The loss, weights and scale `program` must print."""
  w = b = 0.0
  for step in range(program.steps):
    if step in program.bad_steps:
      continue  # Non-finite gradients: the step is skipped.
    residual = _X * w + b - _Y
    w, b = (w - LEARNING_RATE * 2.0 * np.mean(_X * residual),
            b - LEARNING_RATE * 2.0 * np.mean(residual))
  loss = float(np.mean((_X * w + b - _Y)**2))
  flags = [step not in program.bad_steps for step in range(program.steps)]
  return {"loss": loss, "w": w, "b": b,
          "scale": expected_scale(program.manager, flags)}


_PLAIN_GD = """
import sys
sys.path.insert(0, {fixture!r})
import common
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
x, y, loss = common.build()
op = tf.train.GradientDescentOptimizer(common.LEARNING_RATE).minimize(loss)
common.train(x, y, loss, op, steps={steps})
"""


def plain_gd_values(program):
  """What plain TF gradient descent gives over `program`'s finite steps."""
  return dict(_plain_gd_values(program.steps - len(program.bad_steps)))


@functools.lru_cache(maxsize=None)
def _plain_gd_values(steps):
  code = _PLAIN_GD.format(fixture=FIXTURE_DIR, steps=steps)
  return tuple(last_json(run_python(["-c", code])).items())


def package_env():
  """The environment for a subprocess that must import this package."""
  import contrib_mixed_precision  # pylint: disable=g-import-not-at-top
  root = os.path.dirname(
      os.path.abspath(list(contrib_mixed_precision.__path__)[0]))
  env = dict(os.environ)
  env["PYTHONPATH"] = os.pathsep.join(
      p for p in (root, env.get("PYTHONPATH")) if p)
  env["TF_CPP_MIN_LOG_LEVEL"] = "2"
  return env


def run_python(args, cwd=None, timeout=300, env=None, fresh=False):
  """Runs `python *args`; returns the CompletedProcess (text).

  A program is forked from a server that has imported TensorFlow
  (tests/forkserver.py): as isolated as a fresh interpreter, without the
  seconds of the import. `python -m` (the upgrade command, which imports no
  TensorFlow) and `fresh=True` (tests of import-time behaviour) get a fresh
  interpreter.
  """
  return forkserver.run_python(
      list(args), cwd=cwd, env=env or package_env(), capture_output=True,
      text=True, timeout=timeout, check=False,
      mode="fresh" if fresh else "auto")


def last_json(proc):
  """The JSON object on the last line of a program's stdout."""
  lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
  if proc.returncode != 0 or not lines:
    raise AssertionError(
        "The program failed (exit {}).\nstdout:\n{}\nstderr:\n{}".format(
            proc.returncode, proc.stdout, proc.stderr[-6000:]))
  return json.loads(lines[-1])
