# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Tests for `LossScaleHook` in MonitoredTrainingSession and Estimator."""

import ast
import collections
import glob
import json
import os
import re
import textwrap

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import contrib_mixed_precision
from contrib_mixed_precision import graph_keys
from contrib_mixed_precision import hooks
from contrib_mixed_precision import loss_scale_manager as lsm
from contrib_mixed_precision import loss_scale_optimizer as lso
import forkserver

try:
  import tensorflow_estimator  # pylint: disable=g-import-not-at-top,unused-import  # noqa: F401
  _ESTIMATOR = tf.compat.v1.estimator
except ImportError:
  _ESTIMATOR = None
_NO_ESTIMATOR = ("tensorflow_estimator is not importable (TF >= 2.16 removed "
                 "Estimator); the Estimator tests run on TF 2.15")

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The specification: a schedule of finite (T) and non-finite (F) steps under
# ExponentialUpdateLossScaleManager(8, incr_every_n_steps=3,
# decr_every_n_nan_or_inf=1, incr_ratio=2, decr_ratio=0.5), the scale each
# step ran at, and what the hook reports every 4 steps:
# (step, loss scale, skipped in the window, skipped in total).
_FLAGS = [1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1]
_SCALES = [8, 8, 8, 16, 8, 4, 4, 4, 8, 8, 4, 2]
_REPORTS = [(4, 16.0, 1, 1), (8, 4.0, 1, 2), (12, 2.0, 2, 4)]

_LOG_LINE = re.compile(
    r"step (\d+)(?: \(global_step \d+\))?: loss scale ([0-9.e+]+); skipped "
    r"(\d+) of the last \d+ steps, (\d+) of \d+ in total")


def _exponential():
  return lsm.ExponentialUpdateLossScaleManager(8, 3, 1, 2, 0.5)


def _fixed():
  return lsm.FixedLossScaleManager(128)


def _build(flags, make_manager, after=1, coeff=1.0):
  """A train op whose step i has finite gradients iff `flags[i]`.

  Steps after the schedule are finite if `after` is 1, non-finite if 0. The
  loss `coeff * sqrt(v + t)` stays finite (Estimator's NanTensorHook checks
  it), while its gradient `0.5 * coeff / sqrt(t)` is Inf when `t` is 0. The
  learning rate is 0, so the model never moves and only the schedule decides.

  Returns:
    `(train_op, loss)`.
  """
  global_step = tf.compat.v1.train.get_or_create_global_step()
  counter = tf.compat.v1.Variable(0, trainable=False, name="counter")
  table = tf.constant([float(f) for f in flags] + [float(after)])
  t = tf.gather(table, tf.minimum(counter, len(flags)))
  v = tf.compat.v1.get_variable("v", initializer=0.0)
  loss = coeff * tf.sqrt(v + t)
  opt = lso.LossScaleOptimizer(
      tf.compat.v1.train.GradientDescentOptimizer(0.0), make_manager())
  train_op = opt.minimize(loss, global_step=global_step)
  with tf.control_dependencies([train_op]):
    return tf.group(counter.assign_add(1)), loss


def _read_scalars(logdir):
  """`{tag: [(step, value), ...]}` from the event files in `logdir`."""
  scalars = {}
  for path in sorted(glob.glob(os.path.join(logdir, "events.out.tfevents*"))):
    for event in tf.compat.v1.train.summary_iterator(path):
      for value in event.summary.value:
        scalars.setdefault(value.tag, []).append(
            (event.step, value.simple_value))
  return scalars


def _reports(log_output):
  # The log prints float32 scales to 9 significant digits: exact in float32.
  return [(int(m.group(1)), float(np.float32(m.group(2))), int(m.group(3)),
           int(m.group(4)))
          for m in map(_LOG_LINE.search, log_output) if m]


