# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Tests for the import-time TensorFlow check.

Each case imports the package in a fresh Python, since a module imports only
once per process:

* TensorFlow missing: an import hook makes `import tensorflow` fail as it does
  when it is not installed.
* TensorFlow too old or too new: a fake `tensorflow` package, first on
  PYTHONPATH, that has only `__version__`. Each case imports `_tf_compat` on
  its own (past the package `__init__`, which uses TensorFlow's API), and the
  too-old case also imports the whole package: its check must run before
  anything touches TensorFlow's API.
* TensorFlow newer, end to end: the real TensorFlow with its `__version__`
  patched before the package is imported, so that the import completes.

The version comparison itself is also tested in-process, row by row.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import warnings

from absl.testing import parameterized
from packaging import version as packaging_version
import tensorflow as tf

from contrib_mixed_precision import _tf_compat
from contrib_mixed_precision import version

# Makes `import tensorflow` raise ModuleNotFoundError, as on a machine where
# it is not installed.
_BLOCK_TENSORFLOW = textwrap.dedent("""
    import importlib.abc
    import sys

    class _NoTensorFlow(importlib.abc.MetaPathFinder):
      def find_spec(self, name, path=None, target=None):
        if name == "tensorflow" or name.startswith("tensorflow."):
          raise ModuleNotFoundError("No module named 'tensorflow'",
                                    name="tensorflow")
        return None

    sys.meta_path.insert(0, _NoTensorFlow())
""")

# Registers the package without running its __init__, so that importing
# `_tf_compat` runs the check alone (a fake TensorFlow has no API to offer the
# rest of the package).
_SKIP_PACKAGE_INIT = textwrap.dedent("""
    import importlib.util
    import sys
    import types

    _spec = importlib.util.find_spec("contrib_mixed_precision")
    _pkg = types.ModuleType("contrib_mixed_precision")
    _pkg.__path__ = list(_spec.submodule_search_locations)
    sys.modules["contrib_mixed_precision"] = _pkg
""")

# Imports `module` with every warning recorded, then prints them as JSON.
_IMPORT_AND_REPORT = textwrap.dedent("""
    import importlib
    import json
    import warnings

    with warnings.catch_warnings(record=True) as caught:
      warnings.simplefilter("always")
      importlib.import_module({module!r})
      # A second import must not warn again.
      importlib.import_module({module!r})
    print("CMP_WARNINGS=" + json.dumps(
        [[w.category.__name__, str(w.message)] for w in caught]))
""")

_PACKAGE = "contrib_mixed_precision"
_COMPAT = "contrib_mixed_precision._tf_compat"


def _import(module):
  """Code that imports `module`; `_tf_compat` without the package __init__."""
  prelude = _SKIP_PACKAGE_INIT if module == _COMPAT else ""
  return prelude + "import {}\n".format(module)


class ImportCheckTest(tf.test.TestCase, parameterized.TestCase):

  def _new_tempdir(self):
    # Not create_tempdir(): it needs absl flags, which pytest does not parse.
    tmp = tempfile.TemporaryDirectory()
    self.addCleanup(tmp.cleanup)
    return tmp.name

  def _run_python(self, code, fake_tf_version=None, broken_tf=False):
    """Runs `code` in a fresh Python from an empty directory.

    Args:
      code: Python source to run with `-c`.
      fake_tf_version: If set, a fake `tensorflow` package with this
        `__version__` (and nothing else) shadows the real one.
      broken_tf: If set, the shadowing `tensorflow` package is empty, as
        one is after a second TensorFlow distribution was uninstalled.

    Returns:
      The `subprocess.CompletedProcess`, with text stdout and stderr.
    """
    workdir = self._new_tempdir()
    env = dict(os.environ)
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    if fake_tf_version is not None or broken_tf:
      fake_root = self._new_tempdir()
      os.mkdir(os.path.join(fake_root, "tensorflow"))
      with open(os.path.join(fake_root, "tensorflow", "__init__.py"),
                "w") as f:
        if not broken_tf:
          f.write("__version__ = {!r}\n".format(fake_tf_version))
      env["PYTHONPATH"] = os.pathsep.join(
          p for p in (fake_root, env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-c", code], cwd=workdir, env=env,
                          capture_output=True, text=True, check=False,
                          timeout=300)

  def _our_warnings(self, result):
    """The warnings this package raised, from `_IMPORT_AND_REPORT` output."""
    self.assertEqual(result.returncode, 0, msg=result.stderr)
    lines = [l for l in result.stdout.splitlines()
             if l.startswith("CMP_WARNINGS=")]
    self.assertLen(lines, 1, msg=result.stdout)
    caught = json.loads(lines[0][len("CMP_WARNINGS="):])
    return [w for w in caught if _PACKAGE in w[1]]

  @parameterized.parameters(_PACKAGE, _COMPAT)
  def test_missing_tensorflow_raises_import_error_with_install_hint(
      self, module):
    result = self._run_python(_BLOCK_TENSORFLOW + _import(module))
    self.assertNotEqual(result.returncode, 0)
    last_line = result.stderr.strip().splitlines()[-1]
    self.assertStartsWith(last_line, "ImportError: ")
    self.assertIn("needs TensorFlow", last_line)
    self.assertIn("pip install", last_line)
    self.assertIn(version.TF_REQUIREMENT_RANGE, last_line)

  @parameterized.product(module=(_PACKAGE, _COMPAT),
                         tf_version=("2.10.0", "2.14.1"))
  def test_old_tensorflow_raises_import_error_naming_versions(
      self, module, tf_version):
    result = self._run_python(_import(module), fake_tf_version=tf_version)
    self.assertNotEqual(result.returncode, 0)
    last_line = result.stderr.strip().splitlines()[-1]
    self.assertStartsWith(last_line, "ImportError: ")
    self.assertIn(tf_version, last_line)
    self.assertIn(version.MIN_TF_VERSION, last_line)
    self.assertIn("pip install", last_line)

  @parameterized.parameters(_PACKAGE, _COMPAT)
  def test_broken_tensorflow_raises_import_error_with_the_cure(self, module):
    # Issue 43, item 5: `tensorflow` and `tensorflow-cpu` share one
    # directory; uninstalling one leaves a `tensorflow` without
    # `__version__`, and the import raised a bare AttributeError.
    result = self._run_python(_import(module), fake_tf_version=None,
                              broken_tf=True)
    self.assertNotEqual(result.returncode, 0)
    last_line = result.stderr.strip().splitlines()[-1]
    self.assertStartsWith(last_line, "ImportError: ")
    self.assertNotIn("AttributeError", result.stderr)
    self.assertIn("no `__version__`", last_line)
    self.assertIn("tensorflow-cpu", last_line)
    self.assertIn("pip install --force-reinstall", last_line)

  def test_newer_tensorflow_warns_once_in_the_check(self):
    result = self._run_python(
        _SKIP_PACKAGE_INIT + _IMPORT_AND_REPORT.format(module=_COMPAT),
        fake_tf_version="2.30.0")
    ours = self._our_warnings(result)
    self.assertLen(ours, 1, msg=ours)
    category, message = ours[0]
    self.assertEqual(category, "UserWarning")
    self.assertIn("2.30.0", message)
    self.assertIn(version.MAX_TF_VERSION, message)

  def test_newer_tensorflow_warns_once_and_package_imports(self):
    # The real TensorFlow, claiming to be newer, so the whole import completes.
    code = ("import tensorflow\ntensorflow.__version__ = '2.30.0'\n" +
            _IMPORT_AND_REPORT.format(module=_PACKAGE))
    ours = self._our_warnings(self._run_python(code))
    self.assertLen(ours, 1, msg=ours)
    self.assertEqual(ours[0][0], "UserWarning")
    self.assertIn("2.30.0", ours[0][1])

  def test_installed_tensorflow_imports_as_the_range_says(self):
    # CI's tf_nightly environment installs the next release, after the
    # range: there the real import warns once, naming it; in the range, the
    # import is silent. Release tuples, as a nightly (2.23.0.dev2026...) is
    # 2.23 for the range.
    release = packaging_version.parse(tf.__version__).release
    supported = (
        packaging_version.parse(version.MIN_TF_VERSION).release <= release <
        packaging_version.parse(version.MAX_TF_VERSION).release)
    result = self._run_python(_IMPORT_AND_REPORT.format(module=_PACKAGE))
    ours = self._our_warnings(result)
    if supported:
      self.assertEqual(ours, [])
    else:
      self.assertLen(ours, 1, msg=ours)
      self.assertEqual(ours[0][0], "UserWarning")
      self.assertIn("TensorFlow {} is installed".format(tf.__version__),
                    ours[0][1])
      self.assertIn(version.MAX_TF_VERSION, ours[0][1])

  @parameterized.parameters("2.22.0.dev20261001", "2.23.0.dev20261026",
                            "2.22.0rc0")
  def test_check_warns_for_a_build_of_the_next_release(self, tf_version):
    # A nightly or a release candidate of 2.22 sorts before 2.22.0, but it is
    # not a TensorFlow the range was tested with.
    with warnings.catch_warnings(record=True) as caught:
      warnings.simplefilter("always")
      _tf_compat._check_tensorflow(tf_version)  # pylint: disable=protected-access
    self.assertLen(caught, 1)
    self.assertIn(tf_version, str(caught[0].message))

  @parameterized.parameters("2.15.0", "2.15.0rc1", "2.15.1", "2.21.9")
  def test_check_accepts_supported_versions(self, tf_version):
    with warnings.catch_warnings(record=True) as caught:
      warnings.simplefilter("always")
      _tf_compat._check_tensorflow(tf_version)  # pylint: disable=protected-access
    self.assertEqual([str(w.message) for w in caught], [])

  @parameterized.parameters("1.15.5", "2.10.0", "2.14.9")
  def test_check_rejects_older_versions(self, tf_version):
    with self.assertRaises(ImportError) as raised:
      _tf_compat._check_tensorflow(tf_version)  # pylint: disable=protected-access
    self.assertIn(tf_version, str(raised.exception))
    self.assertIn(version.MIN_TF_VERSION, str(raised.exception))

  @parameterized.parameters("2.22.0", "2.22.0rc0", "2.30.0", "3.0.0")
  def test_check_warns_for_newer_versions(self, tf_version):
    with self.assertWarnsRegex(UserWarning, re.escape(tf_version)):
      _tf_compat._check_tensorflow(tf_version)  # pylint: disable=protected-access


if __name__ == "__main__":
  tf.test.main()
