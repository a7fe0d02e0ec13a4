#!/usr/bin/env python3
# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Writes a large synthetic TF 1.x source tree, like a real model zoo.

Hundreds of files use other `tf.contrib` modules (layers, slim, opt, tpu,
training) many times each; a few use `tf.contrib.mixed_precision`. Used to
check that the `contrib-mp-upgrade` report stays readable on large trees
(tests/upgrade_test.py) and to measure it:

  scripts/make_legacy_tree.py --out /tmp/zoo --files 600
  contrib-mp-upgrade --intree /tmp/zoo --outtree /tmp/zoo_tf2
"""

import argparse
import os
import sys

_OTHER = (
    "tf.contrib.layers.xavier_initializer()",
    "tf.contrib.layers.l2_regularizer(1e-4)",
    "slim.conv2d(net, 32, [3, 3])",
    "tf.contrib.opt.LazyAdamOptimizer(1e-3)",
    "tf.contrib.training.HParams(lr=0.1)",
    "tf.contrib.tpu.CrossShardOptimizer(opt)",
    "tf.contrib.framework.get_variables()",
)
_MP_SITE = """

def make_optimizer(opt):
  manager = tf.contrib.mixed_precision.ExponentialUpdateLossScaleManager(
      init_loss_scale=2**32, incr_every_n_steps=1000)
  return tf.contrib.mixed_precision.LossScaleOptimizer(opt, manager)
"""


# Ordinary model code that uses no contrib module, repeated to give files
# the size of real ones.
_FILLER = """

def block_{k}(net, scale=1.0):
  \"\"\"Layer {k}: a residual unit.\"\"\"
  shortcut = net
  net = tf.nn.relu(net * scale)  # Keep the activation in fp32.
  for _ in range(2):
    net = tf.matmul(net, tf.ones([4, 4])) + {k}
  return net + shortcut
"""


def write_tree(out: str, files: int, uses: int, mp_every: int,
               filler: int = 0, layers_every: int = 0) -> int:
  """Writes the tree; returns how many files use mixed_precision.

  Args:
    out: The directory to create.
    files: Python files to write.
    uses: Other-contrib uses per file.
    mp_every: Every Nth file also uses `tf.contrib.mixed_precision`.
    filler: About this many lines of ordinary code are added per file.
    layers_every: Every Nth function of that code also calls
      `tf.contrib.layers` (0: none does).
  """
  mp_files = 0
  for i in range(files):
    package = os.path.join(out, "model_{:03d}".format(i // 20))
    os.makedirs(package, exist_ok=True)
    lines = ["# Synthetic TF 1.x module {}.".format(i),
             "import tensorflow as tf",
             "from tensorflow.contrib import slim", "", "",
             "def build(net, opt):"]
    for j in range(uses):
      lines.append("  x{} = {}".format(j, _OTHER[(i + j) % len(_OTHER)]))
    lines.append("  return net")
    source = "\n".join(lines) + "\n"
    for k in range(filler // 9):
      block = _FILLER.format(k=k)
      if layers_every and k % layers_every == 0:
        block = block.replace(
            "  return net + shortcut",
            "  net = tf.contrib.layers.fully_connected(net, 4)\n"
            "  return net + shortcut")
      source += block
    if mp_every and i % mp_every == 0:
      source += _MP_SITE
      mp_files += 1
    with open(os.path.join(package, "layer_{:03d}.py".format(i)), "w") as f:
      f.write(source)
  return mp_files


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--out", required=True,
                      help="directory to create (must not exist)")
  parser.add_argument("--files", type=int, default=600,
                      help="Python files to write (default: %(default)s)")
  parser.add_argument("--uses", type=int, default=8,
                      help="other-contrib uses per file (default: %(default)s)")
  parser.add_argument(
      "--mp_every", type=int, default=60,
      help="every Nth file also uses tf.contrib.mixed_precision "
      "(default: %(default)s)")
  parser.add_argument(
      "--filler", type=int, default=0,
      help="about this many lines of ordinary code per file, for files the "
      "size of real ones (default: %(default)s)")
  parser.add_argument(
      "--layers_every", type=int, default=0,
      help="every Nth function of that ordinary code also calls "
      "tf.contrib.layers (default: %(default)s, none)")
  args = parser.parse_args(argv)
  if os.path.exists(args.out):
    parser.error("`--out` {!r} already exists; name a new directory.".format(
        args.out))
  mp_files = write_tree(args.out, args.files, args.uses, args.mp_every,
                        args.filler, args.layers_every)
  print("Wrote {} files ({} use tf.contrib.mixed_precision) to {}.".format(
      args.files, mp_files, args.out))
  return 0


if __name__ == "__main__":
  sys.exit(main())