class LossScaleHookTest(tf.test.TestCase, parameterized.TestCase):

  def _run_monitored(self, flags, make_manager, hook, steps, after=1,
                     coeff=1.0):
    """Runs `steps` steps in a MonitoredTrainingSession; returns the count."""
    with tf.Graph().as_default():
      train_op, _ = _build(flags, make_manager, after, coeff)
      ran = 0
      with tf.compat.v1.train.MonitoredTrainingSession(
          hooks=[hook], log_step_count_steps=None) as sess:
        while ran < steps and not sess.should_stop():
          ran += 1
          sess.run(train_op)
      return ran

  def _train_estimator(self, flags, make_manager, hook, steps, after=1):
    def model_fn(features, labels, mode):
      del features, labels  # Unused.
      train_op, loss = _build(flags, make_manager, after)
      return _ESTIMATOR.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      training_hooks=[hook])

    def input_fn():
      return tf.data.Dataset.from_tensors(({"x": [0.0]}, [0.0])).repeat()

    config = _ESTIMATOR.RunConfig(log_step_count_steps=None,
                                  save_summary_steps=None,
                                  save_checkpoints_steps=None,
                                  save_checkpoints_secs=None)
    estimator = _ESTIMATOR.Estimator(
        model_fn, model_dir=os.path.join(self.get_temp_dir(), "model"),
        config=config)
    estimator.train(input_fn, steps=steps)

  def test_schedule_is_the_specification(self):
    # The table above must follow the exponential policy, step by step.
    self.assertLen(_SCALES, len(_FLAGS))
    with tf.Graph().as_default():
      train_op, _ = _build(_FLAGS, _exponential)
      finite = tf.compat.v1.get_collection(lso.GraphKeys.FINITE_GRADS)[0]
      scale = tf.compat.v1.get_collection(lso.GraphKeys.LOSS_SCALE)[0]
      with self.cached_session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        got = [sess.run([train_op, finite, scale])[1:] for _ in _FLAGS]
    self.assertEqual([bool(f) for f in _FLAGS], [bool(f) for f, _ in got])
    self.assertEqual([float(s) for s in _SCALES], [float(s) for _, s in got])

  def test_logs_and_summaries_match_scale_and_skips_in_monitored_session(self):
    summary_dir = os.path.join(self.get_temp_dir(), "mts")
    hook = hooks.LossScaleHook(every_n_steps=4, summary_dir=summary_dir)
    with self.assertLogs(logger="absl", level="INFO") as logs:
      ran = self._run_monitored(_FLAGS, _exponential, hook, len(_FLAGS))
    self.assertEqual(len(_FLAGS), ran)
    self.assertEqual(_REPORTS, _reports(logs.output))
    self._assert_summaries(summary_dir)

  @parameterized.named_parameters(("exponential", _exponential),
                                  ("fixed", _fixed))
  def test_healthy_run_is_never_stopped(self, make_manager):
    hook = hooks.LossScaleHook(every_n_steps=10, max_skips_at_min_scale=1)
    with self.assertLogs(logger="absl", level="INFO") as logs:
      ran = self._run_monitored([], make_manager, hook, 30)
    self.assertEqual(30, ran)
    self.assertEqual([0, 0, 0], [r[3] for r in _reports(logs.output)])

  def test_skips_above_the_floor_do_not_stop_the_run(self):
    # 8 * 2**127 overflows float32: three skips lower the scale to 2**124
    # (8 * 2**124 = 2**127 < float32 max), where training goes on. Even
    # with a limit of 1, nothing stops.
    def make_manager():
      return lsm.ExponentialUpdateLossScaleManager(2.0**127, 1000, 1, 2, 0.5)

    hook = hooks.LossScaleHook(every_n_steps=10, max_skips_at_min_scale=1)
    with self.assertLogs(logger="absl", level="INFO") as logs:
      ran = self._run_monitored([], make_manager, hook, 10, coeff=8.0)
    self.assertEqual(10, ran)
    self.assertEqual([(10, 2.0**124, 3, 3)], _reports(logs.output))

  @parameterized.named_parameters(
      # Scales 8, 4, 2, then 1 from the fourth step on: 3 + 5 steps.
      ("exponential", _exponential, 5, 8, 1.0),
      # A fixed scale cannot go lower: every skip counts.
      ("fixed", _fixed, 3, 3, 128.0))
  def test_stuck_run_stops_monitored_session(self, make_manager, limit,
                                             expected_steps, scale):
    hook = hooks.LossScaleHook(every_n_steps=100,
                               max_skips_at_min_scale=limit)
    steps = []

    def run():
      steps.append(self._run_monitored([], make_manager, hook, 1000, after=0))

    with self.assertRaisesRegex(
        hooks.LossScaleStuckError,
        r"the last {} steps were all skipped .* loss scale was {:g}, the "
        r"lowest .* usually a real NaN or Inf in the model".format(
            limit, scale)) as cm:
      with self.assertLogs(logger="absl", level="INFO") as logs:
        run()
    self.assertEqual([], steps)  # The exception left the session's block.
    self.assertEqual((scale, limit, expected_steps),
                     (cm.exception.loss_scale, cm.exception.skipped_steps,
                      cm.exception.step))
    self.assertNotIsInstance(cm.exception, tf.errors.OpError)
    # The window up to the stop is reported before raising.
    self.assertEqual([(expected_steps, scale, expected_steps,
                       expected_steps)], _reports(logs.output))

  @parameterized.named_parameters(("exponential", _exponential),
                                  ("fixed", _fixed))
  def test_stuck_run_is_not_stopped_without_a_limit(self, make_manager):
    hook = hooks.LossScaleHook(every_n_steps=25)
    with self.assertLogs(logger="absl", level="INFO") as logs:
      ran = self._run_monitored([], make_manager, hook, 25, after=0)
    self.assertEqual(25, ran)
    self.assertEqual(25, _reports(logs.output)[-1][3])

  def test_logs_and_summaries_match_scale_and_skips_in_estimator(self):
    if _ESTIMATOR is None:
      self.skipTest(_NO_ESTIMATOR)
    summary_dir = os.path.join(self.get_temp_dir(), "estimator")
    hook = hooks.LossScaleHook(every_n_steps=4, summary_dir=summary_dir)
    with self.assertLogs(logger="absl", level="INFO") as logs:
      # global_step advances on the 8 applied steps only: 12 runs.
      self._train_estimator(_FLAGS, _exponential, hook, steps=8)
    self.assertEqual(_REPORTS, _reports(logs.output))
    self._assert_summaries(summary_dir)

  def test_stuck_run_stops_estimator(self):
    if _ESTIMATOR is None:
      self.skipTest(_NO_ESTIMATOR)
    hook = hooks.LossScaleHook(every_n_steps=100, max_skips_at_min_scale=5)
    with self.assertRaisesRegex(hooks.LossScaleStuckError,
                                "loss scale was 1, the lowest") as cm:
      self._train_estimator([], _exponential, hook, steps=1000, after=0)
    self.assertEqual(8, cm.exception.step)

  def test_healthy_estimator_run_is_never_stopped(self):
    if _ESTIMATOR is None:
      self.skipTest(_NO_ESTIMATOR)
    hook = hooks.LossScaleHook(every_n_steps=10, max_skips_at_min_scale=1)
    with self.assertLogs(logger="absl", level="INFO") as logs:
      self._train_estimator([], _exponential, hook, steps=20)
    self.assertEqual([(10, 64.0, 0, 0), (20, 512.0, 0, 0)],
                     _reports(logs.output))

  def test_without_loss_scale_optimizer_raises(self):
    with tf.Graph().as_default():
      v = tf.compat.v1.get_variable("v", initializer=1.0)
      train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(v)
      del train_op
      with self.assertRaisesRegex(RuntimeError,
                                  "found no LossScaleOptimizer in the graph"):
        tf.compat.v1.train.MonitoredTrainingSession(
            hooks=[hooks.LossScaleHook()])

  @parameterized.named_parameters(
      ("zero_steps", dict(every_n_steps=0), ValueError, "`every_n_steps`"),
      ("float_steps", dict(every_n_steps=1.5), TypeError, "`every_n_steps`"),
      ("bool_limit", dict(max_skips_at_min_scale=True), TypeError,
       "`max_skips_at_min_scale`"),
      ("negative_limit", dict(max_skips_at_min_scale=-1), ValueError,
       "`max_skips_at_min_scale`"),
      ("summary_dir", dict(summary_dir=3), TypeError, "`summary_dir`"))
  def test_invalid_arguments_raise(self, kwargs, error, name):
    with self.assertRaisesRegex(error, name):
      hooks.LossScaleHook(**kwargs)

  def test_works_under_disable_v2_behavior(self):
    # Ref variables and v1 control flow; only a subprocess may switch modes.
    script = textwrap.dedent("""
        import tensorflow as tf
        tf.compat.v1.disable_v2_behavior()
        from absl import logging
        from contrib_mixed_precision import hooks
        import hooks_test as t
        logging.set_verbosity(logging.INFO)
        with tf.Graph().as_default():
          train_op, _ = t._build(t._FLAGS, t._exponential)
          hook = hooks.LossScaleHook(every_n_steps=4,
                                     summary_dir={summary_dir!r})
          with tf.compat.v1.train.MonitoredTrainingSession(
              hooks=[hook], log_step_count_steps=None) as sess:
            for _ in t._FLAGS:
              sess.run(train_op)
        """).format(summary_dir=os.path.join(self.get_temp_dir(), "v1"))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2",
               PYTHONPATH=os.pathsep.join(
                   [_REPO, os.path.dirname(os.path.abspath(__file__))]))
    result = forkserver.run_python(["-c", script], env=env,
                                   capture_output=True, text=True, timeout=300,
                                   check=False)
    self.assertEqual(0, result.returncode, result.stderr[-3000:])
    self.assertEqual(_REPORTS, _reports(result.stderr.splitlines()))
    self._assert_summaries(os.path.join(self.get_temp_dir(), "v1"))

  def _assert_summaries(self, summary_dir):
    scalars = _read_scalars(summary_dir)
    self.assertEqual([(s, scale) for s, scale, _, _ in _REPORTS],
                     scalars[hooks.LOSS_SCALE_TAG])
    self.assertEqual([(s, float(n)) for s, _, n, _ in _REPORTS],
                     scalars[hooks.SKIPPED_STEPS_TAG])
    self.assertEqual([(s, float(n)) for s, _, _, n in _REPORTS],
                     scalars[hooks.SKIPPED_STEPS_TOTAL_TAG])


