# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""TF 2.0-2.8 mixed-precision programs, converted by the command, then run.

Each program (tests/tf2x_programs.py) is written as TF 2.0 to 2.8 users
wrote it, one per row of issue 42's table. `contrib-mp-upgrade` converts
the tree in a subprocess, and each converted program trains, on this
TensorFlow, over a sequence with Inf and NaN steps, printing the loss
scale, the step count (`global_step`/`iterations`) and the weights after
every step.

The judge is TF 2.0's own code, unchanged in TF today:
`tf.compat.v1.mixed_precision.DynamicLossScale` / `FixedLossScale` driven
by `tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer` in a
Session. Every step must match it bit for bit, for multipliers 2 and 4, a
scale driven down to its floor of 1, and a fixed scale, which applies
non-finite steps as TF 2.0 did. Keras programs run with the Keras this
TensorFlow has (Keras 3 on 2.16+), and again with tf-keras
(TF_USE_LEGACY_KERAS=1) where it is installed.
"""

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import tensorflow as tf

import tf2x_programs as programs
import upgrade_fixture_util as util

CASES = programs.CASES
_ROW6 = programs.TREE["row6_env.py"]


def _envs(keras: bool):
  """The environments a program runs in: this TF's Keras, then tf-keras."""
  envs = [("default", dict(util.package_env(), TF_USE_LEGACY_KERAS="0"))]
  if keras and tf.__version__ >= "2.16":
    envs.append(("tf_keras", util.legacy_keras_env()))
  return envs


