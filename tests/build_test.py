# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Keeps the Bazel BUILD file complete as modules and tests are added.

BUILD declares one `py_library` per module and one `py_test` per test file,
with explicit deps and no glob, so nothing picks up a new file by itself. These
tests fail when a file has no target, a target names a missing file, or a
target imports a module of this repository that is not in its deps.

It also keeps the upgrade command's package, `contrib_mp_upgrade`, free of
TensorFlow: its modules may import only the standard library, libcst and
each other, and no BUILD dep of theirs may lead into `contrib_mixed_precision`
(whose `__init__` imports TensorFlow).

BUILD is Starlark, which parses as Python, so it is read with `ast`. The
source tree is found through BUILD itself: from pytest it sits next to
tests/; under Bazel the runfiles copy is a symlink into the source tree, so
files that no target declares can still be listed.
"""

import ast
import os
import runpy
import sys

from absl.testing import absltest

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PACKAGE = "contrib_mixed_precision"
# The upgrade command: stdlib + libcst only (docs/design.md, contract 9).
_UPGRADE_PACKAGE = "contrib_mp_upgrade"
# The benchmark (`python -m benchmarks`): not installed, but its modules
# have targets and deps like the packages'.
_BENCHMARK_PACKAGE = "benchmarks"
_PACKAGES = (_PACKAGE, _UPGRADE_PACKAGE, _BENCHMARK_PACKAGE)
# sys.stdlib_module_names is Python 3.10+; on 3.9 (CI's oldest Python) the
# check below skips: the sources it reads are the same on every Python.
_UPGRADE_MAY_IMPORT = (
    frozenset(sys.stdlib_module_names) | {"libcst", _UPGRADE_PACKAGE}
    if hasattr(sys, "stdlib_module_names") else None)
_RULES = ("py_library", "py_test", "py_binary")


def _find_repo():
  build = os.path.join(_HERE, "BUILD")
  if not os.path.exists(build):
    return None
  return os.path.dirname(os.path.realpath(build))


def _literal(node, what):
  try:
    return ast.literal_eval(node)
  except ValueError as e:
    raise AssertionError(
        "BUILD: {} must be a literal (no glob() or expressions): {}".format(
            what, ast.unparse(node))) from e


def _parse_build(repo):
  """Returns ({name: target}, [glob call lines]) for the root BUILD file.

  Each target is a dict with `rule`, `name`, `srcs`, `deps` and `data`.
  """
  with open(os.path.join(repo, "BUILD"), encoding="utf-8") as f:
    tree = ast.parse(f.read(), filename="BUILD")
  targets, globs = {}, []
  for node in ast.walk(tree):
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
      continue
    if node.func.id == "glob":
      globs.append(node.lineno)
    if node.func.id not in _RULES:
      continue
    kwargs = {k.arg: k.value for k in node.keywords}
    name = _literal(kwargs["name"], "name")
    target = {"rule": node.func.id, "name": name}
    for attr in ("srcs", "deps", "data"):
      target[attr] = (_literal(kwargs[attr], "{}.{}".format(name, attr))
                      if attr in kwargs else [])
    if name in targets:
      raise AssertionError("BUILD: target {!r} is declared twice.".format(name))
    targets[name] = target
  return targets, globs


def _py_files(repo, subdir):
  return sorted(
      "{}/{}".format(subdir, f) for f in os.listdir(os.path.join(repo, subdir))
      if f.endswith(".py"))


def _local_label(label):
  """':x' or '//:x' -> 'x'; None for labels in other packages or repos."""
  if label.startswith(":"):
    return label[1:]
  if label.startswith("//:"):
    return label[3:]
  return None


def _imported_files(repo, src):
  """Repository files that `src` imports: package modules and test helpers."""
  with open(os.path.join(repo, src), encoding="utf-8") as f:
    tree = ast.parse(f.read(), filename=src)
  test_helpers = {os.path.splitext(os.path.basename(p))[0]: p
                  for p in _py_files(repo, "tests")
                  if not p.endswith("_test.py") and p != "tests/conftest.py"}

  def module_file(dotted):
    parts = dotted.split(".")
    if parts[0] in _PACKAGES:
      if len(parts) == 1:
        return "{}/__init__.py".format(parts[0])
      path = "{}/{}.py".format(parts[0], parts[1])
      return path if os.path.exists(os.path.join(repo, path)) else None
    if len(parts) == 1 and parts[0] in test_helpers:
      return test_helpers[parts[0]]
    return None

  found = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      for alias in node.names:
        found.add(module_file(alias.name))
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
      if node.module in _PACKAGES:
        for alias in node.names:
          # `from pkg import module` needs the module; `from pkg import Name`
          # needs the package's __init__.
          found.add(module_file("{}.{}".format(node.module, alias.name))
                    or "{}/__init__.py".format(node.module))
      else:
        found.add(module_file(node.module))
  found.discard(None)
  found.discard(src)
  # A module of a package can always reach the package itself: Python runs
  # the package __init__ before any of its modules. (A BUILD dep on it would
  # be a cycle, since the __init__ target depends on the modules.)
  for package in _PACKAGES:
    if src.startswith(package + "/"):
      found.discard("{}/__init__.py".format(package))
  return found


def _top_level_imports(repo, src):
  """{(top-level module name, line)} of every import in `src`."""
  with open(os.path.join(repo, src), encoding="utf-8") as f:
    tree = ast.parse(f.read(), filename=src)
  found = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      found.update((a.name.split(".")[0], node.lineno) for a in node.names)
    elif isinstance(node, ast.ImportFrom):
      if node.level:
        found.add((_UPGRADE_PACKAGE, node.lineno))  # Relative: itself.
      else:
        found.add((node.module.split(".")[0], node.lineno))
  return found


class BuildTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    self.repo = _find_repo()
    if self.repo is None:
      self.skipTest("No BUILD file next to the tests ({}): these checks need "
                    "the source tree.".format(_HERE))
    self.targets, self.globs = _parse_build(self.repo)
    self.by_src = {}
    for target in self.targets.values():
      for src in target["srcs"]:
        self.by_src.setdefault(src, []).append(target["name"])

  def test_no_glob(self):
    self.assertEqual(self.globs, [],
                     msg="BUILD uses glob() on lines {}; list files "
                     "explicitly.".format(self.globs))

  def test_every_module_has_one_py_library(self):
    for src in [f for p in _PACKAGES for f in _py_files(self.repo, p)]:
      with self.subTest(src=src):
        owners = self.by_src.get(src, [])
        self.assertLen(
            owners, 1,
            msg="{} needs exactly one py_library in BUILD (has {}). Add:\n"
            "py_library(\n    name = \"{}\",\n    srcs = [\"{}\"],\n"
            "    deps = [...],\n)".format(
                src, owners,
                os.path.splitext(os.path.basename(src))[0]
                if not src.endswith("__init__.py") else src.split("/")[0],
                src))
        target = self.targets[owners[0]]
        self.assertEqual(target["rule"], "py_library")
        self.assertEqual(target["srcs"], [src],
                         msg="One module per py_library.")

  def test_every_test_file_has_a_py_test(self):
    for src in _py_files(self.repo, "tests"):
      if not src.endswith("_test.py"):
        continue
      with self.subTest(src=src):
        name = os.path.splitext(os.path.basename(src))[0]
        self.assertTrue(name in self.targets,
                        msg="{} has no py_test named {!r} in BUILD.".format(
                            src, name))
        target = self.targets[name]
        self.assertEqual(target["rule"], "py_test")
        self.assertEqual(target["srcs"], [src])

  def test_every_test_helper_has_a_py_library(self):
    for src in _py_files(self.repo, "tests"):
      # conftest.py is a pytest plugin; Bazel runs each test as a script.
      if src.endswith("_test.py") or src == "tests/conftest.py":
        continue
      with self.subTest(src=src):
        owners = self.by_src.get(src, [])
        self.assertLen(owners, 1,
                       msg="Test helper {} needs one py_library in BUILD "
                       "(with imports = [\"tests\"]).".format(src))
        self.assertEqual(self.targets[owners[0]]["rule"], "py_library")

  def test_every_listed_file_exists(self):
    for target in self.targets.values():
      for attr in ("srcs", "data"):
        for path in target[attr]:
          if path.startswith((":", "//", "@")):
            continue
          with self.subTest(target=target["name"], path=path):
            self.assertTrue(
                os.path.exists(os.path.join(self.repo, path)),
                msg="BUILD target {!r} lists {} in {}, which does not "
                "exist.".format(target["name"], path, attr))

  def _data_of(self, name):
    self.assertIn(name, self.targets, msg="BUILD has no target " + name)
    return set(self.targets[name]["data"])

  def test_mutation_list_test_carries_what_the_mutants_name(self):
    # Under Bazel the test sees only its runfiles: every module a mutant
    # changes and every test file it names must be in its data.
    runner = runpy.run_path(os.path.join(self.repo, "scripts",
                                         "mutation_test.py"))
    data = self._data_of("mutation_list_test")
    for mutant in runner["MUTANTS"]:
      for path in (mutant.file,) + tuple(
          t.split("::")[0] for t in mutant.tests):
        with self.subTest(mutant=mutant.id, path=path):
          self.assertIn(path, data,
                        msg="Mutant {} names {}: add it to the data of "
                        "mutation_list_test in BUILD.".format(mutant.id, path))

  def test_ci_matrix_test_carries_every_excluded_test_file(self):
    # tests/ci_matrix_test.py checks that each file a suite excludes exists,
    # which under Bazel it can only see in its runfiles.
    matrix = runpy.run_path(os.path.join(self.repo, "scripts",
                                         "ci_matrix.py"))["load"](self.repo)
    data = self._data_of("ci_matrix_test")
    excluded = {path for env in matrix.environments for path in env.exclude}
    for path in sorted(excluded):
      with self.subTest(path=path):
        self.assertIn(path, data,
                      msg="A suite excludes {}: add it to the data of "
                      "ci_matrix_test in BUILD.".format(path))

  def test_every_local_dep_is_declared(self):
    for target in self.targets.values():
      for dep in target["deps"]:
        name = _local_label(dep)
        if name is None:
          continue
        with self.subTest(target=target["name"], dep=dep):
          self.assertTrue(name in self.targets,
                          msg="{!r} is not a target of BUILD.".format(dep))

  def test_deps_cover_imports(self):
    for target in self.targets.values():
      deps = {_local_label(d) for d in target["deps"]}
      for src in target["srcs"]:
        for imported in sorted(_imported_files(self.repo, src)):
          owners = self.by_src.get(imported, [])
          with self.subTest(target=target["name"], imports=imported):
            self.assertTrue(
                deps.intersection(owners),
                msg="{} imports {}, so BUILD target {!r} needs one of {} in "
                "its deps.".format(src, imported, target["name"],
                                   [":" + o for o in owners] or
                                   "<no target: add one>"))

  def test_tests_that_import_the_package_depend_on_it(self):
    # Importing any module of a package runs its __init__.py (for
    # contrib_mixed_precision, the TensorFlow check), so every test that
    # imports one needs the real __init__.py in its runfiles. Libraries
    # cannot: __init__ depends on them.
    for package in _PACKAGES:
      package_init = "{}/__init__.py".format(package)
      package_targets = self.by_src.get(package_init, [])
      for target in self.targets.values():
        if target["rule"] != "py_test":
          continue
        deps = {_local_label(d) for d in target["deps"]}
        for src in target["srcs"]:
          imported = _imported_files(self.repo, src)
          if not any(f.startswith(package + "/") for f in imported):
            continue
          with self.subTest(target=target["name"], package=package):
            self.assertTrue(
                deps.intersection(package_targets),
                msg="{} imports {}, so BUILD target {!r} needs {} in its "
                "deps (importing any module runs the package "
                "__init__).".format(src, package, target["name"],
                                    [":" + t for t in package_targets]))

  def test_upgrade_package_imports_only_stdlib_and_libcst(self):
    # The command runs where TensorFlow is absent or is 1.15 (contract 9).
    if _UPGRADE_MAY_IMPORT is None:
      self.skipTest("sys.stdlib_module_names needs Python 3.10+")
    for src in _py_files(self.repo, _UPGRADE_PACKAGE):
      for module, line in sorted(_top_level_imports(self.repo, src)):
        with self.subTest(src=src, module=module):
          self.assertIn(
              module, _UPGRADE_MAY_IMPORT,
              msg="{}:{} imports {!r}. {} may import only the standard "
              "library, libcst and itself; it must never reach TensorFlow "
              "or {}.".format(src, line, module, _UPGRADE_PACKAGE, _PACKAGE))

  def test_upgrade_package_deps_never_reach_the_runtime_package(self):
    runtime = {name for src, names in self.by_src.items()
               if src.startswith(_PACKAGE + "/") for name in names}
    upgrade = [name for src, names in self.by_src.items()
               if src.startswith(_UPGRADE_PACKAGE + "/") for name in names]
    self.assertNotEqual(upgrade, [], msg="No BUILD target for {}.".format(
        _UPGRADE_PACKAGE))
    for name in upgrade:
      reached, todo = set(), [name]
      while todo:
        current = todo.pop()
        for dep in self.targets[current]["deps"]:
          local = _local_label(dep)
          if local is not None and local in self.targets and (
              local not in reached):
            reached.add(local)
            todo.append(local)
      with self.subTest(target=name):
        self.assertEqual(
            sorted(reached & runtime), [],
            msg="BUILD target {!r} reaches {} modules through its deps; the "
            "upgrade command must not.".format(name, _PACKAGE))


if __name__ == "__main__":
  absltest.main()
