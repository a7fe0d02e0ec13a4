# Copyright 2026 The contrib_mixed_precision Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
"""Tests for the `contrib-mp-upgrade` command (contrib_mixed_precision.upgrade).

The fixture tree tests/testdata/upgrade_fixture holds all five ways TF 1.15
code reached the API, comments and odd formatting, other tf.contrib modules,
a Python 2 file, data files and files that do not use the API. The converted
fixture programs are run, and must train to the numbers computed in
`upgrade_fixture_util`.
"""

import ast
import contextlib
import io
import os
import shutil
import tempfile

from absl.testing import parameterized
import tensorflow as tf

from contrib_mixed_precision import upgrade
import upgrade_fixture_util as util

FIXTURE = util.FIXTURE_DIR

CHANGED = ("train_attr.py", "models/from_import.py", "models/from_contrib.py",
           "models/import_as.py", "models/module_paths.py",
           "models/compat_attr.py")
UNTOUCHED = ("common.py", "models/__init__.py", "legacy/no_api.py",
             "legacy/other_contrib.py", "legacy/py2_train.py",
             "data/config.json", "data/notes.txt")


def _files(root):
  """{relative path: bytes} of every file under `root`."""
  out = {}
  for directory, _, files in os.walk(root):
    for name in files:
      path = os.path.join(directory, name)
      with open(path, "rb") as f:
        out[os.path.relpath(path, root).replace(os.sep, "/")] = f.read()
  return out


def _tempdir(test):
  """A fresh directory, removed after `test` (works under pytest and Bazel)."""
  path = tempfile.mkdtemp(prefix="upgrade_test_")
  test.addCleanup(shutil.rmtree, path, ignore_errors=True)
  return path


def _main(*argv):
  """Runs the command in-process; returns (status, stdout, stderr)."""
  out, err = io.StringIO(), io.StringIO()
  with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    status = upgrade.main(list(argv))
  return status, out.getvalue(), err.getvalue()