class ConvertedTf2xProgramsTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tmp = tempfile.mkdtemp(prefix="upgrade_tf2x_test_")
    intree = os.path.join(cls.tmp, "tf2x")
    cls.outtree = os.path.join(cls.tmp, "converted")
    util.write_files(intree, programs.TREE)
    cls.report_path = os.path.join(cls.tmp, "report.txt")
    # The real command, as a user runs it.
    proc = subprocess.run(
        [sys.executable, "-m", "contrib_mp_upgrade", "--intree", intree,
         "--outtree", cls.outtree, "--reportfile", cls.report_path],
        env=util.package_env(), capture_output=True, text=True, timeout=300,
        check=False)
    if proc.returncode != 0:
      raise AssertionError("contrib-mp-upgrade failed:\n{}\n{}".format(
          proc.stdout, proc.stderr))
    cls.report = util.read_text(cls.report_path)
    cls.reference = programs.traces(util.run_python(
        ["-c", programs.REFERENCE, json.dumps(CASES)]))

  @classmethod
  def tearDownClass(cls):
    shutil.rmtree(cls.tmp, ignore_errors=True)
    super().tearDownClass()

  def _converted(self, name):
    return util.read_text(os.path.join(self.outtree, name))

  def _check_program(self, name, keras=False):
    source = self._converted(name)
    self.assertNotIn(".experimental.", source.replace(
        "tf.compat.v1.train.experimental", ""))
    for label, env in _envs(keras):
      with self.subTest(env=label):
        found = programs.traces(util.run_python(
            [os.path.join(self.outtree, name), json.dumps(CASES)], env=env))
        self.assertEqual(sorted(found), sorted(self.reference))
        for case in CASES:
          with self.subTest(case=case["name"]):
            # Each row: the scale, the step count, then the weights.
            got, want = found[case["name"]], self.reference[case["name"]]
            keras2 = label == "tf_keras" or tf.__version__ < "2.16"
            if keras2 and case["ls"][0] == "fixed":
              # Keras 2's SGD (tf-keras', and TF 2.15's Keras 2.15) keeps
              # a momentum slot even at momentum 0
              # (m = -lr * g + 0 * m), so once a fixed scale has applied an
              # Inf gradient its next step makes 0 * -inf = NaN where TF
              # 2.0's SGD (Keras' OptimizerV2, `tf.keras.optimizers.legacy`
              # there) kept -inf: the inner optimizer's difference, not the
              # loss scale's (docs/migration.md). The scale and the step
              # count are TF 2.0's throughout; the weights, up to and
              # including the first step that applied a non-finite one.
              np.testing.assert_array_equal(got[:, :2], want[:, :2])
              first = int(np.argmax(~np.isfinite(want[:, 2:]).all(axis=1)))
              got, want = got[:first + 1], want[:first + 1]
            np.testing.assert_array_equal(got, want)

  def test_reference_is_tf20_policy(self):
    # The judge itself, against the policy written out: the scale after
    # each step, multiplier 4 and the floor of 1.
    self.assertEqual(list(self.reference["multiplier_4"][:, 0]),
                     [8, 32, 8, 8, 2, 1, 1, 4, 4, 1, 1, 4])
    self.assertEqual(list(self.reference["to_floor"][:, 0]),
                     [4, 2, 1, 1, 1, 1, 1, 2, 1, 1])
    self.assertEqual(list(self.reference["to_floor"][:, 1]),
                     [1, 1, 1, 1, 1, 2, 3, 4, 4, 5])
    # A fixed scale applies the non-finite steps: every step counts.
    self.assertEqual(list(self.reference["fixed"][:, 1]), list(range(1, 13)))
    self.assertTrue(np.isnan(self.reference["fixed"][-1, 2]))

  def test_row1_train_experimental_loss_scales(self):
    source = self._converted("row1_train_experimental.py")
    self.assertIn("tf.compat.v1.mixed_precision.DynamicLossScale(", source)
    self.assertIn("tf.compat.v1.mixed_precision.FixedLossScale(", source)
    self.assertIn("tf.compat.v1.mixed_precision.LossScale)", source)
    self._check_program("row1_train_experimental.py")

  def test_row2_mixed_precision_experimental(self):
    source = self._converted("row2_mixed_precision_experimental.py")
    self.assertIn("from tensorflow.compat.v1 import mixed_precision as mpe",
                  source)
    self._check_program("row2_mixed_precision_experimental.py")

  def test_row3_graph_rewrite_of_a_v1_optimizer(self):
    source = self._converted("row3_graph_rewrite_v1.py")
    self.assertIn(
        "tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(",
        source)
    self.assertIn(
        "tf.compat.v1.mixed_precision.disable_mixed_precision_graph_rewrite(",
        source)
    self._check_program("row3_graph_rewrite_v1.py")

  def test_row3_graph_rewrite_of_a_keras_optimizer(self):
    source = self._converted("row3_graph_rewrite_keras.py")
    self.assertIn("contrib_mixed_precision.KerasLossScaleOptimizer("
                  "tf.keras.optimizers.SGD(", source)
    self._check_program("row3_graph_rewrite_keras.py", keras=True)

  def test_row4_keras_experimental_loss_scale_optimizer(self):
    source = self._converted("row4_keras_lso.py")
    self.assertIn("from tensorflow.keras import mixed_precision\n", source)
    self.assertIn("contrib_mixed_precision.KerasLossScaleOptimizer(sgd, "
                  "loss_scale=loss_scale)", source)
    self._check_program("row4_keras_lso.py", keras=True)

  def test_row5_today_loss_scale_optimizer_given_loss_scale(self):
    source = self._converted("row5_today_lso.py")
    self.assertIn("contrib_mixed_precision.KerasLossScaleOptimizer(sgd, "
                  "loss_scale=loss_scale)", source)
    self._check_program("row5_today_lso.py", keras=True)

  def test_row4_and_row5_policies(self):
    source = self._converted("row4_keras_policy.py")
    self.assertIn('mixed_precision.Policy(\n    "mixed_float16")', source)
    self.assertIn("mixed_precision.set_global_policy(policy)", source)
    self.assertIn("layer.dtype_policy.compute_dtype", source)
    self.assertIn('tf.keras.mixed_precision.Policy("float32")', source)
    for label, env in _envs(keras=True):
      with self.subTest(env=label):
        found = util.last_json(util.run_python(
            [os.path.join(self.outtree, "row4_keras_policy.py")], env=env))
        self.assertEqual(found, {
            "global": "mixed_float16", "compute": "float16",
            "variable": "float32", "output": "float16", "kernel": "float32",
            "plain": "float32"})

  def test_row6_environment_variable_is_reported(self):
    # Left as it is (stock TensorFlow ignores it), and reported with a fix.
    self.assertEqual(self._converted("row6_env.py"), _ROW6)
    self.assertIn("row6_env.py:3: NOT KEPT: `TF_ENABLE_AUTO_MIXED_PRECISION`",
                  self.report)
    proc = util.run_python([os.path.join(self.outtree, "row6_env.py")])
    self.assertEqual(proc.stdout.strip(), "float32")

  def test_report_says_what_each_became_and_what_was_not_kept(self):
    report = self.report
    before = report.split("Before you run it", 1)[1].split("\n\n", 1)[0]
    # What could not be kept, with the fix, counted over the tree.
    self.assertIn("the float16 graph rewrite of a Keras optimizer", before)
    self.assertIn("set_experimental_options({'auto_mixed_precision': True})",
                  before)
    self.assertIn("a Policy's `loss_scale` (today's Policy has none): 1 file, "
                  "1 use", before)
    self.assertIn("`TF_ENABLE_AUTO_MIXED_PRECISION`", before)
    self.assertIn("apply the fixes for the 3 uses of TF 2.0-2.8 behaviour",
                  report.split("Left to do by hand:", 1)[1])
    # Per use: what it became, and the iterations behaviour chosen.
    self.assertIn(
        "`tf.keras.mixed_precision.experimental.LossScaleOptimizer` became "
        "`contrib_mixed_precision.KerasLossScaleOptimizer`: skipped "
        "(non-finite) steps do not advance `iterations`, as in TF 2.0 to 2.2",
        report)
    self.assertIn("`skipped_steps_advance_iterations=True`", report)
    self.assertIn("only on a GPU", report)
    self.assertIn(
        "`tf.train.experimental.DynamicLossScale` -> "
        "`tf.compat.v1.mixed_precision.DynamicLossScale`", report)
    self.assertIn("`mixed_precision.get_layer_policy(layer)` -> "
                  "`layer.dtype_policy`", report)
    self.assertIn("`loss_scale=None` was dropped from "
                  "`tf.keras.mixed_precision.Policy(..., loss_scale=...)`: a "
                  "`float32` policy scales nothing today either", report)



