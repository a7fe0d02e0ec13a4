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

_TREE = {"keras2_custom.py": programs.CUSTOM}


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
    util.write_files(intree, _TREE)
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
    cls.reference, cls.converted = {}, {}
    for name in _TREE:
      # The judge: the program as it was, under Keras 2 (tf-keras).
      cls.reference[name] = programs.traces(util.run_python(
          [os.path.join(intree, name)], env=util.legacy_keras_env()))
      cls.converted[name] = programs.traces(util.run_python(
          [os.path.join(cls.outtree, name)], env=_keras3_env()))

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

  @unittest.expectedFailure
  def test_keras2_attributes(self):
    # `initial_scale`, `dynamic_growth_steps` and `dynamic_counter` of
    # `KerasLossScaleOptimizer` under Keras 3 are issue 49's part 4
    # (branch keras-runtime): remove `expectedFailure` when it lands.
    self.assertEqual(self.converted["keras2_custom.py"]["attributes"],
                     self.reference["keras2_custom.py"]["attributes"])

  def test_report_counts_the_file_as_running(self):
    before = self.report.split("Before you run it", 1)[1].split("\n\n")[0]
    self.assertIn("1 of 1 Python file will run", before)
    self.assertIn("Keras 2's numbers kept", self.report)


if __name__ == "__main__":
  tf.test.main()
