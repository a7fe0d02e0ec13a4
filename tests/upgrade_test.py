# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Tests for the `contrib-mp-upgrade` command (the `contrib_mp_upgrade` package).

The fixture tree tests/testdata/upgrade_fixture holds every way TF 1.15 code
reached the API, as found in real trees: the five import styles, a
function-local alias, TF 1.15's `tensorflow_core` paths, `tf.contrib` as an
object, guarded imports, a star import, CRLF, latin-1 and non-UTF-8 files,
Python 2, `tf.compat.v1.layers`, other contrib modules and data files. Every
converted fixture program is run on TensorFlow 2 in a subprocess and must
train to the numbers computed independently in `upgrade_fixture_util`.
"""

import ast
import os
import shutil
import subprocess
import sys
import tempfile

from absl.testing import parameterized
import tensorflow as tf

from contrib_mp_upgrade import rewrite
import upgrade_fixture_util as util

# Plain files even under Bazel, whose runfiles are symlinks.
FIXTURE = util.real_tree(util.FIXTURE_DIR)
_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHANGED = (
    "train_attr.py", "models/from_import.py", "models/from_contrib.py",
    "models/import_as.py", "models/module_paths.py", "models/compat_attr.py",
    "models/function_local.py", "models/core_paths.py",
    "models/contrib_object.py", "models/guarded.py", "models/star_import.py",
    "models/crlf_train.py", "models/latin1_train.py",
    "models/layers_train.py", "models/dynamic_import.py",
    "legacy/contrib_object_mixed.py")
UNTOUCHED = ("common.py", "models/__init__.py", "legacy/no_api.py",
             "legacy/other_contrib.py", "legacy/py2_train.py",
             "legacy/not_utf8.py", "data/config.json", "data/notes.txt")


def _tempdir(test):
  """A fresh directory, removed after `test` (works under pytest and Bazel)."""
  path = tempfile.mkdtemp(prefix="upgrade_test_")
  test.addCleanup(shutil.rmtree, path, ignore_errors=True)
  return path


_main = util.run_command


def _upgrade(source):
  return rewrite.upgrade_source(source.encode())


class UpgradeTreeTest(tf.test.TestCase, parameterized.TestCase):
  """Converts the fixture tree once, and checks the tree and the report."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tmp = tempfile.mkdtemp(prefix="upgrade_test_")
    cls.outtree = os.path.join(cls.tmp, "out")
    cls.report = os.path.join(cls.tmp, "report.txt")
    cls.status, cls.stdout, cls.stderr = _main(
        "--intree", FIXTURE, "--outtree", cls.outtree,
        "--reportfile", cls.report)
    with open(cls.report, encoding="utf-8") as f:
      cls.report_text = f.read()

  @classmethod
  def tearDownClass(cls):
    shutil.rmtree(cls.tmp, ignore_errors=True)
    super().tearDownClass()

  def test_command_succeeds(self):
    self.assertEqual(self.status, 0, self.stderr)
    self.assertIn("changed 16 file(s); 2 could not be parsed", self.stdout)

  def test_every_file_is_written(self):
    self.assertCountEqual(util.tree_files(FIXTURE),
                          util.tree_files(self.outtree))

  def test_untouched_files_are_byte_identical(self):
    before, after = util.tree_files(FIXTURE), util.tree_files(self.outtree)
    for path in UNTOUCHED:
      self.assertEqual(before[path], after[path], path)

  def test_only_files_using_the_api_change(self):
    before, after = util.tree_files(FIXTURE), util.tree_files(self.outtree)
    changed = sorted(p for p in before if before[p] != after[p])
    self.assertEqual(changed, sorted(CHANGED))
    for path in CHANGED:
      # No code (docstrings and comments aside) reaches tf.contrib's API.
      for node in ast.walk(ast.parse(after[path])):
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Attribute,
                             ast.Call)):
          code = ast.unparse(node)
          self.assertNotIn("contrib.mixed_precision", code, path)
          self.assertNotIn("contrib import mixed_precision", code, path)
          self.assertNotIn("'mixed_precision'", code, path)

  def test_comments_and_other_contrib_uses_are_kept(self):
    after = util.tree_files(self.outtree)
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

  def test_function_local_alias_gets_a_module_import(self):
    code = util.tree_files(self.outtree)["models/function_local.py"].decode()
    # The function that had its own import keeps it; the other function
    # reads the module-level import that the rewrite added.
    self.assertIn("def make_manager():\n  import contrib_mixed_precision\n",
                  code)
    self.assertIn("import tensorflow.compat.v1 as tf\n"
                  "import contrib_mixed_precision\n", code)
    self.assertIn("  return contrib_mixed_precision.LossScaleOptimizer(", code)

  def test_tensorflow_core_paths_are_rewritten(self):
    code = util.tree_files(self.outtree)["models/core_paths.py"].decode()
    self.assertIn("from contrib_mixed_precision.loss_scale_manager import "
                  "ExponentialUpdateLossScaleManager\n", code)
    self.assertIn("from contrib_mixed_precision import (\n"
                  "    loss_scale_optimizer as lso_lib)\n", code)
    self.assertNotIn("tensorflow_core", code.split('"""')[2])

  def test_contrib_object_bindings_go_when_only_mixed_precision_used(self):
    code = util.tree_files(self.outtree)["models/contrib_object.py"].decode()
    for gone in ("from tensorflow import contrib",
                 "import tensorflow.contrib as tfc", "contrib_lib = ",
                 "getattr("):
      self.assertNotIn(gone, code)
    self.assertIn("mp = contrib_mixed_precision\n", code)

  def test_contrib_object_binding_stays_when_other_modules_use_it(self):
    code = util.tree_files(
        self.outtree)["legacy/contrib_object_mixed.py"].decode()
    self.assertIn("from tensorflow import contrib\n", code)
    self.assertIn("net = contrib.layers.flatten(images)", code)
    self.assertIn("opt = contrib_mixed_precision.LossScaleOptimizer(", code)

  def test_star_import_brings_tf115_names_only(self):
    code = util.tree_files(self.outtree)["models/star_import.py"].decode()
    self.assertIn(
        "from contrib_mixed_precision import (\n"
        "    ExponentialUpdateLossScaleManager,\n"
        "    FixedLossScaleManager,\n"
        "    LossScaleManager,\n"
        "    LossScaleOptimizer)  # pylint: disable=wildcard-import\n", code)

  def test_crlf_and_latin1_are_kept(self):
    after = util.tree_files(self.outtree)
    crlf = after["models/crlf_train.py"]
    self.assertEqual(crlf.count(b"\n"), crlf.count(b"\r\n"))
    self.assertIn(b"\r\nimport contrib_mixed_precision\r\n", crlf)
    latin1 = after["models/latin1_train.py"]
    self.assertIn("Fran\xe7oise M\xfcller".encode("latin-1"), latin1)
    self.assertIn(b"\nimport contrib_mixed_precision\n", latin1)

  @parameterized.parameters(
      # Per file: what changed, at input-file lines.
      ("train_attr.py\n  25: "
       "`tf.contrib.mixed_precision.ExponentialUpdateLossScaleManager` -> "
       "`contrib_mixed_precision.ExponentialUpdateLossScaleManager`\n",),
      ("  28: `tf.contrib.mixed_precision.LossScaleOptimizer` -> "
       "`contrib_mixed_precision.LossScaleOptimizer`\n"
       "  output line 11: added `import contrib_mixed_precision`\n"
       "  still uses other tf.contrib modules (not converted): layers x1 "
       "(line 20)\n",),
      ("models/from_contrib.py\n  7: `from tensorflow.contrib import "
       "mixed_precision` -> `import contrib_mixed_precision as "
       "mixed_precision`\n",),
      ("models/import_as.py\n  5: `import tensorflow.contrib."
       "mixed_precision as mp_lib` -> `import contrib_mixed_precision as "
       "mp_lib`\n",),
      ("  22: `tensorflow.contrib.mixed_precision.python."
       "loss_scale_optimizer` -> `contrib_mixed_precision."
       "loss_scale_optimizer`\n",),
      ("models/compat_attr.py\n  12: `tf.compat.v1.contrib.mixed_precision` "
       "-> `contrib_mixed_precision`\n",),
      ("models/function_local.py\n  20: `from tensorflow.contrib import "
       "mixed_precision as contrib_mixed_precision` -> `import "
       "contrib_mixed_precision`\n  27: `tf.contrib.mixed_precision."
       "LossScaleOptimizer` -> `contrib_mixed_precision.LossScaleOptimizer`"
       "\n  output line 12: added `import contrib_mixed_precision`\n",),
      ("models/core_paths.py\n  11: `from tensorflow_core.contrib."
       "mixed_precision.python.loss_scale_manager import "
       "ExponentialUpdateLossScaleManager` -> `from contrib_mixed_precision."
       "loss_scale_manager import ExponentialUpdateLossScaleManager`\n",),
      ("models/contrib_object.py\n  11: `from tensorflow import contrib` -> "
       "`(removed)`\n  12: `import tensorflow.contrib as tfc` -> "
       "`(removed)`\n  18: `contrib_lib = tf.contrib` -> `(removed)`\n",),
      ("  25: `getattr(tf.contrib, \"mixed_precision\")` -> "
       "`contrib_mixed_precision`\n",),
      # Dynamic imports: the module literal changes, the call stays.
      ("models/dynamic_import.py\n  24: `importlib.import_module( "
       "\"tensorflow.contrib.mixed_precision.python.loss_scale_manager\")` -> "
       "`importlib.import_module( \"contrib_mixed_precision."
       "loss_scale_manager\")`\n",),
      ("  32: `__import__(\"tensorflow.contrib.mixed_precision\")` -> "
       "`__import__(\"tensorflow\")`\n  34: `__import__(\"tensorflow\")."
       "contrib.mixed_precision.LossScaleOptimizer` -> "
       "`contrib_mixed_precision.LossScaleOptimizer`\n",),
      # Other contrib uses through a `tf.contrib` object: line numbers.
      ("  8: WARNING: `contrib` is bound to `tf.contrib` here and is still "
       "used for `layers` (line 12).",),
      # Guards: file, line and why.
      ("  17: WARNING: this is in a `try` block (line 16) with an `except "
       "ImportError` fallback (line 19): on TensorFlow 2 the rewritten code "
       "now succeeds, so the fallback no longer runs.",),
      ("  24: WARNING: this is in the body of the TF-version check "
       "`int(tf.__version__.split(\".\")[0]) < 2` (line 23)",),
      ("  38: WARNING: this is in `make_tf1_manager()`, which runs "
       "`err_if_tf2(\"make_tf1_manager needs TensorFlow 1\")` at line 37 "
       "first: on TensorFlow 2 that check stops the function before the "
       "rewritten code runs.",),
      ("models/layers_train.py\n",),
      # The install advice once, in "Keras 2"; elsewhere a pointer to it.
      ("  uses tf.layers x1 (line 21): on TensorFlow 2.16 and later "
       "`tf.compat.v1.layers` needs Keras 2 (tf-keras): \"Keras 2\" above "
       "says how\n",),
      ("Keras 2\n" + "-" * 79 + "\n1 of 22 Python files uses Keras 2 API "
       "that Keras 3, TensorFlow 2.16+'s default `tf.keras`, refuses (output "
       "lines):\n  models/layers_train.py\n    22: `tf.compat.v1.layers`: "
       "Keras 3 raises on every use\n",),
      ("legacy/not_utf8.py: NOT CONVERTED: invalid UTF-8 at line 6 (byte "
       "0xe9); copied unchanged. It mentions `tf.contrib.mixed_precision`, "
       "which was NOT converted",),
      ("legacy/py2_train.py: NOT CONVERTED: it does not parse as Python 3 "
       "(syntax error at line 6; it looks like Python 2: port it to Python "
       "3)",),
      ("legacy/other_contrib.py: layers x1 (line 9); slim x1 (line 4)\n",),
      ("Total\n",),
      ("Python files: 22 read, 16 converted, 2 not parsed; other files and "
       "links: 2; skipped: 0.\nWarnings to review: 4 in 2 files.\n"
       "Other tf.contrib modules still used: layers (3 uses in 3 files), "
       "slim (1 use in 1 file).\nLeft to do by hand:\n",),
      ("  - run TensorFlow's tf_upgrade_v2 over the output (or pass "
       "--tf_upgrade_v2) for the rest of the TF1 API.\n",),
  )
  def test_report_names_each_case(self, text):
    self.assertIn(text, self.report_text)

  def test_each_piece_of_advice_is_given_once(self):
    self.assertEqual(self.report_text.count("pip install --no-deps"), 1)
    self.assertEqual(self.report_text.count(
        "set before TensorFlow is imported"), 1)

  def test_report_ends_with_the_total(self):
    self.assertLess(self.report_text.index("\nTotal\n"),
                    self.report_text.index("Left to do by hand:"))
    self.assertTrue(self.report_text.rstrip().splitlines()[-1].startswith(
        "  - "))

  def test_report_leaves_out_files_without_findings(self):
    for name in ("no_api.py", "common.py", "models/__init__.py"):
      self.assertNotIn(name, self.report_text)

  def test_second_pass_changes_nothing(self):
    second = os.path.join(self.tmp, "second")
    report = os.path.join(self.tmp, "report2.txt")
    status, _, err = _main("--intree", self.outtree, "--outtree", second,
                           "--reportfile", report)
    self.assertEqual(status, 0, err)
    self.assertEqual(util.tree_files(self.outtree), util.tree_files(second))
    with open(report, encoding="utf-8") as f:
      self.assertNotIn("Converted (", f.read())

  def test_single_file_mode_matches_tree_mode(self):
    single = os.path.join(self.tmp, "single")
    for path in CHANGED + ("legacy/no_api.py", "legacy/py2_train.py",
                           "legacy/not_utf8.py"):
      outfile = os.path.join(single, path)
      status, _, err = _main("--infile", os.path.join(FIXTURE, path),
                             "--outfile", outfile, "--reportfile",
                             os.path.join(self.tmp, "single.txt"))
      self.assertEqual(status, 0, err)
      with open(outfile, "rb") as f, open(
          os.path.join(self.outtree, path), "rb") as g:
        self.assertEqual(f.read(), g.read(), path)

  def _check_trains(self, path, program, env=None, extra=None):
    values = util.last_json(util.run_python(
        [os.path.join(self.outtree, path)], cwd=self.tmp, env=env))
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
    for key, value in (extra or {}).items():
      self.assertEqual(values[key], value, key)

  @parameterized.parameters(*util.PROGRAMS)
  def test_converted_program_trains_to_expected_numbers(
      self, path, steps, bad_steps, manager):
    self._check_trains(path, util.Program(path, steps, bad_steps, manager))

  @parameterized.parameters(*util.UPGRADE_PROGRAMS)
  def test_converted_pattern_program_runs_on_tf2(
      self, path, steps, bad_steps, manager, extra, legacy_keras):
    # Each of these failed on TF 2 after the old rewrite (NameError,
    # ImportError, extra star-imported names) or needs legacy Keras.
    env = util.legacy_keras_env() if legacy_keras else None
    self._check_trains(path, util.Program(path, steps, bad_steps, manager),
                       env=env, extra=extra)