# The tf-keras reference for TF 2.3+'s `iterations`: the same custom loop
# written against TF 2.4-2.15's LossScaleOptimizer (multiplier 2), unchanged,
# run under tf-keras (or TF 2.15's Keras 2): a skipped step advances
# `iterations` there, as it did from TF 2.3 on.
_TF24_REFERENCE = """\
import json, sys
import tensorflow as tf


def run(case):
  layer = tf.keras.layers.Dense(
      1, use_bias=False,
      kernel_initializer=tf.keras.initializers.Constant([[1.0], [-2.0]]))
  layer.build((1, 2))
  w = layer.kernel
  opt = tf.keras.mixed_precision.LossScaleOptimizer(
      tf.keras.optimizers.SGD(%r), initial_scale=case["ls"][1],
      dynamic_growth_steps=case["ls"][2])
  trace = []
  for xs in case["xs"]:
    x = tf.constant(xs, tf.float32)
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(w[:, 0] * x)
      scaled = opt.get_scaled_loss(loss)
    grads = opt.get_unscaled_gradients(tape.gradient(scaled, [w]))
    opt.apply_gradients(zip(grads, [w]))
    trace.append([float(opt.loss_scale), int(opt.iterations)] +
                 [float(v) for v in w.numpy()[:, 0]])
  return trace


for case in json.loads(sys.argv[1]):
  print(json.dumps({"case": case["name"], "trace": run(case)}))
""" % programs.LEARNING_RATE
_MULTIPLIER_2 = [c for c in CASES if c["ls"][0] == "dynamic" and
                 c["ls"][3] == 2.0]


