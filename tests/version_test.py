# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Checks that setup.py, version.py, the CI matrix, the wheel and README agree.

`contrib_mixed_precision/version.py` is the single source of the package
version, the supported TensorFlow range and the Python versions that range
runs on; `requirements/environments.toml` (read by `scripts/ci_matrix.py`) is
the single source of what CI tests. Everything else that states them is
checked against them here.

The repository is found next to this file: under scripts/run_tests.sh that is
the source tree (pytest runs from an empty directory, with the wheel
installed), under Bazel it is the runfiles tree. These tests read files only;
they do not import the package (and so not TensorFlow).
"""

import importlib.metadata
import os
import re
import runpy
import subprocess
import sys
from unittest import mock

from absl.testing import absltest
from absl.testing import parameterized
from packaging import requirements
from packaging import specifiers
import setuptools

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SETUP_PY = os.path.join(_REPO, "setup.py")
_DIST_NAME = "contrib_mixed_precision"


def _ci_matrix():
  """scripts/ci_matrix.py, loaded from its path (scripts/ is no package)."""
  path = os.path.join(_REPO, "scripts", "ci_matrix.py")
  return runpy.run_path(path)


def _minor(version):
  return ".".join(version.split(".")[:2])


def _as_tuple(version):
  return tuple(int(x) for x in version.split("."))


def _read(relpath):
  with open(os.path.join(_REPO, relpath), encoding="utf-8") as f:
    return f.read()


def _version_module():
  """The globals of the repository's version.py, executed on its own."""
  path = os.path.join(_REPO, "contrib_mixed_precision", "version.py")
  namespace = {}
  exec(compile(_read(path), path, "exec"), namespace)  # pylint: disable=exec-used
  return namespace


def _setup_kwargs():
  """Runs setup.py with `setuptools.setup` mocked; returns its keywords."""
  # pip runs setup.py from its own directory; find_packages() relies on it.
  cwd = os.getcwd()
  os.chdir(_REPO)
  try:
    with mock.patch.object(setuptools, "setup") as fake_setup:
      runpy.run_path(_SETUP_PY, run_name="__main__")
  finally:
    os.chdir(cwd)
  if fake_setup.call_count != 1:
    raise AssertionError("setup.py called setup() {} times, expected once."
                         .format(fake_setup.call_count))
  return fake_setup.call_args.kwargs


def _readme_table():
  """Parses the README's compatibility table.

  Returns:
    (header line, {TensorFlow: status}, {TensorFlow: Python},
     {TensorFlow: Python in CI}).
  """
  readme = _read("README.md")
  match = re.search(
      r"<!-- compat-table:start -->\n(.*?)<!-- compat-table:end -->", readme,
      re.DOTALL)
  if not match:
    raise AssertionError("README.md has no compat-table markers.")
  lines = [l.strip() for l in match.group(1).strip().splitlines()
           if l.startswith("|")]
  header, rows = lines[0], lines[2:]
  table, pythons, ci_pythons = {}, {}, {}
  for row in rows:
    cells = [c.strip() for c in row.strip("|").split("|")]
    table[cells[0]] = cells[-1]
    pythons[cells[0]] = cells[1]
    ci_pythons[cells[0]] = [p for p in cells[2].split(", ") if p]
  return header, table, pythons, ci_pythons


class VersionTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if not os.path.exists(_SETUP_PY):
      self.skipTest("setup.py not found next to the tests ({}): these checks "
                    "need the source tree.".format(_REPO))
    self.version = _version_module()

  def test_version_py_range_is_consistent(self):
    v = self.version
    self.assertRegex(v["__version__"], r"^\d+\.\d+\.\d+([a-z]+\d+)?$")
    self.assertEqual(
        v["TF_REQUIREMENT_RANGE"],
        ">={},<{}".format(v["MIN_TF_VERSION"], v["MAX_TF_VERSION"]))

  def test_setup_py_version_matches_version_py(self):
    # The real command-line path, as a build backend would run it.
    result = subprocess.run(
        [sys.executable, _SETUP_PY, "--version"], cwd=_REPO,
        capture_output=True, text=True, check=False)
    self.assertEqual(result.returncode, 0, msg=result.stderr)
    self.assertEqual(result.stdout.strip().splitlines()[-1],
                     self.version["__version__"])

  @parameterized.parameters("tensorflow", "tensorflow-cpu")
  def test_setup_py_tf_extra_pins_supported_range(self, extra):
    kwargs = _setup_kwargs()
    self.assertEqual(kwargs["extras_require"][extra],
                     [extra + self.version["TF_REQUIREMENT_RANGE"]])

  def test_setup_py_legacy_keras_extra_pins_supported_range(self):
    # tf-keras is versioned with TensorFlow: 2.N needs TensorFlow 2.N.
    kwargs = _setup_kwargs()
    self.assertEqual(kwargs["extras_require"]["legacy-keras"],
                     ["tf-keras" + self.version["TF_REQUIREMENT_RANGE"]])

  def test_setup_py_does_not_require_tensorflow(self):
    kwargs = _setup_kwargs()
    for requirement in kwargs["install_requires"]:
      self.assertNotRegex(requirement, r"^tensorflow",
                          msg="TensorFlow belongs in an extra, not in "
                          "install_requires.")
    self.assertIn("packaging", kwargs["install_requires"])

  @parameterized.parameters(
      ("test", ["absl-py", "hypothesis", "libcst", "matplotlib", "pytest"]),
      ("demo", ["matplotlib"]),
      ("upgrade", ["libcst"]),
  )
  def test_setup_py_optional_extras(self, extra, expected):
    kwargs = _setup_kwargs()
    self.assertContainsSubset(expected, kwargs["extras_require"][extra])

  def test_setup_py_metadata(self):
    kwargs = _setup_kwargs()
    self.assertEqual(kwargs["name"], _DIST_NAME)
    self.assertEqual(kwargs["version"], self.version["__version__"])
    self.assertEqual(kwargs["python_requires"],
                     self.version["PYTHON_REQUIREMENT"])
    # Every package directory of the tree, and nothing else (no tests/):
    # the runtime package and the TF-free upgrade command's package.
    packages = sorted(
        os.path.relpath(d, _REPO).replace(os.sep, ".")
        for top in (_DIST_NAME, "contrib_mp_upgrade")
        for d, _, files in os.walk(os.path.join(_REPO, top))
        if "__init__.py" in files)
    self.assertEqual(sorted(kwargs["packages"]), packages)
    self.assertIn("contrib-mp-upgrade=contrib_mp_upgrade.__main__:main",
                  kwargs["entry_points"]["console_scripts"])
    self.assertEqual(kwargs["long_description"], _read("README.md"))

  def test_pyproject_declares_the_setuptools_build_backend(self):
    # Without it pip builds with the legacy `setup.py bdist_wheel`, which it
    # deprecates (and drops in pip 25.3). tomllib: Python 3.11+.
    try:
      import tomllib  # pylint: disable=g-import-not-at-top
    except ImportError:
      self.skipTest("tomllib needs Python 3.11+")
    with open(os.path.join(_REPO, "pyproject.toml"), "rb") as f:
      build = tomllib.load(f)["build-system"]
    self.assertEqual(build["build-backend"], "setuptools.build_meta")
    self.assertTrue(any(r.startswith("setuptools") for r in build["requires"]))

  def test_readme_table_header_names_version(self):
    header, _, _, _ = _readme_table()
    self.assertIn(self.version["__version__"], header)

  def test_readme_table_rows_match_supported_range(self):
    _, table, _, _ = _readme_table()
    low = tuple(int(x) for x in self.version["MIN_TF_VERSION"].split(".")[:2])
    high = tuple(int(x) for x in self.version["MAX_TF_VERSION"].split(".")[:2])
    expected_minors = ["{}.{}".format(low[0], m)
                       for m in range(low[1], high[1])]
    listed_minors = [k for k in table if re.match(r"^\d+\.\d+$", k)]
    self.assertCountEqual(listed_minors, expected_minors)
    for minor in expected_minors:
      self.assertStartsWith(table[minor], "supported")
    self.assertIn("< {}.{}".format(*low), table)
    self.assertIn("ImportError", table["< {}.{}".format(*low)])
    self.assertIn(">= {}.{}".format(*high), table)
    self.assertIn("warning", table[">= {}.{}".format(*high)])

  def test_readme_table_marks_exactly_what_the_matrix_tests(self):
    _, table, _, ci_pythons = _readme_table()
    matrix = _ci_matrix()["load"](_REPO)
    newer = ">= {}.{}".format(*_as_tuple(self.version["MAX_TF_VERSION"])[:2])
    tested = {}
    for env in matrix.environments:
      # A nightly is the release after the range: the row of newer ones.
      row = newer if env.prerelease else env.tf_minor
      tested.setdefault(row, []).append(env)
    for row, envs in tested.items():
      for env in envs:
        self.assertIn("tested in CI", table[row])
        self.assertIn("{} on Python {}, {}".format(
            env.tf_version, env.python,
            "only " if env.only else env.suite + " suite"), table[row])
      self.assertCountEqual(ci_pythons[row], {e.python for e in envs},
                            msg=row)
    for tf_version, status in table.items():
      if tf_version not in tested:
        self.assertNotIn("tested in CI", status, msg=tf_version)
        self.assertEqual(ci_pythons[tf_version], [], msg=tf_version)

  def test_matrix_runs_every_supported_minor(self):
    matrix = _ci_matrix()["load"](_REPO)
    low = _as_tuple(self.version["MIN_TF_VERSION"])[:2]
    high = _as_tuple(self.version["MAX_TF_VERSION"])[:2]
    supported = ["{}.{}".format(low[0], m) for m in range(low[1], high[1])]
    releases = [e for e in matrix.environments if not e.prerelease]
    self.assertCountEqual({e.tf_minor for e in releases}, supported)
    for env in releases:
      # tfNNN[_pyNN] installs TF N.NN: a copied lock file with a stale pin
      # fails.
      self.assertEqual(
          env.name, "tf" + env.tf_minor.replace(".", "") + (
              "_py" + env.python.replace(".", "") if env.debian else ""),
          msg="{} pins TensorFlow {} for Python {}".format(
              env.requirements, env.tf_version, env.python))
    for env in matrix.environments:
      if env.prerelease:
        # The next release, after the range: it imports with a warning.
        self.assertGreaterEqual(_as_tuple(env.tf_minor), high,
                                msg=env.requirements)
        self.assertEqual(env.name, "tf_nightly")
    for minor in (supported[0], supported[-1]):
      self.assertIn("full", [e.suite for e in releases
                             if e.tf_minor == minor],
                    msg="The oldest and the newest TensorFlow run the full "
                    "suite.")

  def test_matrix_runs_both_ends_of_the_python_range(self):
    # The oldest Python with the oldest TensorFlow that has it, the newest
    # with the newest, both with the full suite.
    matrix = _ci_matrix()["load"](_REPO)
    for python in (self.version["MIN_PYTHON_VERSION"],
                   self.version["MAX_PYTHON_VERSION"]):
      envs = [e for e in matrix.environments
              if e.python == python and e.suite == "full"]
      with self.subTest(python=python):
        self.assertNotEmpty(envs, msg="No full-suite environment runs "
                            "Python {}.".format(python))

  def test_wheel_classifiers_name_the_pythons_ci_runs(self):
    matrix = _ci_matrix()["load"](_REPO)
    self.assertEqual(tuple(self.version["CI_PYTHON_VERSIONS"]),
                     matrix.pythons)
    kwargs = _setup_kwargs()
    listed = [c.rsplit(" :: ", 1)[1] for c in kwargs["classifiers"]
              if re.match(r"^Programming Language :: Python :: 3\.\d+$", c)]
    self.assertEqual(listed, list(matrix.pythons))

  def test_readme_names_the_untested_pythons(self):
    matrix = _ci_matrix()["load"](_REPO)
    untested = [p for p in self.version["SUPPORTED_PYTHON_VERSIONS"]
                if p not in matrix.pythons]
    readme = _read("README.md")
    table = readme[readme.index("<!-- compat-table:start -->"):
                   readme.index("<!-- compat-table:end -->")]
    note = [l for l in table.splitlines() if l.startswith("Python:")]
    self.assertLen(note, 1)
    if untested:
      self.assertIn("untested", note[0])
    for python in self.version["SUPPORTED_PYTHON_VERSIONS"]:
      mentioned = re.search(r"\b{}\b".format(re.escape(python)), note[0])
      with self.subTest(python=python):
        if python in untested:
          self.assertTrue(mentioned, msg=note[0])

  def test_python_range_derives_from_the_tensorflow_range(self):
    v = self.version
    low = _as_tuple(v["MIN_TF_VERSION"])[:2]
    high = _as_tuple(v["MAX_TF_VERSION"])[:2]
    self.assertCountEqual(
        v["TF_PYTHON_VERSIONS"],
        ["{}.{}".format(low[0], m) for m in range(low[1], high[1])])
    lows = [_as_tuple(lo) for lo, _ in v["TF_PYTHON_VERSIONS"].values()]
    highs = [_as_tuple(hi) for _, hi in v["TF_PYTHON_VERSIONS"].values()]
    self.assertEqual(v["PYTHON_REQUIREMENT"],
                     ">={}.{}".format(*min(lows)))
    self.assertEqual(
        [_as_tuple(p) for p in v["SUPPORTED_PYTHON_VERSIONS"]],
        [(3, m) for m in range(min(lows)[1], max(highs)[1] + 1)])

  def test_matrix_python_runs_every_tested_tensorflow(self):
    matrix = _ci_matrix()["load"](_REPO)
    for env in matrix.environments:
      if env.prerelease:
        continue  # Outside the range: no entry in TF_PYTHON_VERSIONS.
      low, high = self.version["TF_PYTHON_VERSIONS"][env.tf_minor]
      with self.subTest(env=env.name):
        self.assertBetween(_as_tuple(env.python), _as_tuple(low),
                           _as_tuple(high))

  def test_readme_states_the_tested_python(self):
    matrix = _ci_matrix()["load"](_REPO)
    readme = _read("README.md")
    start = readme.index("## Quick start")
    quick_start = readme[start:readme.index("\n## ", start)]
    for python in matrix.pythons:
      self.assertIn("Python {}".format(python), quick_start)
    self.assertNotRegex(readme, r"Python 3\.\d+\+",
                        msg="Say which Python is tested, not a range.")
    _, _, pythons, _ = _readme_table()
    for minor, (low, high) in self.version["TF_PYTHON_VERSIONS"].items():
      self.assertEqual(pythons[minor], "{}-{}".format(low, high))

  def test_testing_page_names_the_tests_the_core_suite_leaves_out(self):
    matrix = _ci_matrix()["load"](_REPO)
    testing = _read("docs/testing.md")
    for env in matrix.environments:
      for test in env.exclude:
        self.assertIn("`{}`".format(test), testing)

  def test_readme_table_is_what_the_generator_writes(self):
    script = os.path.join(_REPO, "scripts", "gen_compat_table.py")
    result = subprocess.run(
        [sys.executable, script, "--check", "--repo", _REPO],
        capture_output=True, text=True, check=False)
    self.assertEqual(result.returncode, 0, msg=result.stdout + result.stderr)

  def test_changelog_has_a_section_for_this_version(self):
    changelog = _read("CHANGELOG.md")
    self.assertRegex(
        changelog,
        r"(?m)^## \[(Unreleased|{})\]".format(
            re.escape(self.version["__version__"])))

  def test_changelog_is_keep_a_changelog(self):
    # Issue 43: one version section per release (this one says it is not
    # released yet), each kind of change under one heading.
    changelog = _read("CHANGELOG.md")
    versions = re.findall(r"(?m)^## \[([^\]]+)\](.*)$", changelog)
    self.assertNotEmpty(versions)
    names = [v for v, _ in versions]
    self.assertLen(set(names), len(names), msg=names)
    self.assertEqual(names[0], self.version["__version__"])
    self.assertRegex(versions[0][1], r"^ - (Unreleased|\d{4}-\d\d-\d\d)$")
    for section in re.split(r"(?m)^## ", changelog)[1:]:
      kinds = re.findall(r"(?m)^### (.+)$", section)
      self.assertLen(set(kinds), len(kinds),
                     msg="repeated headings: {}".format(kinds))
      for kind in kinds:
        self.assertRegex(kind, r"^(Added|Changed|Deprecated|Removed|Fixed|"
                         r"Security)\b")

  def test_prose_does_not_restate_which_environment_runs_which_suite(self):
    # Which suite each environment runs is generated from the matrix into
    # the README's compatibility notes. Elsewhere the README and the
    # CHANGELOG point there: a restated "2.15 and 2.21 run every test file"
    # went stale when the suites changed (issue 43). Only the chroot
    # environments' Pythons (3.9, 3.13) may be named with the full suite,
    # which each of them runs.
    matrix = _ci_matrix()["load"](_REPO)
    full_only = {e.python for e in matrix.environments if e.suite == "full"}
    self.assertTrue(all(e.debian for e in matrix.environments
                        if e.suite == "full"))
    readme = _read("README.md")
    start = readme.index("<!-- compat-table:start -->")
    end = readme.index("<!-- compat-table:end -->")
    texts = {"README.md": readme[:start] + readme[end:],
             "CHANGELOG.md": _read("CHANGELOG.md")}
    claim = re.compile(r"\b(runs?|with) (the (full|core|middle|only) "
                       r"suites?|every test file)\b|, the (full|core) suite")
    for name, text in texts.items():
      for sentence in re.split(r"(?<=[.;])\s+", " ".join(text.split())):
        if not claim.search(sentence):
          continue
        with self.subTest(file=name, sentence=sentence[:120]):
          self.assertTrue(
              "suite" not in claim.search(sentence).group(0)
              or "full" not in sentence
              or any("Python " + p in sentence for p in full_only),
              msg="{} restates a suite: {!r}".format(name, sentence))
          self.assertNotIn("every test file", claim.search(sentence).group(0))

  def test_installed_wheel_matches_version_py(self):
    if os.environ.get("CMP_EXPECT_INSTALLED") != "1":
      self.skipTest("Runs only against the installed wheel "
                    "(scripts/run_tests.sh sets CMP_EXPECT_INSTALLED=1).")
    dist = importlib.metadata.distribution(_DIST_NAME)
    self.assertEqual(dist.version, self.version["__version__"])
    requires = [requirements.Requirement(r) for r in dist.requires or []]
    for extra in ("tensorflow", "tensorflow-cpu"):
      pinned = [r for r in requires
                if r.marker and r.marker.evaluate({"extra": extra})]
      self.assertLen(pinned, 1, msg="extra [{}]: {}".format(extra, pinned))
      self.assertEqual(pinned[0].name, extra)
      self.assertEqual(pinned[0].specifier,
                       specifiers.SpecifierSet(
                           self.version["TF_REQUIREMENT_RANGE"]))
    self.assertFalse(
        [r for r in requires
         if r.name.startswith("tensorflow") and r.marker is None],
        msg="The wheel requires TensorFlow unconditionally.")
    self.assertEqual(
        [c.rsplit(" :: ", 1)[1] for c in dist.metadata.get_all("Classifier")
         if re.match(r"^Programming Language :: Python :: 3\.\d+$", c)],
        list(self.version["CI_PYTHON_VERSIONS"]))
    self.assertEqual(dist.metadata["Requires-Python"],
                     self.version["PYTHON_REQUIREMENT"])
    shipped = {str(f) for f in dist.files or []}
    self.assertIn("contrib_mixed_precision/__init__.py", shipped)
    self.assertFalse([f for f in shipped if f.startswith("tests/")],
                     msg="The wheel ships the tests.")
    # The wheel ships the very version.py of this tree.
    installed = dist.locate_file("contrib_mixed_precision/version.py")
    with open(installed, encoding="utf-8") as f:
      self.assertEqual(f.read(), _read("contrib_mixed_precision/version.py"))


if __name__ == "__main__":
  absltest.main()
