# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""TF 2.4-2.15 Keras 2 mixed-precision programs: converted, run on Keras 3.

Each program (tests/keras2_programs.py) is written as TF 2.4 to 2.15 users
wrote it against Keras 2's `tf.keras.mixed_precision` API. The judge is the
unmodified program run under tf-keras (TF_USE_LEGACY_KERAS=1), which runs
the same `LossScaleOptimizer` code as TF 2.4-2.15 (docs/design.md, contract
17). `contrib-mp-upgrade` converts the programs in a subprocess, as a user
runs it, and the converted programs run under Keras 3: the loss scale,
`iterations` and the weights must be bit-equal at every step, over Inf and
NaN steps and a scale driven to its floor of 1, fixed and dynamic, eager and
in a `tf.function`, in custom loops and in `compile`/`fit`.

One subprocess per program and Keras prints every case's trajectory: the
suite's time goes to TensorFlow's start-up.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import tensorflow as tf

import keras2_programs as programs
import upgrade_fixture_util as util

_TREE = {
    "keras2_custom.py": programs.CUSTOM,
    "keras2_policy.py": programs.POLICY,
    "tf20_policy.py": programs.TF20_POLICY,
    "tf20_string.py": programs.TF20_STRING,
    "tf20_name.py": programs.TF20_NAME,
}
# Keras 2's programs, which tf-keras runs as they are (the judge), and TF
# 2.0-2.3's, judged by TF's own DynamicLossScale and run converted under
# both Kerases: one process runs a generation's programs in turn.
_MAINS = {
    "keras2_main.py": "import keras2_custom\nimport keras2_policy\n",
    "tf20_main.py": ("import tf20_policy\nimport tf20_string\n"
                     "import tf20_name\n"),
}


def _tf20_reference(xs, initial, period, multiplier):
  """TF 2.0's scale and step count after each step: TF's own class.

  `tf.compat.v1.mixed_precision.DynamicLossScale` is TF 2.0's class,
  driven with the steps' finite/non-finite sequence; TF 2.0-2.2's Keras
  optimizer counted only the steps it applied.
  """
  loss_scale = tf.compat.v1.mixed_precision.DynamicLossScale(
      initial_loss_scale=initial, increment_period=period,
      multiplier=multiplier)
  applied, rows = 0, []
  for x in xs:
    finite = bool(np.all(np.isfinite(x)))
    loss_scale.update([tf.constant(1. if finite else float("nan"))])
    applied += finite
    rows.append([float(loss_scale()), applied])
  return np.array(rows)


_INF, _NAN = float("inf"), float("nan")
# The steps of the programs (keras2_programs.py's MIXED and OVERFLOW).
_MIXED = [[1, 2], [.5, 1], [_INF, 1], [1, 1], [_NAN, 1], [_NAN, .5], [2, 1],
          [1, 3], [1, 1], [_INF, _INF], [1, 1], [1, 1]]
_OVERFLOW = [[_INF, 1]] * 9 + [[_NAN, 1]] * 9 + [[1, 2], [.5, 1], [1, 1]]


def _keras3_env():
  return dict(util.package_env(), TF_USE_LEGACY_KERAS="0")


@unittest.skipIf(tf.__version__ < "2.16",
                 "Keras 3 is TensorFlow's Keras from 2.16 on")
