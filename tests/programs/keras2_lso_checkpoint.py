# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""A `tf.train.Checkpoint` of Keras 2's LossScaleOptimizer, either way.

SIDE `reference` is Keras 2's own `LossScaleOptimizer` (run under tf-keras
or Keras 2.15), `converted` what `contrib-mp-upgrade` writes in its place
(keras2_lso_api.py). MODE `save` trains a few steps (one of them NaN) and
saves the optimizer and the weights into DIR; `restore` builds the
optimizer afresh, restores the newest checkpoint in DIR (written by either
side) and takes one finite step. The slots of Keras 2's and Keras 3's
optimizers are laid out differently and do not cross; plain SGD has none.

Prints one JSON line: the scale, `iterations`, `dynamic_counter`, the
learning rate and the weights after the save, or after the restore and
after the step that follows it.

Usage: python keras2_lso_checkpoint.py SIDE MODE DIR
"""

import json
import os
import sys

import tensorflow as tf

import keras2_lso_api as api

GRADS = [0.5, 0.25, float("nan"), 1.0, 0.5]


def read(opt, w):
  return [float(opt.loss_scale), int(opt.iterations.numpy()),
          int(opt.dynamic_counter.numpy()), float(opt.learning_rate),
          w.numpy().tolist()]


def main(side, mode, directory):
  opt = api.make_optimizer(side, "floor")
  w = tf.Variable([1.0, -2.0])
  checkpoint = tf.train.Checkpoint(optimizer=opt, w=w)
  result = {}
  if mode == "save":
    for g in GRADS:
      # Unscaled gradients, as after `get_unscaled_gradients`.
      opt.apply_gradients([(tf.constant([g, -g]), w)])
    checkpoint.save(os.path.join(directory, "ckpt"))
    result["saved"] = read(opt, w)
  else:
    status = checkpoint.restore(tf.train.latest_checkpoint(directory))
    result["restored"] = read(opt, w)
    # Keras 2's SGD keeps a slot of its own, which a Keras 3 checkpoint
    # has not (nor its momentum 0 needs).
    status.expect_partial()
    opt.apply_gradients([(tf.constant([0.5, 0.5]), w)])
    result["then"] = read(opt, w)
  print(json.dumps(result))


if __name__ == "__main__":
  main(*sys.argv[1:])
