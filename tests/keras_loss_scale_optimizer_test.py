# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""`KerasLossScaleOptimizer`: TF 2.0's numbers (and TF 1.15's) in today's Keras.

The core suite's share, under the default `tf.keras` (Keras 3 on TF 2.16+,
Keras 2.15 on TF 2.15): every loss-scale kind, every mode, `fit` with a
`mixed_float16` policy, a TF 1.15 manager inside, checkpoints (TF 2.x's
names included), the API and bad inputs. The judges and the checks are in
`keras_lso_checks` (see its docstring); tf-keras, Keras 2's legacy
optimizers and `MirroredStrategy` run in
tests/keras_loss_scale_optimizer_full_test.py.
"""

from absl.testing import parameterized
import tensorflow as tf

import keras_lso_checks as checks

_CORE = checks.CORE_KERASES


class TF20PolicyTest(checks.TF20PolicyChecks):
  """Each TF2 loss-scale kind against TF 2.0's optimizer in a Session."""

  @parameterized.product(keras_name=_CORE, kind=checks.loss_scale_kinds())
  def test_custom_loop_matches_tf20(self, keras_name, kind):
    self.check_custom_loop_matches_tf20(keras_name, kind)

  @parameterized.product(keras_name=_CORE, mode=["eager", "function", "jit"])
  def test_every_mode_matches_tf20(self, keras_name, mode):
    self.check_every_mode_matches_tf20(keras_name, mode)

  @parameterized.named_parameters(*checks.named(_CORE))
  def test_skipped_steps_advance_iterations_as_tf23(self, keras_name):
    self.check_skipped_steps_advance_iterations_as_tf23(keras_name)

  def test_keras3_scale_loss_loop_matches_tf20(self):
    self.check_keras3_scale_loss_loop_matches_tf20()


class TF115ManagerTest(checks.TF115ManagerChecks):
  """A TF 1.15 manager inside: TF 1.15's trajectory."""

  @parameterized.product(keras_name=_CORE, manager=["exponential", "fixed"])
  def test_manager_matches_tf115(self, keras_name, manager):
    self.check_manager_matches_tf115(keras_name, manager)


class FitTest(checks.FitChecks):
  """`compile` / `fit` with a `mixed_float16` policy."""

  @parameterized.product(keras_name=_CORE, mode=["eager", "function", "jit"])
  def test_fit_mixed_float16_matches_tf20(self, keras_name, mode):
    self.check_fit_mixed_float16_matches_tf20(keras_name, mode)

  def test_keras_own_wrapper_is_not_ours(self):
    self.check_keras_own_wrapper_is_not_ours()


class CheckpointTest(checks.CheckpointChecks):

  @parameterized.product(keras_name=_CORE, kind=["dynamic_m4", "exponential"])
  def test_round_trip(self, keras_name, kind):
    self.check_round_trip(keras_name, kind)

  @parameterized.named_parameters(*checks.named(_CORE))
  def test_restores_tf2x_experimental_checkpoint(self, keras_name):
    self.check_restores_tf2x_experimental_checkpoint(keras_name)


class KerasFileTest(checks.KerasFileChecks):
  """`model.save("x.keras")`, then `load_model` in a fresh process."""

  @parameterized.named_parameters(*checks.named(_CORE))
  def test_keras_file_round_trip(self, keras_name):
    self.check_keras_file_round_trip(keras_name)


class Keras2ApiTest(checks.Keras2ApiChecks):
  """TF 2.4-2.15's Keras API, converted, against Keras 2 running it.

  Keras 2 is tf-keras on TF 2.16+ (skipped where it is not installed), and
  TF 2.15's own Keras there. Each test reads the same two processes' runs
  (the reference program and the converted one, every form and style).
  """

  @parameterized.named_parameters(
      *[dict(testcase_name="_" + s, style=s) for s in checks.API_STYLES])
  def test_steps_match_keras2(self, style):
    self.check_steps_match_keras2(_CORE[0], style)

  @parameterized.named_parameters(
      *[dict(testcase_name="_" + f, form=f) for f in checks.API_FORMS])
  def test_attributes_match_keras2(self, form):
    self.check_attributes_match_keras2(_CORE[0], form)

  def test_checkpoints_cross_with_keras2(self):
    self.check_checkpoints_cross(_CORE[0])


class Keras3StepTest(checks.Keras3StepChecks):

  def test_split_scale_loss_refuses(self):
    self.check_split_scale_loss_refuses()

  def test_scale_loss_then_apply_in_a_branch(self):
    self.check_scale_loss_then_apply_in_a_branch()

  def test_keras2_attributes_are_read_only(self):
    self.check_keras2_attributes_are_read_only()


class ApiTest(checks.ApiChecks):

  @parameterized.named_parameters(*checks.named(checks.ALL_KERASES))
  def test_is_that_keras_optimizer(self, keras_name):
    self.check_is_that_keras_optimizer(keras_name)

  @parameterized.named_parameters(*checks.named(_CORE))
  def test_apply_gradients_takes_tf2x_arguments(self, keras_name):
    self.check_apply_gradients_takes_tf2x_arguments(keras_name)

  def test_bad_inputs_say_what_to_do(self):
    self.check_bad_inputs_say_what_to_do()


if __name__ == "__main__":
  tf.test.main()