class ConvertedKeras2ProgramsTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tmp = tempfile.mkdtemp(prefix="upgrade_keras2_test_")
    intree = os.path.join(cls.tmp, "keras2")
    cls.outtree = os.path.join(cls.tmp, "converted")
    util.write_files(intree, dict(_TREE, **_MAINS))
    cls.report_path = os.path.join(cls.tmp, "report.txt")
    # The real command, as a user runs it, with its default flags.
    proc = subprocess.run(
        [sys.executable, "-m", "contrib_mp_upgrade", "--intree", intree,
         "--outtree", cls.outtree, "--reportfile", cls.report_path],
        env=util.package_env(), capture_output=True, text=True, timeout=300,
        check=False)
    if proc.returncode != 0:
      raise AssertionError("contrib-mp-upgrade failed:\n{}\n{}".format(
          proc.stdout, proc.stderr))
    cls.report = util.read_text(cls.report_path)
    # One process per Keras runs every program of a generation (CI time
    # goes to TensorFlow's start-up); each program is its own module, as
    # the command converts a module at a time.
    def run(tree, main, env):
      found = programs.traces(util.run_python([os.path.join(tree, main)],
                                              env=env))
      return {name: found for name in _TREE if name.startswith(main[:4])}

    # The judge of Keras 2's programs: the programs as they were, under
    # Keras 2 (tf-keras).
    cls.reference = run(intree, "keras2_main.py", util.legacy_keras_env())
    cls.converted = dict(
        run(cls.outtree, "keras2_main.py", _keras3_env()),
        **run(cls.outtree, "tf20_main.py", _keras3_env()))
    cls.converted_tf_keras = run(cls.outtree, "tf20_main.py",
                                 util.legacy_keras_env())

  @classmethod
  def tearDownClass(cls):
    shutil.rmtree(cls.tmp, ignore_errors=True)
    super().tearDownClass()

  def _same_trajectories(self, name, cases):
    reference, converted = self.reference[name], self.converted[name]
    for case in cases:
      with self.subTest(case=case):
        # Each row: the scale, `iterations`, then the weights.
        np.testing.assert_array_equal(converted[case], reference[case])

  def test_reference_is_keras2_policy(self):
    # The judge itself, against Keras 2's rule written out: halve (floor
    # 1) and count the step on a non-finite one; double after
    # `dynamic_growth_steps` finite ones; a fixed scale applies them.
    ref = self.reference["keras2_custom.py"]
    self.assertEqual(list(ref["eager_to_floor"][:, 0]),
                     [4, 2, 1, 1, 1, 1, 1, 2, 1, 1])
    self.assertEqual(list(ref["eager_to_floor"][:, 1]), list(range(1, 11)))
    self.assertEqual(list(ref["defaults_function"][:, 0]),
                     [2.**(14 - i) for i in range(14)] + [1.] * 7)
    self.assertEqual(list(ref["fixed_eager"][:, 0]), [128.] * 12)
    self.assertTrue(np.isneginf(ref["fixed_eager"][2, 2]))

  def test_custom_loops_every_import_style(self):
    source = util.read_text(os.path.join(self.outtree, "keras2_custom.py"))
    # Every Keras 2 call was converted, whatever its import style.
    self.assertIsNone(re.search(r"(?<!Keras)LossScaleOptimizer\(", source))
    self.assertIn(
        "contrib_mixed_precision.KerasLossScaleOptimizer(sgd(), "
        "tf.compat.v1.mixed_precision.FixedLossScale(128), "
        "skipped_steps_advance_iterations=True)", source)
    self.assertIn(
        "tf.compat.v1.mixed_precision.DynamicLossScale(initial_loss_scale="
        "2 ** 15, increment_period=2000, multiplier=2.)", source)
    self._same_trajectories("keras2_custom.py", (
        "eager_to_floor", "function_positional", "fixed_eager",
        "fixed_function", "defaults_function"))

  def test_fit_with_a_wrapped_optimizer(self):
    self._same_trajectories("keras2_custom.py", ("fit_wrapped", "fit_fixed"))

  def test_compile_under_a_mixed_float16_policy(self):
    # Keras 2's `compile` wrapped the optimizer itself; the converted
    # program wraps it with Keras 2's numbers (object, name and string),
    # over 18 overflowing steps that take 2 ** 15 to its floor.
    source = util.read_text(os.path.join(self.outtree, "keras2_policy.py"))
    self.assertIn(
        "model.compile(optimizer=contrib_mixed_precision."
        "KerasLossScaleOptimizer(tf.keras.optimizers.get(\"sgd\"), "
        "tf.compat.v1.mixed_precision.DynamicLossScale(initial_loss_scale="
        "2 ** 15, increment_period=2000, multiplier=2.), "
        "skipped_steps_advance_iterations=True)", source)
    self.assertEqual(
        list(self.reference["keras2_policy.py"]["compile_object"][:, 0]),
        [2.**(14 - i) for i in range(14)] + [1.] * 7)
    self._same_trajectories("keras2_policy.py", (
        "compile_object", "compile_name", "compile_string"))

  def _tf20_trajectories(self, name, case, xs, *loss_scale):
    want = _tf20_reference(xs, *loss_scale)
    for label, found in (("keras3", self.converted[name]),
                         ("tf_keras", self.converted_tf_keras[name])):
      with self.subTest(keras=label):
        got = found[case]
        np.testing.assert_array_equal(got[:, :2], want)
        # A skipped step leaves the weights alone.
        finite = np.all(np.isfinite(np.array(xs, dtype=float)), axis=1)
        weights = np.concatenate([[[1., -2.]], got[:, 2:]])
        for step in np.flatnonzero(~finite):
          np.testing.assert_array_equal(weights[step + 1], weights[step])
        self.assertTrue(np.all(np.isfinite(got)))

  def test_tf20_policy_loss_scale_multiplier_4_in_fit(self):
    # kerasfit-style: a Policy with a DynamicLossScale of multiplier 4,
    # `set_policy`, `compile`, `fit`, a callback reading `loss_scale()`.
    source = util.read_text(os.path.join(self.outtree, "tf20_policy.py"))
    self.assertIn("KerasLossScaleOptimizer(tf.keras.optimizers.SGD(0.25, "
                  "momentum=0.5), tf.compat.v1.mixed_precision."
                  "DynamicLossScale(", source)
    self.assertIn("(policy.variable_dtype != policy.compute_dtype)", source)
    self._tf20_trajectories("tf20_policy.py", "multiplier_4",
                            _MIXED, 8., 2, 4.)
    for found in (self.converted, self.converted_tf_keras):
      self.assertEqual(found["tf20_policy.py"]["should_cast_variables"]
                       .tolist(), [[1.]])

  def test_tf20_layer_reads_its_policy_by_its_old_name(self):
    # TF 2.0-2.3's `layer._mixed_precision_policy`, which no Keras since
    # has: the converted layer computes in float16 what Keras' own Dense
    # computes, bit for bit, under Keras 3 and tf-keras.
    source = util.read_text(os.path.join(self.outtree, "tf20_policy.py"))
    self.assertIn("if not (self.dtype_policy.variable_dtype != "
                  "self.dtype_policy.compute_dtype):", source)
    for found in (self.converted, self.converted_tf_keras):
      self.assertEqual(found["tf20_policy.py"]["layer_policy"].tolist(),
                       [[1., 1.]])

  def test_tf20_set_policy_with_a_string(self):
    self._tf20_trajectories("tf20_string.py", "string", _OVERFLOW,
                            2.**15, 2000, 2.)

  def test_tf20_policy_of_a_name_variable(self):
    source = util.read_text(os.path.join(self.outtree, "tf20_name.py"))
    self.assertIn("if tf.keras.mixed_precision.global_policy().name == "
                  "\"mixed_float16\" else", source)
    self._tf20_trajectories("tf20_name.py", "name_variable", _OVERFLOW,
                            2.**15, 2000, 2.)

  def test_keras2_attributes(self):
    # `initial_scale`, `dynamic_growth_steps` and `dynamic_counter` answer
    # under Keras 3 as tf-keras answers them.
    self.assertEqual(self.converted["keras2_custom.py"]["attributes"],
                     self.reference["keras2_custom.py"]["attributes"])

  def test_report_counts_the_files_as_running(self):
    before = self.report.split("Before you run it", 1)[1].split("\n\n")[0]
    self.assertIn("7 of 7 Python files will run", before)
    self.assertIn("Keras 2's numbers kept", self.report)