class UpgradeTreeTest(tf.test.TestCase, parameterized.TestCase):
  """Converts the fixture tree once per test into a fresh directory."""

  def setUp(self):
    super().setUp()
    self.tmp = _tempdir(self)
    self.outtree = os.path.join(self.tmp, "out")
    self.report = os.path.join(self.tmp, "report.txt")
    status, self.stdout, self.stderr = _main(
        "--intree", FIXTURE, "--outtree", self.outtree,
        "--reportfile", self.report)
    self.assertEqual(status, 0, self.stderr)
    with open(self.report, encoding="utf-8") as f:
      self.report_text = f.read()

  def test_every_file_is_written(self):
    self.assertCountEqual(_files(FIXTURE), _files(self.outtree))

  def test_untouched_files_are_byte_identical(self):
    before, after = _files(FIXTURE), _files(self.outtree)
    for path in UNTOUCHED:
      self.assertEqual(before[path], after[path], path)

  def test_only_files_using_the_api_change(self):
    before, after = _files(FIXTURE), _files(self.outtree)
    changed = sorted(p for p in before if before[p] != after[p])
    self.assertEqual(changed, sorted(CHANGED))
    for path in CHANGED:
      # No code (docstrings and comments aside) reaches tf.contrib's API.
      for node in ast.walk(ast.parse(after[path])):
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Attribute)):
          code = ast.unparse(node)
          self.assertNotIn("contrib.mixed_precision", code, path)
          self.assertNotIn("contrib import mixed_precision", code, path)

  def test_comments_and_other_contrib_uses_are_kept(self):
    after = _files(self.outtree)
    attr = after["train_attr.py"].decode()
    self.assertIn("import tensorflow.compat.v1 as tf  # tf_upgrade_v2 wrote "
                  "this line\nimport contrib_mixed_precision\n", attr)
    self.assertIn("init_loss_scale=2 ** 10,   # odd  spacing on purpose", attr)
    self.assertIn("manager)  # positional, as NVIDIA writes it", attr)
    self.assertIn("return tf.contrib.layers.summarize_tensor(t)", attr)
    self.assertEqual(attr.count("import contrib_mixed_precision"), 1)
    from_import = after["models/from_import.py"].decode()
    self.assertIn(
        "from contrib_mixed_precision import (  # the two we need\n"
        "    ExponentialUpdateLossScaleManager,\n"
        "    LossScaleOptimizer,   # wraps any tf.train optimizer\n)",
        from_import)
    paths = after["models/module_paths.py"].decode()
    self.assertIn("from contrib_mixed_precision.loss_scale_optimizer import \\"
                  "\n    LossScaleOptimizer", paths)
    self.assertIn("opt, contrib_mixed_precision.loss_scale_optimizer\n"
                  "    .LossScaleOptimizer)", paths)

  @parameterized.parameters(
      ("train_attr.py:11: ADDED `import contrib_mixed_precision`",),
      ("train_attr.py:25: CHANGED "
       "`tf.contrib.mixed_precision.ExponentialUpdateLossScaleManager` -> "
       "`contrib_mixed_precision.ExponentialUpdateLossScaleManager`",),
      ("train_attr.py:28: CHANGED `tf.contrib.mixed_precision."
       "LossScaleOptimizer` -> `contrib_mixed_precision.LossScaleOptimizer`",),
      ("train_attr.py:20: WARNING: `tensorflow.contrib.layers` is not "
       "converted",),
      ("models/from_import.py:7: CHANGED `from tensorflow.contrib."
       "mixed_precision import (",),
      ("-> `from contrib_mixed_precision import (",),
      ("models/from_contrib.py:7: CHANGED `from tensorflow.contrib import "
       "mixed_precision` -> `import contrib_mixed_precision as "
       "mixed_precision`",),
      ("models/import_as.py:5: CHANGED `import tensorflow.contrib."
       "mixed_precision as mp_lib` -> `import contrib_mixed_precision as "
       "mp_lib`",),
      ("models/module_paths.py:7: CHANGED `from tensorflow.contrib."
       "mixed_precision.python import loss_scale_manager as lsm_lib` -> "
       "`from contrib_mixed_precision import loss_scale_manager as "
       "lsm_lib`",),
      ("models/module_paths.py:8: CHANGED `import tensorflow.contrib."
       "mixed_precision.python.loss_scale_optimizer` -> `import "
       "contrib_mixed_precision.loss_scale_optimizer`",),
      ("models/module_paths.py:9: CHANGED `from tensorflow.contrib."
       "mixed_precision.python.loss_scale_optimizer import \\ "
       "LossScaleOptimizer` -> `from contrib_mixed_precision."
       "loss_scale_optimizer import \\ LossScaleOptimizer`",),
      ("models/module_paths.py:22: CHANGED `tensorflow.contrib."
       "mixed_precision.python.loss_scale_optimizer` -> "
       "`contrib_mixed_precision.loss_scale_optimizer`",),
      ("models/compat_attr.py:12: CHANGED `tf.compat.v1.contrib."
       "mixed_precision` -> `contrib_mixed_precision`",),
      ("models/compat_attr.py:16: CHANGED `tf.compat.v1.contrib."
       "mixed_precision.LossScaleOptimizer` -> "
       "`contrib_mixed_precision.LossScaleOptimizer`",),
      ("models/compat_attr.py:7: ADDED `import contrib_mixed_precision`",),
      ("legacy/other_contrib.py:4: WARNING: `tensorflow.contrib.slim` is not "
       "converted",),
      ("legacy/other_contrib.py:9: WARNING: `tensorflow.contrib.layers` is "
       "not converted",),
      ("legacy/py2_train.py: ERROR: could not parse",),
      ("legacy/py2_train.py: WARNING: it mentions "
       "`tf.contrib.mixed_precision`, which was NOT converted",),
      ("Python files processed: 11\nPython files changed: 6\n"
       "Python files that could not be parsed (copied unchanged): 1\n"
       "Other files copied: 2\n",),
  )
  def test_report_names_each_case(self, line):
    self.assertIn(line, self.report_text)

  def test_report_leaves_out_files_without_findings(self):
    self.assertNotIn("no_api.py", self.report_text)
    self.assertNotIn("common.py", self.report_text)

  def test_second_pass_changes_nothing(self):
    second = os.path.join(self.tmp, "second")
    report = os.path.join(self.tmp, "report2.txt")
    status, _, err = _main("--intree", self.outtree, "--outtree", second,
                           "--reportfile", report)
    self.assertEqual(status, 0, err)
    self.assertEqual(_files(self.outtree), _files(second))
    with open(report, encoding="utf-8") as f:
      self.assertIn("Python files changed: 0\n", f.read())

  def test_single_file_mode_matches_tree_mode(self):
    for path in CHANGED + ("legacy/no_api.py", "legacy/py2_train.py"):
      outfile = os.path.join(self.tmp, "single", path)
      status, _, err = _main("--infile", os.path.join(FIXTURE, path),
                             "--outfile", outfile, "--reportfile",
                             os.path.join(self.tmp, "single.txt"))
      self.assertEqual(status, 0, err)
      with open(outfile, "rb") as f, open(
          os.path.join(self.outtree, path), "rb") as g:
        self.assertEqual(f.read(), g.read(), path)

  @parameterized.parameters(*util.PROGRAMS)
  def test_converted_program_trains_to_expected_numbers(
      self, path, steps, bad_steps, manager):
    program = util.Program(path, steps, bad_steps, manager)
    values = util.last_json(
        util.run_python([os.path.join(self.outtree, path)], cwd=self.tmp))
    expected = util.expected_values(program)
    self.assertEqual(values["scale"], expected["scale"])
    for key in ("loss", "w", "b"):
      self.assertAllClose(values[key], expected[key], rtol=1e-5, atol=1e-6,
                          msg=key)
    # Power-of-two scales are exact in float32, and skipped steps change
    # nothing: the weights equal plain TF gradient descent's finite steps.
    plain = util.plain_gd_values(program)
    for key in ("loss", "w", "b"):
      self.assertAllClose(values[key], plain[key], rtol=1e-6, atol=1e-7,
                          msg=key)


