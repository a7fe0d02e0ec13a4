# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Runs the complete training programs of tests/programs/ in subprocesses.

TF global state (graphs, `disable_v2_behavior()`, logical devices) must not
leak between tests, so each end-to-end program runs in its own process, with
this interpreter and the same `contrib_mixed_precision` the test imported
(the installed wheel, the source tree or Bazel's runfiles). The process is
forked from a server that has imported TensorFlow already (tests/forkserver.py),
which is as isolated as a fresh interpreter and seconds faster.
"""

import os
import subprocess

import contrib_mixed_precision
import forkserver

PROGRAMS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "programs")


def program_path(name: str) -> str:
  return os.path.join(PROGRAMS_DIR, name)


def child_env() -> dict:
  """This process's environment, with the package's root first on the path."""
  env = dict(os.environ)
  package_root = os.path.dirname(
      os.path.dirname(os.path.abspath(contrib_mixed_precision.__file__)))
  env["PYTHONPATH"] = os.pathsep.join(
      [package_root] +
      [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
  env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
  return env


def run_program(name: str, *args: str, timeout: float = 300) -> str:
  """Runs tests/programs/<name> with `args`; returns its combined output.

  Raises:
    AssertionError: If the program exits non-zero, with the end of its
      output.
  """
  proc = forkserver.run_python(
      [program_path(name)] + list(args), env=child_env(),
      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
      check=False)
  output = proc.stdout.decode("utf-8", "replace")
  if proc.returncode != 0:
    raise AssertionError("{} {} failed with exit status {}:\n{}".format(
        name, " ".join(args), proc.returncode, output[-6000:]))
  return output