_OPTIMIZER_LOG_LINE = re.compile(
    r"LossScaleHook(?: \[optimizer (\d+)\])?: step (\d+)(?: \(global_step "
    r"\d+\))?: loss scale ([0-9.e+]+); skipped (\d+) of the last \d+ steps, "
    r"(\d+) of \d+ in total")


def _reports_by_optimizer(log_output):
  """`{optimizer index: [(step, scale, skipped, total)]}` from the log."""
  reports = {}
  for m in map(_OPTIMIZER_LOG_LINE.search, log_output):
    if m:
      reports.setdefault(int(m.group(1) or 0), []).append(
          (int(m.group(2)), float(np.float32(m.group(3))), int(m.group(4)),
           int(m.group(5))))
  return reports


def input_pipeline_scenario(last_step=6):
  """Trains from a tf.data pipeline, reading global_step and evaluating
  between steps, until StopAtStepHook stops it.

  Returns:
    The batches the training runs saw, and the hook's log lines.
  """
  with tf.Graph().as_default():
    global_step = tf.compat.v1.train.get_or_create_global_step()
    x = tf.compat.v1.data.make_one_shot_iterator(
        tf.data.Dataset.range(100).map(lambda i: tf.cast(i, tf.float32))
    ).get_next()
    w = tf.compat.v1.get_variable("w", initializer=1.0)
    opt = lso.LossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(0.0), _exponential())
    train_op = opt.minimize(tf.square(w * x), global_step=global_step)
    evaluation = tf.identity(w * 2.0)  # Needs no input and no gradient.
    hooks_ = [hooks.LossScaleHook(every_n_steps=2),
              tf.compat.v1.train.StopAtStepHook(last_step=last_step)]
    seen = []
    with _CapturedLog() as log:
      with tf.compat.v1.train.MonitoredTrainingSession(
          hooks=hooks_, log_step_count_steps=None) as sess:
        while not sess.should_stop():
          seen.append(float(sess.run({"train": train_op, "x": x})["x"]))
          if sess.should_stop():
            break
          sess.run(global_step)
          sess.run(evaluation)
          sess.run(w.name)
    return {"seen": seen, "log": log.lines}


