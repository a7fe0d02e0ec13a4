# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Name-based checkpoints cross modes: graph -> eager -> graph (contract 8).

A graph-mode program trains one or two LossScaleOptimizers and saves with a
default `Saver`. An eager (or `tf.function`) program restores it, with a
`Saver(var_list)` or with `tf.train.Checkpoint`'s name-based fallback, and
every variable is compared by value: the model, the optimizer's slots and
non-slot variables (Adam's `cond/beta1_power`), and the loss-scale state.
It then trains one more step and saves with `Saver(var_list)`; the graph
program restores that, and must hold exactly what an uninterrupted
graph-mode run holds after the same steps.

The names are TF 1.15's graph-mode names: the first optimizer's inner apply
ran in the name scope `cond`, an exponential manager's update took the next
`cond_N`, and the next optimizer's apply the one after. Other conds in the
graph (the user's, a dynamic adapter's update) take no index, in any mode.

The uninterrupted graph-mode run is itself judged by TF 1.15's optimizer
(`tf115_harness`) on the same steps: every variable, slot, non-slot
variable and scale equal to the bit, by role.
"""

import os
import re

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import contrib_mixed_precision as mp

import tf115_harness as harness

OPTIMIZERS = {
    "adam": lambda: tf.compat.v1.train.AdamOptimizer(0.1),
    "momentum": lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9),
    "sgd": lambda: tf.compat.v1.train.GradientDescentOptimizer(0.1),
}
MANAGERS = {
    "exponential": lambda lib=mp: lib.ExponentialUpdateLossScaleManager(
        8, 2, 1, 2, 0.5),
    "fixed": lambda lib=mp: lib.FixedLossScaleManager(4),
    # TF2's policy behind an adapter, whose update builds a `tf.cond` of its
    # own in graph mode.
    # (The package's only: TF 1.15 had no TF2 policy.)
    "dynamic": lambda lib=mp: mp.LossScaleManager.from_loss_scale(
        tf.compat.v1.mixed_precision.DynamicLossScale(8, 2, 2)),
}
# Gradients of three steps; the second is non-finite and skipped.
GRADS = [[0.5, -1.0], [np.nan, 1.0], [0.25, 2.0]]
# One more step, taken after the restore in eager mode.
EXTRA = [1.0, 1.0]


def _foreign_cond():
  """A `tf.cond` of the user's own, built before the optimizers."""
  return tf.cond(tf.constant(True), lambda: tf.constant(1.0),
                 lambda: tf.constant(2.0))


def _roles(i, w, opt, inner, manager):
  """The state of the i-th optimizer by role, as both sides name it."""
  roles = {"w{}".format(i): w}
  slots = set()
  for name in opt.get_slot_names():
    slot = opt.get_slot(w, name)
    slots.add(id(slot))
    roles["w{}/{}".format(i, name)] = slot
  for variable in inner.variables():
    if id(variable) not in slots:
      # Without a scope, a second optimizer's is `beta1_power_1`.
      role = re.sub(r"_\d+$", "", variable.op.name.split("/")[-1])
      roles["opt{}/{}".format(i, role)] = variable
  variables = list(getattr(manager, "variables", list)())
  if variables:
    for role, variable in zip(("loss_scale", "good_steps", "bad_steps"),
                              variables):
      roles["opt{}/{}".format(i, role)] = variable
  else:
    roles["opt{}/loss_scale".format(i)] = manager.get_loss_scale()
  return roles


def _graph_train(optimizer, managers, steps, restore_from=None, save_to=None,
                 foreign_cond=False, lib=None, roles=None):
  """Trains in graph mode; returns {variable name: value} at the end.

  One LossScaleOptimizer per entry of `managers`, the i-th training the
  variable `w{i}` with the gradients `steps` (the same for each), by `lib`
  (a `tf115_harness.Library`; the package's if None). A dict `roles` is
  filled with the state by role (`_roles`).
  """
  lib = lib or harness.Library(harness.PACKAGE)
  with tf.Graph().as_default():
    if foreign_cond:
      _foreign_cond()
    grad = tf.compat.v1.placeholder(tf.float32, [2])
    train_ops, by_role = [], {}
    for i, manager in enumerate(managers):
      w = tf.compat.v1.get_variable("w{}".format(i), initializer=[1.0, 2.0])
      inner = OPTIMIZERS[optimizer]()
      manager = MANAGERS[manager](lib)
      opt = lib.LossScaleOptimizer(inner, manager)
      train_ops.append(opt.apply_gradients([(grad, w)]))
      by_role.update(_roles(i, w, opt, inner, manager))
    saver = tf.compat.v1.train.Saver() if lib.which == harness.PACKAGE else None
    with tf.compat.v1.Session() as sess:
      sess.run(tf.compat.v1.global_variables_initializer())
      if restore_from:
        saver.restore(sess, restore_from)
      for g in steps:
        for train_op in train_ops:
          sess.run(train_op, {grad: g})
      if save_to:
        saver.save(sess, save_to)
      if roles is not None:
        roles.update(sess.run(by_role))
      variables = tf.compat.v1.global_variables()
      return dict(zip([v.op.name for v in variables], sess.run(variables)))


_TF115_STATES = {}


def _tf115_state(optimizer, managers, steps):
  """TF 1.15's graph-mode run, by role; one per model (the modes share it)."""
  key = (optimizer, tuple(managers), repr(steps))
  if key not in _TF115_STATES:
    roles = _TF115_STATES[key] = {}
    _graph_train(optimizer, managers, steps,
                 lib=harness.Library(harness.ORACLE), roles=roles)
  return _TF115_STATES[key]


def _eager_program(optimizer, managers, mode, foreign_cond=False):
  """The same model in eager mode; returns (variables, objects, step)."""
  ws, opts = [], []
  for i, manager in enumerate(managers):
    ws.append(tf.Variable([1.0, 2.0], name="w{}".format(i)))
    opts.append(mp.LossScaleOptimizer(OPTIMIZERS[optimizer](),
                                      MANAGERS[manager]()))

  def step(grad):
    if foreign_cond:
      _foreign_cond()
    for w, opt in zip(ws, opts):
      opt.apply_gradients([(grad, w)])

  if mode == "function":
    step = tf.function(step)
  # One finite step creates the optimizers' variables; restores overwrite.
  step(tf.constant([0.0, 0.0]))
  variables = list(ws)
  for opt in opts:
    variables.extend(opt.variables())
  objects = {"w{}".format(i): w for i, w in enumerate(ws)}
  objects.update(("opt{}".format(i), opt) for i, opt in enumerate(opts))
  return variables, objects, step


def _values(variables):
  return {v.name[:-2]: v.numpy() for v in variables}


class CheckpointAcrossModesTest(tf.test.TestCase, parameterized.TestCase):

  def assertSameState(self, expected, actual):
    self.assertCountEqual(expected.keys(), actual.keys())
    for name, value in expected.items():
      self.assertAllEqual(value, actual[name], msg=name)

  @parameterized.product(
      optimizer=["adam", "sgd", "momentum"],
      managers=[("exponential",), ("exponential", "exponential"),
                ("fixed", "exponential")],
      mode=["eager", "function"],
      restore=["saver", "checkpoint"])
  def test_graph_to_eager_to_graph_keeps_every_variable(
      self, optimizer, managers, mode, restore):
    directory = self.get_temp_dir()
    graph_ckpt = os.path.join(directory, "graph")
    eager_ckpt = os.path.join(directory, "eager")
    in_graph = _graph_train(optimizer, managers, GRADS, save_to=graph_ckpt)
    if optimizer == "adam":
      # TF 1.15's graph names: `cond` for the first apply, and the second
      # apply after the first manager's update (if it took a `cond`).
      second = "cond_2" if managers[0] == "exponential" else "cond_1"
      expected = ["cond", second][:len(managers)]
      self.assertEqual(
          expected, sorted(name[:-len("/beta1_power")] for name in in_graph
                           if name.endswith("/beta1_power")))

    variables, objects, step = _eager_program(optimizer, managers, mode)
    self.assertCountEqual(in_graph.keys(), _values(variables).keys())
    if restore == "saver":
      tf.compat.v1.train.Saver(var_list=variables).restore(None, graph_ckpt)
    else:
      status = tf.train.Checkpoint(**objects).restore(graph_ckpt)
      status.assert_existing_objects_matched()
    self.assertSameState(in_graph, _values(variables))

    # Train on in this mode, then back to graph mode: the same numbers as an
    # uninterrupted graph-mode run.
    step(tf.constant(EXTRA))
    tf.compat.v1.train.Saver(var_list=variables).save(None, eager_ckpt)
    after_eager_step = _values(variables)
    back = _graph_train(optimizer, managers, [], restore_from=eager_ckpt)
    self.assertSameState(after_eager_step, back)
    package = {}
    uninterrupted = _graph_train(optimizer, managers, GRADS + [EXTRA],
                                 roles=package)
    self.assertSameState(uninterrupted, back)
    # The uninterrupted run is TF 1.15's, to the bit.
    oracle = _tf115_state(optimizer, managers, GRADS + [EXTRA])
    self.assertCountEqual(oracle.keys(), package.keys())
    for role, value in oracle.items():
      self.assertEqual((value.dtype, value.tobytes()),
                       (package[role].dtype, package[role].tobytes()),
                       msg="{}: package {} != TF 1.15's {}".format(
                           role, package[role], value))

  @parameterized.product(
      case=[
          # The first optimizer's adapter builds a cond in graph mode only.
          dict(managers=("dynamic", "fixed"), foreign_cond=False,
               scopes=["cond", "cond_1"]),
          # The user's own cond, built before the optimizer.
          dict(managers=("exponential",), foreign_cond=True,
               scopes=["cond"]),
      ],
      mode=["eager", "function"])
  def test_names_ignore_other_conds_in_the_graph(self, case, mode):
    # Name-based restore by tf.train.Checkpoint matches what it can and
    # leaves the rest at their initial values; every name must match.
    ckpt = os.path.join(self.get_temp_dir(), "graph")
    in_graph = _graph_train("adam", case["managers"], GRADS, save_to=ckpt,
                            foreign_cond=case["foreign_cond"])
    self.assertEqual(
        case["scopes"],
        sorted(name[:-len("/beta1_power")] for name in in_graph
               if name.endswith("/beta1_power")))
    variables, objects, _ = _eager_program(
        "adam", case["managers"], mode, foreign_cond=case["foreign_cond"])
    self.assertCountEqual(in_graph.keys(), _values(variables).keys())
    tf.train.Checkpoint(**objects).restore(ckpt)
    self.assertSameState(in_graph, _values(variables))

  def test_inner_apply_scope_inside_an_outer_cond(self):
    # The naming rule inside an outer `tf.cond` (gradient accumulation):
    # under the outer cond's scope in graph mode (control flow v1, as TF 1.15
    # named it, and v2) and in a tf.function; an eager `tf.cond` opens no
    # name scope, so there the outer scope is absent.
    def names(mode, control_flow_v2=True):
      ws = [tf.Variable([1.0, 2.0], name="w")]
      opt = mp.LossScaleOptimizer(OPTIMIZERS["adam"](),
                                  MANAGERS["exponential"]())

      def step():
        tf.cond(tf.constant(True),
                lambda: opt.apply_gradients([(tf.constant([1.0, 1.0]),
                                              ws[0])]),
                tf.no_op)

      if mode == "function":
        tf.function(step)()
      else:
        step()
      return sorted(v.name[:-2] for v in opt.variables() if "beta" in v.name)

    expected = ["cond/cond/beta1_power", "cond/cond/beta2_power"]
    for control_flow_v2 in (True, False):
      with tf.Graph().as_default():
        if not control_flow_v2:
          tf.compat.v1.disable_control_flow_v2()
        try:
          ws = [tf.compat.v1.get_variable("w", initializer=[1.0, 2.0])]
          opt = mp.LossScaleOptimizer(OPTIMIZERS["adam"](),
                                      MANAGERS["exponential"]())
          tf.cond(tf.constant(True),
                  lambda: opt.apply_gradients([(tf.constant([1.0, 1.0]),  # noqa: B023
                                                ws[0])]),  # noqa: B023
                  tf.no_op)
        finally:
          tf.compat.v1.enable_control_flow_v2()
        self.assertEqual(
            expected,
            sorted(v.op.name for v in opt.variables() if "beta" in v.name),
            msg="control flow v2: {}".format(control_flow_v2))
    self.assertEqual(expected, names("function"))
    tf.compat.v1.reset_default_graph()
    self.assertEqual(["cond/beta1_power", "cond/beta2_power"],
                     names("eager"))

  def test_names_are_numbered_per_default_graph_in_eager_mode(self):
    # Two programs in one process: after `reset_default_graph()` (which
    # tf.test.TestCase.setUp calls too) the next program starts at `cond`
    # again, as a new graph would; without it, the numbering continues, as
    # in one graph.
    def beta_scopes():
      variables, _, _ = _eager_program("adam", ("exponential",), "eager")
      return [v.name.split("/")[0] for v in variables
              if "beta1_power" in v.name]

    self.assertEqual(["cond"], beta_scopes())
    self.assertEqual(["cond_2"], beta_scopes())
    tf.compat.v1.reset_default_graph()
    self.assertEqual(["cond"], beta_scopes())


if __name__ == "__main__":
  tf.test.main()