# Keras 2 calls whose values Keras 2 took and trained with.
_HOSTILE_PRELUDE = """
import json
import tensorflow as tf
from tensorflow.keras import mixed_precision


def train(opt):
  w = tf.Variable([1.0, -2.0])
  for x in ([1., 2.], [.5, 1.]):
    with tf.GradientTape() as tape:
      scaled = opt.get_scaled_loss(tf.reduce_sum(w * tf.constant(x)))
    grads = opt.get_unscaled_gradients(tape.gradient(scaled, [w]))
    opt.apply_gradients(zip(grads, [w]))
  return [float(opt.loss_scale)] + w.numpy().tolist()
"""
_HOSTILE_TREE = {
    # A fixed scale below 1: Keras 2 applied it (scale 0.5 every step).
    "fixed_half.py": _HOSTILE_PRELUDE + """
opt = mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(0.25), dynamic=False, initial_scale=.5)
RESULT = train(opt)
""",
    # Growth every step: Keras 2 doubled the scale after each finite step.
    "growth_zero.py": _HOSTILE_PRELUDE + """
opt = mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(0.25), initial_scale=4., dynamic_growth_steps=0)
RESULT = train(opt)
""",
    "hostile_main.py": """
import importlib
import json

for name in ("fixed_half", "growth_zero"):
  try:
    found = importlib.import_module(name).RESULT
  except Exception as e:  # What a user sees when the file stops.
    found = "{}: {}".format(type(e).__name__, e)
  print(json.dumps({"file": name, "result": found}))
""",
}