def accumulation_scenario(with_plain_optimizer):
  """An optimizer applied inside an outer `tf.cond` (gradient accumulation).

  Returns:
    The RuntimeError of the session's creation if any, the batches of
    finite flags the hook logged, and its log lines.
  """
  with tf.Graph().as_default():
    apply_now = tf.compat.v1.placeholder_with_default(False, [])
    u = tf.compat.v1.get_variable("u", initializer=1.0)
    accumulating = lso.LossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(0.1), _fixed())
    grads = accumulating.compute_gradients(tf.square(u), var_list=[u])
    accumulate = tf.cond(apply_now,
                         lambda: accumulating.apply_gradients(grads),
                         tf.no_op)
    fetches = [accumulate]
    if with_plain_optimizer:
      w = tf.compat.v1.get_variable("w", initializer=1.0)
      plain = lso.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(0.1), _fixed())
      fetches.append(plain.minimize(tf.square(w), var_list=[w]))
    with _CapturedLog() as log:
      try:
        with tf.compat.v1.train.MonitoredTrainingSession(
            hooks=[hooks.LossScaleHook(every_n_steps=2)],
            log_step_count_steps=None) as sess:
          for step in range(4):
            sess.run(fetches, {apply_now: step % 2 == 1})
          final_u = float(sess.run(u))
      except RuntimeError as e:
        return {"error": str(e), "log": log.lines}
    return {"error": None, "log": log.lines, "u": final_u}


