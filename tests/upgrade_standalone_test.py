# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The upgrade command stands alone: no TensorFlow, no runtime package.

`contrib-mp-upgrade` runs on the machine that holds the legacy code, where
TensorFlow may be absent or may be 1.15 (docs/design.md, contract 9). These
tests prove it two ways: importing every module of `contrib_mp_upgrade` loads
neither TensorFlow nor `contrib_mixed_precision`, and the installed console
script converts the fixture tree in a fresh virtualenv that holds only
libcst (pinned as in requirements/*.txt) and this distribution, installed
with `--no-deps`. (tests/build_test.py checks the same statically.)

The virtualenv test needs PyPI (or a pip cache) for libcst.
"""

import filecmp
import glob
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tempfile

from absl.testing import absltest

import contrib_mp_upgrade
from contrib_mp_upgrade import cli
import upgrade_fixture_util

_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.dirname(_HERE)
# Plain files even under Bazel, whose runfiles are symlinks.
_FIXTURE = upgrade_fixture_util.real_tree(
    os.path.join(_HERE, "testdata", "upgrade_fixture"))
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(
    os.path.abspath(contrib_mp_upgrade.__file__)))
_FORBIDDEN = ("tensorflow", "tensorflow_core", "contrib_mixed_precision",
              "keras", "tf_keras")
_LEAKS = """
import importlib, pkgutil, sys
import contrib_mp_upgrade
for info in pkgutil.iter_modules(contrib_mp_upgrade.__path__):
  importlib.import_module("contrib_mp_upgrade." + info.name)
print(sorted(m for m in sys.modules if m.split(".")[0] in {forbidden!r}))
""".format(forbidden=_FORBIDDEN)


def _libcst_pin():
  """The libcst version the requirements pin (else the one installed)."""
  pins = set()
  for path in glob.glob(os.path.join(_REPO, "requirements", "*.txt")):
    with open(path, encoding="utf-8") as f:
      pins.update(re.findall(r"(?m)^libcst==([\w.]+)", f.read()))
  if len(pins) == 1:
    return pins.pop()
  return importlib.metadata.version("libcst")


def _clean_env(path_dirs):
  """An environment without this test's PYTHONPATH or virtualenv."""
  env = {k: v for k, v in os.environ.items()
         if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PIP_REQUIRE"))}
  env["PATH"] = os.pathsep.join(path_dirs + ["/usr/bin", "/bin"])
  env["PYTHONNOUSERSITE"] = "1"
  return env


def _run(args, **kwargs):
  return subprocess.run(args, capture_output=True, text=True, check=False,
                        timeout=kwargs.pop("timeout", 300), **kwargs)


def _same_tree(test, left, right):
  comparison = filecmp.dircmp(left, right)
  pending = [comparison]
  while pending:
    current = pending.pop()
    test.assertEqual(current.left_only + current.right_only, [],
                     current.left)
    _, mismatch, errors = filecmp.cmpfiles(
        current.left, current.right, current.common_files, shallow=False)
    test.assertEqual(mismatch + errors, [], current.left)
    pending.extend(current.subdirs.values())


class StandaloneTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    self.tmp = tempfile.mkdtemp(prefix="upgrade_standalone_")
    self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

  def test_importing_every_module_loads_no_tensorflow(self):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
    proc = _run([sys.executable, "-c", _LEAKS], env=env)
    self.assertEqual(proc.returncode, 0, proc.stderr)
    self.assertEqual(proc.stdout.strip(), "[]")

  def test_installed_command_runs_in_a_venv_without_tensorflow(self):
    # The distribution, built from this source: both packages, no deps.
    source = os.path.join(self.tmp, "src")
    os.mkdir(source)
    for name in ("pyproject.toml", "setup.py", "README.md"):
      shutil.copy(os.path.join(_REPO, name), source)
    for package in ("contrib_mixed_precision", "contrib_mp_upgrade"):
      shutil.copytree(os.path.join(_PACKAGE_ROOT, package),
                      os.path.join(source, package),
                      ignore=shutil.ignore_patterns("__pycache__"))
    wheels = os.path.join(self.tmp, "wheels")
    proc = _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                 "--no-build-isolation", "-w", wheels, source])
    self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
    # pip 25.1+ deprecates building without pyproject.toml's build system
    # (the legacy `setup.py bdist_wheel`), and pip 25.3 refuses it.
    self.assertNotIn("DEPRECATION", proc.stdout + proc.stderr)
    wheel, = glob.glob(os.path.join(wheels, "*.whl"))

    venv = os.path.join(self.tmp, "venv")
    proc = _run([sys.executable, "-m", "venv", venv])
    self.assertEqual(proc.returncode, 0, proc.stderr)
    bin_dir = os.path.join(venv, "bin")
    python = os.path.join(bin_dir, "python")
    env = _clean_env([bin_dir])
    proc = _run([python, "-m", "pip", "install", "-q",
                 "--disable-pip-version-check",
                 "libcst==" + _libcst_pin()], env=env)
    self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
    proc = _run([python, "-m", "pip", "install", "-q", "--no-deps",
                 "--disable-pip-version-check", wheel], env=env)
    self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    # No TensorFlow there: the runtime package cannot even be imported.
    proc = _run([python, "-c", "import tensorflow"], env=env)
    self.assertIn("No module named 'tensorflow'", proc.stderr)
    proc = _run([python, "-c", "import contrib_mixed_precision"], env=env)
    self.assertNotEqual(proc.returncode, 0)
    proc = _run([python, "-c", _LEAKS], env=env, cwd=self.tmp)
    self.assertEqual(proc.stdout.strip(), "[]", proc.stderr)

    # The console script converts the tree as this environment does.
    command = os.path.join(bin_dir, "contrib-mp-upgrade")
    there = os.path.join(self.tmp, "there")
    proc = _run([command, "--intree", _FIXTURE, "--outtree", there,
                 "--reportfile", os.path.join(self.tmp, "there.txt")],
                env=env, cwd=self.tmp)
    self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
    self.assertIn("changed 16 file(s)", proc.stdout)
    here = os.path.join(self.tmp, "here")
    cli.run(intree=_FIXTURE, outtree=here,
            reportfile=os.path.join(self.tmp, "here.txt"))
    _same_tree(self, here, there)

    # `--version` names the version.py the wheel was built from (read,
    # not imported: importing contrib_mixed_precision fails here).
    proc = _run([command, "--version"], env=env, cwd=self.tmp)
    self.assertEqual(proc.returncode, 0, proc.stderr)
    with open(os.path.join(_PACKAGE_ROOT, "contrib_mixed_precision",
                           "version.py")) as f:
      version = re.search(r'^__version__ = "([^"]+)"$', f.read(),
                          re.M).group(1)
    self.assertEqual(proc.stdout, "contrib-mp-upgrade {}\n".format(version))

    # `--tf_upgrade_v2` needs TensorFlow's command: a clear error, and
    # nothing written.
    missing = os.path.join(self.tmp, "missing")
    proc = _run([command, "--intree", _FIXTURE, "--outtree", missing,
                 "--tf_upgrade_v2"], env=env, cwd=self.tmp)
    self.assertEqual(proc.returncode, 1)
    self.assertIn("`--tf_upgrade_v2` needs TensorFlow's `tf_upgrade_v2` "
                  "command", proc.stderr)
    self.assertFalse(os.path.exists(missing))


if __name__ == "__main__":
  absltest.main()
