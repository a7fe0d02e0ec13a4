# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""`contrib-mp-upgrade --tf_upgrade_v2`: one pass to a tree that runs on TF 2.

tests/testdata/upgrade_tf1_tree is plain TF 1.x code: `tf.placeholder`,
`tf.trainable_variables`, `tf.Session`, `tf.layers` and
`tf.contrib.mixed_precision`, one file with CRLF line endings. With the flag
the command also runs TensorFlow's own `tf_upgrade_v2` console script, and
the converted program trains on TensorFlow 2 (with tf-keras and
TF_USE_LEGACY_KERAS=1 for `tf.compat.v1.layers` on TF 2.16+) to numbers
computed independently.
"""

import os
import shutil
import subprocess
import tempfile

import tensorflow as tf

from contrib_mp_upgrade import cli
from contrib_mp_upgrade import tf_upgrade_v2_pass
import upgrade_fixture_util as util

# Plain files even under Bazel, whose runfiles are symlinks.
_TREE = util.real_tree(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "testdata", "upgrade_tf1_tree"))
# 8 steps from a zero model; step 3 feeds NaN; scale 128, doubled every 2
# good steps, halved after 2 bad ones.
_PROGRAM = util.Program("train_tf1.py", 8, (3,),
                        ("exponential", 128.0, 2, 2, 2, 0.5))


_main = util.run_command


class TfUpgradeV2PassTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.command = tf_upgrade_v2_pass.find_command()
    cls.tmp = tempfile.mkdtemp(prefix="upgrade_tf_upgrade_v2_test_")
    cls.outtree = os.path.join(cls.tmp, "both")
    cls.report = os.path.join(cls.tmp, "report.txt")
    cls.status, cls.stdout, cls.stderr = _main(
        "--intree", _TREE, "--outtree", cls.outtree, "--reportfile",
        cls.report, "--tf_upgrade_v2")
    with open(cls.report, encoding="utf-8") as f:
      cls.report_text = f.read()

  @classmethod
  def tearDownClass(cls):
    shutil.rmtree(cls.tmp, ignore_errors=True)
    super().tearDownClass()

  def test_self_documenting_fstring_fields_are_found_on_every_python(self):
    # tf_upgrade_v2's parser crashes on them, so they are kept from it. On
    # Python 3.9 the nodes inside an f-string carry wrong columns, and the
    # fields went unnoticed there.
    for source, line in (('x = 1\nprint(f"{x=}")\n', 2),
                         ('a = 1\n\nprint(f"sum {a + 1=} ok")\n', 3),
                         ("s = f'{max(1, 2)=!s:>8}'\n", 1)):
      with self.subTest(source=source):
        self.assertEqual(
            tf_upgrade_v2_pass.unreadable_syntax(source.encode()),
            "an f-string with a self-documenting `{{x=}}` field at output "
            "line {}".format(line))
    self.assertIsNone(tf_upgrade_v2_pass.unreadable_syntax(
        b'x = 1\nprint(f"x={x}")\n'))

  def test_tf_upgrade_v2_is_found_where_tensorflow_is_installed(self):
    self.assertIsNotNone(
        self.command, msg="TensorFlow is installed, so its tf_upgrade_v2 "
        "console script must be found (PATH or beside sys.executable).")
    self.assertEqual(self.status, 0, self.stderr)

  def test_converted_program_trains_on_tf2(self):
    values = util.last_json(util.run_python(
        [os.path.join(self.outtree, "train_tf1.py")], cwd=self.outtree,
        env=util.legacy_keras_env()))
    expected = util.expected_values(_PROGRAM)
    self.assertEqual(values["scale"], expected["scale"])
    for key in ("loss", "w", "b"):
      self.assertAllClose(values[key], expected[key], rtol=1e-5, atol=1e-6,
                          msg=key)

  def test_without_the_flag_the_program_fails_on_tf2(self):
    ours = os.path.join(self.tmp, "ours_only")
    status, _, err = _main("--intree", _TREE, "--outtree", ours,
                           "--reportfile", os.path.join(self.tmp, "r.txt"))
    self.assertEqual(status, 0, err)
    proc = util.run_python([os.path.join(ours, "train_tf1.py")], cwd=ours,
                           env=util.legacy_keras_env())
    self.assertNotEqual(proc.returncode, 0)
    self.assertIn("module 'tensorflow' has no attribute", proc.stderr)

  def test_both_converters_and_the_layers_rename_are_applied(self):
    code = util.tree_files(self.outtree)["train_tf1.py"].decode()
    self.assertIn("import contrib_mixed_precision\n", code)
    self.assertIn("manager = contrib_mixed_precision."
                  "ExponentialUpdateLossScaleManager(", code)
    self.assertIn("var_list=tf.compat.v1.trainable_variables())", code)
    self.assertIn("prediction = tf.compat.v1.layers.dense(", code)
    self.assertNotIn("tf.contrib", code.split('"""')[2])  # Code, not doc.

  def test_crlf_survives_tf_upgrade_v2(self):
    helpers = util.tree_files(self.outtree)["helpers.py"]
    self.assertIn(b"tf.compat.v1.get_default_graph()", helpers)
    self.assertEqual(helpers.count(b"\n"), helpers.count(b"\r\n"))

  def test_order_does_not_matter(self):
    # tf_upgrade_v2 first, then this command: the same bytes.
    first = os.path.join(self.tmp, "tf_first")
    proc = subprocess.run(
        [self.command, "--intree", _TREE, "--outtree", first, "--reportfile",
         os.path.join(self.tmp, "tf_report.txt")], cwd=self.tmp,
        capture_output=True, text=True, timeout=300, check=False)
    self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
    second = os.path.join(self.tmp, "then_ours")
    status, _, err = _main("--intree", first, "--outtree", second,
                           "--reportfile", os.path.join(self.tmp, "r2.txt"),
                           "--tf_upgrade_v2")
    self.assertEqual(status, 0, err)
    ours, theirs = util.tree_files(self.outtree), util.tree_files(second)
    # tf_upgrade_v2 alone turned CRLF into LF; everything else is equal.
    theirs["helpers.py"] = theirs["helpers.py"].replace(b"\n", b"\r\n")
    self.assertEqual(ours, theirs)

  def test_second_pass_later_gives_the_one_pass_result(self):
    # The documented way to add tf_upgrade_v2 later, where TensorFlow is:
    # this command again, with the flag, in place. Bare tf_upgrade_v2
    # would turn CRLF into LF and skip the `tf.layers` rename on TF 2.16+.
    later = os.path.join(self.tmp, "later")
    status, _, err = _main("--intree", _TREE, "--outtree", later,
                           "--reportfile", os.path.join(self.tmp, "l1.txt"))
    self.assertEqual(status, 0, err)
    status, _, err = _main("--intree", later, "--inplace", "--reportfile",
                           os.path.join(self.tmp, "l2.txt"), "--tf_upgrade_v2")
    self.assertEqual(status, 0, err)
    self.assertEqual(util.tree_files(later), util.tree_files(self.outtree))

  def test_second_run_with_the_flag_changes_nothing_here(self):
    again = os.path.join(self.tmp, "again")
    report = os.path.join(self.tmp, "again.txt")
    status, _, err = _main("--intree", self.outtree, "--outtree", again,
                           "--reportfile", report, "--tf_upgrade_v2")
    self.assertEqual(status, 0, err)
    self.assertEqual(util.tree_files(again), util.tree_files(self.outtree))

  def test_default_report_is_not_tf_upgrade_v2s(self):
    # tf_upgrade_v2 writes report.txt by default: a later run of it in the
    # same directory must not overwrite this command's report.
    self.assertEqual(cli.parser().get_default("reportfile"),
                     "contrib_mp_upgrade_report.txt")

  def test_report_folds_in_tf_upgrade_v2(self):
    for text in (
        "train_tf1.py\n  25: `tf.contrib.mixed_precision."
        "ExponentialUpdateLossScaleManager` -> `contrib_mixed_precision."
        "ExponentialUpdateLossScaleManager`\n",
        "  tf_upgrade_v2 also changed this file\n",
        "tf_upgrade_v2 ({})\n".format(self.command),
        "Of 2 Python files, it converted 2 (changed 2) and did NOT convert "
        "0; 0 issues in its report.\n",
        "  changed by tf_upgrade_v2 only: helpers.py\n",
        "  - run the 1 file that needs Keras 2 with it: \"Keras 2\" above "
        "says how, and why.\n",
    ):
      self.assertIn(text, self.report_text)
    self.assertNotIn("run TensorFlow's tf_upgrade_v2", self.report_text)

  def test_without_the_flag_the_report_says_to_run_it(self):
    status, out, _ = _main("--intree", _TREE, "--dry_run")
    self.assertEqual(status, 0)
    self.assertIn("  - run TensorFlow's tf_upgrade_v2 over the output (or "
                  "pass --tf_upgrade_v2) for the rest of the TF1 API.\n", out)
    self.assertIn("`tf.layers` itself (line 22) is gone in TensorFlow 2: "
                  "--tf_upgrade_v2 renames it `tf.compat.v1.layers`", out)

  def test_tf_upgrade_v2_issues_are_folded_with_output_lines(self):
    tree = os.path.join(self.tmp, "issues_in")
    os.mkdir(tree)
    with open(os.path.join(tree, "uses_contrib.py"), "w") as f:
      f.write("import tensorflow as tf\n\n"
              "x = tf.contrib.framework.get_variables()\n"
              "y = tf.contrib.framework.get_variables()\n")
    out = os.path.join(self.tmp, "issues_out")
    status, _, err = _main("--intree", tree, "--outtree", out,
                           "--reportfile", os.path.join(self.tmp, "r3.txt"),
                           "--tf_upgrade_v2")
    self.assertEqual(status, 0, err)
    with open(os.path.join(self.tmp, "r3.txt"), encoding="utf-8") as f:
      report = f.read()
    self.assertRegex(report, r"  x2 ERROR: .*tf\.contrib.* \(first: "
                     r"uses_contrib\.py:3, uses_contrib\.py:4; output lines\)")
    self.assertIn("uses_contrib.py: framework x2 (lines 3, 4)", report)
    # Left to do: each of its issues quoted, with its file and line.
    self.assertRegex(report, r"  - resolve tf_upgrade_v2's 2 issues: "
                     r"uses_contrib\.py:3 \(ERROR: .*tf\.contrib.*\); "
                     r"uses_contrib\.py:4 \(ERROR: .*\)\.\n")