class _CapturedLog(object):
  """Collects absl's log lines (any thread, any level) while active."""

  def __enter__(self):
    import logging  # pylint: disable=g-import-not-at-top
    self.lines = []
    lines = self.lines

    class Handler(logging.Handler):

      def emit(self, record):
        lines.append(record.levelname + ":" + record.getMessage())

    self._handler = Handler()
    self._logger = logging.getLogger("absl")
    self._level = self._logger.level
    self._logger.setLevel(logging.INFO)
    self._logger.addHandler(self._handler)
    return self

  def __exit__(self, *exc):
    self._logger.removeHandler(self._handler)
    self._logger.setLevel(self._level)


def _run_scenario(name, *args):
  """Runs a scenario of this file under disable_v2_behavior(); its result."""
  script = textwrap.dedent("""
      import json
      import tensorflow as tf
      tf.compat.v1.disable_v2_behavior()
      import hooks_test as t
      print("RESULT=" + json.dumps(t.{}(*{!r})))
      """).format(name, args)
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2",
             PYTHONPATH=os.pathsep.join(
                 [_REPO, os.path.dirname(os.path.abspath(__file__))]))
  result = forkserver.run_python(["-c", script], env=env,
                                 capture_output=True, text=True, timeout=300,
                                 check=False)
  lines = [l for l in result.stdout.splitlines() if l.startswith("RESULT=")]
  if result.returncode or not lines:
    raise AssertionError("scenario failed:\n" + result.stderr[-4000:])
  return json.loads(lines[-1][len("RESULT="):])


