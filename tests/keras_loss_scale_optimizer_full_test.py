# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""`KerasLossScaleOptimizer` under the other Kerases, and `MirroredStrategy`.

The full suites' share (tests/keras_loss_scale_optimizer_test.py runs the
default `tf.keras` in the core suite): the same checks under tf-keras
(TF 2.16+) and Keras 2's legacy optimizers, and `fit` under
`MirroredStrategy` on two logical CPUs for every Keras, in a subprocess
each (`programs/keras_lso_mirrored.py`).
"""

from absl.testing import parameterized
import tensorflow as tf

import keras_lso_checks as checks

# tf-keras (TF 2.16+) and Keras 2's legacy optimizers; every environment of
# the full suites has one of them (TF 2.15: the legacy optimizers).
_OTHER = checks.OTHER_KERASES


class OtherKerasTF20PolicyTest(checks.TF20PolicyChecks):

  @parameterized.product(keras_name=_OTHER, kind=checks.loss_scale_kinds())
  def test_custom_loop_matches_tf20(self, keras_name, kind):
    self.check_custom_loop_matches_tf20(keras_name, kind)

  @parameterized.product(keras_name=_OTHER, mode=["eager", "function", "jit"])
  def test_every_mode_matches_tf20(self, keras_name, mode):
    self.check_every_mode_matches_tf20(keras_name, mode)

  @parameterized.named_parameters(*checks.named(_OTHER))
  def test_skipped_steps_advance_iterations_as_tf23(self, keras_name):
    self.check_skipped_steps_advance_iterations_as_tf23(keras_name)


class OtherKerasTF115ManagerTest(checks.TF115ManagerChecks):

  @parameterized.product(keras_name=_OTHER, manager=["exponential", "fixed"])
  def test_manager_matches_tf115(self, keras_name, manager):
    self.check_manager_matches_tf115(keras_name, manager)


class OtherKerasFitTest(checks.FitChecks):

  @parameterized.product(keras_name=_OTHER, mode=["eager", "function", "jit"])
  def test_fit_mixed_float16_matches_tf20(self, keras_name, mode):
    self.check_fit_mixed_float16_matches_tf20(keras_name, mode)


class OtherKerasCheckpointTest(checks.CheckpointChecks):

  @parameterized.product(keras_name=_OTHER, kind=["dynamic_m4", "exponential"])
  def test_round_trip(self, keras_name, kind):
    self.check_round_trip(keras_name, kind)

  @parameterized.named_parameters(*checks.named(_OTHER))
  def test_restores_tf2x_experimental_checkpoint(self, keras_name):
    self.check_restores_tf2x_experimental_checkpoint(keras_name)


class OtherKerasFileTest(checks.KerasFileChecks):
  """`.keras` files under tf-keras, beside Keras 3 (TF 2.16+).

  Its new optimizers: Keras' legacy ones keep no state in a `.keras` file
  (Keras' own `LossScaleOptimizer` around one restores no `iterations`
  either). TF 2.15 has one Keras, which the core suite's test covers.
  """

  def test_keras_file_round_trip_tf_keras_package(self):
    if "tf_keras_package" not in _OTHER:
      self.skipTest("tf_keras is not installed beside Keras 3 here (TF "
                    "2.15's one Keras runs in keras_loss_scale_optimizer_"
                    "test.py)")
    self.check_keras_file_round_trip("tf_keras_package")


class OtherKerasApiTest(checks.ApiChecks):

  @parameterized.named_parameters(*checks.named(_OTHER))
  def test_apply_gradients_takes_tf2x_arguments(self, keras_name):
    self.check_apply_gradients_takes_tf2x_arguments(keras_name)

  @parameterized.named_parameters(*checks.named(_OTHER))
  def test_second_argument_reaches_inner_positionally(self, keras_name):
    self.check_second_argument_reaches_inner_positionally(keras_name)


class TfKerasKeras2ApiTest(checks.Keras2ApiChecks):
  """The converted program under tf-keras too (TF 2.16+): Keras 2's numbers.

  The same class must keep Keras 2's numbers when a converted tree runs
  under Keras 2 (`TF_USE_LEGACY_KERAS=1`). TF 2.15's one Keras runs in
  keras_loss_scale_optimizer_test.py.
  """

  def setUp(self):
    super().setUp()
    if "tf_keras_package" not in _OTHER:
      self.skipTest("tf_keras is not installed beside Keras 3 here")

  @parameterized.named_parameters(
      *[dict(testcase_name="_" + s, style=s) for s in checks.API_STYLES])
  def test_steps_match_keras2(self, style):
    self.check_steps_match_keras2("tf_keras_package", style)

  @parameterized.named_parameters(
      *[dict(testcase_name="_" + f, form=f) for f in checks.API_FORMS])
  def test_attributes_match_keras2(self, form):
    self.check_attributes_match_keras2("tf_keras_package", form)

  def test_checkpoints_cross_with_keras2(self):
    self.check_checkpoints_cross("tf_keras_package")


class MirroredStrategyTest(checks.MirroredStrategyChecks):
  """`fit` under `MirroredStrategy` on 2 logical CPUs (a subprocess each)."""

  @parameterized.named_parameters(*checks.named(checks.ALL_KERASES))
  def test_fit_two_replicas_matches_tf20(self, keras_name):
    self.check_fit_two_replicas_matches_tf20(keras_name)

  @parameterized.named_parameters(*checks.named(checks.ALL_KERASES))
  def test_custom_loop_two_replicas_matches_tf20(self, keras_name):
    self.check_fit_two_replicas_matches_tf20(keras_name, loop="tf2")


if __name__ == "__main__":
  tf.test.main()