# TF 2.x Keras code: tf_upgrade_v2 has nothing to convert in it, and it
# renames `tf.keras.optimizers.SGD` to `tf.keras.optimizers.legacy.SGD`,
# which Keras 3 refuses (ImportError). The same rename hits a TF1 file that
# builds a Keras optimizer.
_TF2_KERAS = """\
import json
import tensorflow as tf

w = tf.Variable([1.0, -2.0])
opt = tf.keras.optimizers.SGD(0.25)
for _ in range(2):
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(w * [1.0, 2.0])
  opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
print(json.dumps({"w": [float(v) for v in w.numpy()]}))
"""
_TF1_KERAS_OPTIMIZER = """\
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 2])
opt = tf.keras.optimizers.Adam(1e-3)
"""


class KerasOptimizerRenameTest(tf.test.TestCase):
  """What `--tf_upgrade_v2` does to Keras optimizers, said in the report."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tmp = tempfile.mkdtemp(prefix="upgrade_tf_upgrade_v2_test_")
    cls.intree = os.path.join(cls.tmp, "in")
    util.write_files(cls.intree, {"keras_sgd.py": _TF2_KERAS,
                                  "tf1_adam.py": _TF1_KERAS_OPTIMIZER})
    cls.outtree = os.path.join(cls.tmp, "out")
    report = os.path.join(cls.tmp, "report.txt")
    status, _, err = _main("--intree", cls.intree, "--outtree", cls.outtree,
                           "--reportfile", report, "--tf_upgrade_v2")
    if status != 0:
      raise AssertionError(err)
    cls.report = util.read_text(report)

  @classmethod
  def tearDownClass(cls):
    shutil.rmtree(cls.tmp, ignore_errors=True)
    super().tearDownClass()

  def test_the_renamed_optimizer_is_reported_as_needing_keras_2(self):
    self.assertIn("tf.keras.optimizers.legacy.SGD(0.25)", util.read_text(
        os.path.join(self.outtree, "keras_sgd.py")))
    keras2 = self.report.split("\nKeras 2\n", 1)[1].split("\n\n", 1)[0]
    for name, line in (("keras_sgd.py", 5), ("tf1_adam.py", 4)):
      self.assertIn(
          "  {}\n    {}: `tf.keras.optimizers.legacy.X`: Keras 3 raises "
          "ImportError when one is built (tf_upgrade_v2 renamed "
          "`tf.keras.optimizers.X` to it here)".format(name, line), keras2)
    # Neither counts as running on Keras 3 as it is.
    self.assertIn("0 of 2 Python files will run on TensorFlow 2", self.report)
    self.assertIn("1 more file will run with Keras 2", self.report)

  def test_the_report_is_right_about_both_keras(self):
    path = os.path.join(self.outtree, "keras_sgd.py")
    # Keras 2, as the report says: TF 2.0's SGD steps (lr 0.25, g = [1, 2]).
    self.assertEqual(util.last_json(util.run_python(
        [path], env=util.legacy_keras_env())), {"w": [0.5, -3.0]})
    if tf.__version__ >= "2.16":
      proc = util.run_python([path], env=dict(util.package_env(),
                                              TF_USE_LEGACY_KERAS="0"))
      self.assertNotEqual(proc.returncode, 0)
      self.assertIn("ImportError", proc.stderr)

  def test_tf_upgrade_v2_is_not_recommended_for_tf2_code(self):
    status, out, _ = _main("--infile", os.path.join(self.intree,
                                                   "keras_sgd.py"),
                           "--dry_run")
    self.assertEqual(status, 0)
    self.assertNotIn("run TensorFlow's tf_upgrade_v2", out)
    self.assertNotIn("once tf_upgrade_v2 has converted", out)
    self.assertIn("1 of 1 Python file will run on TensorFlow 2", out)
    self.assertIn("No file uses TF1 API that tf_upgrade_v2 converts: do not "
                  "run it", out)
    # A TF1 file is still told to.
    status, out, _ = _main("--infile", os.path.join(self.intree,
                                                   "tf1_adam.py"),
                           "--dry_run")
    self.assertRegex(out, r"once tf_upgrade_v2 has converted the rest of "
                     r"the TF1 API \(--tf_upgrade_v2; 1 file uses it, "
                     r"first \(output lines\): \S*tf1_adam\.py:3\)")
    # And told what it will do to the Keras optimizer there.
    self.assertRegex(out, r"it renames `tf\.keras\.optimizers\.X` \(\S*"
                     r"tf1_adam\.py:4\) to `tf\.keras\.optimizers\.legacy"
                     r"\.X`, which only Keras 2 has")


if __name__ == "__main__":
  tf.test.main()