class HookOnlyObservesTest(tf.test.TestCase, parameterized.TestCase):
  """Runs that do not execute an optimizer's step are left exactly alone."""

  @parameterized.named_parameters(("v2", False), ("v1", True))
  def test_input_pipeline_batches_are_consumed_by_training_only(self, v1):
    result = (_run_scenario("input_pipeline_scenario") if v1 else
              input_pipeline_scenario())
    # Each training run saw the next batch: reads of global_step, of a
    # variable by name and an evaluation in between pulled none.
    self.assertEqual([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], result["seen"])
    # Six steps counted (scale 8 for three, then 16), none of them skipped.
    self.assertEqual({0: [(2, 8.0, 0, 0), (4, 16.0, 0, 0), (6, 16.0, 0, 0)]},
                     _reports_by_optimizer(result["log"]))

  def test_reads_without_feeds_work_for_a_placeholder_model(self):
    with tf.Graph().as_default():
      global_step = tf.compat.v1.train.get_or_create_global_step()
      x = tf.compat.v1.placeholder(tf.float32, [None])
      w = tf.compat.v1.get_variable("w", initializer=1.0)
      opt = lso.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(0.1), _exponential())
      train_op = opt.minimize(tf.reduce_sum(tf.square(w * x)),
                              global_step=global_step)
      hook = hooks.LossScaleHook(every_n_steps=2)
      with _CapturedLog() as log:
        with tf.compat.v1.train.MonitoredTrainingSession(
            hooks=[hook], log_step_count_steps=None) as sess:
          for _ in range(2):
            sess.run(train_op, {x: [1.0, 2.0]})
            # Neither read feeds `x`; each used to run the step's gradients
            # and fail for want of it.
            sess.run(global_step)
            sess.run(w)
          self.assertEqual(2, sess.run(global_step))
    self.assertEqual({0: [(2, 8.0, 0, 0)]}, _reports_by_optimizer(log.lines))

  def test_gan_running_one_optimizer_is_never_stopped_for_the_other(self):
    with tf.Graph().as_default():
      d = tf.compat.v1.get_variable("d", initializer=1.0)
      g = tf.compat.v1.get_variable("g", initializer=1.0)
      d_opt = lso.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(0.1), _fixed())
      g_opt = lso.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(0.1), _fixed())
      d_train = d_opt.minimize(tf.square(d), var_list=[d])
      # The generator's gradient is always NaN: at its fixed scale every
      # skip counts towards the limit of 3.
      g_train = g_opt.minimize(tf.sqrt(-tf.abs(g) - 1.0), var_list=[g])
      hook = hooks.LossScaleHook(every_n_steps=10, max_skips_at_min_scale=3)
      with _CapturedLog() as log:
        with self.assertRaises(hooks.LossScaleStuckError) as cm:
          with tf.compat.v1.train.MonitoredTrainingSession(
              hooks=[hook], log_step_count_steps=None) as sess:
            for _ in range(50):
              sess.run(d_train)
            self.assertFalse(sess.should_stop())
            self.assertAllClose(0.8**50, sess.run(d))
            # The generator is stuck: stopped at its third step, not before.
            g_runs = 0
            while g_runs < 10:
              g_runs += 1
              sess.run(g_train)
    self.assertEqual(3, g_runs)
    self.assertEqual((128.0, 3, 3), (cm.exception.loss_scale,
                                     cm.exception.skipped_steps,
                                     cm.exception.step))
    self.assertIn("the last 3 steps of optimizer 1", str(cm.exception))
    # Each optimizer's steps are its own: 50 of D, none skipped; 3 of G.
    self.assertEqual(
        {0: [(10, 128.0, 0, 0), (20, 128.0, 0, 0), (30, 128.0, 0, 0),
             (40, 128.0, 0, 0), (50, 128.0, 0, 0)],
         1: [(3, 128.0, 3, 3)]},
        _reports_by_optimizer(log.lines))

  def test_gan_steps_are_counted_per_optimizer(self):
    # Two discriminator steps per generator step, sometimes together.
    with tf.Graph().as_default():
      d = tf.compat.v1.get_variable("d", initializer=1.0)
      g = tf.compat.v1.get_variable("g", initializer=1.0)
      d_train = lso.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(0.1),
          _fixed()).minimize(tf.square(d), var_list=[d])
      g_train = lso.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(0.1),
          _exponential()).minimize(tf.square(g), var_list=[g])
      with _CapturedLog() as log:
        with tf.compat.v1.train.MonitoredTrainingSession(
            hooks=[hooks.LossScaleHook(every_n_steps=4)],
            log_step_count_steps=None) as sess:
          for _ in range(4):
            sess.run(d_train)
            sess.run([d_train, g_train])
    # 8 runs, two windows of 4; D ran 8 steps, G 4 (scale 8, 8, 8, 16).
    self.assertEqual(
        {0: [(4, 128.0, 0, 0), (8, 128.0, 0, 0)],
         1: [(2, 8.0, 0, 0), (4, 16.0, 0, 0)]},
        _reports_by_optimizer(log.lines))

  @parameterized.named_parameters(
      ("op", lambda train_op, loss: train_op),
      ("name", lambda train_op, loss: train_op.name),
      ("nested", lambda train_op, loss: {"a": [loss, (train_op,)]}),
      ("mixed_key_dict", lambda train_op, loss: {0: train_op, "loss": loss}),
      ("namedtuple",
       lambda train_op, loss: collections.namedtuple("F", "t l")(train_op,
                                                                 loss)),
      ("group", lambda train_op, loss: tf.group(train_op, tf.no_op())),
      ("with_sparse_tensor",
       lambda train_op, loss: (tf.sparse.from_dense([[loss]]), train_op)),
      ("control_dependency", lambda train_op, loss: _after(train_op, loss)))
  def test_every_way_of_fetching_the_step_counts(self, fetch):
    with tf.Graph().as_default():
      train_op, loss = _build([1, 0, 1], _exponential)
      fetches = fetch(train_op, loss)
      with _CapturedLog() as log:
        with tf.compat.v1.train.MonitoredTrainingSession(
            hooks=[hooks.LossScaleHook(every_n_steps=3)],
            log_step_count_steps=None) as sess:
          for _ in range(3):
            sess.run(fetches)
            sess.run(loss)  # Forward only: not a step.
    # Scales 8, 8 (NaN: halved), 4.
    self.assertEqual({0: [(3, 4.0, 1, 1)]}, _reports_by_optimizer(log.lines))

  def test_begin_creates_no_variable_and_no_op(self):
    with tf.Graph().as_default() as graph:
      _build([1], _exponential)
      variables = list(tf.compat.v1.global_variables())
      ops = len(graph.get_operations())
      hooks.LossScaleHook(every_n_steps=1, max_skips_at_min_scale=2).begin()
      self.assertEqual(variables, tf.compat.v1.global_variables())
      self.assertLen(graph.get_operations(), ops)

  @parameterized.named_parameters(("v2", False), ("v1", True))
  def test_apply_inside_an_outer_cond_is_reported_at_begin(self, v1):
    # Control flow v1 (a TF1 cond body) or v2 (a branch function): the
    # step's tensors cannot be fetched from outside.
    where = ("a TF1 tf.cond or tf.while_loop body" if v1 else
             "a tf.function or control-flow-v2 tf.cond branch")
    run = ((lambda *a: _run_scenario("accumulation_scenario", *a)) if v1 else
           accumulation_scenario)
    alone = run(False)
    self.assertIn("LossScaleHook cannot observe any LossScaleOptimizer",
                  alone["error"])
    self.assertIn("'GradientDescent' built inside " + where, alone["error"])
    beside = run(True)
    # Runs with the accumulating step, applied or not, work; only the plain
    # optimizer is counted, and a warning names the other.
    self.assertIsNone(beside["error"])
    # Applied at the second and fourth runs: u * (1 - 0.1 * 2) twice.
    self.assertAllClose(0.8**2, beside["u"])
    self.assertEqual({0: [(2, 128.0, 0, 0), (4, 128.0, 0, 0)]},
                     _reports_by_optimizer(beside["log"]))
    warnings = [l for l in beside["log"] if l.startswith("WARNING:")]
    self.assertLen(warnings, 1)
    self.assertIn("observes 1 LossScaleOptimizer step(s) but not these",
                  warnings[0])
    self.assertIn(where, warnings[0])

  def test_hook_and_optimizer_share_only_the_contract_module(self):
    def imported(module):
      tree = ast.parse(open(module.__file__).read())
      names = set()
      for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
          names.update("{}.{}".format(node.module, a.name) for a in node.names)
        elif isinstance(node, ast.Import):
          names.update(a.name for a in node.names)
      return names

    self.assertNotIn("contrib_mixed_precision.loss_scale_optimizer",
                     imported(hooks))
    self.assertNotIn("contrib_mixed_precision.hooks", imported(lso))
    self.assertIs(graph_keys.GraphKeys, contrib_mixed_precision.GraphKeys)
    self.assertIs(graph_keys.GraphKeys, lso.GraphKeys)

  def test_unobserved_steps_read_back_from_a_meta_graph_are_reported(self):
    # A MetaGraph round trip turns the collection's strings into bytes.
    with tf.Graph().as_default():
      _build([1], _fixed)
      tf.compat.v1.add_to_collection(
          lso.GraphKeys.UNOBSERVED_STEPS,
          b"LossScaleOptimizer 'Adam' built inside a TF1 tf.cond")
      with self.assertLogs(logger="absl", level="WARNING") as logs:
        hooks.LossScaleHook().begin()
    self.assertIn("but not these, whose tensors cannot be fetched: "
                  "LossScaleOptimizer 'Adam' built inside a TF1 tf.cond",
                  logs.output[0])

  def test_apply_inside_a_function_is_reported_at_begin(self):
    with tf.Graph().as_default():
      u = tf.compat.v1.get_variable("u", initializer=1.0, use_resource=True)
      opt = lso.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(0.1), _fixed())

      @tf.function
      def train_step():
        opt.apply_gradients([(tf.constant(1.0), u)])

      train_step()
      with self.assertRaisesRegex(
          RuntimeError, "cannot observe any LossScaleOptimizer in this graph: "
          "LossScaleOptimizer 'GradientDescent' built inside a tf.function"):
        tf.compat.v1.train.MonitoredTrainingSession(
            hooks=[hooks.LossScaleHook()])