class UpgradeModesTest(tf.test.TestCase, parameterized.TestCase):

  def setUp(self):
    super().setUp()
    self.tmp = _tempdir(self)
    self.tree = os.path.join(self.tmp, "tree")
    shutil.copytree(FIXTURE, self.tree)
    self.cwd = os.getcwd()
    os.chdir(self.tmp)  # Where the default report.txt would land.
    self.addCleanup(os.chdir, self.cwd)

  def test_dry_run_prints_a_diff_and_writes_nothing(self):
    before = _files(self.tmp)
    status, out, err = _main("--intree", self.tree, "--dry_run")
    self.assertEqual(status, 0, err)
    self.assertEqual(_files(self.tmp), before)
    self.assertFalse(os.path.exists(os.path.join(self.tmp, "report.txt")))
    self.assertIn("--- a/train_attr.py\n+++ b/train_attr.py\n", out)
    self.assertIn("+import contrib_mixed_precision\n", out)
    self.assertIn("-from tensorflow.contrib import mixed_precision\n", out)
    self.assertIn("+import contrib_mixed_precision as mixed_precision\n", out)
    self.assertNotIn("no_api.py", out)
    self.assertIn("Python files changed: 6", out)
    self.assertIn("nothing was written", out)

  def test_dry_run_with_an_outtree_does_not_create_it(self):
    outtree = os.path.join(self.tmp, "out")
    status, _, err = _main("--intree", self.tree, "--outtree", outtree,
                           "--dry-run")
    self.assertEqual(status, 0, err)
    self.assertFalse(os.path.exists(outtree))

  def test_inplace_rewrites_only_files_using_the_api(self):
    expected = os.path.join(self.tmp, "expected")
    self.assertEqual(_main("--intree", FIXTURE, "--outtree", expected)[0], 0)
    mtimes = {p: os.stat(os.path.join(self.tree, p)).st_mtime_ns
              for p in UNTOUCHED}
    status, out, err = _main("--intree", self.tree, "--inplace")
    self.assertEqual(status, 0, err)
    self.assertIn("changed 6 file(s)", out)
    self.assertEqual(_files(self.tree), _files(expected))
    for path in UNTOUCHED:
      # Not even rewritten with the same bytes.
      self.assertEqual(os.stat(os.path.join(self.tree, path)).st_mtime_ns,
                       mtimes[path], path)
    self.assertTrue(os.path.isfile(os.path.join(self.tmp, "report.txt")))

  def test_inplace_single_file(self):
    path = os.path.join(self.tree, "models", "import_as.py")
    status, _, err = _main("--infile", path, "--inplace")
    self.assertEqual(status, 0, err)
    with open(path, encoding="utf-8") as f:
      self.assertIn("import contrib_mixed_precision as mp_lib\n", f.read())

  def test_copyotherfiles_false_leaves_out_data_files(self):
    outtree = os.path.join(self.tmp, "out")
    status, _, err = _main("--intree", self.tree, "--outtree", outtree,
                           "--copyotherfiles", "False")
    self.assertEqual(status, 0, err)
    written = _files(outtree)
    self.assertNotIn("data/config.json", written)
    self.assertIn("legacy/no_api.py", written)

  @parameterized.named_parameters(
      ("missing_infile", ["--infile", "nope.py", "--outfile", "o.py"],
       "`--infile` 'nope.py' is not an existing file"),
      ("missing_intree", ["--intree", "nope", "--outtree", "o"],
       "`--intree` 'nope' is not an existing directory"),
      ("infile_is_a_directory", ["--infile", "tree", "--outfile", "o.py"],
       "is not an existing file"),
      ("neither", ["--outtree", "o"],
       "Pass exactly one of `--infile` and `--intree`; received neither"),
      ("both", ["--infile", "tree/common.py", "--intree", "tree",
                "--outtree", "o"], "received both"),
      ("no_output", ["--intree", "tree"], "Missing `--outtree`"),
      ("no_outfile", ["--infile", "tree/common.py"], "Missing `--outfile`"),
      ("outtree_not_empty", ["--intree", "tree", "--outtree", "tree2"],
       "already exists and is not an empty directory"),
      ("outtree_inside_intree", ["--intree", "tree", "--outtree", "tree/o"],
       "is inside `--intree`"),
      ("inplace_and_outtree", ["--intree", "tree", "--outtree", "o",
                               "--inplace"], "cannot be used with it"),
      ("outtree_with_infile", ["--infile", "tree/common.py", "--outtree",
                               "o"], "`--outtree` goes with `--intree`"),
      ("outfile_with_intree", ["--intree", "tree", "--outfile", "o.py"],
       "`--outfile` goes with `--infile`"),
      ("outfile_is_infile", ["--infile", "tree/common.py", "--outfile",
                             "tree/common.py"], "Use `--inplace`"),
  )
  def test_bad_paths_fail_with_a_clear_message(self, argv, message):
    os.makedirs(os.path.join(self.tmp, "tree2", "x"))
    before = _files(self.tmp)
    status, out, err = _main(*argv)
    self.assertEqual(status, 1)
    self.assertIn("contrib-mp-upgrade: error: ", err)
    self.assertIn(message, err)
    self.assertEqual(out, "")
    self.assertEqual(_files(self.tmp), before)
    self.assertFalse(os.path.exists(os.path.join(self.tmp, "o")))

  def test_bad_flag_value_is_a_usage_error(self):
    with self.assertRaises(SystemExit) as cm:
      _main("--intree", self.tree, "--dry_run", "--copyotherfiles", "maybe")
    self.assertEqual(cm.exception.code, 2)

  def test_command_line_entry_points(self):
    for argv in (["-m", "contrib_mixed_precision.upgrade", "--help"],
                 [os.path.join(os.path.dirname(util.FIXTURE_DIR), "..", "..",
                               "scripts", "contrib_mp_upgrade.py"),
                  "--help"]):
      if not os.path.exists(argv[0]) and argv[0] != "-m":
        continue  # The scripts/ folder is not in every test layout.
      proc = util.run_python(argv, cwd=self.tmp)
      self.assertEqual(proc.returncode, 0, proc.stderr)
      self.assertIn("usage: contrib-mp-upgrade", proc.stdout)
      for flag in ("--infile", "--outfile", "--intree", "--outtree",
                   "--reportfile", "--copyotherfiles", "--inplace",
                   "--dry_run"):
        self.assertIn(flag, proc.stdout)

  def test_module_run_converts_a_file(self):
    outfile = os.path.join(self.tmp, "o.py")
    proc = util.run_python(
        ["-m", "contrib_mixed_precision.upgrade", "--infile",
         os.path.join(self.tree, "models", "from_contrib.py"), "--outfile",
         outfile], cwd=self.tmp)
    self.assertEqual(proc.returncode, 0, proc.stderr)
    with open(outfile, encoding="utf-8") as f:
      self.assertIn("import contrib_mixed_precision as mixed_precision",
                    f.read())


