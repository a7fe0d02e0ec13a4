# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""One Horovod rank of a TF1 graph-mode training run, for the tests.

Run under `horovodrun -np 2 -H localhost:2 --gloo`. A TF1 program with
`disable_v2_behavior()` (ref variables) and `MonitoredTrainingSession`:

* `--wrap outside` (NCF style): `hvd.DistributedOptimizer(LossScaleOptimizer(
  MomentumOptimizer))`: Horovod all-reduces the unscaled gradients that the
  LSO returns.
* `--wrap inside` (NVIDIA BERT style): `LossScaleOptimizer(
  hvd.DistributedOptimizer(MomentumOptimizer, compression=...))`: Horovod
  all-reduces the scaled gradients inside `compute_gradients`.

Every rank starts from different values (model, loss scale and the manager's
counters), so only `hvd.BroadcastGlobalVariablesHook` can make them agree.
On the `--poison-steps`, only rank 1 multiplies its loss by NaN.

Afterwards, in fresh graphs, a probe measures what fp16 compression does to a
gradient of 2**-30 (below float16's smallest subnormal) with the LSO inside
and outside Horovod, at a fixed loss scale of 2**20.

Writes `--out-dir/rank<R>.json`.
"""

import argparse
import json
import os
import sys

import numpy as np
import tensorflow as tf

tf.compat.v1.disable_v2_behavior()

import horovod  # pylint: disable=g-import-not-at-top  # noqa: E402
import horovod.tensorflow as hvd  # pylint: disable=g-import-not-at-top  # noqa: E402

import contrib_mixed_precision as cmp  # pylint: disable=g-import-not-at-top  # noqa: E402

_INIT_SCALE_LOG2 = 8


def _hex(value):
  return np.ascontiguousarray(value).tobytes().hex()


def _wrap(wrap, inner, manager, compression):
  if wrap == "outside":
    lso = cmp.LossScaleOptimizer(inner, manager)
    return hvd.DistributedOptimizer(lso, compression=compression), lso
  lso = cmp.LossScaleOptimizer(
      hvd.DistributedOptimizer(inner, compression=compression), manager)
  return lso, lso


def train(args, rank):
  """The poisoned-rank training run; returns this rank's record."""
  poison_steps = set(int(s) for s in args.poison_steps.split(",") if s)
  compression = {"none": hvd.Compression.none,
                 "fp16": hvd.Compression.fp16}[args.compression]
  graph = tf.Graph()
  with graph.as_default():
    global_step = tf.compat.v1.train.get_or_create_global_step()
    # Rank-dependent initial values: the broadcast must overwrite rank 1's.
    w = tf.compat.v1.get_variable(
        "w", initializer=np.linspace(-1.0, 1.0, 6).reshape(3, 2).astype(
            np.float32) + rank)
    b = tf.compat.v1.get_variable("b", initializer=np.full([2], float(rank),
                                                            np.float32))
    manager = cmp.ExponentialUpdateLossScaleManager(
        init_loss_scale=2.0**(_INIT_SCALE_LOG2 + rank), incr_every_n_steps=2,
        decr_every_n_nan_or_inf=2, incr_ratio=2, decr_ratio=0.5)
    scale_var, good_var, bad_var = manager.variables()
    opt, lso = _wrap(args.wrap,
                     tf.compat.v1.train.MomentumOptimizer(0.1, momentum=0.9),
                     manager, compression)

    poisoned = tf.compat.v1.placeholder_with_default(False, [])
    x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0 +
                    rank)
    y = tf.ones([4, 2])
    # A factor, not a term: an added NaN constant has a zero gradient.
    factor = tf.where(poisoned, tf.constant(float("nan")), 1.0)
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y)) * factor
    grads_and_vars = opt.compute_gradients(loss, var_list=[w, b])
    train_op = opt.apply_gradients(grads_and_vars, global_step)
    finite = lso.finite_grads
    slots = [lso.get_slot(v, "momentum") for v in (w, b)]

    manager_names = sorted(v.name for v in manager.variables())
    global_names = set(v.name for v in tf.compat.v1.global_variables())
    before = {}

    # Counters differ per rank too (rank 0's differ from the defaults), so
    # the broadcast of the int32 variables is visible.
    perturb = tf.group(good_var.assign(1 + rank), bad_var.assign(1 + 2 * rank))

    def init_fn(unused_scaffold, sess):
      sess.run(perturb)
      before.update(zip(("loss_scale", "good_steps", "bad_steps"),
                        (v.item() for v in sess.run(
                            [scale_var, good_var, bad_var]))))
      before["w"] = _hex(sess.run(w))

    hooks = [hvd.BroadcastGlobalVariablesHook(0)]
    scaffold = tf.compat.v1.train.Scaffold(init_fn=init_fn)
    config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1,
                                      inter_op_parallelism_threads=1)

    def state(sess):
      values = sess.run([scale_var, good_var, bad_var, global_step, w, b] +
                        slots)
      return {
          "loss_scale": float(values[0]),
          "good_steps": int(values[1]),
          "bad_steps": int(values[2]),
          "global_step": int(values[3]),
          "weights": {"w": _hex(values[4]), "b": _hex(values[5])},
          "slots": {"w": _hex(values[6]), "b": _hex(values[7])},
      }

    records = []
    with tf.compat.v1.train.MonitoredTrainingSession(
        hooks=hooks, scaffold=scaffold, config=config,
        save_checkpoint_secs=None, save_summaries_steps=None,
        log_step_count_steps=None) as sess:
      after_broadcast = state(sess)
      for step in range(args.steps):
        feed = {poisoned: rank == 1 and step in poison_steps}
        _, finite_value = sess.run([train_op, finite], feed_dict=feed)
        record = state(sess)
        record["finite"] = bool(finite_value)
        records.append(record)
  return {
      "before_broadcast": before,
      "after_broadcast": after_broadcast,
      "manager_variables": manager_names,
      "manager_variables_broadcast": [n in global_names
                                      for n in manager_names],
      "records": records,
  }


def fp16_probe(wrap):
  """The all-reduced, unscaled gradient of `2**-30 * sum(v)` with fp16."""
  with tf.Graph().as_default():
    v = tf.compat.v1.get_variable("v", initializer=np.ones([4], np.float32))
    opt, _ = _wrap(wrap, tf.compat.v1.train.GradientDescentOptimizer(1.0),
                   cmp.FixedLossScaleManager(2**20), hvd.Compression.fp16)
    loss = tf.reduce_sum(v) * 2.0**-30
    (grad, _), = opt.compute_gradients(loss, var_list=[v])
    with tf.compat.v1.Session() as sess:
      sess.run(tf.compat.v1.global_variables_initializer())
      return [float(g) for g in sess.run(grad)]


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--wrap", choices=("outside", "inside"), required=True)
  parser.add_argument("--compression", choices=("none", "fp16"),
                      default="none")
  parser.add_argument("--steps", type=int, default=7)
  parser.add_argument("--poison-steps", default="2,4",
                      help="comma-separated 0-based steps")
  parser.add_argument("--out-dir", required=True)
  args = parser.parse_args(argv)

  hvd.init()
  rank = hvd.rank()
  result = {"rank": rank, "size": hvd.size(), "tf_version": tf.__version__,
            "horovod_version": horovod.__version__}
  result.update(train(args, rank))
  result["fp16_probe"] = {w: fp16_probe(w) for w in ("inside", "outside")}
  with open(os.path.join(args.out_dir, "rank%d.json" % rank), "w") as f:
    json.dump(result, f)
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