class _LevelPreservingLog(object):
  """Collects absl's records as absl lets them through, level unchanged.

  Unlike `assertLogs` and `_CapturedLog`, it leaves the logger's level alone,
  so it sees exactly what a user's console would.
  """

  def __enter__(self):
    import logging as std_logging  # pylint: disable=g-import-not-at-top
    self.records = []
    records = self.records

    class Handler(std_logging.Handler):

      def emit(self, record):
        records.append((record.levelname, record.getMessage()))

    self._handler = Handler(level=std_logging.DEBUG)
    self._logger = std_logging.getLogger("absl")
    self._logger.addHandler(self._handler)
    return self

  def __exit__(self, *exc):
    self._logger.removeHandler(self._handler)


class WhatTheUserSeesTest(tf.test.TestCase):
  """The hook's messages under absl's verbosity, default or set."""

  def setUp(self):
    super().setUp()
    from absl import logging  # pylint: disable=g-import-not-at-top
    self._absl_logging = logging
    self.addCleanup(logging.set_verbosity, logging.get_verbosity())

  def _run(self, hook, steps, after=1):
    # pylint: disable=protected-access
    return LossScaleHookTest._run_monitored(self, [], _exponential, hook,
                                            steps, after=after)

  def test_default_verbosity_says_once_how_to_see_the_hidden_lines(self):
    self._absl_logging.set_verbosity(self._absl_logging.WARNING)  # absl's.
    hook = hooks.LossScaleHook(every_n_steps=2)
    with _LevelPreservingLog() as log:
      self._run(hook, 4)
      self._run(hook, 4)  # A second session: begin() runs again.
    self.assertEqual(1, len(log.records), log.records)
    level, message = log.records[0]
    self.assertEqual("WARNING", level)
    self.assertIn("every 2 steps at INFO", message)
    self.assertIn("absl.logging.set_verbosity(absl.logging.INFO)", message)

  def test_lines_show_without_the_warning_once_info_is_shown(self):
    self._absl_logging.set_verbosity(self._absl_logging.INFO)
    with _LevelPreservingLog() as log:
      self._run(hooks.LossScaleHook(every_n_steps=2), 4)
    self.assertEqual(["INFO", "INFO"], [level for level, _ in log.records])
    self.assertEqual([2, 4], [r[0] for r in _reports(
        [message for _, message in log.records])])

  def test_stuck_error_is_logged_at_default_verbosity(self):
    self._absl_logging.set_verbosity(self._absl_logging.WARNING)
    hook = hooks.LossScaleHook(every_n_steps=100, max_skips_at_min_scale=2)
    with _LevelPreservingLog() as log:
      with self.assertRaises(hooks.LossScaleStuckError):
        self._run(hook, 100, after=0)
    self.assertEqual(["WARNING", "ERROR"],
                     [level for level, _ in log.records])
    self.assertIn("LossScaleHook stopped training at step", log.records[1][1])