class PinnedTreeTest(tf.test.TestCase):
  """A tree pinned to TF 2.4: skipped steps advance `iterations`.

  The converted experimental LossScaleOptimizer takes TF 2.3+'s rule from
  the tree's requirements.txt. Judged by tf-keras running the TF 2.4
  spelling of the same program, and by TF 2.0's loss scale (the scale and
  weights of `REFERENCE`), at every step, over Inf and NaN steps down to
  the floor of 1.
  """

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tmp = tempfile.mkdtemp(prefix="upgrade_tf2x_test_")
    intree = os.path.join(cls.tmp, "pinned")
    util.write_files(intree, {
        "requirements.txt": "numpy>=1.19\ntensorflow-gpu==2.4.1\n",
        "train.py": programs.TREE["row4_keras_lso.py"],
        "tf24_reference.py": _TF24_REFERENCE,
    })
    cls.outtree = os.path.join(cls.tmp, "converted")
    report = os.path.join(cls.tmp, "report.txt")
    proc = subprocess.run(
        [sys.executable, "-m", "contrib_mp_upgrade", "--intree", intree,
         "--outtree", cls.outtree, "--reportfile", report],
        env=util.package_env(), capture_output=True, text=True, timeout=300,
        check=False)
    if proc.returncode != 0:
      raise AssertionError(proc.stdout + proc.stderr)
    cls.report = util.read_text(report)
    cls.reference = programs.traces(util.run_python(
        ["-c", programs.REFERENCE, json.dumps(_MULTIPLIER_2)]))
    cls.tf24 = programs.traces(util.run_python(
        [os.path.join(intree, "tf24_reference.py"),
         json.dumps(_MULTIPLIER_2)], env=util.legacy_keras_env()))

  @classmethod
  def tearDownClass(cls):
    shutil.rmtree(cls.tmp, ignore_errors=True)
    super().tearDownClass()

  def test_report_names_the_file_read_and_the_rule(self):
    self.assertIn(
        "TensorFlow pinned by the tree: requirements.txt:2 "
        "`tensorflow-gpu==2.4.1` (TF 2.3 or later), so skipped steps "
        "advance `iterations`", self.report)
    self.assertIn("contrib_mixed_precision.KerasLossScaleOptimizer(sgd, "
                  "loss_scale=loss_scale, "
                  "skipped_steps_advance_iterations=True)",
                  util.read_text(os.path.join(self.outtree, "train.py")))

  def test_iterations_over_skipped_steps_are_tf_2_4s(self):
    self.assertNotEmpty(_MULTIPLIER_2)
    for label, env in _envs(keras=True):
      with self.subTest(env=label):
        found = programs.traces(util.run_python(
            [os.path.join(self.outtree, "train.py"),
             json.dumps(_MULTIPLIER_2)], env=env))
        for case in _MULTIPLIER_2:
          name = case["name"]
          with self.subTest(case=name):
            got = found[name]
            # tf-keras' own TF 2.4 optimizer: scale, iterations, weights.
            np.testing.assert_array_equal(got, self.tf24[name])
            # TF 2.0's loss scale and weights; every step counted.
            np.testing.assert_array_equal(got[:, 0],
                                          self.reference[name][:, 0])
            np.testing.assert_array_equal(got[:, 2:],
                                          self.reference[name][:, 2:])
            self.assertEqual(list(got[:, 1]), list(range(1, len(got) + 1)))
            # The case does skip steps: the rule is what differs.
            self.assertLess(self.reference[name][-1, 1], len(got))


