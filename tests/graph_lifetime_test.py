# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Graphs the package was used in die with their last user reference.

Estimator builds a new graph for every `train()` and `evaluate()`, so a
`train_and_evaluate` job builds hundreds. Nothing of the package may keep a
dropped graph alive when its manager is built with the graph (in
`model_fn`): not the update's lock, not the manager's per-graph state. The
same loop with TF's own optimizer is the control: it must also leave
nothing, or the test would prove nothing.
"""

import gc
import weakref

from absl.testing import parameterized
import tensorflow as tf

import contrib_mixed_precision as mp

_GRAPHS = 20


def _manager(kind):
  if kind == "exponential":
    return mp.ExponentialUpdateLossScaleManager(2**15, 2)
  return mp.FixedLossScaleManager(2**15)


def _build_and_run(make_optimizer):
  """One graph: an Adam model of a few matmuls, built and stepped once."""
  with tf.Graph().as_default() as graph:
    w = tf.compat.v1.get_variable("w", initializer=tf.eye(8))
    h = tf.ones([4, 8])
    for _ in range(3):
      h = tf.matmul(h, w)
    opt = make_optimizer(tf.compat.v1.train.AdamOptimizer(1e-3))
    train = opt.minimize(tf.reduce_sum(h))
    with tf.compat.v1.Session() as sess:
      sess.run(tf.compat.v1.global_variables_initializer())
      sess.run(train)
  return weakref.ref(graph)


def _graphs_alive(refs):
  gc.collect()
  return sum(ref() is not None for ref in refs)


class GraphLifetimeTest(tf.test.TestCase, parameterized.TestCase):

  @parameterized.parameters("exponential", "fixed")
  def test_a_manager_per_graph_leaves_no_graph_alive(self, kind):
    refs = [
        _build_and_run(lambda inner: mp.LossScaleOptimizer(
            inner, _manager(kind))) for _ in range(_GRAPHS)
    ]
    self.assertEqual(0, _graphs_alive(refs))

  def test_control_tf_optimizer_leaves_no_graph_alive(self):
    refs = [
        _build_and_run(lambda inner: inner) for _ in range(_GRAPHS // 4)
    ]
    refs += [
        _build_and_run(
            lambda inner: tf.compat.v1.mixed_precision.
            MixedPrecisionLossScaleOptimizer(inner, "dynamic"))
        for _ in range(_GRAPHS // 4)
    ]
    self.assertEqual(0, _graphs_alive(refs))


if __name__ == "__main__":
  tf.test.main()
