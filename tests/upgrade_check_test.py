# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""`contrib-mp-upgrade --check` and its pre-commit hook, from the user's side.

A team that converted its tree runs `--check` in CI and pre-commit so that
no `tf.contrib.mixed_precision` use comes back. The command runs here as a
subprocess (`python -m contrib_mp_upgrade`, what the console script calls)
over a tree written by the test: every import form, attribute chains, a
dynamic import by literal, a notebook cell, a file that does not parse, a
broken notebook and clean files. Each expected `path:line:col` is computed
here from the fixture text with `str.find`, independently of libcst; the
test then checks the exit status and that nothing was written anywhere.

These tests do not import TensorFlow.
"""

import ctypes
import json
import os
import runpy
import shlex
import shutil
import subprocess
import sys
import tempfile

from absl.testing import absltest

import contrib_mp_upgrade
from contrib_mp_upgrade import rewrite

_ROOT = os.path.dirname(os.path.dirname(
    os.path.abspath(contrib_mp_upgrade.__file__)))
# The repository (the manifest, setup.py): the package may be installed.
_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_FIX = "run contrib-mp-upgrade to convert it"

_TRAIN = '''"""Trains with loss scaling, TF 1.15 style."""
import importlib
import tensorflow as tf
import tensorflow.contrib.mixed_precision as mp_mod
from tensorflow.contrib.mixed_precision import FixedLossScaleManager
from tensorflow.contrib import mixed_precision


def build(loss):
  opt = tf.contrib.mixed_precision.LossScaleOptimizer(
      tf.train.GradientDescentOptimizer(0.1),
      FixedLossScaleManager(128))
  dyn = importlib.import_module("tensorflow.contrib.mixed_precision")
  # tf.contrib.mixed_precision in a comment is not a use.
  text = "tf.contrib.mixed_precision in a string is not a use"
  return opt, dyn, mp_mod, mixed_precision, text


\u00e9chelle = tf.contrib.mixed_precision.FixedLossScaleManager(2)
'''

# Tab indentation: a tab is one character of the column, as in flake8/ruff.
_TABS = ("import tensorflow as tf\n\n\ndef f():\n"
         "\treturn tf.contrib.mixed_precision.LossScaleOptimizer\n")

# Mentions the name, so libcst reads it, but uses nothing.
_CLEAN = ('import tensorflow.compat.v1 as tf\n\n'
          'POLICY = "mixed_precision"  # tf.contrib.mixed_precision: gone\n')

_PY2 = 'import tensorflow as tf\n\nprint "scale", tf.contrib.mixed_precision\n'

# An executable script without a suffix (pre-commit's `types: [python]`
# matches it by its shebang).
_SCRIPT = ("#!/usr/bin/env python\nimport tensorflow as tf\n"
           "m = tf.contrib.mixed_precision.FixedLossScaleManager(8)\n")

_NB_CELLS = [
    ("markdown", "# Loss scaling\nUses `tf.contrib.mixed_precision`."),
    ("code", ["%matplotlib inline\n", "import tensorflow as tf\n"]),
    ("markdown", "More words."),
    ("code", ["x = 1\n",
              "opt = tf.contrib.mixed_precision.LossScaleOptimizer(o, m)\n"]),
    ("code", ["%%bash\n", "echo tf.contrib.mixed_precision.X\n"]),
    ("raw", "tf.contrib.mixed_precision"),
]


def _notebook(cells):
  out = []
  for kind, source in cells:
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
      cell.update(outputs=[], execution_count=None)
    out.append(cell)
  return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                     "cells": out}, indent=1) + "\n"


_FILES = {
    "pkg/train.py": _TRAIN,
    "pkg/tabs.py": _TABS,
    "pkg/clean.py": _CLEAN,
    "pkg/old_py2.py": _PY2,
    "bin/run_training": _SCRIPT,
    "nb/train.ipynb": _notebook(_NB_CELLS),
    "nb/broken.ipynb": '{"cells": [\n',
    "README.md": "We used tf.contrib.mixed_precision.LossScaleOptimizer.\n",
}


def _site(text, needle, nth=0):
  """`(line, column)`, from 1, of the `nth` occurrence of `needle`."""
  offset = -1
  for _ in range(nth + 1):
    offset = text.find(needle, offset + 1)
    if offset < 0:
      raise AssertionError("{!r} is not in the fixture".format(needle))
  line = text.count("\n", 0, offset) + 1
  return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _line(path, needle, message, text=None):
  line, column = _site(text if text is not None else _FILES[path], needle)
  return "{}:{}:{}: {}".format(path, line, column, message)


def _expected_uses(prefix=""):
  """The use lines of the convertible files, by path, from the text."""
  gone = "{} is gone in TF 2: " + _FIX
  imports = "{} imports tf.contrib.mixed_precision, which TF 2 does not " \
            "have: " + _FIX
  train = {
      "import tensorflow.contrib.mixed_precision as mp_mod": imports,
      "from tensorflow.contrib.mixed_precision import FixedLossScaleManager":
          imports,
      "from tensorflow.contrib import mixed_precision": imports,
      "tf.contrib.mixed_precision.LossScaleOptimizer": gone,
      'importlib.import_module("tensorflow.contrib.mixed_precision")': imports,
      "tf.contrib.mixed_precision.FixedLossScaleManager": gone,
  }
  lines = {"pkg/train.py": [
      _line(prefix + "pkg/train.py", needle, form.format(needle),
            _FILES["pkg/train.py"]) for needle, form in train.items()]}
  needle = "tf.contrib.mixed_precision.LossScaleOptimizer"
  lines["pkg/tabs.py"] = [_line(prefix + "pkg/tabs.py", needle,
                                gone.format(needle), _TABS)]
  needle = "tf.contrib.mixed_precision.FixedLossScaleManager"
  lines["bin/run_training"] = [_line(prefix + "bin/run_training", needle,
                                     gone.format(needle), _SCRIPT)]
  # The notebook: `cell_N` counts every cell, as the report does.
  needle = "tf.contrib.mixed_precision.LossScaleOptimizer"
  line, column = _site("".join(_NB_CELLS[3][1]), needle)
  lines["nb/train.ipynb"] = ["{}nb/train.ipynb:cell_4:{}:{}: {}".format(
      prefix, line, column, gone.format(needle))]
  return lines


def _expected_errors(prefix=""):
  line, _ = _site(_PY2, 'print "scale"')
  return {
      "pkg/old_py2.py": "{}pkg/old_py2.py:{}:1: error: it does not parse as "
                        "Python 3".format(prefix, line),
      "nb/broken.ipynb": "{}nb/broken.ipynb:1:1: error: not valid "
                         "JSON".format(prefix),
  }


def _env():
  env = dict(os.environ)
  env["PYTHONPATH"] = os.pathsep.join(
      p for p in (_ROOT, env.get("PYTHONPATH")) if p)
  env["PYTHONDONTWRITEBYTECODE"] = "1"
  return env


def _bind_permissions():
  """A `preexec_fn`: file permissions apply to the child even as root.

  It drops CAP_DAC_OVERRIDE (1) and CAP_DAC_READ_SEARCH (2) from the
  bounding set (prctl PR_CAPBSET_DROP, 24), as tests/upgrade_tree_test.py
  does.
  """
  if os.geteuid() == 0:
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):
      if libc.prctl(24, cap, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def _run(args, cwd, enforce_permissions=False):
  return subprocess.run(
      [sys.executable, "-m", "contrib_mp_upgrade"] + list(args), cwd=cwd,
      env=_env(), capture_output=True, text=True, timeout=300, check=False,
      preexec_fn=_bind_permissions if enforce_permissions else None)


def _state(root):
  """`{relative path: (mtime_ns, bytes or None)}` of everything under root."""
  out = {}
  for directory, dirs, files in os.walk(root):
    for name in dirs + files:
      path = os.path.join(directory, name)
      data = None
      if os.path.isfile(path):
        with open(path, "rb") as f:
          data = f.read()
      out[os.path.relpath(path, root)] = (os.stat(path).st_mtime_ns, data)
  return out


def _write(root, files):
  for name, text in files.items():
    path = os.path.join(root, *name.split("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
      f.write(text)
    if text.startswith("#!"):
      os.chmod(path, 0o755)


class CheckTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    self.work = tempfile.mkdtemp(prefix="check-test-")
    self.addCleanup(shutil.rmtree, self.work, ignore_errors=True)
    _write(os.path.join(self.work, "proj"), _FILES)

  def _unchanged(self, before):
    self.assertEqual(_state(self.work), before)

  def test_tree_lists_every_site_sorted_and_writes_nothing(self):
    before = _state(self.work)
    result = _run(["--check", "--intree", "proj"], self.work)
    self.assertEqual(result.returncode, 1, result.stderr)
    lines = result.stdout.splitlines()
    # A tree is walked as a conversion walks it: `*.py` and `*.ipynb`
    # files; the suffixless script is checked when named (pre-commit).
    uses = sum((v for k, v in _expected_uses("proj/").items()
                if k != "bin/run_training"), [])
    errors = _expected_errors("proj/")
    # The use lines exactly; each error line by its location and cause.
    self.assertCountEqual([l for l in lines if ": error: " not in l], uses)
    got_errors = [l for l in lines if ": error: " in l]
    self.assertLen(got_errors, 2, result.stdout)
    for expected in errors.values():
      self.assertTrue(any(l.startswith(expected) for l in got_errors),
                      (expected, got_errors))
    for line in got_errors:
      self.assertTrue(line.endswith("contrib-mp-upgrade cannot check it"),
                      line)
    # Sorted as linters print them: by path, then cell, line and column.

    def key(line):
      path, rest = line.split(":", 1)
      parts = rest.split(":")
      cell = int(parts.pop(0)[5:]) if parts[0].startswith("cell_") else 0
      return path, cell, int(parts[0]), int(parts[1])

    self.assertEqual(lines, sorted(lines, key=key))
    self.assertIn("6 file(s) checked", result.stderr)
    self.assertIn("8 use(s) of tf.contrib.mixed_precision left in 3 file(s)",
                  result.stderr)
    self.assertIn("2 file(s) could not be checked", result.stderr)
    self._unchanged(before)

  def test_paths_as_pre_commit_passes_them(self):
    before = _state(self.work)
    paths = ["proj/pkg/train.py", "proj/nb/train.ipynb", "proj/pkg/clean.py",
             "proj/bin/run_training"]
    result = _run(["--check"] + paths, self.work)
    self.assertEqual(result.returncode, 1, result.stderr)
    expected = _expected_uses("proj/")
    self.assertEqual(
        result.stdout.splitlines(),
        expected["bin/run_training"] + expected["nb/train.ipynb"] +
        sorted(expected["pkg/train.py"],
               key=lambda l: [int(x) for x in l.split(":")[1:3]]))
    # The exact words of one line, as the user reads them.
    line, column = _site(_TRAIN, "tf.contrib.mixed_precision.Loss")
    self.assertIn(
        "proj/pkg/train.py:{}:{}: tf.contrib.mixed_precision."
        "LossScaleOptimizer is gone in TF 2: run contrib-mp-upgrade to "
        "convert it\n".format(line, column), result.stdout)
    self._unchanged(before)

  def test_clean_files_pass_silently(self):
    before = _state(self.work)
    for args in (["--check", "proj/pkg/clean.py"],
                 ["--check", "--infile", "proj/pkg/clean.py"]):
      result = _run(args, self.work)
      self.assertEqual((result.returncode, result.stdout, result.stderr),
                       (0, "", ""), args)
    self._unchanged(before)

  def test_unparsable_file_fails_the_check(self):
    before = _state(self.work)
    for path in ("pkg/old_py2.py", "nb/broken.ipynb"):
      result = _run(["--check", "proj/" + path], self.work)
      self.assertEqual(result.returncode, 1, result.stderr)
      self.assertLen(result.stdout.splitlines(), 1)
      self.assertStartsWith(result.stdout, _expected_errors("proj/")[path])
    self._unchanged(before)

  def test_unreadable_paths_fail_the_check_and_links_do_not(self):
    pkg = os.path.join(self.work, "proj", "pkg")
    os.symlink("missing.py", os.path.join(pkg, "dangling.py"))
    os.symlink(os.path.join(pkg, "train.py"), os.path.join(pkg, "again.py"))
    locked = os.path.join(self.work, "proj", "locked")
    os.mkdir(locked)
    os.chmod(os.path.join(pkg, "clean.py"), 0)
    os.chmod(locked, 0)
    self.addCleanup(os.chmod, locked, 0o755)
    self.addCleanup(os.chmod, os.path.join(pkg, "clean.py"), 0o644)
    result = _run(["--check", "proj/pkg", "proj/locked"], self.work,
                  enforce_permissions=True)
    self.assertEqual(result.returncode, 1, result.stderr)
    errors = [l for l in result.stdout.splitlines() if ": error: " in l]
    self.assertEqual([l.split(": error: ")[0] for l in errors],
                     ["proj/locked:1:1", "proj/pkg/clean.py:1:1",
                      "proj/pkg/old_py2.py:3:1"])
    self.assertIn("could not be listed", errors[0])
    self.assertIn("could not be read", errors[1])
    # A link inside the tree is checked at its target; a dangling one hides
    # no code.
    self.assertNotIn("dangling", result.stdout)
    self.assertNotIn("again.py", result.stdout)
    self.assertIn("proj/pkg/train.py:", result.stdout)
    # A named file that cannot be read fails too.
    result = _run(["--check", "proj/pkg/clean.py"], self.work,
                  enforce_permissions=True)
    self.assertEqual(result.returncode, 1, result.stderr)
    self.assertStartsWith(result.stdout,
                          "proj/pkg/clean.py:1:1: error: could not be read")
    self.assertIn("check its permissions", result.stdout)
    self.assertNotIn("--infile", result.stdout)

  def test_a_missing_path_is_named_as_missing(self):
    # Issue 52, item 14: a file pre-commit passes after a rename, or a
    # typo. The message named `--infile`, which the user never typed, and
    # told them to check the permissions of a file that is not there.
    before = _state(self.work)
    result = _run(["--check", "proj/pkg/clean.py", "proj/pkg/gone.py"],
                  self.work)
    self.assertEqual(result.returncode, 1, result.stderr)
    self.assertEqual(result.stdout.splitlines(), [
        "proj/pkg/gone.py:1:1: error: could not be read ([Errno 2] No such "
        "file or directory): pass the path of an existing file; "
        "contrib-mp-upgrade cannot check it"])
    self.assertIn("1 file(s) could not be checked", result.stderr)
    self._unchanged(before)

  def test_a_link_that_cannot_be_followed_fails_the_check(self):
    # Not dangling and not a loop: following it fails (here its target's
    # name is too long), so what it leads to is unknown and may be code.
    # The check must not pass a tree it could not read whole.
    pkg = os.path.join(self.work, "proj", "pkg")
    link = os.path.join(pkg, "far.py")
    os.symlink("x" * 300 + ".py", link)
    result = _run(["--check", "proj/pkg/clean.py", "proj/pkg"], self.work)
    self.assertEqual(result.returncode, 1, result.stderr)
    errors = [l for l in result.stdout.splitlines() if ": error: " in l]
    self.assertTrue(any(l.startswith("proj/pkg/far.py:1:1: error: ") and
                        "cannot be followed" in l for l in errors), errors)
    # Alone in a clean directory, it is the only finding.
    clean = os.path.join(self.work, "clean")
    os.mkdir(clean)
    os.symlink("y" * 300, os.path.join(clean, "far.py"))
    result = _run(["--check", "clean"], self.work)
    self.assertEqual(result.returncode, 1, result.stderr)
    self.assertLen(result.stdout.splitlines(), 1, result.stdout)
    self.assertIn("could not be checked", result.stderr)

  def test_flags_that_write_are_usage_errors(self):
    before = _state(self.work)
    for flags, named in ((["--outtree", "out"], "--outtree"),
                         (["--outfile", "out.py"], "--outfile"),
                         (["--inplace"], "--inplace"),
                         (["--tf_upgrade_v2"], "--tf_upgrade_v2"),
                         (["--dry_run"], "--dry_run"),
                         (["--reportfile", "r.txt"], "--reportfile")):
      result = _run(["--check", "--intree", "proj"] + flags, self.work)
      self.assertEqual(result.returncode, 2, flags)
      self.assertEqual(result.stdout, "")
      self.assertIn("`--check` only reads and reports, so it cannot be "
                    "combined with `{}`".format(named), result.stderr)
    result = _run(["proj/pkg/train.py"], self.work)
    self.assertEqual(result.returncode, 2)
    self.assertIn("go with `--check` only", result.stderr)
    result = _run(["--check"], self.work)
    self.assertEqual(result.returncode, 2)
    self.assertIn("`--check` needs something to check", result.stderr)
    result = _run(["--check", "--intree", "nowhere"], self.work)
    self.assertEqual(result.returncode, 2)
    self.assertIn("'nowhere' does not exist (or is not a directory)",
                  result.stderr)
    self._unchanged(before)

  def test_file_name_that_is_not_utf8_is_printed_as_its_bytes(self):
    root = os.fsencode(os.path.join(self.work, "proj", "pkg"))
    with open(os.path.join(root, b"caf\xe9.py"), "wb") as f:
      f.write(b"import tensorflow as tf\n"
              b"x = tf.contrib.mixed_precision.FixedLossScaleManager(1)\n")
    result = subprocess.run(
        [sys.executable, "-m", "contrib_mp_upgrade", "--check", "--intree",
         "proj/pkg"], cwd=self.work, env=dict(_env(), LC_ALL="C.UTF-8"),
        capture_output=True, timeout=300, check=False)
    self.assertEqual(result.returncode, 1, result.stderr)
    self.assertIn(b"\nproj/pkg/caf\xe9.py:2:5: tf.contrib.mixed_precision.",
                  b"\n" + result.stdout)
    self.assertNotIn(b"Traceback", result.stderr)

  def test_converted_tree_passes(self):
    result = _run(["--intree", "proj", "--outtree", "out", "--reportfile",
                   "report.txt"], self.work)
    self.assertEqual(result.returncode, 0, result.stderr)
    before = _state(self.work)
    result = _run(["--check", "--intree", "out"], self.work)
    # Only the two files nobody can convert are left, still reported.
    self.assertEqual(result.returncode, 1, result.stderr)
    errors = _expected_errors("out/")
    self.assertEqual(
        [l[:len(e)] for l, e in zip(result.stdout.splitlines(),
                                    [errors["nb/broken.ipynb"],
                                     errors["pkg/old_py2.py"]])],
        [errors["nb/broken.ipynb"], errors["pkg/old_py2.py"]])
    self.assertLen(result.stdout.splitlines(), 2)
    self._unchanged(before)
    os.remove(os.path.join(self.work, "out", "pkg", "old_py2.py"))
    os.remove(os.path.join(self.work, "out", "nb", "broken.ipynb"))
    result = _run(["--check", "--intree", "out"], self.work)
    self.assertEqual((result.returncode, result.stdout, result.stderr),
                     (0, "", ""))
    # The notebook was converted too.
    result = _run(["--check", "out/nb/train.ipynb"], self.work)
    self.assertEqual((result.returncode, result.stdout), (0, ""))

  def test_change_column_defaults_for_old_callers(self):
    self.assertEqual(rewrite.Change(3, "a", "b").column, 0)


def _manifest(text):
  """The hooks of a pre-commit manifest, as a list of dicts.

  Reads the YAML this manifest uses (a list of flat mappings: `key: value`,
  `[a, b]` lists, `>-` folded text) without PyYAML, which not every test
  environment has.
  """
  hooks, key = [], None
  for line in text.splitlines():
    if not line.strip() or line.lstrip().startswith("#"):
      continue
    if line.startswith("- "):
      hooks.append({})
      line = "  " + line[2:]
    if line.startswith("    ") and key is not None:  # Folded text.
      hooks[-1][key] = (hooks[-1][key] + " " + line.strip()).strip()
      continue
    key, value = line.strip().split(":", 1)
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
      value = [v.strip() for v in value[1:-1].split(",") if v.strip()]
    elif value in (">-", ">"):
      value = ""
    hooks[-1][key] = value
  return hooks


def _hook():
  with open(os.path.join(_REPO, ".pre-commit-hooks.yaml"),
            encoding="utf-8") as f:
    hooks = _manifest(f.read())
  found = [h for h in hooks if h["id"] == "contrib-mp-upgrade-check"]
  if len(found) != 1:
    raise AssertionError("no contrib-mp-upgrade-check hook in {}".format(
        hooks))
  return found[0]


def _pre_commit_files(root):
  """The files pre-commit passes for `types_or: [python, jupyter]`."""
  out = []
  for directory, _, files in os.walk(root):
    for name in files:
      path = os.path.join(directory, name)
      with open(path, "rb") as f:
        first = f.readline()
      # identify reads the shebang of executable files only.
      if (name.endswith((".py", ".ipynb")) or
          (first.startswith(b"#!") and b"python" in first and
           os.access(path, os.X_OK))):
        out.append(os.path.relpath(path, root))
  return sorted(out)


def _convert(root):
  """Converts the hook test's files in place with the real command."""
  reports = tempfile.mkdtemp(prefix="check-hook-report-")
  try:
    for args in (["--intree", "pkg"], ["--intree", "nb"],
                 ["--infile", "bin/run_training"]):
      result = _run(args + ["--inplace", "--reportfile",
                            os.path.join(reports, "report.txt")], root)
      if result.returncode != 0:
        raise AssertionError(result.stderr)
  finally:
    shutil.rmtree(reports)


