# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""A `tf.estimator.Estimator` program whose `model_fn` builds the LSO.

`--manager inside` builds the `ExponentialUpdateLossScaleManager` inside
`model_fn` (a new one per graph, as most Estimator code does). `--manager
outside` builds one manager before the Estimator and shares it across every
`train()` call: each call builds a new graph, where the manager creates its
state variables again, lazily, and the checkpoint restores them.

Two model directories are trained: `split` with two `train(steps=K)` calls
(the second restores what the first saved) and `whole` with one
`train(steps=2K)`. `--distribute mirrored` trains with
`train_distribute=MirroredStrategy` over two logical CPUs.

The model computes in float16 over float32 master weights and starts from a
loss scale that overflows, so skipped steps happen at the start and then
periodically, when the scale grows back. The data is a function of
`global_step`: a skipped step (which does not advance it) sees its batch
again, and a split run sees the same batches as a whole one.

A hook logs every step: `global_step` before it, the optimizer's finite
flag, the loss, and (read after the step) the loss-scale state, by the
variables' names. Writes JSON to `--out`.

Usage: python estimator_train.py --out FILE --manager inside|outside
         [--distribute none|mirrored] [--steps K]
"""

import argparse
import json
import os
import sys
import tempfile

import numpy as np
import tensorflow as tf

import contrib_mixed_precision as cmp

_MANAGER_ARGS = dict(init_loss_scale=2**18, incr_every_n_steps=3,
                     decr_every_n_nan_or_inf=2, incr_ratio=2, decr_ratio=0.5)


def fp32_storage_getter(getter, name, shape=None, dtype=None, trainable=True,
                        *args, **kwargs):
  variable = getter(name, shape, dtype=tf.float32 if trainable else dtype,
                    trainable=trainable, *args, **kwargs)  # noqa: B026
  if trainable and dtype != tf.float32:
    variable = tf.cast(variable, dtype)
  return variable


def make_model_fn(shared_manager, optimizer):

  def model_fn(features, labels, mode):
    del features, labels  # The batch is a function of global_step.
    global_step = tf.compat.v1.train.get_or_create_global_step()
    step = tf.identity(tf.cast(global_step, tf.int32), name="step_copy")
    x = tf.random.stateless_normal([8, 4], seed=tf.stack([step, 3]))
    y = tf.reduce_sum(x * [[1.0, -2.0, 0.5, 3.0]], axis=1, keepdims=True)
    with tf.compat.v1.variable_scope("model",
                                     custom_getter=fp32_storage_getter):
      w = tf.compat.v1.get_variable(
          "w", [4, 1], tf.float16,
          initializer=tf.compat.v1.constant_initializer(0.1))
      pred = tf.cast(tf.matmul(tf.cast(x, tf.float16), w), tf.float32)
    loss = tf.identity(tf.reduce_mean(tf.square(pred - y)), name="total_loss")
    manager = shared_manager or cmp.ExponentialUpdateLossScaleManager(
        **_MANAGER_ARGS)
    if optimizer == "adam":
      inner = tf.compat.v1.train.AdamOptimizer(0.05)
    else:
      inner = tf.compat.v1.train.MomentumOptimizer(0.01, momentum=0.9)
    opt = cmp.LossScaleOptimizer(inner, manager)
    train_op = opt.minimize(loss, global_step=global_step)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

  return model_fn


def input_fn():
  return tf.data.Dataset.from_tensors(tf.zeros([2, 1])).repeat()


class StepLog(tf.compat.v1.train.SessionRunHook):
  """Logs each step, finding tensors by name as legacy hooks do."""

  def __init__(self):
    self.records = []

  def begin(self):
    graph = tf.compat.v1.get_default_graph()
    by_name = {v.op.name: v for v in tf.compat.v1.global_variables()}
    self._fetches = {
        "step": graph.get_tensor_by_name("step_copy:0"),
        "finite": tf.compat.v1.get_collection(cmp.GraphKeys.FINITE_GRADS)[-1],
    }
    self._state = {
        "loss_scale": by_name["loss_scale"],
        "good_steps": by_name["good_steps"],
        "bad_steps": by_name["bad_steps"],
        "global_step": tf.compat.v1.train.get_global_step(),
        "w": by_name["model/w"],
    }

  def before_run(self, run_context):
    return tf.compat.v1.train.SessionRunArgs(self._fetches)

  def after_run(self, run_context, run_values):
    state = run_context.session.run(self._state)
    self.records.append({
        "step": int(run_values.results["step"]),
        "finite": bool(run_values.results["finite"]),
        "loss_scale": float(state["loss_scale"]),
        "good_steps": int(state["good_steps"]),
        "bad_steps": int(state["bad_steps"]),
        "global_step": int(state["global_step"]),
        "w": np.asarray(state["w"]).ravel().tolist(),
    })


def checkpoint_state(model_dir):
  reader = tf.train.load_checkpoint(model_dir)
  names = reader.get_variable_to_dtype_map()
  state = {name: reader.get_tensor(name).tolist()
           for name in ("loss_scale", "good_steps", "bad_steps",
                        "global_step", "model/w")}
  state["dtypes"] = {name: dtype.name for name, dtype in names.items()}
  return state


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--out", required=True)
  parser.add_argument("--manager", choices=["inside", "outside"],
                      required=True)
  parser.add_argument("--distribute", choices=["none", "mirrored"],
                      default="none")
  parser.add_argument("--steps", type=int, default=10)
  parser.add_argument("--optimizer", choices=["adam", "momentum"],
                      default="adam")
  args = parser.parse_args(argv)

  session_config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1,
                                            inter_op_parallelism_threads=2)
  strategy = None
  if args.distribute == "mirrored":
    cpus = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(
        cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    # The Estimator's session needs the two CPUs too, and enough inter-op
    # threads for both replicas' ops, or it deadlocks on a 2-core machine.
    session_config = tf.compat.v1.ConfigProto(
        device_count={"CPU": 2}, inter_op_parallelism_threads=8,
        allow_soft_placement=True)

  shared = None
  if args.manager == "outside":
    shared = cmp.ExponentialUpdateLossScaleManager(**_MANAGER_ARGS)

  root = tempfile.mkdtemp()
  result = {}
  for name, calls in (("split", [args.steps, args.steps]),
                      ("whole", [2 * args.steps])):
    config = tf.estimator.RunConfig(
        model_dir=os.path.join(root, name), session_config=session_config,
        train_distribute=strategy, save_checkpoints_steps=1000,
        save_checkpoints_secs=None, save_summary_steps=None,
        log_step_count_steps=None, tf_random_seed=0)
    runs = []
    for steps in calls:
      # A new Estimator per call, as a restarted job would build.
      estimator = tf.estimator.Estimator(
          make_model_fn(shared, args.optimizer), config=config)
      log = StepLog()
      estimator.train(input_fn, steps=steps, hooks=[log])
      runs.append({"records": log.records,
                   "checkpoint": checkpoint_state(config.model_dir)})
    result[name] = runs
  with open(args.out, "w") as f:
    json.dump(result, f)


if __name__ == "__main__":
  main(sys.argv[1:])