def _after(train_op, loss):
  with tf.control_dependencies([train_op]):
    return tf.identity(loss)


class SummaryTagsTest(tf.test.TestCase):

  def test_event_file_holds_the_documented_tags(self):
    # The tags are a public contract (dashboards and scripts query them by
    # name): pinned as literal strings, read back from the event file a real
    # two-optimizer run writes, not through the module's constants.
    summary_dir = os.path.join(self.get_temp_dir(), "tags")
    with tf.Graph().as_default():
      d = tf.compat.v1.get_variable("d", initializer=1.0)
      g = tf.compat.v1.get_variable("g", initializer=1.0)
      d_train = lso.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(0.1),
          _fixed()).minimize(tf.square(d), var_list=[d])
      g_train = lso.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(0.1),
          _exponential()).minimize(tf.sqrt(-tf.abs(g) - 1.0), var_list=[g])
      hook = hooks.LossScaleHook(every_n_steps=2, summary_dir=summary_dir)
      with tf.compat.v1.train.MonitoredTrainingSession(
          hooks=[hook], log_step_count_steps=None) as sess:
        for _ in range(2):
          sess.run([d_train, g_train])
    # Optimizer 1's gradient is NaN: scale 8, halved after each skip.
    self.assertEqual(
        {"mixed_precision/loss_scale": [(2, 128.0)],
         "mixed_precision/skipped_steps": [(2, 0.0)],
         "mixed_precision/skipped_steps_total": [(2, 0.0)],
         "mixed_precision/loss_scale_1": [(2, 4.0)],
         "mixed_precision/skipped_steps_1": [(2, 2.0)],
         "mixed_precision/skipped_steps_total_1": [(2, 2.0)]},
        _read_scalars(summary_dir))


if __name__ == "__main__":
  tf.test.main()
