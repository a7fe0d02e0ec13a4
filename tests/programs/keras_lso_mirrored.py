# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""`fit` with `KerasLossScaleOptimizer` under `MirroredStrategy`, 2 CPUs.

Two logical CPUs stand in for two GPUs; they must be configured before
TensorFlow starts its runtime, hence a process of its own. Each global
batch of 4 is split 2 and 2; some batches hold an Inf in replica 0's half
or a NaN in replica 1's, so one replica alone sees the bad step, and both
must skip it together.

Prints one JSON line: the data, each step's scale, `iterations` and
replica 0's kernel, and replica 1's kernel at the end.

Usage: python keras_lso_mirrored.py KERAS FAMILY [LOOP]
  KERAS: tf_keras_default (`tf.keras`) or tf_keras_package (`tf_keras`);
  FAMILY: new or legacy (Keras 2's `optimizers.legacy`);
  LOOP: fit (default), or tf2: a custom loop, `strategy.run` in a
    `tf.function`, with TF 2.x's `get_scaled_loss` /
    `get_unscaled_gradients` and `apply_gradients` in each replica.
"""

import json
import sys

import numpy as np
import tensorflow as tf

import contrib_mixed_precision as mp

LR = 0.1
POISON = [None, "inf", None, "nan", None, None, "nan", None]


def batches():
  rng = np.random.RandomState(11)
  w0 = rng.uniform(-1, 1, [3, 1]).astype(np.float32)
  result = []
  for p in POISON:
    x = rng.uniform(-1, 1, [4, 3]).astype(np.float32)
    y = rng.uniform(-1, 1, [4, 1]).astype(np.float32)
    if p == "inf":
      x[1, 2] = np.inf  # Replica 0's half.
    elif p == "nan":
      x[2, 0] = np.nan  # Replica 1's half.
    result.append((x, y))
  return w0, result


def main(keras_name, family, loop="fit"):
  cpu = tf.config.list_physical_devices("CPU")[0]
  tf.config.set_logical_device_configuration(
      cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
  if keras_name == "tf_keras_package":
    import tf_keras as keras  # pylint: disable=g-import-not-at-top
  else:
    keras = tf.keras
  w0, data = batches()
  strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
  with strategy.scope():
    layer = keras.layers.Dense(
        1, use_bias=False, kernel_initializer=keras.initializers.Constant(w0))
    model = keras.Sequential([keras.Input([3]), layer])
    sgd = (keras.optimizers.legacy.SGD(LR) if family == "legacy" else
           keras.optimizers.SGD(LR))
    opt = mp.KerasLossScaleOptimizer(
        sgd, tf.compat.v1.mixed_precision.DynamicLossScale(2.**10, 2, 4.))

    def loss_fn(y_true, y_pred):
      return tf.square(y_pred - y_true)

    model.compile(optimizer=opt, loss=loss_fn)

  def local_kernels():
    kernel = layer.kernel
    value = getattr(kernel, "value", None)
    if value is not None and not callable(value):
      kernel = value  # A Keras 3 variable: its tf.Variable.
    return [np.asarray(v).reshape(-1).tolist()
            for v in strategy.experimental_local_results(kernel)]

  steps = []

  class Record(keras.callbacks.Callback):

    def on_train_batch_end(self, batch, logs=None):
      del batch, logs
      steps.append([float(opt.loss_scale), int(opt.iterations.numpy()),
                    [[v] for v in local_kernels()[0]]])

  x = np.concatenate([bx for bx, _ in data])
  y = np.concatenate([by for _, by in data])
  if loop == "fit":
    model.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0,
              callbacks=[Record()])
  else:
    model(x[:4])  # Builds the layer's kernel.
    replicas = strategy.num_replicas_in_sync

    def replica_step(bx, by):
      with tf.GradientTape() as tape:
        # Each replica's share of the global mean: the replicas' gradients
        # are summed.
        loss = tf.reduce_mean(loss_fn(by, model(bx))) / replicas
        scaled = opt.get_scaled_loss(loss)
      grads = tape.gradient(scaled, model.trainable_variables)
      grads = opt.get_unscaled_gradients(grads)
      opt.apply_gradients(zip(grads, model.trainable_variables))

    @tf.function
    def step(bx, by):
      strategy.run(replica_step, args=(bx, by))

    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)
    record = Record()
    for bx, by in strategy.experimental_distribute_dataset(dataset):
      step(bx, by)
      record.on_train_batch_end(0)
  print(json.dumps({
      "replicas": strategy.num_replicas_in_sync,
      "poison": POISON,
      "w0": w0.tolist(),
      "batches": [[bx.tolist(), by.tolist()] for bx, by in data],
      "steps": steps,
      "replica_1_w": [[v] for v in local_kernels()[1]],
  }))


if __name__ == "__main__":
  main(*sys.argv[1:])