class UpgradeModesTest(tf.test.TestCase, parameterized.TestCase):

  def setUp(self):
    super().setUp()
    self.tmp = _tempdir(self)
    self.tree = os.path.join(self.tmp, "tree")
    shutil.copytree(FIXTURE, self.tree)
    self.cwd = os.getcwd()
    os.chdir(self.tmp)  # Where the default report would land.
    self.addCleanup(os.chdir, self.cwd)

  def test_dry_run_prints_a_diff_and_writes_nothing(self):
    before = util.tree_files(self.tmp)
    status, out, err = _main("--intree", self.tree, "--dry_run")
    self.assertEqual(status, 0, err)
    self.assertEqual(util.tree_files(self.tmp), before)
    self.assertFalse(os.path.exists(
        os.path.join(self.tmp, "contrib_mp_upgrade_report.txt")))
    self.assertIn("--- a/train_attr.py\n+++ b/train_attr.py\n", out)
    self.assertIn("+import contrib_mixed_precision\n", out)
    self.assertIn("-from tensorflow.contrib import mixed_precision\n", out)
    self.assertIn("+import contrib_mixed_precision as mixed_precision\n", out)
    self.assertNotIn("no_api.py", out)
    self.assertIn("Converted (tf.contrib.mixed_precision -> "
                  "contrib_mixed_precision): 16 files", out)
    self.assertIn("Dry run: 16 file(s) would change; nothing was written.",
                  out)

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
    self.assertIn("changed 16 file(s)", out)
    self.assertEqual(util.tree_files(self.tree), util.tree_files(expected))
    for path in UNTOUCHED:
      # Not even rewritten with the same bytes.
      self.assertEqual(os.stat(os.path.join(self.tree, path)).st_mtime_ns,
                       mtimes[path], path)
    self.assertTrue(os.path.isfile(
        os.path.join(self.tmp, "contrib_mp_upgrade_report.txt")))
    # No temporary file is left beside the rewritten ones.
    leftovers = [p for p in util.tree_files(self.tree)
                 if "contrib-mp-upgrade" in p]
    self.assertEqual(leftovers, [])

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
    written = util.tree_files(outtree)
    self.assertNotIn("data/config.json", written)
    self.assertIn("legacy/no_api.py", written)

  def test_report_inside_the_outtree_is_written_with_it(self):
    outtree = os.path.join(self.tmp, "out")
    status, _, err = _main("--intree", self.tree, "--outtree", outtree,
                           "--reportfile", os.path.join(outtree, "r.txt"))
    self.assertEqual(status, 0, err)
    self.assertIn("Total\n", util.tree_files(outtree)["r.txt"].decode())

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
    before = util.tree_files(self.tmp)
    status, out, err = _main(*argv)
    self.assertEqual(status, 1)
    self.assertIn("contrib-mp-upgrade: error: ", err)
    self.assertIn(message, err)
    self.assertEqual(out, "")
    self.assertEqual(util.tree_files(self.tmp), before)
    self.assertFalse(os.path.exists(os.path.join(self.tmp, "o")))

  def test_bad_flag_value_is_a_usage_error(self):
    with self.assertRaises(SystemExit) as cm:
      _main("--intree", self.tree, "--dry_run", "--copyotherfiles", "maybe")
    self.assertEqual(cm.exception.code, 2)

  def test_command_line_entry_points(self):
    script = os.path.join(_REPO, "scripts", "contrib_mp_upgrade.py")
    argvs = [["-m", "contrib_mp_upgrade", "--help"]]
    if os.path.exists(script):  # The scripts/ folder is in source layouts.
      argvs.append([script, "--help"])
    for argv in argvs:
      proc = util.run_python(argv, cwd=self.tmp)
      self.assertEqual(proc.returncode, 0, proc.stderr)
      self.assertIn("usage: contrib-mp-upgrade", proc.stdout)
      for flag in ("--infile", "--outfile", "--intree", "--outtree",
                   "--reportfile", "--copyotherfiles", "--inplace",
                   "--dry_run", "--tf_upgrade_v2"):
        self.assertIn(flag, proc.stdout)

  def test_module_run_converts_a_file(self):
    outfile = os.path.join(self.tmp, "o.py")
    proc = util.run_python(
        ["-m", "contrib_mp_upgrade", "--infile",
         os.path.join(self.tree, "models", "from_contrib.py"), "--outfile",
         outfile], cwd=self.tmp)
    self.assertEqual(proc.returncode, 0, proc.stderr)
    with open(outfile, encoding="utf-8") as f:
      self.assertIn("import contrib_mixed_precision as mixed_precision",
                    f.read())