class UpgradeSourceTest(tf.test.TestCase, parameterized.TestCase):
  """Single sources: the rewrite rules, one per row."""

  @parameterized.named_parameters(
      ("other_tf_alias",
       "import tensorflow as tensorflow_lib\n"
       "m = tensorflow_lib.contrib.mixed_precision.FixedLossScaleManager(8)\n",
       "import tensorflow as tensorflow_lib\n"
       "import contrib_mixed_precision\n"
       "m = contrib_mixed_precision.FixedLossScaleManager(8)\n"),
      ("compat_v1_import",
       "from tensorflow.compat import v1 as tf1\n"
       "m = tf1.contrib.mixed_precision.LossScaleManager\n",
       "from tensorflow.compat import v1 as tf1\n"
       "import contrib_mixed_precision\n"
       "m = contrib_mixed_precision.LossScaleManager\n"),
      ("split_from_contrib",
       "from tensorflow.contrib import layers, mixed_precision as mp  # c\n",
       "from tensorflow.contrib import layers  # c\n"
       "import contrib_mixed_precision as mp\n"),
      ("star",
       "from tensorflow.contrib.mixed_precision import *\n",
       "from contrib_mixed_precision import *\n"),
      ("compat_from_contrib",
       "from tensorflow.compat.v1.contrib import mixed_precision\n",
       "import contrib_mixed_precision as mixed_precision\n"),
      ("unaliased_import_keeps_tensorflow",
       "import tensorflow.contrib.mixed_precision\n"
       "m = tensorflow.contrib.mixed_precision.FixedLossScaleManager(2)\n"
       "s = tensorflow.compat.v1.Session\n",
       "import contrib_mixed_precision\n"
       "import tensorflow\n"
       "m = contrib_mixed_precision.FixedLossScaleManager(2)\n"
       "s = tensorflow.compat.v1.Session\n"),
      ("docstring_and_future_first",
       '"""Doc."""\n# c\nfrom __future__ import division\n'
       "x = tf.contrib.mixed_precision.LossScaleOptimizer\n",
       '"""Doc."""\n# c\nfrom __future__ import division\n'
       "import contrib_mixed_precision\n"
       "x = contrib_mixed_precision.LossScaleOptimizer\n"),
      ("import_inside_function",
       "def f():\n"
       "  import tensorflow as tf\n"
       "  return tf.contrib.mixed_precision.LossScaleOptimizer\n",
       "import contrib_mixed_precision\n"
       "def f():\n"
       "  import tensorflow as tf\n"
       "  return contrib_mixed_precision.LossScaleOptimizer\n"),
  )
  def test_rewrite(self, source, expected):
    result = upgrade.upgrade_source(source.encode())
    self.assertIsNone(result.error)
    self.assertEqual(result.new_source.decode(), expected)
    self.assertFalse(upgrade.upgrade_source(result.new_source).changed)

  @parameterized.named_parameters(
      ("name_bound_to_the_api_is_left",
       "import contrib_mixed_precision as mp\nmp.LossScaleOptimizer\n"),
      ("unrelated_tf_attribute",
       "import numpy as tf\nx = tf.contrib.mixed_precision\n"),
      ("string_and_comment",
       "# tf.contrib.mixed_precision.LossScaleOptimizer\n"
       "s = 'tf.contrib.mixed_precision'\n"),
      ("other_contrib_only",
       "import tensorflow as tf\nx = tf.contrib.opt.LazyAdamOptimizer\n"),
  )
  def test_no_rewrite(self, source):
    result = upgrade.upgrade_source(source.encode())
    self.assertFalse(result.changed)
    self.assertEqual(result.new_source, source.encode())

  def test_keeps_crlf_and_encoding(self):
    source = ("# -*- coding: latin-1 -*-\r\nimport tensorflow as tf\r\n"
              "s = 'caf\xe9'\r\n"
              "m = tf.contrib.mixed_precision.FixedLossScaleManager(2)\r\n"
              ).encode("latin-1")
    result = upgrade.upgrade_source(source)
    self.assertEqual(
        result.new_source,
        ("# -*- coding: latin-1 -*-\r\nimport tensorflow as tf\r\n"
         "import contrib_mixed_precision\r\ns = 'caf\xe9'\r\n"
         "m = contrib_mixed_precision.FixedLossScaleManager(2)\r\n"
         ).encode("latin-1"))

  def test_unparsable_source_is_returned_unchanged(self):
    source = b"import tensorflow as tf\nprint 'x'\n"
    result = upgrade.upgrade_source(source)
    self.assertIsNotNone(result.error)
    self.assertEqual(result.new_source, source)
    self.assertFalse(result.changed)
    self.assertEqual(result.warnings, [])  # It does not mention the API.

  def test_fixture_util_mirrors_common_py(self):
    with open(os.path.join(FIXTURE, "common.py"), encoding="utf-8") as f:
      common = f.read()
    self.assertIn("X = np.array([[1.0], [2.0], [3.0], [4.0]]", common)
    self.assertIn("Y = 3.0 * X + 1.0", common)
    self.assertIn("LEARNING_RATE = {}\n".format(util.LEARNING_RATE), common)


if __name__ == "__main__":
  tf.test.main()
