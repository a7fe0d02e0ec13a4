# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Tests for the CI matrix: requirements/environments.toml and its readers.

The matrix is read by `noxfile.py` (the sessions scripts/run_tests.sh runs) and
by `scripts/gen_compat_table.py` (the README table). These tests run both
readers for real: the noxfile under a stand-in `nox` module that records what
it registers (nox itself is not installed in the test environments), the
table generator on a copy of the repository with a changed matrix.
"""

import ast
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import tempfile
import textwrap

from absl.testing import absltest
from absl.testing import parameterized

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CI_MATRIX = runpy.run_path(os.path.join(_REPO, "scripts", "ci_matrix.py"))
_MATRIX = _CI_MATRIX["load"](_REPO)
_CORE = [e for e in _MATRIX.environments if e.suite == "core"]
_FULL = [e for e in _MATRIX.environments if e.suite == "full"]
_ONLY = [e for e in _MATRIX.environments if e.only]
# What a test that starts TensorFlow imports: TensorFlow, tf-keras, or
# tests/util.py, whose run_python the tests that train converted programs
# use.
_TENSORFLOW_IMPORTS = frozenset({"tensorflow", "util", "tf_keras"})


def _upgrade_tests():
  tests_dir = os.path.join(_REPO, "tests")
  return sorted("tests/" + f for f in os.listdir(tests_dir)
                if f.startswith("upgrade") and f.endswith("_test.py"))


def _imports(test):
  """The top-level modules test file `test` imports (read from its AST)."""
  with open(os.path.join(_REPO, test), encoding="utf-8") as f:
    tree = ast.parse(f.read())
  imported = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      imported.update(a.name.split(".")[0] for a in node.names)
    elif isinstance(node, ast.ImportFrom) and node.module:
      imported.add(node.module.split(".")[0])
  return imported


# A stand-in for nox: records the sessions, their parameters and the options
# the noxfile sets, then prints them and what `pytest_args` returns.
_FAKE_NOX = textwrap.dedent("""\
    class _Options:
      sessions = None

    options = _Options()
    registered = {}

    class param:
      def __init__(self, *args, id=None, tags=None):
        self.args, self.id, self.tags = args, id, tags

    def parametrize(name, params):
      def decorate(func):
        func.nox_params = params
        return func
      return decorate

    def session(func=None, **kwargs):
      def decorate(f):
        registered[f.__name__] = [(p.id, p.tags, p.args[0].name)
                                  for p in getattr(f, "nox_params", [])]
        return f
      return decorate(func) if callable(func) else decorate
    """)

_PROBE = textwrap.dedent("""\
    import json, runpy, sys
    import nox
    g = runpy.run_path(sys.argv[1])
    calls = json.loads(sys.argv[2])
    print(json.dumps({
        "sessions": nox.options.sessions,
        "envdir": nox.options.envdir,
        "registered": nox.registered,
        "bazel_targets": g["bazel_targets"](g["MATRIX"]),
        "pytest_args": [g["pytest_args"](g["MATRIX"].get(env), posargs)
                        for env, posargs in calls],
    }))
    """)


def _run_noxfile(cmp_envs=None, calls=(), probe=_PROBE, env=None):
  """Imports noxfile.py under the stand-in nox; returns (returncode, out)."""
  tmp = tempfile.mkdtemp()
  try:
    os.makedirs(os.path.join(tmp, "nox"))
    with open(os.path.join(tmp, "nox", "__init__.py"), "w") as f:
      f.write(_FAKE_NOX)
    env = dict(os.environ, PYTHONPATH=tmp,
               CMP_CACHE_DIR=os.path.join(tmp, "cache"), **(env or {}))
    env.pop("CMP_ENVS", None)
    # Set by noxfile.py, or by `run_tests.sh --quick`, for the run these
    # tests are in.
    for k in ("CMP_FUZZ_ROUNDS", "CMP_FUZZ_FILES", "CMP_FUZZ_SEED",
              "CMP_QUICK"):
      env.pop(k, None)
    if cmp_envs is not None:
      env["CMP_ENVS"] = cmp_envs
    proc = subprocess.run(
        [sys.executable, "-c", probe, os.path.join(_REPO, "noxfile.py"),
         json.dumps(list(calls))],
        env=env, capture_output=True, text=True, check=False, cwd=tmp)
  finally:
    shutil.rmtree(tmp)
  if proc.returncode == 0:
    return 0, json.loads(proc.stdout.strip().splitlines()[-1])
  return proc.returncode, proc.stderr


def _copy_repo_subset(dest):
  """The files the matrix readers use, copied under `dest`."""
  for rel in ("README.md", "docs/testing.md",
              "contrib_mixed_precision/version.py",
              "scripts/ci_matrix.py", "scripts/gen_compat_table.py"):
    os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
    shutil.copy(os.path.join(_REPO, rel), os.path.join(dest, rel))
  shutil.copytree(os.path.join(_REPO, "requirements"),
                  os.path.join(dest, "requirements"))


def _read(path):
  with open(path, encoding="utf-8") as f:
    return f.read()


def _edit(path, old, new):
  text = _read(path)
  if old not in text:
    raise AssertionError("{!r} not in {}".format(old, path))
  with open(path, "w", encoding="utf-8") as f:
    f.write(text.replace(old, new, 1))


class NoxfileTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    python = "{}.{}".format(*sys.version_info[:2])
    if python != _MATRIX.python:
      # noxfile.py refuses any Python but the host's; the host's own
      # environments run these tests.
      self.skipTest("noxfile.py runs on Python {} only; this is Python "
                    "{}.".format(_MATRIX.python, python))

  def test_one_tests_session_per_environment_of_the_matrix(self):
    rc, out = _run_noxfile()
    self.assertEqual(rc, 0, msg=out)
    # The host's Python in nox's virtualenvs, the others in chroots.
    self.assertEqual(out["registered"]["tests"],
                     [[e.name, [e.name], e.name]
                      for e in _MATRIX.environments if not e.debian])
    self.assertEqual(out["registered"]["chroot_tests"],
                     [[e.name, [e.name], e.name]
                      for e in _MATRIX.environments if e.debian])
    self.assertIn("bazel", out["registered"])
    self.assertIsNone(out["sessions"])  # No CMP_ENVS: nox runs them all.

  @parameterized.parameters(
      [(e.name, "{}({})".format("chroot_tests" if e.debian else "tests",
                                e.name)) for e in _MATRIX.environments] +
      [("bazel", "bazel")])
  def test_env_option_selects_each_environment(self, name, session):
    rc, out = _run_noxfile(cmp_envs=name)
    self.assertEqual(rc, 0, msg=out)
    self.assertEqual(out["sessions"], [session])

  def test_env_option_keeps_the_order_given(self):
    rc, out = _run_noxfile(cmp_envs="bazel,tf221,tf216")
    self.assertEqual(rc, 0, msg=out)
    self.assertEqual(out["sessions"], ["bazel", "tests(tf221)",
                                       "tests(tf216)"])

  def test_unknown_environment_is_refused_with_the_choices(self):
    rc, err = _run_noxfile(cmp_envs="tf221,tf299")
    self.assertNotEqual(rc, 0)
    self.assertIn("unknown environment(s) tf299", err)
    for env in _MATRIX.environments:
      self.assertIn(env.name, err)

  def test_virtualenvs_live_in_the_cache_outside_the_clone(self):
    rc, out = _run_noxfile()
    self.assertEqual(rc, 0, msg=out)
    self.assertEqual(os.path.basename(out["envdir"]), "nox")
    self.assertFalse(out["envdir"].startswith(_REPO + os.sep))

  def test_core_suite_leaves_out_exactly_its_excluded_files(self):
    self.assertNotEmpty(_CORE)
    calls = [(e.name, []) for e in _CORE + _FULL + _ONLY]
    rc, out = _run_noxfile(calls=calls)
    self.assertEqual(rc, 0, msg=out)
    for (name, _), args in zip(calls, out["pytest_args"]):
      env = _MATRIX.get(name)
      ignored = [a[len("--ignore="):] for a in args
                 if a.startswith("--ignore=")]
      if env.only:
        with self.subTest(env=name):
          # Its include, and nothing else.
          self.assertNotIn(os.path.join(_REPO, "tests"), args)
          self.assertEqual(ignored, [])
          self.assertEqual([a for a in args if a.endswith("_test.py")],
                           [os.path.join(_REPO, t) for t in env.include])
        continue
      with self.subTest(env=name):
        # The whole tests/ directory, so a new test file is in every suite.
        self.assertIn(os.path.join(_REPO, "tests"), args)
        self.assertCountEqual(ignored,
                              [os.path.join(_REPO, t) for t in env.exclude])
        self.assertIn("--durations=10", args)
        # One worker per core, a test class kept on one worker.
        self.assertEqual(args[args.index("-n") + 1], "auto")
        self.assertEqual(args[args.index("--dist") + 1], "loadscope")

  def test_every_lock_pins_pytest_xdist(self):
    # pytest_args always passes `-n`, which plain pytest rejects.
    for env in _MATRIX.environments:
      with open(os.path.join(_REPO, env.requirements)) as f:
        pins = re.findall(r"(?m)^([\w.-]+)==", f.read())
      with self.subTest(env=env.name):
        self.assertIn("pytest-xdist", pins)
        self.assertIn("execnet", pins)

  def test_bazel_tests_every_target_but_the_excluded_tests(self):
    rc, out = _run_noxfile()
    self.assertEqual(rc, 0, msg=out)
    with open(os.path.join(_REPO, "BUILD"), encoding="utf-8") as f:
      py_tests = set(re.findall(r'py_test\(\s*name = "(\w+)"', f.read()))
    targets = out["bazel_targets"]
    self.assertEqual(targets[:2], ["--", "//..."])
    left_out = [t[len("-//:"):] for t in targets[2:]]
    self.assertCountEqual(
        left_out,
        [os.path.splitext(os.path.basename(t))[0]
         for t in _MATRIX.bazel_exclude])
    # Each is a real target: a misspelt one would make `bazel test` fail.
    self.assertContainsSubset(left_out, py_tests)

  def test_named_test_file_runs_even_where_the_suite_leaves_it_out(self):
    core = _CORE[0]
    excluded = core.exclude[0]
    rc, out = _run_noxfile(
        calls=[(core.name, [excluded + "::Case", "-k", "name"])])
    self.assertEqual(rc, 0, msg=out)
    args = out["pytest_args"][0]
    self.assertIn(os.path.join(_REPO, excluded) + "::Case", args)
    self.assertNotIn(os.path.join(_REPO, "tests"), args)
    self.assertFalse([a for a in args if a.startswith("--ignore=")])
    self.assertEqual(args[-2:], ["-k", "name"])

  def test_suites_exclude_only_existing_test_files(self):
    for test in sorted({t for e in _MATRIX.environments
                        for t in e.exclude + e.include}):
      with self.subTest(test=test):
        self.assertRegex(test, r"^tests/\w+_test\.py$")
        self.assertTrue(os.path.exists(os.path.join(_REPO, test)),
                        msg="{} names {}, which does not exist: a test "
                        "it meant to leave out or add is not.".format(
                            _CI_MATRIX["MATRIX_FILE"], test))

  def test_core_variants_leave_out_what_the_core_suite_does(self):
    # A test file added to the core suite's exclude list (a slow or upgrade
    # test) must leave the variants too, unless a variant runs it by name.
    core = set(_MATRIX.suite_exclude["core"])
    for env in [e for e in _MATRIX.environments
                if e.suite not in ("full", "core") and not e.only]:
      with self.subTest(env=env.name):
        missing = core - set(_MATRIX.suite_exclude[env.suite])
        self.assertEqual(missing, set(), "suite {!r} runs what the core "
                         "suite leaves out".format(env.suite))

  def test_core_suite_keeps_the_core_tests(self):
    # The package's own behaviour on every TF minor, including what the
    # issues ask to run on each: the threaded counter (policy_property), the
    # parameter-server cluster and the docs' snippets. (The upgrade command
    # is TF-independent, and the alias test checks the import system's view
    # of `tensorflow`: the full suites at both ends of the range run them.)
    core_tests = ("loss_scale_manager", "loss_scale_optimizer", "hooks",
                  "checkpoint_modes", "tf115_checkpoint", "import_check",
                  "validation", "policy_property", "ps_cluster",
                  "docs_snippets", "skip_decision", "applied_update",
                  "keras_fit")
    # Every suite but the full one: the core suite and its variants.
    for env in [e for e in _MATRIX.environments
                if e.suite != "full" and not e.only]:
      for name in core_tests:
        self.assertNotIn("tests/{}_test.py".format(name), env.exclude)
    # And on every TensorFlow of the matrix, some environment runs them: an
    # environment of `only` a few files leaves its TensorFlow's suite to
    # another (a chroot's full suite).
    for minor in sorted({e.tf_minor for e in _MATRIX.environments}):
      envs = [e for e in _MATRIX.environments if e.tf_minor == minor]
      for name in core_tests:
        test = "tests/{}_test.py".format(name)
        with self.subTest(tf=minor, test=name):
          self.assertTrue([e for e in envs if e.runs(test)])

  def test_each_full_suite_file_runs_at_an_end_of_the_range(self):
    # A full suite may leave a file to the other end's (CI time, issue 43);
    # no file is left out of both.
    tests_dir = os.path.join(_REPO, "tests")
    every = sorted("tests/" + f for f in os.listdir(tests_dir)
                   if f.endswith("_test.py"))
    self.assertLen(_FULL, 2)
    for test in every:
      with self.subTest(test=test):
        self.assertTrue([e for e in _FULL if e.runs(test)])
      # And only what the core suite leaves out: the core suite's own files
      # run in full at both ends.
      if test not in _MATRIX.suite_exclude["core"]:
        self.assertTrue(all(e.runs(test) for e in _FULL))

  def test_a_host_run_runs_every_upgrade_test(self):
    # Issue 43: a contributor without root runs only the host's
    # environments. Each of them runs the fuzz test (`[host]`, a seed of its
    # own); each other upgrade test runs in one of them. Bazel's suite
    # leaves them out.
    upgrade = _upgrade_tests()
    self.assertGreaterEqual(len(upgrade), 18)
    host = [e for e in _MATRIX.environments if not e.debian]
    self.assertGreaterEqual(len(host), 8)
    self.assertIn("tests/upgrade_fuzz_test.py", _MATRIX.host_include)
    self.assertContainsSubset(_MATRIX.host_include, upgrade)
    for test in upgrade:
      runs_in = [e.name for e in host if e.runs(test)]
      with self.subTest(test=test):
        if test in _MATRIX.host_include:
          self.assertLen(runs_in, len(host))
        else:
          self.assertLen(runs_in, 1, "{} runs in {}".format(test, runs_in))
    for env in host:
      with self.subTest(env=env.name):
        self.assertCountEqual(env.host, _MATRIX.host_include)
        self.assertIn(_MATRIX.host_description, _CI_MATRIX["runs"](env))
    self.assertContainsSubset(upgrade, _MATRIX.bazel_exclude)

  def test_upgrade_tests_run_in_the_full_suites(self):
    # Those that start no TensorFlow test the command on the Pythons at both
    # ends of the range (3.9, 3.13): both full suites run them. Each of the
    # others, which run converted programs on TensorFlow, runs in one at
    # least (CI time, issue 43).
    for test in _upgrade_tests():
      with self.subTest(test=test):
        runs_in = [e.name for e in _FULL if e.runs(test)]
        if _imports(test) & _TENSORFLOW_IMPORTS:
          self.assertNotEmpty(runs_in)
        else:
          self.assertLen(runs_in, len(_FULL))

  def test_host_upgrade_tests_start_no_tensorflow(self):
    # `[host]` is for the tests that need no TensorFlow: none imports it,
    # or tests/util.py, whose run_python the tests that train converted
    # programs use. (TensorFlow in a fixture's text is not an import.) A
    # test that starts TensorFlow only in a child of its own, as
    # upgrade_blockers_test does, is not caught here: the reviewer is.
    for test in _MATRIX.host_include:
      with self.subTest(test=test):
        self.assertNoCommonElements(_imports(test), _TENSORFLOW_IMPORTS)

  def test_fuzz_runs_one_round_an_environment_with_its_own_seed(self):
    rc, out = _run_noxfile(calls=(), probe=textwrap.dedent("""\
        import json, runpy, sys
        import nox
        g = runpy.run_path(sys.argv[1])
        print(json.dumps({e.name: g["fuzz_settings"](e)
                          for e in g["MATRIX"].environments}))
        """))
    self.assertEqual(rc, 0, msg=out)
    every = [e.name for e in _MATRIX.environments]
    self.assertEqual({out[n]["CMP_FUZZ_ROUNDS"] for n in every}, {"1"})
    self.assertEqual({out[n]["CMP_FUZZ_FILES"] for n in every}, {"40"})
    self.assertLen({out[n]["CMP_FUZZ_SEED"] for n in every}, len(every))

  def test_uv_installs_with_pips_index(self):
    # noxfile.py's own install step, under a stand-in session: the uv
    # command gets the index that pip's configuration names.
    rc, out = _run_noxfile(calls=(), probe=textwrap.dedent("""\
        import json, os, runpy, sys, tempfile
        import nox
        g = runpy.run_path(sys.argv[1])
        calls = []
        class Venv:
          location = tempfile.mkdtemp()
          def create(self):
            pass
        class Session:
          virtualenv = Venv()
          def run(self, *args, **kwargs):
            calls.append([list(args), kwargs.get("env")])
            return ""
          def log(self, *args):
            pass
          def error(self, *args):
            raise SystemExit(" ".join(args))
        g["_prepare_venv"](Session(), g["MATRIX"].get("tf221"))
        print(json.dumps(calls))
        """), env={"PIP_INDEX_URL": "https://pypi.example.invalid/simple",
                   "PIP_CONFIG_FILE": os.devnull})
    self.assertEqual(rc, 0, msg=out)
    uv = [c for c in out if c[0][1:3] == ["pip", "install"]]
    self.assertLen(uv, 1, msg=out)
    self.assertTrue(uv[0][0][0].endswith("/uv"))
    self.assertEqual(uv[0][1]["UV_DEFAULT_INDEX"],
                     "https://pypi.example.invalid/simple")
    self.assertEqual(uv[0][1]["UV_SYSTEM_CERTS"], "1")


class MatrixFileTest(parameterized.TestCase):

  def test_quick_check_is_the_newest_release_on_the_host(self):
    quick = _MATRIX.get(_CI_MATRIX["quick_env"](_MATRIX))
    self.assertIsNone(quick.debian)
    self.assertFalse(quick.prerelease)
    newest = max(tuple(int(p) for p in e.tf_version.split(".")[:2])
                 for e in _MATRIX.environments if not e.prerelease)
    self.assertEqual(tuple(int(p) for p in quick.tf_version.split(".")[:2]),
                     newest)

  def setUp(self):
    super().setUp()
    self.repo = tempfile.mkdtemp()
    self.addCleanup(shutil.rmtree, self.repo, ignore_errors=True)
    _copy_repo_subset(self.repo)
    self.toml = os.path.join(self.repo, "requirements", "environments.toml")

  def _gen_table(self, *args):
    return subprocess.run(
        [sys.executable,
         os.path.join(self.repo, "scripts", "gen_compat_table.py"),
         "--repo", self.repo] + list(args),
        capture_output=True, text=True, check=False)

  def test_each_environment_reads_its_tensorflow_from_its_lock(self):
    for env in _MATRIX.environments:
      with open(os.path.join(_REPO, env.requirements)) as f:
        text = f.read()
      with self.subTest(env=env.name):
        self.assertIn("\n{}=={}\n".format(env.tf_package, env.tf_version),
                      text)

  def test_minor_without_environment_is_not_marked_tested(self):
    _edit(self.toml, '[env.tf217]\nsuite = "middle"\n'
          'include = ["tests/upgrade_walkthrough_test.py",\n'
          '           "tests/upgrade_keras2_trees_test.py"]\n', "")
    proc = self._gen_table("--print")
    self.assertEqual(proc.returncode, 0, msg=proc.stderr)
    row = [l for l in proc.stdout.splitlines() if l.startswith("| 2.17 |")]
    self.assertEqual(
        row, ["| 2.17 | 3.9-3.12 |  | supported, not tested in CI |"])
    self.assertNotIn("2.17.1", proc.stdout)

  def test_table_quotes_the_pinned_version(self):
    req = os.path.join(self.repo, "requirements", "tf218.txt")
    _edit(req, "\ntensorflow-cpu==2.18.1\n", "\ntensorflow-cpu==2.18.0\n")
    proc = self._gen_table("--print")
    self.assertEqual(proc.returncode, 0, msg=proc.stderr)
    self.assertIn("| 2.18 | 3.9-3.12 | 3.11 | supported, tested in CI (2.18.0 "
                  "on Python 3.11, middle suite + `upgrade_runs_test.py` + "
                  "the upgrade command's fuzz test (its own seed)) |",
                  proc.stdout)

  def test_changed_matrix_makes_the_readme_stale(self):
    self.assertEqual(self._gen_table("--check").returncode, 0)
    _edit(self.toml, '[env.tf_nightly]\nsuite = "core"', '[env.tf_nightly]\n'
          'suite = "middle"')
    proc = self._gen_table("--check")
    self.assertEqual(proc.returncode, 1)
    self.assertIn("stale", proc.stderr)

  def test_nightly_row_names_the_pin_only_when_an_environment_runs_it(self):
    proc = self._gen_table("--print")
    self.assertEqual(proc.returncode, 0, msg=proc.stderr)
    nightly = _MATRIX.get("tf_nightly")
    row = [l for l in proc.stdout.splitlines() if l.startswith("| >= ")]
    self.assertEqual(row, [
        "| >= 2.22 |  | 3.11 | imports with a warning; tested in CI "
        "(tf-nightly {} on Python 3.11, core suite + `upgrade_test.py` + "
        "the upgrade command's fuzz test (its own seed)) "
        "|".format(
            nightly.tf_version)])
    _edit(self.toml, '[env.tf_nightly]\nsuite = "core"\n'
          'include = ["tests/upgrade_test.py"]\n', "")
    proc = self._gen_table("--print")
    self.assertEqual(proc.returncode, 0, msg=proc.stderr)
    row = [l for l in proc.stdout.splitlines() if l.startswith("| >= ")]
    self.assertEqual(row, ["| >= 2.22 |  |  | untested: imports with a "
                           "warning |"])
    self.assertNotIn("nightly", proc.stdout)

  def test_python_without_environment_is_named_untested(self):
    # The environment's table: up to the end of its `exclude` list.
    text = _read(self.toml)
    start = text.index("[env.tf221_py313]")
    end = text.index("]\n", text.index("exclude = [", start)) + 2
    _edit(self.toml, text[start:end], "")
    proc = self._gen_table("--print")
    self.assertEqual(proc.returncode, 0, msg=proc.stderr)
    self.assertIn("Python 3.10, 3.12 and 3.13 are inside the range, but no "
                  "CI environment runs them: untested.", proc.stdout)
    row = [l for l in proc.stdout.splitlines() if l.startswith("| 2.21 |")]
    self.assertLen(row, 1)
    self.assertStartsWith(row[0], "| 2.21 | 3.10-3.13 | 3.11 | supported, "
                          "tested in CI (2.21.0 on Python 3.11, only "
                          "`upgrade_advice_test.py` + ")
    self.assertEndsWith(row[0], " + the upgrade command's fuzz test (its "
                        "own seed), and the core suite under Bazel) |")

  def test_nightly_inside_the_supported_range_is_refused(self):
    req = os.path.join(self.repo, "requirements", "tf_nightly.txt")
    _edit(req, "\ntf-nightly==2.23.0.dev", "\ntf-nightly==2.21.0.dev")
    proc = self._gen_table("--print")
    self.assertEqual(proc.returncode, 2)
    self.assertIn("a nightly inside the supported range", proc.stderr)

  def test_environment_outside_the_supported_range_is_refused(self):
    req = os.path.join(self.repo, "requirements", "tf215.txt")
    _edit(req, "\ntensorflow-cpu==2.15.1\n", "\ntensorflow-cpu==2.14.1\n")
    proc = self._gen_table("--print")
    self.assertEqual(proc.returncode, 2)
    self.assertIn("requirements/tf215.txt tests TensorFlow 2.14.1, outside "
                  "the supported range >=2.15.0,<2.22.0", proc.stderr)

  @parameterized.named_parameters(
      ("unknown_suite", "toml", '[env.tf216]\nsuite = "core"',
       '[env.tf216]\nsuite = "nightly"',
       "environment 'tf216' has suite 'nightly'; expected one of "
       "['core', 'full', 'middle', 'only']"),
      ("no_pin", "tf220.txt", "\ntensorflow-cpu==2.20.0\n", "\n",
       "tf220.txt must pin `tensorflow-cpu==X.Y.Z` (or "
       "`tf-nightly==X.Y.Z.devN`) exactly once; found no pin"),
      ("two_pins", "tf220.txt", "\ntensorflow-cpu==2.20.0\n",
       "\ntensorflow-cpu==2.20.0\ntensorflow_cpu==2.19.1\n",
       "found ['tensorflow-cpu==2.20.0', 'tensorflow_cpu==2.19.1']"),
      ("nightly_and_release", "tf_nightly.txt", "\ntf-nightly==",
       "\ntensorflow-cpu==2.21.0\ntf-nightly==",
       "found ['tensorflow-cpu==2.21.0', 'tf-nightly=="),
      ("nightly_not_dev", "tf_nightly.txt", "\ntf-nightly==2.23.0.dev20261026",
       "\ntf-nightly==2.23.0", "pins tf-nightly==2.23.0; a nightly is a "
       "`.devN` build"),
      ("other_python_without_chroot", "toml",
       'python = "3.13"\ndebian = "trixie"\n', 'python = "3.13"\n',
       "environment 'tf221_py313' runs Python 3.13, not the host's 3.11: "
       "name the Debian suite that ships it"),
      ("bad_bazel_env", "toml", 'bazel_env = "tf221"',
       'bazel_env = "tf222"', "bazel_env 'tf222' is not one of the "
       "environments"),
      ("bad_bazel_suite", "toml", 'bazel_suite = "core"',
       'bazel_suite = "fast"', "bazel_suite 'fast' is not one of the suites"),
      ("include_what_the_suite_runs", "toml",
       'include = ["tests/upgrade_notebook_test.py"]',
       'include = ["tests/api_test.py"]',
       "environment 'tf220' includes tests/api_test.py, which its suite "
       "'core' runs anyway"),
      ("only_in_a_chroot_without_include", "toml",
       '[env.tf221_py313]\nsuite = "full"',
       '[env.tf221_py313]\nsuite = "only"',
       "environment 'tf221_py313' has suite 'only', which runs only the "
       "files its "
       "environment's `include` names: give it an `include` and no "
       "`exclude`"),
      ("exclude_what_the_suite_excludes", "toml",
       '[env.tf216]\nsuite = "core"',
       '[env.tf216]\nsuite = "core"\nexclude = ["tests/alias_test.py"]',
       "environment 'tf216' excludes tests/alias_test.py, which its suite "
       "'core' excludes already"),
      ("bazel_suite_of_only", "toml", 'bazel_suite = "core"',
       'bazel_suite = "only"', "bazel_suite 'only' runs only an "
       "environment's `include`, and Bazel has none: name a suite of "
       "`exclude`s, one of ['core', 'full', 'middle']"),
      ("host_without_description", "toml",
       'description = "the upgrade command\'s fuzz test (its own seed)"\n',
       '',
       "`[host]` names files without a `description`"),
      ("missing_lock", "toml", '[env.tf221]', '[env.tf2210]',
       "environment 'tf2210' has no requirements file "
       "requirements/tf2210.txt"),
  )
  def test_malformed_matrix_is_a_clear_error(self, where, old, new, message):
    path = self.toml if where == "toml" else os.path.join(
        self.repo, "requirements", where)
    _edit(path, old, new)
    with self.assertRaises(_CI_MATRIX["MatrixError"]) as cm:
      _CI_MATRIX["load"](self.repo)
    self.assertIn(message, str(cm.exception))
    # The generator reports it too, instead of writing a table.
    proc = self._gen_table("--print")
    self.assertEqual(proc.returncode, 2)
    self.assertIn(message, proc.stderr)
    self.assertEqual(proc.stdout, "")


class ScriptsTest(absltest.TestCase):
  """scripts/run_tests.sh and scripts/chroot_env.sh, where they refuse."""

  def _tmpdir(self):
    path = tempfile.mkdtemp()
    self.addCleanup(shutil.rmtree, path, ignore_errors=True)
    return path

  def _run(self, args, env=None):
    # Bazel's sandbox sets no HOME, which the scripts' defaults read.
    full = dict(os.environ, **(env or {}))
    full.setdefault("HOME", self._tmpdir())
    return subprocess.run(args, capture_output=True, text=True, check=False,
                          env=full, stdin=subprocess.DEVNULL)

  def test_run_tests_names_the_host_python_when_refusing_another(self):
    # The environments' own `python = "3.9"` lines must not be read as the
    # host's Python.
    fake = os.path.join(self._tmpdir(), "python")
    with open(fake, "w") as f:
      f.write("#!/bin/sh\necho 3.10\n")
    os.chmod(fake, 0o755)
    proc = self._run([os.path.join(_REPO, "scripts", "run_tests.sh")],
                     env={"PYTHON": fake})
    self.assertEqual(proc.returncode, 2, msg=proc.stderr)
    self.assertEqual(
        proc.stderr,
        "run_tests.sh: the matrix is built with Python {0}, but PYTHON={1} "
        "is Python 3.10. Set PYTHON to a Python {0}.\n".format(
            _MATRIX.python, fake))

  def test_chroot_env_refuses_a_directory_that_is_no_built_root(self):
    tmp = self._tmpdir()
    proc = self._run(["bash", os.path.join(_REPO, "scripts", "chroot_env.sh"),
                      "run", tmp, "--", "true"])
    self.assertEqual(proc.returncode, 2)
    if os.getuid() == 0:
      self.assertIn("{} is not a complete root".format(tmp),
                    proc.stderr)
    else:
      self.assertIn("needs root", proc.stderr)

  def test_chroot_env_refuses_a_missing_lock_file(self):
    if os.getuid() != 0:
      self.skipTest("chroot_env.sh build needs root")
    proc = self._run(
        ["bash", os.path.join(_REPO, "scripts", "chroot_env.sh"), "build",
         "tf221_py313", "trixie", "3.13", "/nonexistent/lock.txt"],
        env={"CMP_CACHE_DIR": self._tmpdir()})
    self.assertEqual(proc.returncode, 2)
    self.assertIn("no lock file '/nonexistent/lock.txt'", proc.stderr)

  def test_chroot_key_follows_the_code_not_its_comments(self):
    tmp = self._tmpdir()
    with open(os.path.join(_REPO, "scripts", "chroot_env.sh")) as f:
      script = f.read()
    variants = {
        "same": script,
        # A comment, in and out of a function: the same root.
        "comments": script.replace(
            "cmd_build() {\n", "# A note.\ncmd_build() {\n  # Another.\n"),
        # A change to what debootstrap installs: a new root.
        "code": script.replace("--variant=minbase",
                               "--variant=minbase --verbose"),
    }
    self.assertNotEqual(variants["code"], script)
    self.assertNotEqual(variants["comments"], script)
    lock = os.path.join(_REPO, "requirements", "tf221.txt")
    keys = {}
    for name, text in variants.items():
      path = os.path.join(tmp, name + ".sh")
      with open(path, "w") as f:
        f.write(text)
      proc = self._run(["bash", path, "key", "trixie", "3.13", lock])
      self.assertEqual(proc.returncode, 0, proc.stderr)
      keys[name] = proc.stdout.strip()
    self.assertRegex(keys["same"], "^[0-9a-f]{16}$")
    self.assertEqual(keys["comments"], keys["same"])
    self.assertNotEqual(keys["code"], keys["same"])
    # And the lock file counts.
    proc = self._run(["bash", os.path.join(tmp, "same.sh"), "key", "trixie",
                      "3.13", os.path.join(_REPO, "requirements",
                                           "tf220.txt")])
    self.assertNotEqual(proc.stdout.strip(), keys["same"])


if __name__ == "__main__":
  absltest.main()
