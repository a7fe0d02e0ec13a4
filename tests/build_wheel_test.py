# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""scripts/build_wheel.py: the test command's wheel holds tracked files only.

A contributor who follows a quick start that makes `.venv` inside the clone
has an untracked tree of thousands of files there. The wheel build must
neither copy it nor package it, and a module that git does not track must not
reach the wheel the tests install (a release would not have it either).

The test makes a small git repository from this tree's packaging files and
packages, adds untracked trees (a `.venv` of 3,000 files, one not named in
.gitignore) and stray files beside them, and builds the real wheel with the
real script.
"""

import os
import runpy
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile

from absl.testing import absltest

# Under Bazel, runfiles hold links into the source tree: follow setup.py's to
# copy whole packages, files no target declares included.
_REPO = os.path.dirname(os.path.realpath(os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "setup.py")))
_SCRIPT = os.path.join(_REPO, "scripts", "build_wheel.py")
_PACKAGES = ("contrib_mixed_precision", "contrib_mp_upgrade")


def _git(repo, *args):
  return subprocess.run(["git", "-C", repo] + list(args), check=True,
                        capture_output=True, text=True).stdout


def _copy_sources(dest):
  """setup.py's inputs and the two packages, without caches."""
  for name in ("setup.py", "pyproject.toml", "README.md", "LICENSE",
               ".gitignore"):
    shutil.copy2(os.path.join(_REPO, name), dest)
  for package in _PACKAGES:
    shutil.copytree(os.path.join(_REPO, package), os.path.join(dest, package),
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def _untracked_tree(root, files):
  """A virtualenv-like tree of `files` small files under `root`."""
  os.makedirs(os.path.join(root, "bin"))
  with open(os.path.join(root, "pyvenv.cfg"), "w") as f:
    f.write("home = /usr/bin\n")
  for i in range(files):
    d = os.path.join(root, "lib", "site-packages", "pkg{}".format(i // 100))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "m{}.py".format(i)), "w") as f:
      f.write("X = {}\n".format(i))


def _in_a_chroot() -> bool:
  """Whether this suite runs in one of the matrix's Debian chroots."""
  name = os.environ.get("CMP_TEST_ENV")
  if not name:
    return False
  matrix = runpy.run_path(os.path.join(_REPO, "scripts", "ci_matrix.py"))
  env = {e.name: e for e in matrix["load"](_REPO).environments}.get(name)
  return env is not None and bool(env.debian)


class BuildWheelTest(absltest.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    if shutil.which("git") is None:
      if _in_a_chroot():
        # The full suites' Debian chroots have no git: their wheel is
        # built on the host, where the host environments run this test.
        raise unittest.SkipTest("git is not in this environment's Debian "
                                "chroot; the wheel is built on the host")
      raise AssertionError("git is not installed; the test command's wheel "
                           "build needs it, and so does this test.")
    cls.tmp = tempfile.mkdtemp(prefix="build-wheel-test-")
    cls.repo = os.path.join(cls.tmp, "repo")
    os.makedirs(cls.repo)
    _copy_sources(cls.repo)
    _git(cls.repo, "init", "-q")
    _git(cls.repo, "add", "-A")
    cls.tracked = set(_git(cls.repo, "ls-files").split("\n")) - {""}
    # Untracked: an ignored `.venv`, a virtualenv under a name .gitignore
    # does not know, a stray module inside the package and a stray file at
    # the top; and an uncommitted edit of a tracked file.
    _untracked_tree(os.path.join(cls.repo, ".venv"), 3000)
    _untracked_tree(os.path.join(cls.repo, "myenv"), 50)
    with open(os.path.join(cls.repo, "contrib_mixed_precision",
                           "stray_untracked.py"), "w") as f:
      f.write("STRAY = True\n")
    with open(os.path.join(cls.repo, "notes.txt"), "w") as f:
      f.write("a local note\n")
    cls.init = os.path.join("contrib_mixed_precision", "__init__.py")
    with open(os.path.join(cls.repo, cls.init), "a") as f:
      f.write("# uncommitted edit, built from the working copy\n")
    cls.out = os.path.join(cls.tmp, "out")
    cls.proc = subprocess.run(
        [sys.executable, _SCRIPT, cls.out, "--repo", cls.repo],
        capture_output=True, text=True, check=False, timeout=600)

  @classmethod
  def tearDownClass(cls):
    shutil.rmtree(cls.tmp, ignore_errors=True)
    super().tearDownClass()

  def _built(self):
    self.assertEqual(self.proc.returncode, 0, self.proc.stderr[-4000:])
    return self.proc.stdout.strip().splitlines()[-1]

  def test_the_gitignore_ignores_virtualenvs_in_the_clone(self):
    status = _git(self.repo, "status", "--porcelain", "--untracked-files=all")
    self.assertNotIn(".venv", status)
    self.assertIn("myenv/", status)  # Not ignored, and still not copied.

  def test_staging_holds_exactly_the_tracked_files(self):
    self._built()
    src = os.path.join(self.out, "src")
    staged = set()
    for directory, _, names in os.walk(src):
      staged |= {os.path.relpath(os.path.join(directory, n), src)
                 for n in names}
    # What pip's build writes into the tree it builds (build/, egg-info).
    staged = {p for p in staged
              if not p.startswith(("build" + os.sep, "contrib_mixed_precision."
                                   "egg-info"))}
    self.assertEqual(staged, self.tracked)

  def test_the_wheel_has_no_untracked_file_and_the_working_copy_edit(self):
    with zipfile.ZipFile(self._built()) as wheel:
      names = wheel.namelist()
      init = wheel.read(self.init.replace(os.sep, "/")).decode()
    self.assertFalse([n for n in names if "stray" in n or "venv" in n
                      or "myenv" in n or "notes" in n], names)
    self.assertIn("contrib_mp_upgrade/__main__.py", names)
    self.assertIn("uncommitted edit, built from the working copy", init)

  def test_it_names_the_untracked_module_it_left_out(self):
    self._built()
    self.assertIn("contrib_mixed_precision/stray_untracked.py",
                  self.proc.stderr)
    self.assertIn("git add", self.proc.stderr)
    # Only the packages are asked about: not the virtualenvs or the note.
    self.assertNotIn("myenv", self.proc.stderr)
    self.assertNotIn("notes.txt", self.proc.stderr)


if __name__ == "__main__":
  absltest.main()
