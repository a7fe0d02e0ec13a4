# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""From "converts" to "runs": a real-tree pattern, converted, then trained.

The tree is a TF 1.15 Session program of the kind found in real repositories:
- its fp16 path was never run (`raise NotImplementedError` before it);
- a helper uses Python 3.8+ syntax (`f"{step=}"`) that `tf_upgrade_v2`'s
  parser crashes on, which used to stop the whole `--tf_upgrade_v2` run;
- it builds its graph at top level with `tf.placeholder`, so on TF 2 it
  needs `disable_eager_execution()`, which only the report can say;
- it keeps a `tf.contrib.layers` initializer that `tf_upgrade_v2` converts;
- a rewritten call's continuation line is aligned with its `(`, and stays
  so.

The command converts it in one run, the test applies exactly what the
report says to do, and the program trains to numbers computed
independently (tests/upgrade_fixture_util.py).
"""

import os
import shutil
import sys
import tempfile

import tensorflow as tf

from contrib_mp_upgrade import cli
from contrib_mp_upgrade import tf_upgrade_v2_pass
import upgrade_fixture_util as util

_TRAIN = '''\
"""A TF 1.15 Session program whose fp16 path was never enabled."""
import json

import numpy as np
import tensorflow as tf

import fmt

X = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
Y = 3.0 * X + 1.0


def fp16_optimizer(opt):
  raise NotImplementedError("fp16 training is not ready")
  manager = fmt.make_manager()
  optimizer = tf.contrib.mixed_precision.LossScaleOptimizer(opt,
                                                            manager)
  return optimizer, manager


def unused_initializer():
  return tf.contrib.layers.xavier_initializer()


x = tf.placeholder(tf.float32, [4], name="x")
y = tf.placeholder(tf.float32, [4], name="y")
w = fmt.zero_variable("w")
b = fmt.zero_variable("b")
loss = tf.reduce_mean(tf.square(x * w + b - y))
opt, manager = fp16_optimizer(tf.train.GradientDescentOptimizer(0.05))
train_op = opt.minimize(loss, var_list=tf.trainable_variables())
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  for step in range(8):
    bad = step == 3
    sess.run(train_op, {x: X * np.nan if bad else X, y: Y})
    print(fmt.describe(step, sess.run(manager.get_loss_scale())))
  print(json.dumps({
      "loss": float(sess.run(loss, {x: X, y: Y})),
      "w": float(sess.run(w)), "b": float(sess.run(b)),
      "scale": float(sess.run(manager.get_loss_scale()))}))
'''

_FMT = '''\
"""Helpers; `f"{step=}"` is valid Python 3.8+ that tf_upgrade_v2 rejects."""
import tensorflow as tf


def make_manager():
  return tf.contrib.mixed_precision.ExponentialUpdateLossScaleManager(
      128, 2, 2, 2, 0.5)


def zero_variable(name):
  return tf.get_variable(name, [], initializer=tf.zeros_initializer())


def describe(step, scale):
  return f"{step=} {scale=}"
'''

_PLAIN = '''\
import tensorflow as tf


def count():
  return len(tf.trainable_variables())
'''

# 8 steps from zero; step 3 feeds NaN; scale 128, doubled every 2 good
# steps, halved after 2 bad ones.
_PROGRAM = util.Program("train.py", 8, (3,),
                        ("exponential", 128.0, 2, 2, 2, 0.5))


_main = util.run_command
_write = util.write_files
_read = util.read_text


class ConvertedTreeRunsTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tmp = tempfile.mkdtemp(prefix="upgrade_runs_test_")
    cls.intree = os.path.join(cls.tmp, "legacy")
    _write(cls.intree, {"train.py": _TRAIN, "fmt.py": _FMT,
                        "plain.py": _PLAIN})
    cls.outtree = os.path.join(cls.tmp, "tf2")
    cls.report_path = os.path.join(cls.tmp, "report.txt")
    cls.status, cls.stdout, cls.stderr = _main(
        "--intree", cls.intree, "--outtree", cls.outtree, "--reportfile",
        cls.report_path, "--tf_upgrade_v2")
    cls.report = _read(cls.report_path) if os.path.exists(
        cls.report_path) else ""

  @classmethod
  def tearDownClass(cls):
    shutil.rmtree(cls.tmp, ignore_errors=True)
    super().tearDownClass()

  def test_a_file_tf_upgrade_v2_cannot_parse_does_not_stop_the_tree(self):
    self.assertEqual(self.status, 0, self.stderr)
    self.assertCountEqual(os.listdir(self.outtree),
                          ["train.py", "fmt.py", "plain.py"])
    # The other files got both converters.
    self.assertIn("len(tf.compat.v1.trainable_variables())",
                  _read(os.path.join(self.outtree, "plain.py")))
    # The bad one got this command's conversion, and is named with the
    # cause and what to do, in the report and on stderr.
    self.assertIn("contrib_mixed_precision.ExponentialUpdateLossScaleManager(",
                  _read(os.path.join(self.outtree, "fmt.py")))
    for text in (self.report, self.stderr):
      self.assertIn("fmt.py: NOT CONVERTED BY tf_upgrade_v2: tf_upgrade_v2 "
                    "cannot parse it: its parser (pasta) crashes on an "
                    "f-string with a self-documenting `{x=}` field at output "
                    "line 16", text)
      self.assertIn("`import tensorflow.compat.v1 as tf`", text)

  def test_continuation_lines_stay_aligned_with_the_paren(self):
    code = _read(os.path.join(self.outtree, "train.py"))
    self.assertIn("  optimizer = contrib_mixed_precision.LossScaleOptimizer("
                  "opt,\n" + " " * 57 + "manager)\n", code)

  def test_code_that_never_ran_is_rewritten_and_warned_about(self):
    code = _read(os.path.join(self.outtree, "train.py"))
    self.assertIn("contrib_mixed_precision.LossScaleOptimizer(", code)
    warning = ("16: {}this code never ran on TensorFlow 1.15: `raise "
               "NotImplementedError(\"fp16 training is not ready\")` at "
               "line 14 stops it first.")
    block = self.report[self.report.index("\ntrain.py\n"):]
    self.assertIn("\n  " + warning.format("WARNING: "), block)
    self.assertIn("contrib-mp-upgrade: warning: train.py:" +
                  warning.format(""), self.stderr)

  def test_report_lists_what_still_stops_each_file(self):
    self.assertIn("Before you run it\n", self.report)
    self.assertIn("1 of 3 Python files will run on TensorFlow 2 as far as "
                  "this command can tell.", self.report)
    self.assertIn("  - Session code under TF 2's eager default: 1 file",
                  self.report)
    self.assertIn("tf.compat.v1.disable_eager_execution()", self.report)

  def test_contrib_layers_converted_by_tf_upgrade_v2_is_not_listed(self):
    self.assertNotIn(
        "tf.contrib.layers", _read(os.path.join(self.outtree, "train.py")))
    self.assertNotIn("layers x1", self.report)
    self.assertNotIn("tf.contrib.layers:", self.report)

  def test_converted_program_trains_with_the_reports_advice(self):
    work = os.path.join(self.tmp, "applied")
    shutil.copytree(self.outtree, work)
    # The advice, applied as the report words it: remove the guard, graph
    # mode once in the entry script, the TF1 API through compat.v1 in the
    # file tf_upgrade_v2 could not convert.
    train = _read(os.path.join(work, "train.py"))
    train = train.replace(
        '  raise NotImplementedError("fp16 training is not ready")\n', "")
    train = train.replace(
        "import tensorflow as tf\n",
        "import tensorflow as tf\ntf.compat.v1.disable_eager_execution()\n",
        1)
    fmt = _read(os.path.join(work, "fmt.py")).replace(
        "import tensorflow as tf\n", "import tensorflow.compat.v1 as tf\n")
    _write(work, {"train.py": train, "fmt.py": fmt})
    proc = util.run_python([os.path.join(work, "train.py")], cwd=work)
    values = util.last_json(proc)
    self.assertIn("step=7 scale=", proc.stdout)
    expected = util.expected_values(_PROGRAM)
    self.assertEqual(values["scale"], expected["scale"])
    for key in ("loss", "w", "b"):
      self.assertAllClose(values[key], expected[key], rtol=1e-5, atol=1e-6,
                          msg=key)


_FAKE_TF_UPGRADE_V2 = '''\
import os, sys
root = sys.argv[sys.argv.index("--intree") + 1]
report = sys.argv[sys.argv.index("--reportfile") + 1]
lines = ["Detailed log follows:", ""]
for directory, _, names in os.walk(root):
  for name in names:
    path = os.path.join(directory, name)
    text = open(path).read()
    if "CRASH" in text:
      raise RuntimeError("pasta could not annotate it")
    open(path, "w").write(text.replace("tf.old_api", "tf.compat.v1.old_api"))
    lines += ["Processing file '%s'" % path,
              "1:0: INFO: Renamed 'tf.old_api'"]
open(report, "w").write("\\n".join(lines) + "\\n")
'''


class FailingFileIsFoundTest(tf.test.TestCase):
  """A crash the syntax check does not foresee still stops only its file."""

  def test_files_that_crash_it_are_found_and_the_rest_converted(self):
    tmp = tempfile.mkdtemp(prefix="upgrade_runs_test_")
    self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
    command = os.path.join(tmp, "fake_tf_upgrade_v2")
    with open(command, "w") as f:
      f.write("#!{}\n{}".format(sys.executable, _FAKE_TF_UPGRADE_V2))
    os.chmod(command, 0o755)
    files = {"m{}.py".format(i): "import tensorflow as tf\ntf.old_api()\n"
             for i in range(7)}
    files["m3.py"] += "# CRASH\n"
    files["m5.py"] += "# CRASH\n"
    intree = os.path.join(tmp, "in")
    _write(intree, files)
    plan = cli.walk.scan_tree(intree, True)
    summary = tf_upgrade_v2_pass.run(plan, command)
    self.assertEqual([name for name, _ in summary.failed], ["m3.py", "m5.py"])
    self.assertIn("RuntimeError: pasta could not annotate it",
                  summary.failed[0][1])
    converted = {e.name: e.output for e in plan.python()}
    for name in files:
      self.assertEqual(b"tf.compat.v1.old_api" in converted[name],
                       name not in ("m3.py", "m5.py"), msg=name)
    self.assertIn(("m0.py", 1, "INFO", "Renamed 'tf.old_api'"),
                  summary.issues)


if __name__ == "__main__":
  tf.test.main()