class LargeTreeReportTest(tf.test.TestCase):
  """On a large tree the mixed-precision lines stay on top, not buried."""

  def test_report_is_one_line_per_other_contrib_file(self):
    tmp = _tempdir(self)
    tree = os.path.join(tmp, "zoo")
    files, uses, mp_every = 150, 8, 30
    proc = subprocess.run(
        [sys.executable, os.path.join(_REPO, "scripts", "make_legacy_tree.py"),
         "--out", tree, "--files", str(files), "--uses", str(uses),
         "--mp_every", str(mp_every)],
        capture_output=True, text=True, timeout=120, check=False)
    self.assertEqual(proc.returncode, 0, proc.stderr)
    report = os.path.join(tmp, "report.txt")
    status, _, err = _main("--intree", tree, "--outtree",
                           os.path.join(tmp, "out"), "--reportfile", report)
    self.assertEqual(status, 0, err)
    with open(report, encoding="utf-8") as f:
      lines = f.read().splitlines()
    mp_files = files // mp_every
    # Each converted file: name, 2 changes, 1 added import, 1 contrib line,
    # and what still stops it (one line per other contrib module).
    converted = lines.index("Converted (tf.contrib.mixed_precision -> "
                            "contrib_mixed_precision): {} files".format(
                                mp_files))
    # After the header and the short "Before you run it" summary, one line
    # per kind of blocker.
    self.assertLess(converted, 20)
    block = lines[converted + 2:lines.index("", converted)]
    self.assertLen([l for l in block if "-> `contrib_mixed_precision." in l],
                   2 * mp_files)
    # Every other file is one line, however many uses it has (the old
    # report had one line per use: `files * uses` lines). Converted files
    # also list what still stops them, one line per kind, with its fix.
    self.assertLess(len(lines), files + 50 + 8 * mp_files)
    self.assertIn("model_000/layer_001.py: framework x1 (line 12); layers x3 "
                  "(lines 7, 13, 14); opt x1 (line 9); slim x1 (line 3); "
                  "tpu x1 (line 11); training x1 (line 10)", lines)
    self.assertIn("Python files: 150 read, 5 converted, 0 not parsed; other "
                  "files and links: 0; skipped: 0.", lines)


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
      # Item 1: a name bound in one function does not serve another.
      ("function_local_alias_serves_only_its_function",
       "import tensorflow as tf\n"
       "def f():\n"
       "  from tensorflow.contrib import mixed_precision as "
       "contrib_mixed_precision\n"
       "  return contrib_mixed_precision.LossScaleOptimizer\n"
       "def g():\n"
       "  return tf.contrib.mixed_precision.LossScaleManager\n",
       "import tensorflow as tf\n"
       "import contrib_mixed_precision\n"
       "def f():\n"
       "  import contrib_mixed_precision\n"
       "  return contrib_mixed_precision.LossScaleOptimizer\n"
       "def g():\n"
       "  return contrib_mixed_precision.LossScaleManager\n"),
      ("tf_bound_differently_per_function",
       "import numpy as tf\n"
       "def f():\n"
       "  import tensorflow as tf\n"
       "  return tf.contrib.mixed_precision.LossScaleManager\n"
       "def g():\n"
       "  return tf.contrib.mixed_precision\n",
       "import contrib_mixed_precision\n"
       "import numpy as tf\n"
       "def f():\n"
       "  import tensorflow as tf\n"
       "  return contrib_mixed_precision.LossScaleManager\n"
       "def g():\n"
       "  return tf.contrib.mixed_precision\n"),
      ("local_name_taken_uses_an_alias",
       "import tensorflow as tf\n"
       "def f(contrib_mixed_precision):\n"
       "  return tf.contrib.mixed_precision.LossScaleManager\n",
       "import tensorflow as tf\n"
       "import contrib_mixed_precision as contrib_mixed_precision_lib\n"
       "def f(contrib_mixed_precision):\n"
       "  return contrib_mixed_precision_lib.LossScaleManager\n"),
      ("local_import_after_use_uses_an_alias",
       "import tensorflow as tf\n"
       "def f():\n"
       "  m = tf.contrib.mixed_precision.LossScaleManager\n"
       "  from tensorflow.contrib import mixed_precision as "
       "contrib_mixed_precision\n"
       "  return m, contrib_mixed_precision\n",
       "import tensorflow as tf\n"
       "import contrib_mixed_precision as contrib_mixed_precision_lib\n"
       "def f():\n"
       "  m = contrib_mixed_precision_lib.LossScaleManager\n"
       "  import contrib_mixed_precision\n"
       "  return m, contrib_mixed_precision\n"),
      # Item 2: TF 1.15's real package, every form.
      ("core_from_module",
       "from tensorflow_core.contrib.mixed_precision.python."
       "loss_scale_manager import ExponentialUpdateLossScaleManager\n",
       "from contrib_mixed_precision.loss_scale_manager import "
       "ExponentialUpdateLossScaleManager\n"),
      ("core_from_package",
       "from tensorflow_core.contrib.mixed_precision import "
       "LossScaleOptimizer\n",
       "from contrib_mixed_precision import LossScaleOptimizer\n"),
      ("core_from_contrib",
       "from tensorflow_core.contrib import mixed_precision as mp\n",
       "import contrib_mixed_precision as mp\n"),
      ("core_import_as",
       "import tensorflow_core.contrib.mixed_precision.python."
       "loss_scale_optimizer as lso\n",
       "import contrib_mixed_precision.loss_scale_optimizer as lso\n"),
      ("core_compat_attribute",
       "import tensorflow_core as tf\n"
       "x = tf.compat.v1.contrib.mixed_precision.LossScaleManager\n",
       "import tensorflow_core as tf\n"
       "import contrib_mixed_precision\n"
       "x = contrib_mixed_precision.LossScaleManager\n"),
      ("core_unaliased_import",
       "import tensorflow_core.contrib.mixed_precision\n"
       "x = tensorflow_core.contrib.mixed_precision.LossScaleManager\n",
       "import contrib_mixed_precision\n"
       "x = contrib_mixed_precision.LossScaleManager\n"),
      # Item 3: `tf.contrib` as an object.
      ("from_tensorflow_import_contrib",
       "import tensorflow as tf\nfrom tensorflow import contrib\n"
       "x = contrib.mixed_precision.LossScaleManager\n",
       "import tensorflow as tf\n"
       "import contrib_mixed_precision\n"
       "x = contrib_mixed_precision.LossScaleManager\n"),
      ("import_contrib_as",
       "import tensorflow.contrib as tfc  # old\n"
       "x = tfc.mixed_precision.LossScaleManager\n",
       "import contrib_mixed_precision\n"
       "x = contrib_mixed_precision.LossScaleManager\n"),
      ("contrib_assigned",
       "import tensorflow as tf\n"
       "def f():\n"
       "  contrib = tf.contrib\n"
       "  return contrib.mixed_precision.LossScaleManager\n",
       "import tensorflow as tf\n"
       "import contrib_mixed_precision\n"
       "def f():\n"
       "  return contrib_mixed_precision.LossScaleManager\n"),
      ("only_statement_of_a_block_becomes_pass",
       "import tensorflow as tf\n"
       "if True:\n"
       "  contrib = tf.contrib\n"
       "x = contrib.mixed_precision\n",
       "import tensorflow as tf\n"
       "import contrib_mixed_precision\n"
       "if True:\n"
       "  pass\n"
       "x = contrib_mixed_precision\n"),
      ("getattr_mixed_precision",
       "import tensorflow as tf\n"
       "mp = getattr(tf.contrib, 'mixed_precision')\n"
       "o = getattr(getattr(tf, 'contrib'), 'mixed_precision')."
       "LossScaleOptimizer\n",
       "import tensorflow as tf\n"
       "import contrib_mixed_precision\n"
       "mp = contrib_mixed_precision\n"
       "o = contrib_mixed_precision.LossScaleOptimizer\n"),
      # Dynamic imports with literal module names.
      ("import_module_literal",
       "import importlib\n"
       "mp = importlib.import_module('tensorflow.contrib.mixed_precision')\n"
       "m = importlib.import_module(\n"
       "    'tensorflow_core.contrib.mixed_precision.python.'\n"
       "    'loss_scale_manager')\n",
       "import importlib\n"
       "mp = importlib.import_module('contrib_mixed_precision')\n"
       "m = importlib.import_module(\n"
       "    'contrib_mixed_precision.loss_scale_manager')\n"),
      ("import_module_with_a_package",
       "import importlib\n"
       "m = importlib.import_module('tensorflow.contrib.mixed_precision', "
       "package=None)\n",
       "import importlib\n"
       "m = importlib.import_module('contrib_mixed_precision', "
       "package=None)\n"),
      ("import_module_from_importlib",
       "from importlib import import_module as load\n"
       "def f():\n"
       "  return load(\"tensorflow.contrib.mixed_precision\")"
       ".LossScaleManager\n",
       "from importlib import import_module as load\n"
       "def f():\n"
       "  return load(\"contrib_mixed_precision\").LossScaleManager\n"),
      ("dunder_import_attribute",
       "\"\"\"Doc.\"\"\"\n"
       "x = __import__('tensorflow').contrib.mixed_precision."
       "LossScaleManager\n",
       "\"\"\"Doc.\"\"\"\n"
       "import contrib_mixed_precision\n"
       "x = contrib_mixed_precision.LossScaleManager\n"),
      ("dunder_import_returns_the_root",
       "tf = __import__('tensorflow.contrib.mixed_precision')\n"
       "x = tf.contrib.mixed_precision.LossScaleManager\n"
       "z = tf.zeros\n",
       "import contrib_mixed_precision\n"
       "tf = __import__('tensorflow')\n"
       "x = contrib_mixed_precision.LossScaleManager\n"
       "z = tf.zeros\n"),
      ("dunder_import_fromlist_returns_the_module",
       "lso = __import__('tensorflow.contrib.mixed_precision.python.'\n"
       "                 'loss_scale_optimizer', None, None, ['x'])\n",
       "lso = __import__('contrib_mixed_precision.loss_scale_optimizer', None, "
       "None, ['x'])\n"),
      ("import_module_of_contrib_only_for_mixed_precision",
       "import importlib\n"
       "contrib = importlib.import_module('tensorflow.contrib')\n"
       "x = contrib.mixed_precision.LossScaleManager\n",
       "import contrib_mixed_precision\n"
       "import importlib\n"
       "x = contrib_mixed_precision.LossScaleManager\n"),
      ("import_tensorflow_contrib_binds_tensorflow",
       "import tensorflow.contrib\n"
       "x = tensorflow.contrib.mixed_precision.LossScaleManager\n"
       "y = tensorflow.zeros\n",
       "import tensorflow\n"
       "import contrib_mixed_precision\n"
       "x = contrib_mixed_precision.LossScaleManager\n"
       "y = tensorflow.zeros\n"),
      # Item 5: star imports bring TF 1.15's names only.
      ("star",
       "from tensorflow.contrib.mixed_precision import *\n",
       "from contrib_mixed_precision import (\n"
       "    ExponentialUpdateLossScaleManager,\n"
       "    FixedLossScaleManager,\n"
       "    LossScaleManager,\n"
       "    LossScaleOptimizer)\n"),
      ("star_manager_module",
       "from tensorflow.contrib.mixed_precision.python.loss_scale_manager "
       "import *\n",
       "from contrib_mixed_precision.loss_scale_manager import (\n"
       "    ExponentialUpdateLossScaleManager,\n"
       "    FixedLossScaleManager,\n"
       "    LossScaleManager)\n"),
      ("star_optimizer_module",
       "from tensorflow_core.contrib.mixed_precision.python."
       "loss_scale_optimizer import *\n",
       "from contrib_mixed_precision.loss_scale_optimizer import "
       "LossScaleOptimizer\n"),
  )
  def test_rewrite(self, source, expected):
    result = _upgrade(source)
    self.assertIsNone(result.error)
    self.assertEqual(result.new_source.decode(), expected)
    self.assertFalse(rewrite.upgrade_source(result.new_source).changed)
    compile(result.new_source, "<rewritten>", "exec")

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
      ("contrib_object_for_others_only",
       "from tensorflow import contrib\nx = contrib.layers.flatten\n"),
      ("import_module_of_a_variable",
       "import importlib\nm = importlib.import_module(name)\n"),
      ("import_module_not_importlib",
       "import plugins as importlib\n"
       "m = importlib.import_module('tensorflow.contrib.mixed_precision')\n"),
      ("dunder_import_shadowed",
       "def __import__(name):\n  return name\n"
       "m = __import__('tensorflow.contrib.mixed_precision')\n"),
      ("dunder_import_other_module",
       "m = __import__('mylib.contrib.mixed_precision', fromlist=['x'])\n"),
      ("own_mixed_precision_module",
       "from . import mixed_precision\nimport mixed_precision as mp\n"
       "x = mixed_precision.AutomaticLossScaler\n"),
  )
  def test_no_rewrite(self, source):
    result = _upgrade(source)
    self.assertFalse(result.changed)
    self.assertEqual(result.new_source, source.encode())

  @parameterized.named_parameters(
      ("try_import_error",
       "try:\n"
       "  from tensorflow.contrib.mixed_precision import LossScaleOptimizer\n"
       "except ImportError:\n"
       "  LossScaleOptimizer = None\n",
       2, "in a `try` block (line 1) with an `except ImportError` fallback "
       "(line 3)"),
      ("in_the_fallback",
       "try:\n"
       "  import fancy_amp as amp\n"
       "except (ImportError, AttributeError):\n"
       "  import tensorflow.contrib.mixed_precision as amp\n",
       4, "in the `except (ImportError, AttributeError)` fallback (line 3)"),
      ("loose_version",
       "from distutils.version import LooseVersion\n"
       "import tensorflow as tf\n"
       "if LooseVersion(tf.__version__) < LooseVersion('2.0'):\n"
       "  m = tf.contrib.mixed_precision\n",
       4, "in the body of the TF-version check `LooseVersion(tf.__version__)"
       " < LooseVersion('2.0')` (line 3)"),
      ("is_tf2_else",
       "import tensorflow as tf\nis_tf2 = tf.__version__.startswith('2')\n"
       "if is_tf2:\n  m = None\nelse:\n"
       "  m = tf.contrib.mixed_precision.LossScaleManager\n",
       6, "in the `else` branch of the TF-version check `is_tf2` (line 3)"),
      ("err_if_tf2_function",
       "import tensorflow as tf\n"
       "def f():\n"
       "  contrib_util.err_if_tf2(msg='TF1 only')\n"
       "  return tf.contrib.mixed_precision.LossScaleManager\n",
       4, "in `f()`, which runs `contrib_util.err_if_tf2(msg='TF1 only')` at "
       "line 3 first"),
      ("raise_if_is_tf2_function",
       "import tensorflow as tf\n"
       "def f(hparams):\n"
       "  if hparams.is_tf2:\n"
       "    raise ValueError('no')\n"
       "  from tensorflow.contrib import mixed_precision\n"
       "  return mixed_precision\n",
       5, "which runs `if hparams.is_tf2: raise ...` at line 3 first"),
  )
  def test_guarded_rewrite_is_made_and_warned(self, source, line, why):
    result = _upgrade(source)
    self.assertTrue(result.changed)
    self.assertNotIn(b"contrib.mixed_precision", result.new_source)
    self.assertLen(result.warnings, 1, result.warnings)
    self.assertEqual(result.warnings[0][0], line)
    self.assertIn(why, result.warnings[0][1])

  @parameterized.named_parameters(
      ("parameter",
       "def build(tf):\n  return tf.contrib.mixed_precision.LossScaleManager\n",
       2, "`tf.contrib.mixed_precision`", "`tf`"),
      ("attribute_of_self",
       "class M:\n  def f(self):\n    return self.tf.contrib.mixed_precision\n",
       3, "`self.tf.contrib.mixed_precision`", "`self.tf`"),
      ("name_returned_by_other_code",
       "tf = load_tensorflow()\n"
       "x = getattr(tf.contrib, 'mixed_precision')\n",
       2, "`getattr(tf.contrib, 'mixed_precision')`", "`tf`"),
      ("module_name_in_a_string",
       "import plugins\n"
       "m = plugins.load('tensorflow.contrib.mixed_precision')\n",
       2, "`'tensorflow.contrib.mixed_precision'`", "imports it by name"),
      ("dunder_import_with_a_computed_fromlist",
       "names = ['x']\nm = __import__(\n"
       "    'tensorflow_core.contrib.mixed_precision.python',\n"
       "    fromlist=names)\n",
       3, "`'tensorflow_core.contrib.mixed_precision.python'`",
       "imports it by name"),
  )
  def test_unresolved_uses_are_left_and_warned(self, source, line, code,
                                               why):
    result = _upgrade(source)
    self.assertFalse(result.changed)
    self.assertLen(result.warnings, 1, result.warnings)
    self.assertEqual(result.warnings[0][0], line)
    self.assertIn(code, result.warnings[0][1])
    self.assertIn(why, result.warnings[0][1])
    self.assertIn("left unchanged", result.warnings[0][1])

  @parameterized.named_parameters(
      ("another_library_named_tf",
       "import numpy as tf\nx = tf.contrib.mixed_precision\n"),
      ("docstring_and_message",
       "'''Uses tensorflow.contrib.mixed_precision.'''\n"
       "print('tensorflow.contrib.mixed_precision is gone')\n"),
      ("rewritten_dynamic_import",
       "import importlib\n"
       "m = importlib.import_module('tensorflow.contrib.mixed_precision')\n"),
  )
  def test_resolved_or_unrelated_uses_are_not_warned(self, source):
    self.assertEqual(_upgrade(source).warnings, [])

  def test_report_quotes_the_statement_without_comments_above_it(self):
    result = _upgrade(
        "import os\n"
        "# import tensorflow.contrib.slim as slim\n"
        "from tensorflow.contrib.mixed_precision import LossScaleOptimizer\n")
    self.assertEqual([(c.line, c.old, c.new) for c in result.changes], [(
        3, "from tensorflow.contrib.mixed_precision import LossScaleOptimizer",
        "from contrib_mixed_precision import LossScaleOptimizer")])

  def test_unguarded_rewrites_are_not_warned(self):
    result = _upgrade(
        "import tensorflow as tf\n"
        "try:\n  import horovod\nexcept ImportError:\n  horovod = None\n"
        "if tf.executing_eagerly():\n"
        "  m = tf.contrib.mixed_precision.LossScaleManager\n"
        "def f():\n"
        "  return tf.contrib.mixed_precision.LossScaleOptimizer\n")
    self.assertLen(result.changes, 2)
    self.assertEqual(result.warnings, [])

  def test_other_contrib_uses_are_counted_with_lines(self):
    result = _upgrade(
        "import tensorflow as tf\n"
        "from tensorflow.contrib import slim\n"
        "import tensorflow.contrib.layers as layers\n"
        "a = tf.contrib.layers.flatten\n"
        "b = tf.contrib.layers.dense\n"
        "c = tf.compat.v1.contrib.opt.LazyAdamOptimizer\n"
        "d = tf.contrib.mixed_precision.LossScaleManager\n")
    self.assertEqual(result.other_contrib,
                     {"slim": [2], "layers": [3, 4, 5], "opt": [6]})
    self.assertEqual(result.warnings, [])

  def test_other_contrib_modules_loaded_dynamically_are_counted(self):
    result = _upgrade(
        "import importlib\n"
        "slim = importlib.import_module('tensorflow.contrib.slim')\n"
        "opt = __import__('tensorflow').contrib.opt.LazyAdamOptimizer\n"
        "tfl = __import__('tensorflow.contrib.layers', fromlist=['x'])\n")
    self.assertFalse(result.changed)
    self.assertEqual(result.other_contrib,
                     {"slim": [2], "opt": [3], "layers": [4]})

  def test_contrib_object_still_used_for_others_is_reported(self):
    result = _upgrade(
        "import tensorflow.contrib as tfc\n"
        "a = tfc.mixed_precision.LossScaleManager\n"
        "b = tfc.layers.flatten\n"
        "c = tfc.opt.LazyAdamOptimizer\n"
        "d = tfc.layers.dense\n"
        "e = helper(tfc)\n")
    self.assertIn(b"import tensorflow.contrib as tfc\n", result.new_source)
    self.assertIn(b"a = contrib_mixed_precision.LossScaleManager\n",
                  result.new_source)
    self.assertEqual(result.warnings, [(1, (
        "`tfc` is bound to `tf.contrib` here and is still used for `layers` "
        "(lines 3, 5); `opt` (line 4); `tfc` itself (line 6). Its "
        "`mixed_precision` uses were rewritten, but this line fails on "
        "TensorFlow 2 until those other uses are migrated too."))])

  @parameterized.named_parameters(
      ("attribute", "import tensorflow as tf\nx = tf.layers.dense\n", [2]),
      ("compat", "import tensorflow as tf\n\ny = tf.compat.v1.layers.conv2d\n",
       [3]),
      ("compat_alias", "import tensorflow.compat.v1 as tf\nz = tf.layers\n",
       [2]),
      ("from_import", "from tensorflow.compat.v1 import layers\n", [1]),
      ("keras_is_not_legacy",
       "import tensorflow as tf\nx = tf.keras.layers.Dense\n", []),
  )
  def test_legacy_layers_are_flagged(self, source, lines):
    self.assertEqual(_upgrade(source).legacy_layers, lines)

  def test_keeps_crlf_and_encoding(self):
    source = ("# -*- coding: latin-1 -*-\r\nimport tensorflow as tf\r\n"
              "s = 'caf\xe9'\r\n"
              "m = tf.contrib.mixed_precision.FixedLossScaleManager(2)\r\n"
              ).encode("latin-1")
    result = rewrite.upgrade_source(source)
    self.assertEqual(
        result.new_source,
        ("# -*- coding: latin-1 -*-\r\nimport tensorflow as tf\r\n"
         "import contrib_mixed_precision\r\ns = 'caf\xe9'\r\n"
         "m = contrib_mixed_precision.FixedLossScaleManager(2)\r\n"
         ).encode("latin-1"))

  def test_crlf_star_import_keeps_crlf(self):
    result = rewrite.upgrade_source(
        b"from tensorflow.contrib.mixed_precision import *  # all\r\n"
        b"x = 1\r\n")
    self.assertEqual(result.new_source.count(b"\n"),
                     result.new_source.count(b"\r\n"))
    self.assertIn(b"    LossScaleOptimizer)  # all\r\nx = 1\r\n",
                  result.new_source)

  @parameterized.named_parameters(
      ("utf8", b"import tensorflow as tf\n\nx = '\xff'\n",
       "invalid UTF-8 at line 3 (byte 0xff)"),
      ("declared_encoding",
       b"# coding: ascii\nx = 1\ny = '\xc3\xa9'\n",
       "invalid ascii at line 3 (byte 0xc3)"),
      ("python2", b"import tensorflow as tf\nprint 'x'\n",
       "it does not parse as Python 3 (syntax error at line 2; it looks like "
       "Python 2: port it to Python 3)"),
      ("python3_syntax_error", b"def f(:\n  pass\n",
       "it does not parse as Python 3 (syntax error at line 1)"),
      # Python accepts this indentation (a tab counts to the next multiple
      # of 8); libcst does not. The cause must not read "not Python 3".
      # (Only files that may use the API reach libcst.)
      ("tabs_libcst_rejects",
       b"import tensorflow as tf\n"
       b"def f(x):\n\tfor i in x:\n" + b" " * 16 + b"y = 1\n" +
       b" " * 16 + b"if y:\n" + b" " * 16 + b"\tz = 2\n"
       b"mixed_precision = None\n",
       "Python parses it, but libcst, which this command uses, cannot "
       "(no matching outer block for dedent): its indentation mixes tabs "
       "and spaces (the first tab is at line 3). Re-indent it with spaces "
       "only and run again"),
  )
  def test_unreadable_source_is_returned_unchanged(self, source, error):
    result = rewrite.upgrade_source(source)
    self.assertEqual(result.error, error)
    self.assertEqual(result.new_source, source)
    self.assertFalse(result.changed)
    self.assertFalse(result.mentions_api)

  def test_fixture_util_mirrors_common_py(self):
    with open(os.path.join(FIXTURE, "common.py"), encoding="utf-8") as f:
      common = f.read()
    self.assertIn("X = np.array([[1.0], [2.0], [3.0], [4.0]]", common)
    self.assertIn("Y = 3.0 * X + 1.0", common)
    self.assertIn("LEARNING_RATE = {}\n".format(util.LEARNING_RATE), common)


if __name__ == "__main__":
  tf.test.main()