@unittest.skipIf(tf.__version__ < "2.16",
                 "Keras 3 is TensorFlow's Keras from 2.16 on")
class HostileKeras2ProgramsTest(tf.test.TestCase):
  """Keras 2 programs that ran, and what the report promises for them."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tmp = tempfile.mkdtemp(prefix="upgrade_keras2_hostile_")
    intree = os.path.join(cls.tmp, "keras2")
    outtree = os.path.join(cls.tmp, "converted")
    util.write_files(intree, _HOSTILE_TREE)
    report_path = os.path.join(cls.tmp, "report.txt")
    proc = subprocess.run(
        [sys.executable, "-m", "contrib_mp_upgrade", "--intree", intree,
         "--outtree", outtree, "--reportfile", report_path],
        env=util.package_env(), capture_output=True, text=True, timeout=300,
        check=False)
    if proc.returncode != 0:
      raise AssertionError("contrib-mp-upgrade failed:\n{}\n{}".format(
          proc.stdout, proc.stderr))
    report = util.read_text(report_path)
    # The lines the report says stop their file ("" when it names none).
    parts = report.split("Lines this command could not convert", 1)
    cls.not_running = parts[1].split("\n\n")[0] if len(parts) > 1 else ""

    def run(tree, env):
      proc = util.run_python([os.path.join(tree, "hostile_main.py")],
                             env=env)
      return {row["file"]: row["result"] for row in (
          json.loads(line) for line in proc.stdout.splitlines()
          if line.startswith("{"))}

    cls.reference = run(intree, util.legacy_keras_env())
    cls.converted = run(outtree, _keras3_env())

  @classmethod
  def tearDownClass(cls):
    shutil.rmtree(cls.tmp, ignore_errors=True)
    super().tearDownClass()

  # Keras 2 took `dynamic=False, initial_scale=.5` and
  # `dynamic_growth_steps=0` and trained; TF's loss scales refuse both
  # (ValueError when the program starts). The command leaves such a call,
  # names its line, and does not count its file as "will run".
  def test_values_keras2_took_are_named_when_the_conversion_refuses_them(self):
    self.assertEqual(self.reference["fixed_half"], [.5, .625, -2.75])
    self.assertEqual(self.reference["growth_zero"], [16., .625, -2.75])
    for name, why in (("fixed_half", "`initial_scale` .5 is below 1"),
                      ("growth_zero", "`dynamic_growth_steps` 0 is below 1")):
      with self.subTest(file=name):
        # Left as Keras 2 wrote it, it stops on Keras 3, as named.
        self.assertIsInstance(self.converted[name], str)
        self.assertIn(name + ".py:", self.not_running)
        self.assertIn(why, self.not_running)


if __name__ == "__main__":
  tf.test.main()
