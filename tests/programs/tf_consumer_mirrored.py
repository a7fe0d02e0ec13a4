# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""TF's `MixedPrecisionLossScaleOptimizer` driving `ExponentialUpdateLossScale`
under a `MirroredStrategy` of two logical CPUs (set before TF initialises,
hence a program of its own).

Each replica's loss is `sum(w) * factor`, the factor being 1 on replica 0
and the step's value on replica 1, so a NaN there poisons one replica only.
The inner `GradientDescentOptimizer(0.5)` sums the replicas' gradients.

Prints one JSON line: the weights of each replica and the scale after each
step. Usage: python tf_consumer_mirrored.py FACTOR [FACTOR ...]
"""

import json
import sys

import tensorflow as tf

from contrib_mixed_precision import loss_scale as loss_scale_lib


def main(factors):
  cpu = tf.config.list_physical_devices("CPU")[0]
  tf.config.set_logical_device_configuration(
      cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
  strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
  with strategy.scope():
    w = tf.Variable([1.0, -1.0])
    scale = loss_scale_lib.ExponentialUpdateLossScale(
        8.0, 2, decr_every_n_nan_or_inf=1, decr_ratio=0.5)
    opt = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(0.5), scale)

  @tf.function
  def step(factor):

    def replica_fn():
      replica = tf.distribute.get_replica_context().replica_id_in_sync_group
      f = tf.where(tf.equal(replica, 1), factor, 1.0)
      opt.minimize(lambda: tf.reduce_sum(w) * f, var_list=[w])

    strategy.run(replica_fn)

  local = strategy.experimental_local_results
  weights, scales = [], []
  for factor in factors:
    step(tf.constant(factor))
    weights.append([v.numpy().tolist() for v in local(w)])
    scales.append([float(v) for v in local(scale())])
  print(json.dumps({"weights": weights, "scales": scales}))


if __name__ == "__main__":
  main([float(f) for f in sys.argv[1:]])
