# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""One manager shared by two optimizers in one graph, as GAN scripts do.

A discriminator D (finite gradients, fed from a tf.data pipeline and a
placeholder) and a generator G (always NaN gradients) share one
`ExponentialUpdateLossScaleManager`. What is guaranteed, and tested here
under TF2 behaviour and under `disable_v2_behavior()` (ref variables,
control flow v1), with the applies built plainly or inside an outer
`tf.cond`:

* Separate runs (`sess.run(train_d)`, `sess.run(train_g)`) follow TF 1.15's
  policy step for step, and a run of G alone runs nothing of D: it needs
  none of D's feeds and pulls no batch from D's pipeline.
* A run of both (`sess.run([train_d, train_g])`) never loses an update: the
  state afterwards is always that of the two updates applied one after the
  other, D then G or G then D. (TF 1.15, and this package before, often
  kept only one of them.)

The separate runs are also judged by TF 1.15's optimizer and manager
(`tf115_harness`), built and run the same way in the same mode: the same
state after every run.
"""

import json
import logging
import os
import tempfile
import textwrap

from absl.testing import parameterized
import tensorflow as tf

import contrib_mixed_precision as mp
import policy_reference
import forkserver
import tf115_harness as harness

_TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.dirname(_TESTS_DIR)

# (init scale, incr_every_n_steps, decr_every_n_nan_or_inf, start bad_steps)
# chosen so that losing D's update, or G's, gives a state neither serial
# order gives: D grows the scale in the first, only counts in the second.
CONFIGS = {
    "d_grows": (8.0, 1, 3, 1),
    "d_counts": (8.0, 3, 3, 1),
}
# Separate runs: which optimizer each `session.run` executes.
SCHEDULE = "DGGDDDGDGGGDDDDD"


def shared_manager_scenario(config, in_cond, coruns, which=harness.PACKAGE):
  """Builds the GAN-like graph and runs it; returns what happened.

  Args:
    config: A key of CONFIGS.
    in_cond: Build each `apply_gradients` inside an outer `tf.cond` (whose
      predicate is True), as gradient accumulation does.
    coruns: How many `sess.run([train_d, train_g])` to make, each from the
      start state.
    which: Whose optimizer and manager (`tf115_harness.PACKAGE` or
      `ORACLE`).

  Returns:
    A dict: `separate`, the state after each run of SCHEDULE; `batches`, the
    batches D's runs saw; `coruns`, the state after each co-run.
  """
  init_scale, incr, decr, start_bad = CONFIGS[config]
  lib = harness.Library(which)
  with tf.Graph().as_default():
    manager = lib.ExponentialUpdateLossScaleManager(init_scale, incr, decr, 2,
                                                    0.5)
    scale, good, bad = manager.variables()
    d = tf.compat.v1.get_variable("d", initializer=1.0)
    g = tf.compat.v1.get_variable("g", initializer=1.0)
    batch = tf.compat.v1.data.make_one_shot_iterator(
        tf.data.Dataset.range(1000).map(lambda i: tf.cast(i, tf.float32))
    ).get_next()
    weight = tf.compat.v1.placeholder(tf.float32, [])  # Fed in D's runs.
    d_loss = tf.square(d) * weight + 0.0 * batch
    g_loss = tf.sqrt(-tf.abs(g) - 1.0)  # NaN: every G step is skipped.
    train_ops = []
    for var, loss in ((d, d_loss), (g, g_loss)):
      opt = lib.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(0.0), manager)
      grads = opt.compute_gradients(loss, var_list=[var])
      if in_cond:
        train_ops.append(tf.cond(tf.constant(True),
                                 lambda o=opt, gv=grads: o.apply_gradients(gv),
                                 tf.no_op))
      else:
        train_ops.append(opt.apply_gradients(grads))
    train_d, train_g = train_ops
    with tf.control_dependencies([batch]):
      train_d = tf.group(train_d, tf.identity(batch))
    restart = tf.group(scale.assign(init_scale), good.assign(0),
                       bad.assign(start_bad))
    state = [scale, good, bad]

    def read(sess):
      s, gd, bd = sess.run(state)
      return [float(s), int(gd), int(bd)]

    result = {"separate": [], "batches": [], "coruns": []}
    with tf.compat.v1.Session() as sess:
      sess.run(tf.compat.v1.global_variables_initializer())
      sess.run(restart)
      for which in SCHEDULE:
        if which == "D":
          _, seen = sess.run([train_d, batch], {weight: 1.0})
          result["batches"].append(float(seen))
        else:
          sess.run(train_g)  # No feed: G needs nothing of D.
        result["separate"].append(read(sess))
      for _ in range(coruns):
        sess.run(restart)
        sess.run([train_d, train_g], {weight: 1.0})
        result["coruns"].append(read(sess))
    return result


def _run_v1(config, in_cond, coruns):
  """The scenario under `disable_v2_behavior()`, and TF 1.15's separate runs.

  Returns:
    `(result, tf115_result)`; TF 1.15's has no co-runs (it lost updates).
  """
  args = (config, in_cond, coruns)
  script = textwrap.dedent("""
      import json
      import tensorflow as tf
      tf.compat.v1.disable_v2_behavior()
      import shared_manager_test as t
      print("RESULT=" + json.dumps([
          t.shared_manager_scenario(*{!r}),
          t.shared_manager_scenario({!r}, {!r}, 0, t.harness.ORACLE)]))
      """).format(args, config, in_cond)
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2",
             PYTHONPATH=os.pathsep.join([_REPO, _TESTS_DIR]))
  proc = forkserver.run_python(["-c", script], env=env,
                               capture_output=True, text=True, timeout=300,
                               check=False)
  lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULT=")]
  if proc.returncode or not lines:
    raise AssertionError("scenario failed:\n" + proc.stderr[-4000:])
  return json.loads(lines[-1][len("RESULT="):])


def _final(config, flags):
  init_scale, incr, decr, start_bad = CONFIGS[config]
  s, gd, bd = policy_reference.exponential_policy(
      flags, init_scale, incr, decr, 2, 0.5, good=0, bad=start_bad)[-1]
  return [float(s), int(gd), int(bd)]


class SharedManagerTest(tf.test.TestCase, parameterized.TestCase):

  @parameterized.product(behaviour=["v2", "v1"], in_cond=[False, True],
                         config=list(CONFIGS))
  def test_shared_manager(self, behaviour, in_cond, config):
    coruns = 50
    if behaviour == "v1":
      result, tf115_result = _run_v1(config, in_cond, coruns)
    else:
      result = shared_manager_scenario(config, in_cond, coruns)
      tf115_result = shared_manager_scenario(config, in_cond, 0,
                                             harness.ORACLE)
    # Separate runs: TF 1.15's optimizer and manager, run for run.
    self.assertEqual(tf115_result["separate"], result["separate"])

    # Separate runs: TF 1.15's policy, step for step, over the interleaved
    # flags (D finite, G not).
    init_scale, incr, decr, start_bad = CONFIGS[config]
    expected = policy_reference.exponential_policy(
        [which == "D" for which in SCHEDULE], init_scale, incr, decr, 2, 0.5,
        good=0, bad=start_bad)
    self.assertEqual([[float(s), int(gd), int(bd)] for s, gd, bd in expected],
                     result["separate"])
    # G's runs pulled no batch from D's pipeline.
    self.assertEqual([float(i) for i in range(SCHEDULE.count("D"))],
                     result["batches"])

    # Co-runs: always one of the two serial orders, never a lost update.
    d_then_g = _final(config, [True, False])
    g_then_d = _final(config, [False, True])
    self.assertLen(result["coruns"], coruns)
    for state in result["coruns"]:
      self.assertIn(state, [d_then_g, g_then_d])
    # The config can tell: one lost update (G's in "d_counts", D's in
    # "d_grows") leaves a state no serial order leaves.
    lost = [_final(config, [True]), _final(config, [False])]
    self.assertLen([s for s in lost if s not in (d_then_g, g_then_d)], 1)

  def test_one_mutex_per_state_held_by_every_update(self):
    # Every update of a state in a graph holds the state's mutex (threads
    # may run any train op concurrently); each state has its own, shared by
    # all of its updates; a jit-compiled step takes none (XLA holds the
    # variables' locks itself).
    def mutexes_reached_from(op):
      seen, pending, found = set(), [op], set()
      while pending:
        op = pending.pop()
        if op in seen:
          continue
        seen.add(op)
        if op.type == "MutexV2":
          found.add(op)
        pending.extend(op.control_inputs)
        pending.extend(t.op for t in op.inputs)
      return found

    def train_op(manager, w):
      return mp.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(0.1),
          manager).minimize(tf.square(w))

    with tf.Graph().as_default():
      manager = mp.ExponentialUpdateLossScaleManager(8, 2)
      other = mp.ExponentialUpdateLossScaleManager(8, 2)
      w = tf.compat.v1.get_variable("w", initializer=1.0)
      first, second = train_op(manager, w), train_op(manager, w)
      third = train_op(other, w)
      self.assertLen(mutexes_reached_from(first), 1)
      self.assertEqual(mutexes_reached_from(first),
                       mutexes_reached_from(second))
      self.assertLen(mutexes_reached_from(third), 1)
      self.assertNotEqual(mutexes_reached_from(first),
                          mutexes_reached_from(third))

      @tf.function(jit_compile=True)
      def compiled():
        manager.update_loss_scale(tf.constant(True))
        return tf.constant(0)

      graph = compiled.get_concrete_function().graph
      self.assertEqual([], [op for op in graph.get_operations()
                            if op.type.startswith("Mutex")])

  def test_checkpoint_saves_log_no_serialization_warning(self):
    # The lock is a bare mutex resource: nothing in the graph's collections
    # that a MetaGraph cannot hold (tf.CriticalSection's executions are
    # such a thing, and every Saver.save warned about them).
    messages = []

    class Handler(logging.Handler):

      def emit(self, record):
        messages.append(record.getMessage())

    handler = Handler()
    tf_logger = logging.getLogger("tensorflow")
    tf_logger.addHandler(handler)
    try:
      with tf.Graph().as_default():
        manager = mp.ExponentialUpdateLossScaleManager(8, 2)
        w = tf.compat.v1.get_variable("w", initializer=1.0)
        for _ in range(2):
          mp.LossScaleOptimizer(
              tf.compat.v1.train.GradientDescentOptimizer(0.1),
              manager).minimize(tf.square(w))
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session() as sess:
          sess.run(tf.compat.v1.global_variables_initializer())
          saver.save(sess, os.path.join(tempfile.mkdtemp(), "ckpt"))
    finally:
      tf_logger.removeHandler(handler)
    self.assertEqual([], [m for m in messages if "serializing" in m])


if __name__ == "__main__":
  tf.test.main()