# A `tf.keras` file whose experimental LossScaleOptimizer wraps a
# `tf.compat.v1.train` optimizer: KerasLossScaleOptimizer refuses that
# optimizer, so it becomes TF's MixedPrecisionLossScaleOptimizer.
_V1_IN_KERAS = """\
import json, sys
import tensorflow as tf

XS = json.loads(sys.argv[1])
loss_scale = tf.mixed_precision.experimental.DynamicLossScale(
    initial_loss_scale=4.0, increment_period=3, multiplier=2.0)
w = tf.Variable([[1.0], [-2.0]], dtype=tf.keras.backend.floatx())
global_step = tf.Variable(0, dtype=tf.int64)
opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
    tf.compat.v1.train.GradientDescentOptimizer(0.25), loss_scale)
trace = []
for xs in XS:
  x = tf.constant(xs, tf.float32)
  opt.minimize(lambda: tf.reduce_sum(w[:, 0] * x), var_list=[w],
               global_step=global_step)
  trace.append([float(loss_scale()), int(global_step)] +
               [float(v) for v in w.numpy()[:, 0]])
print(json.dumps({"case": "to_floor", "trace": trace}))
"""


class V1OptimizerInKerasFileTest(tf.test.TestCase):

  def test_converted_program_runs_with_tf_2_0s_numbers(self):
    tmp = tempfile.mkdtemp(prefix="upgrade_tf2x_test_")
    self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
    util.write_files(os.path.join(tmp, "in"), {"train.py": _V1_IN_KERAS})
    out = os.path.join(tmp, "out")
    proc = subprocess.run(
        [sys.executable, "-m", "contrib_mp_upgrade", "--intree",
         os.path.join(tmp, "in"), "--outtree", out, "--reportfile",
         os.path.join(tmp, "report.txt")],
        env=util.package_env(), capture_output=True, text=True, timeout=300,
        check=False)
    self.assertEqual(proc.returncode, 0, proc.stderr)
    source = util.read_text(os.path.join(out, "train.py"))
    self.assertIn("tf.compat.v1.mixed_precision."
                  "MixedPrecisionLossScaleOptimizer(\n    tf.compat.v1.train."
                  "GradientDescentOptimizer(0.25), loss_scale)", source)
    self.assertNotIn("KerasLossScaleOptimizer", source)
    self.assertIn("was given a `tf.compat.v1` optimizer", util.read_text(
        os.path.join(tmp, "report.txt")))
    case = [c for c in CASES if c["name"] == "to_floor"][0]
    found = programs.traces(util.run_python(
        [os.path.join(out, "train.py"), json.dumps(case["xs"])]))
    # TF 2.0's policy written out (test_reference_is_tf20_policy), and its
    # classes' run of the same steps in a Session.
    self.assertEqual(list(found["to_floor"][:, 0]),
                     [4, 2, 1, 1, 1, 1, 1, 2, 1, 1])
    self.assertEqual(list(found["to_floor"][:, 1]),
                     [1, 1, 1, 1, 1, 2, 3, 4, 4, 5])
    reference = programs.traces(util.run_python(
        ["-c", programs.REFERENCE, json.dumps([case])]))
    np.testing.assert_array_equal(found["to_floor"], reference["to_floor"])


# A TF 2.x tree written for Keras 2: Keras 3 refuses `add_metric` and a
# `build` that reads a TensorShape. The report says so, with the lines, and
# the advice it gives runs.
_KERAS2_TREE = """\
import json
import tensorflow as tf


class Scale(tf.keras.layers.Layer):

  def build(self, input_shape):
    self.w = self.add_weight(
        shape=(input_shape.as_list()[-1],), initializer="ones")

  def call(self, x):
    return x * self.w


inputs = tf.keras.Input((2,))
model = tf.keras.Model(inputs, Scale()(inputs))
model.add_metric(tf.reduce_mean(model.output), name="mean_output")
model.compile(tf.keras.optimizers.SGD(0.25), "mse")
history = model.fit(tf.ones([4, 2]), tf.zeros([4, 2]), epochs=2, verbose=0)
print(json.dumps({"loss": history.history["loss"]}))
"""


