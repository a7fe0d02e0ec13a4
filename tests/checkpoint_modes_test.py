# Copyright 2026 The contrib_mixed_precision Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
"""Name-based checkpoints cross modes: graph -> eager -> graph (contract 8).

Every variable is compared by value after each restore: the model, the
optimizer's slots and non-slot variables (Adam's `cond/beta1_power`), and
the loss-scale state.
"""

import os

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import contrib_mixed_precision as mp

OPTIMIZERS = {
    "adam": lambda: tf.compat.v1.train.AdamOptimizer(0.1),
    "momentum": lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9),
    "sgd": lambda: tf.compat.v1.train.GradientDescentOptimizer(0.1),
}
# Gradients of three steps; the second is non-finite and skipped.
GRADS = [[0.5, -1.0], [np.nan, 1.0], [0.25, 2.0]]


def _manager():
  return mp.ExponentialUpdateLossScaleManager(8, 2, 1, 2, 0.5)


def _graph_train(optimizer, steps, restore_from=None, save_to=None):
  """Trains in graph mode; returns {variable name: value} at the end."""
  with tf.Graph().as_default():
    w = tf.compat.v1.get_variable("w", initializer=[1.0, 2.0])
    opt = mp.LossScaleOptimizer(OPTIMIZERS[optimizer](), _manager())
    grad = tf.compat.v1.placeholder(tf.float32, [2])
    train_op = opt.apply_gradients([(grad, w)])
    saver = tf.compat.v1.train.Saver()
    with tf.compat.v1.Session() as sess:
      sess.run(tf.compat.v1.global_variables_initializer())
      if restore_from:
        saver.restore(sess, restore_from)
      for g in steps:
        sess.run(train_op, {grad: g})
      if save_to:
        saver.save(sess, save_to)
      variables = tf.compat.v1.global_variables()
      return dict(zip([v.op.name for v in variables], sess.run(variables)))


def _eager_model(optimizer):
  w = tf.compat.v1.Variable([1.0, 2.0], name="w")
  opt = mp.LossScaleOptimizer(OPTIMIZERS[optimizer](), _manager())
  # One finite step creates the optimizer's variables; restores overwrite.
  opt.apply_gradients([(tf.constant([0.0, 0.0]), w)])
  variables = [w] + opt.variables()
  return w, opt, variables


def _values(variables):
  return {v.name[:-2]: v.numpy() for v in variables}


class CheckpointAcrossModesTest(tf.test.TestCase, parameterized.TestCase):

  def assertSameState(self, expected, actual):
    self.assertCountEqual(expected.keys(), actual.keys())
    for name, value in expected.items():
      self.assertAllEqual(value, actual[name], msg=name)

  @parameterized.parameters("adam", "momentum", "sgd")
  def test_saver_graph_to_eager_to_graph(self, optimizer):
    directory = self.get_temp_dir()
    graph_ckpt = os.path.join(directory, "graph-{}".format(optimizer))
    eager_ckpt = os.path.join(directory, "eager-{}".format(optimizer))
    in_graph = _graph_train(optimizer, GRADS, save_to=graph_ckpt)
    if optimizer == "adam":
      self.assertIn("cond/beta1_power", in_graph)

    w, opt, variables = _eager_model(optimizer)
    saver = tf.compat.v1.train.Saver(var_list=variables)
    saver.restore(None, graph_ckpt)
    self.assertSameState(in_graph, _values(variables))

    # Train on eagerly, then back to graph mode: the same numbers as an
    # uninterrupted graph-mode run.
    opt.apply_gradients([(tf.constant([1.0, 1.0]), w)])
    saver.save(None, eager_ckpt)
    eager_state = _values(variables)
    back = _graph_train(optimizer, [], restore_from=eager_ckpt)
    self.assertSameState(eager_state, back)
    uninterrupted = _graph_train(optimizer, GRADS + [[1.0, 1.0]])
    self.assertSameState(uninterrupted, back)

  def test_checkpoint_name_based_fallback_restores_beta_powers(self):
    graph_ckpt = os.path.join(self.get_temp_dir(), "graph-fallback")
    in_graph = _graph_train("adam", GRADS, save_to=graph_ckpt)
    w, opt, variables = _eager_model("adam")
    status = tf.train.Checkpoint(w=w, optimizer=opt).restore(graph_ckpt)
    status.assert_existing_objects_matched()
    restored = _values(variables)
    # Before, both powers silently kept their initial values (0.9, 0.999).
    self.assertAllEqual(in_graph["cond/beta1_power"],
                        restored["cond/beta1_power"])
    self.assertSameState(in_graph, restored)


if __name__ == "__main__":
  tf.test.main()
