# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Property tests: TF 1.15's exponential policy against an independent model.

Random flag sequences and random configurations over the whole valid range,
extremes included (counts of 1 and 2**31 - 1, counters one step short of
either threshold, scales from the smallest normal float32 to float32 max,
scales at float32 max / incr_ratio, ratios of exactly 1 and float32 max),
are run through both public entry points in graph mode, eager mode and
`tf.function`, and compared step by step with `policy_reference`:

* the TF1 side, `ExponentialUpdateLossScaleManager.update_loss_scale(flag)`;
* the TF2 side, `ExponentialUpdateLossScale.update(grads)`, fed real
  gradients (finite values, NaN, +-Inf), whose `should_apply_gradients` must
  also be exactly the step's finiteness.

Each example builds its graph (or traces its function) once and runs every
step through it. Examples are derandomized, so CI is reproducible.

The TF1 side is also run beside TF 1.15's own manager (`tf115_harness`),
fed the same flags in the same mode: the same state after every step. (The
TF2 side keeps TF 2.0's policy, contract 16: `policy_reference` judges it.)
"""

import json

from absl.testing import parameterized
import hypothesis
from hypothesis import strategies as st
import numpy as np
import tensorflow as tf

import policy_reference
import program_util
import tf115_harness as harness
from contrib_mixed_precision import loss_scale as loss_scale_lib
from contrib_mixed_precision import loss_scale_manager as lsm

INT32_MAX = 2**31 - 1
FLOAT32_MAX = float(np.finfo(np.float32).max)
FLOAT32_TINY = float(np.finfo(np.float32).tiny)  # The smallest normal.
MODES = ("graph", "eager", "function")

_SETTINGS = hypothesis.settings(
    max_examples=30, deadline=None, derandomize=True, database=None,
    suppress_health_check=[hypothesis.HealthCheck.too_slow,
                           hypothesis.HealthCheck.data_too_large])

# -- Strategies ----------------------------------------------------------------

# Small counts make thresholds reachable within a sequence; the extremes and
# the whole int32 range make sure nothing wraps.
_COUNTS = st.one_of(
    st.integers(min_value=1, max_value=4),
    st.sampled_from([1, 2, INT32_MAX - 1, INT32_MAX, np.int64(3),
                     np.int32(INT32_MAX)]),
    st.integers(min_value=1, max_value=INT32_MAX))
_INCR_RATIOS = st.one_of(
    st.sampled_from([1, 1.0, 2, 1.5, 10.0, FLOAT32_MAX, np.float32(3.0),
                     np.int64(3), np.float64(1.0000001)]),
    st.floats(min_value=1.0, max_value=FLOAT32_MAX, width=32))
_DECR_RATIOS = st.one_of(
    st.sampled_from([1, 1.0, 0.5, 0.8, FLOAT32_TINY, np.float32(1e-30),
                     np.float16(0.5), np.float64(0.9999999)]),
    st.floats(min_value=FLOAT32_TINY, max_value=1.0, width=32))
_SCALES = st.one_of(
    st.sampled_from([1, 1.0, FLOAT32_TINY, FLOAT32_MAX, FLOAT32_MAX / 2,
                     2**32, 2**15, np.float32(3.5), np.int64(8)]),
    st.floats(min_value=FLOAT32_TINY, max_value=FLOAT32_MAX, width=32),
    st.integers(min_value=1, max_value=2**127))


def _float32_neighbours(x):
  x = np.float32(x)
  return [float(np.nextafter(x, np.float32(0))), float(x),
          float(np.nextafter(x, np.float32(np.inf)))]


@st.composite
def configurations(draw):
  """A valid configuration, a starting state and a flag sequence."""
  incr_n = draw(_COUNTS)
  decr_n = draw(_COUNTS)
  incr_ratio = draw(_INCR_RATIOS)
  decr_ratio = draw(_DECR_RATIOS)
  # Next to float32 max / incr_ratio, one growth lands on (or just past)
  # float32 max: grown, or kept because it overflowed.
  at_the_edge = [
      s for s in _float32_neighbours(FLOAT32_MAX / float(incr_ratio))
      if FLOAT32_TINY <= s <= FLOAT32_MAX
  ]
  init = draw(st.one_of(_SCALES, st.sampled_from(at_the_edge)))
  # Counters one step short of either threshold, or anywhere below it.
  good = draw(st.one_of(st.just(0), st.just(int(incr_n) - 1),
                        st.integers(min_value=0, max_value=int(incr_n) - 1)))
  bad = draw(st.one_of(st.just(0), st.just(int(decr_n) - 1),
                       st.integers(min_value=0, max_value=int(decr_n) - 1)))
  flags = draw(st.lists(st.booleans(), min_size=1, max_size=16))
  return dict(init=init, incr_n=incr_n, decr_n=decr_n, incr_ratio=incr_ratio,
              decr_ratio=decr_ratio, good=good, bad=bad, flags=flags)


def _expected(config):
  c = config
  return policy_reference.exponential_policy(
      c["flags"], c["init"], c["incr_n"], c["decr_n"], c["incr_ratio"],
      c["decr_ratio"], good=c["good"], bad=c["bad"])


def _gradients(flags, seed):
  """One [3] float32 gradient per flag: finite, or holding a NaN or an Inf."""
  rng = np.random.RandomState(seed)
  out = []
  for finite in flags:
    g = rng.uniform(-1e3, 1e3, size=3).astype(np.float32)
    if not finite:
      g[rng.randint(3)] = rng.choice([np.nan, np.inf, -np.inf])
    out.append(g)
  return out


# -- Runners: one graph or one traced function per example --------------------


def _make(config, tf2_side, tf115=False):
  args = (config["init"], config["incr_n"], config["decr_n"],
          config["incr_ratio"], config["decr_ratio"])
  if tf2_side:
    return loss_scale_lib.ExponentialUpdateLossScale(*args)
  if tf115:
    return harness.Library(harness.ORACLE).ExponentialUpdateLossScaleManager(
        *args)
  return lsm.ExponentialUpdateLossScaleManager(*args)


def _state_variables(obj):
  return obj.variables()  # [loss_scale, good_steps, bad_steps], both sides.


def run_graph(config, tf2_side, tf115=False):
  """Returns [(scale, good, bad, should_apply or None)] per step."""
  with tf.Graph().as_default():
    obj = _make(config, tf2_side, tf115)
    scale, good, bad = _state_variables(obj)
    if tf2_side:
      feed = tf.compat.v1.placeholder(tf.float32, [3])
      update_op, should_apply = obj.update([feed])
      fetch_apply = [should_apply]
    else:
      feed = tf.compat.v1.placeholder(tf.bool, [])
      update_op = obj.update_loss_scale(feed)
      fetch_apply = []
    set_counters = [tf.compat.v1.assign(good, config["good"]),
                    tf.compat.v1.assign(bad, config["bad"])]
    inputs = (_gradients(config["flags"], len(config["flags"])) if tf2_side
              else config["flags"])
    out = []
    with tf.compat.v1.Session() as sess:
      sess.run(tf.compat.v1.global_variables_initializer())
      sess.run(set_counters)
      for x in inputs:
        applied = sess.run([update_op] + fetch_apply, {feed: x})[1:]
        s, g, b = sess.run([scale, good, bad])
        out.append((float(s), int(g), int(b),
                    bool(applied[0]) if applied else None))
  return out


def run_eager_or_function(config, tf2_side, mode, tf115=False):
  obj = _make(config, tf2_side, tf115)
  scale, good, bad = _state_variables(obj)
  good.assign(config["good"])
  bad.assign(config["bad"])
  if tf2_side:
    def update(x):
      return obj.update([x])[1]
    # Eager mode takes the NumPy gradient itself (a non-tensor).
    inputs = _gradients(config["flags"], len(config["flags"]))
    spec = tf.TensorSpec([3], tf.float32)
  else:
    def update(x):
      obj.update_loss_scale(x)
    inputs = config["flags"]
    spec = tf.TensorSpec([], tf.bool)
  if mode == "function":
    update = tf.function(update, input_signature=[spec])
    inputs = [tf.constant(x) for x in inputs]
  out = []
  for x in inputs:
    applied = update(x)
    out.append((float(scale.numpy()), int(good.numpy()), int(bad.numpy()),
                bool(applied) if tf2_side else None))
  return out


def run(config, tf2_side, mode, tf115=False):
  """Each step's state; with `tf115`, by TF 1.15's manager (TF1 side)."""
  if mode == "graph":
    return run_graph(config, tf2_side, tf115)
  return run_eager_or_function(config, tf2_side, mode, tf115)


class ExponentialPolicyPropertyTest(tf.test.TestCase, parameterized.TestCase):

  def _check(self, config, tf2_side, mode):
    actual = run(config, tf2_side, mode)
    expected = _expected(config)
    self.assertEqual([a[:3] for a in actual], expected)
    if tf2_side:
      # should_apply_gradients is exactly the step's finiteness.
      self.assertEqual([a[3] for a in actual], config["flags"])
    else:
      # TF 1.15's manager, step for step.
      self.assertEqual(actual, run(config, tf2_side, mode, tf115=True))

  @parameterized.product(mode=MODES, tf2_side=(False, True))
  def test_matches_reference_over_the_whole_range(self, mode, tf2_side):
    @_SETTINGS
    @hypothesis.given(config=configurations())
    def check(config):
      self._check(config, tf2_side, mode)

    check()

  @parameterized.parameters(*MODES)
  def test_long_runs_with_small_counts(self, mode):
    # Long sequences, where the counters reset and refill many times.
    @hypothesis.settings(_SETTINGS, max_examples=10)
    @hypothesis.given(
        config=configurations(),
        flags=st.lists(st.booleans(), min_size=40, max_size=120),
        incr_n=st.integers(min_value=1, max_value=5),
        decr_n=st.integers(min_value=1, max_value=4))
    def check(config, flags, incr_n, decr_n):
      config.update(flags=flags, incr_n=incr_n, decr_n=decr_n,
                    good=min(config["good"], incr_n - 1),
                    bad=min(config["bad"], decr_n - 1))
      self._check(config, False, mode)

    check()

  def test_the_reference_reaches_the_extremes(self):
    # Guards the reference and the strategies: the cap at float32 max, the
    # floor at 1, and a threshold of 2**31 - 1 reached from 2**31 - 2.
    capped = policy_reference.exponential_policy(
        [True], FLOAT32_MAX / 2, 1, incr_ratio=2)
    self.assertEqual(capped, [(FLOAT32_MAX, 0, 0)])
    kept = policy_reference.exponential_policy(
        [True], FLOAT32_MAX, 1, incr_ratio=2)
    self.assertEqual(kept, [(FLOAT32_MAX, 0, 0)])
    floored = policy_reference.exponential_policy(
        [False], 4, 1, decr_every_n_nan_or_inf=1, decr_ratio=FLOAT32_TINY)
    self.assertEqual(floored, [(1.0, 0, 0)])
    grown = policy_reference.exponential_policy(
        [True, True], 8, INT32_MAX, good=INT32_MAX - 2)
    self.assertEqual(grown, [(8.0, INT32_MAX - 1, 0), (16.0, 0, 0)])

  @parameterized.parameters(*MODES)
  def test_counters_at_the_int32_edge(self, mode):
    # Explicitly, in every mode and on both sides: a counter one step short
    # of 2**31 - 1 reaches it (grow, or shrink) without wrapping.
    edge = dict(init=8, incr_n=INT32_MAX, decr_n=INT32_MAX, incr_ratio=2,
                decr_ratio=0.5)
    cases = (
        (dict(good=INT32_MAX - 2, bad=0, flags=[True, True, True]),
         [(8.0, INT32_MAX - 1, 0), (16.0, 0, 0), (16.0, 1, 0)]),
        (dict(good=0, bad=INT32_MAX - 2, flags=[False, True, False, False]),
         [(8.0, 0, INT32_MAX - 1), (8.0, 1, INT32_MAX - 1), (4.0, 0, 0),
          (4.0, 0, 1)]),
    )
    for tf2_side in (False, True):
      for start, expected in cases:
        config = dict(edge, **start)
        self.assertEqual([a[:3] for a in run(config, tf2_side, mode)],
                         expected)
        if not tf2_side:
          self.assertEqual([a[:3] for a in run(config, False, mode, True)],
                           expected)


class ConcurrentStepsTest(tf.test.TestCase, parameterized.TestCase):
  """One train op run from 8 threads: every step counts exactly once.

  Hogwild and A3C scripts run one train op from several threads of one
  Session (or call one step from several threads). TF 1.15's `assign_add`
  counter lost no step there; an update that reads the state and writes it
  back must hold a lock to lose none either. Each mode runs in its own
  process (`tests/programs/threaded_steps.py`): `tf1` needs
  `disable_v2_behavior()`, and threads are best kept out of the test runner.
  """

  THREADS, STEPS = 8, 100

  @parameterized.parameters("graph", "tf1", "function", "eager",
                            "xla_session", "xla_function")
  def test_every_step_of_every_thread_counts(self, mode):
    output = program_util.run_program("threaded_steps.py", mode,
                                      str(self.THREADS), str(self.STEPS),
                                      timeout=600)
    results = json.loads(output.strip().splitlines()[-1])
    total = self.THREADS * self.STEPS
    every = total // 16  # As threaded_steps.py: 16 moves in the run.
    config = dict(incr_every_n_steps=every, decr_every_n_nan_or_inf=every,
                  decr_ratio=0.5)
    grown = policy_reference.exponential_policy([True] * total, 1, **config)
    shrunk = policy_reference.exponential_policy([False] * total, 2**20,
                                                 **config)
    # Every finite step applied exactly once: x = 1, so w = -steps.
    self.assertEqual(results["exponential_finite"],
                     [-float(total)] + [float(v) for v in grown[-1]])
    self.assertEqual(results["exponential_finite"][1], 2.0**16)
    self.assertEqual(results["exponential_nan"],
                     [0.0] + [float(v) for v in shrunk[-1]])
    self.assertEqual(results["exponential_nan"][1], 2.0**4)
    self.assertEqual(results["fixed_finite"], [-float(total)])
    self.assertEqual(results["fixed_nan"], [0.0])


if __name__ == "__main__":
  tf.test.main()
