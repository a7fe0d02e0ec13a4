# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""`pickle` treats the LossScaleOptimizer as it treats a plain v1 optimizer.

A plain `tf.compat.v1.train.AdamOptimizer` pickles after eager steps; so
must the contrib optimizer around it (it once kept a weak reference per
graph after its first step, which `pickle` cannot copy).
"""

import pickle

from absl.testing import parameterized
import tensorflow as tf

import contrib_mixed_precision as mp


class PickleTest(tf.test.TestCase, parameterized.TestCase):

  @parameterized.parameters("exponential", "fixed")
  def test_pickles_after_eager_steps_like_a_plain_optimizer(self, manager):
    v = tf.Variable([1.0, 2.0])
    plain = tf.compat.v1.train.AdamOptimizer(0.1)
    plain.minimize(lambda: tf.reduce_sum(v * v), var_list=[v])
    pickle.dumps(plain)

    if manager == "exponential":
      manager = mp.ExponentialUpdateLossScaleManager(8, 1)
    else:
      manager = mp.FixedLossScaleManager(8)
    opt = mp.LossScaleOptimizer(tf.compat.v1.train.AdamOptimizer(0.1),
                                manager)
    for _ in range(2):
      opt.minimize(lambda: tf.reduce_sum(v * v), var_list=[v])
    copy = pickle.loads(pickle.dumps(opt))
    self.assertIsInstance(copy, mp.LossScaleOptimizer)
    self.assertEqual(
        float(opt._loss_scale_manager.get_loss_scale()),  # pylint: disable=protected-access
        float(copy._loss_scale_manager.get_loss_scale()))  # pylint: disable=protected-access


if __name__ == "__main__":
  tf.test.main()