def _in_a_chroot() -> bool:
  """Whether this suite runs in one of the matrix's Debian chroots."""
  name = os.environ.get("CMP_TEST_ENV")
  if not name:
    return False
  repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  matrix = runpy.run_path(os.path.join(repo, "scripts", "ci_matrix.py"))
  env = {e.name: e for e in matrix["load"](repo).environments}.get(name)
  return env is not None and bool(env.debian)


class PreCommitHookTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    self.work = tempfile.mkdtemp(prefix="check-hook-test-")
    self.addCleanup(shutil.rmtree, self.work, ignore_errors=True)
    # A tree pre-commit would accept: no file that cannot be read.
    self.files = {k: v for k, v in _FILES.items()
                  if k not in ("pkg/old_py2.py", "nb/broken.ipynb")}
    _write(self.work, self.files)

  def test_manifest_runs_the_check(self):
    hook = _hook()
    self.assertEqual(hook["language"], "python")
    self.assertEqual(sorted(hook["types_or"]), ["jupyter", "python"])
    self.assertIn("libcst", hook["additional_dependencies"])
    self.assertNotIn("tensorflow", " ".join(hook["additional_dependencies"]))
    entry = shlex.split(hook["entry"])
    self.assertEqual(entry[:2], ["contrib-mp-upgrade", "--check"])
    # The console script pre-commit installs calls `cli.main`, which
    # `python -m contrib_mp_upgrade` calls too.
    with open(os.path.join(_REPO, "setup.py"), encoding="utf-8") as f:
      self.assertIn('"contrib-mp-upgrade=contrib_mp_upgrade.__main__:main"',
                    f.read())
    files = _pre_commit_files(self.work)
    self.assertEqual(files, ["bin/run_training", "nb/train.ipynb",
                             "pkg/clean.py", "pkg/tabs.py", "pkg/train.py"])
    # As pre-commit runs it: entry, then `args`, then the file names.
    argv = entry[1:] + list(hook.get("args", [])) + files
    result = _run(argv, self.work)
    self.assertEqual(result.returncode, 1, result.stderr)
    expected = _expected_uses()
    self.assertCountEqual(result.stdout.splitlines(),
                          sum(expected.values(), []))
    _convert(self.work)
    result = _run(argv, self.work)
    self.assertEqual((result.returncode, result.stdout, result.stderr),
                     (0, "", ""))

  def test_real_pre_commit_when_installed(self):
    # Every lock installs pre-commit (issue 43), beside this interpreter;
    # it runs here for real with the manifest's file types on a local hook
    # (a `system` hook needs no network). Under CI a missing one fails.
    pre_commit = (shutil.which("pre-commit",
                               path=os.path.dirname(sys.executable)) or
                  shutil.which("pre-commit"))
    git = shutil.which("git")
    if git is None and pre_commit is not None and _in_a_chroot():
      # The full suites' Debian chroots have no git (pre-commit needs a
      # repository); tf221, on the host, runs this test, git and all.
      self.skipTest("git is not in this environment's Debian chroot")
    if pre_commit is None or git is None:
      if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        self.fail("CI=true, but pre-commit (every requirements/*.txt "
                  "installs it) or git is not installed: pre-commit={}, "
                  "git={}".format(pre_commit, git))
      self.skipTest("pre-commit or git is not installed")
    hook = _hook()
    config = {"repos": [{"repo": "local", "hooks": [{
        "id": hook["id"], "name": hook["name"], "language": "system",
        "entry": "{} -m contrib_mp_upgrade --check".format(
            shlex.quote(sys.executable)),
        "types_or": hook["types_or"]}]}]}
    with open(os.path.join(self.work, ".pre-commit-config.yaml"), "w",
              encoding="utf-8") as f:
      json.dump(config, f)  # JSON is YAML.
    env = dict(_env(), PRE_COMMIT_HOME=os.path.join(self.work, ".cache"),
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    with open(os.path.join(self.work, ".gitignore"), "w") as f:
      f.write(".cache/\n")
    for args in (["init", "-q"], ["add", "-A"]):
      subprocess.run([git] + args, cwd=self.work, env=env, check=True)

    def pre_commit_run():
      return subprocess.run([pre_commit, "run", "--all-files"],
                            cwd=self.work, env=env, capture_output=True,
                            text=True, timeout=600, check=False)

    result = pre_commit_run()
    self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
    for line in sum(_expected_uses().values(), []):
      self.assertIn(line, result.stdout)
    _convert(self.work)
    subprocess.run([git, "add", "-A"], cwd=self.work, env=env, check=True)
    result = pre_commit_run()
    self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
    self.assertIn("Passed", result.stdout)


if __name__ == "__main__":
  absltest.main()