class Keras2TreeTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tmp = tempfile.mkdtemp(prefix="upgrade_tf2x_test_")
    util.write_files(os.path.join(cls.tmp, "in"),
                     {"train.py": _KERAS2_TREE, "row4_keras_lso.py":
                      programs.TREE["row4_keras_lso.py"]})
    cls.out = os.path.join(cls.tmp, "out")
    proc = subprocess.run(
        [sys.executable, "-m", "contrib_mp_upgrade", "--intree",
         os.path.join(cls.tmp, "in"), "--outtree", cls.out, "--reportfile",
         os.path.join(cls.tmp, "report.txt")],
        env=util.package_env(), capture_output=True, text=True, timeout=300,
        check=False)
    if proc.returncode != 0:
      raise AssertionError(proc.stderr)
    cls.report = util.read_text(os.path.join(cls.tmp, "report.txt"))

  @classmethod
  def tearDownClass(cls):
    shutil.rmtree(cls.tmp, ignore_errors=True)
    super().tearDownClass()

  def test_report_says_which_files_need_keras_2_and_why(self):
    section = self.report.split("\nKeras 2\n", 1)[1].split("\n\n", 1)[0]
    self.assertIn(
        "1 of 2 Python files uses Keras 2 API that Keras 3, TensorFlow "
        "2.16+'s default `tf.keras`, refuses (output lines):\n"
        "  train.py\n"
        "    9: a layer's `build` reads its shape argument `input_shape` as a "
        "`TensorShape` (`.as_list`): Keras 3 passes a tuple "
        "(AttributeError)\n"
        "    17: `add_metric`: Keras 3's Layer and Model raise "
        "NotImplementedError\n", section)
    self.assertNotIn("row4_keras_lso.py", section)
    self.assertIn("1 of 2 Python files will run on TensorFlow 2 as far as "
                  "this command can tell.\n1 more file will run with Keras 2",
                  self.report)
    # Once per report; and no tf_upgrade_v2 for a TF 2.x tree.
    self.assertEqual(self.report.count("pip install"), 1)
    self.assertEqual(self.report.count("TF_USE_LEGACY_KERAS=1 python"), 1)
    self.assertNotIn("run TensorFlow's tf_upgrade_v2", self.report)
    self.assertNotIn("once tf_upgrade_v2", self.report)
    # The tree pins nothing: the rule kept, and said.
    self.assertIn("no TensorFlow pin found", self.report)

  def test_the_advice_runs_as_written(self):
    section = self.report.split("\nKeras 2\n", 1)[1].split("\n\n", 1)[0]
    pip = [l.strip() for l in section.splitlines()
           if "pip install" in l]
    self.assertLen(pip, 1)
    installed = any(_has_distribution(d)
                    for d in ("tensorflow", "tensorflow-cpu"))
    if tf.__version__ >= "2.16" and installed:
      # This machine's TensorFlow, and the tf-keras installed beside it
      # matches the line (tests/upgrade_advice_test.py runs pip with it).
      minor = ".".join(tf.__version__.split(".")[:2])
      self.assertEqual(pip[0], "python -m pip install --no-deps "
                       "'tf-keras=={}.*'".format(minor))
      self.assertTrue(importlib.metadata.version("tf_keras").startswith(
          minor + "."))
    # The variable, set as the report says: Keras 2 trains the tree.
    self.assertIn("`TF_USE_LEGACY_KERAS=1 python train.py`", section)
    path = os.path.join(self.out, "train.py")
    found = util.last_json(util.run_python([path],
                                           env=util.legacy_keras_env()))
    self.assertLen(found["loss"], 2)
    if tf.__version__ >= "2.16":
      # And Keras 3 stops where the report says.
      proc = util.run_python([path], env=dict(util.package_env(),
                                              TF_USE_LEGACY_KERAS="0"))
      self.assertNotEqual(proc.returncode, 0)
      self.assertRegex(proc.stderr, "AttributeError: 'tuple' object has no "
                       "attribute 'as_list'|NotImplementedError")


def _has_distribution(name):
  try:
    importlib.metadata.version(name)
    return True
  except importlib.metadata.PackageNotFoundError:
    return False


if __name__ == "__main__":
  tf.test.main()
