# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Tests for the TF1 loss-scale managers (loss_scale_manager.py)."""

import os
import tempfile
import textwrap

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import policy_reference
from contrib_mixed_precision import loss_scale_manager as lsm
from contrib_mixed_precision import skip_decision
import forkserver

MODES = ("graph", "eager", "function")
FLOAT32_MAX = float(np.finfo(np.float32).max)


def _state(manager):
  return [manager._loss_scale, manager._num_good_steps, manager._num_bad_steps]


def run_flags(make_manager, flags, mode):
  """Drives a fresh manager with `flags`; returns (scale, good, bad) per step.

  Args:
    make_manager: A zero-argument callable building the manager.
    flags: Python bools, one per step.
    mode: "graph" (a Session over a placeholder), "eager", or "function"
      (one `tf.function` traced once and called per step).
  """
  if mode == "graph":
    with tf.Graph().as_default():
      manager = make_manager()
      flag = tf.compat.v1.placeholder(tf.bool, [])
      update_op = manager.update_loss_scale(flag)
      assert isinstance(update_op, tf.Operation), update_op
      with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        out = []
        for f in flags:
          sess.run(update_op, {flag: f})
          scale, good, bad = sess.run(_state(manager))
          out.append((float(scale), int(good), int(bad)))
        return out
  manager = make_manager()
  if mode == "function":
    returned = []

    @tf.function
    def step(f):
      returned.append(manager.update_loss_scale(f))

    update = lambda f: step(tf.constant(f))
  else:
    update = manager.update_loss_scale
  out = []
  for f in flags:
    result = update(f)
    if mode == "eager":
      assert result is None, result
    scale, good, bad = (v.numpy() for v in _state(manager))
    out.append((float(scale), int(good), int(bad)))
  if mode == "function":
    assert isinstance(returned[0], tf.Operation), returned
  return out


def scales(trajectory):
  return [s for s, _, _ in trajectory]


class ExponentialUpdateLossScaleManagerTest(tf.test.TestCase,
                                            parameterized.TestCase):

  @parameterized.product(
      mode=MODES,
      case=[
          # The docs/design.md reference tables: init 1, n=2, ratios 2 / 0.5.
          dict(flags=[True] * 6, expected=[1, 2, 2, 4, 4, 8]),
          dict(flags=[True, True, True, False, True, False],
               expected=[1, 2, 2, 2, 2, 1]),
      ])
  def test_reference_trajectories(self, mode, case):
    traj = run_flags(
        lambda: lsm.ExponentialUpdateLossScaleManager(1, 2, 2, 2, 0.5),
        case["flags"], mode)
    self.assertEqual(scales(traj), case["expected"])

  @parameterized.parameters(*MODES)
  def test_caps_at_float32_max(self, mode):
    traj = run_flags(
        lambda: lsm.ExponentialUpdateLossScaleManager(FLOAT32_MAX / 4, 1),
        [True] * 5, mode)
    self.assertEqual(scales(traj), [
        FLOAT32_MAX / 2, FLOAT32_MAX, FLOAT32_MAX, FLOAT32_MAX, FLOAT32_MAX
    ])
    # A growth that would overflow still resets both counters.
    self.assertEqual([(g, b) for _, g, b in traj], [(0, 0)] * 5)

  @parameterized.parameters(*MODES)
  def test_keep_decreasing_until_one(self, mode):
    traj = run_flags(
        lambda: lsm.ExponentialUpdateLossScaleManager(16, 2, 2, 2, 0.5),
        [False] * 10, mode)
    self.assertEqual(scales(traj), [16, 8, 8, 4, 4, 2, 2, 1, 1, 1])

  @parameterized.parameters(*MODES)
  def test_good_step_keeps_bad(self, mode):
    # Bad steps accumulate across good ones: F, T, F shrinks on the 3rd step.
    traj = run_flags(
        lambda: lsm.ExponentialUpdateLossScaleManager(8, 10, 2, 2, 0.5),
        [False, True, False], mode)
    self.assertEqual(traj, [(8.0, 0, 1), (8.0, 1, 1), (4.0, 0, 0)])

  @parameterized.parameters(*MODES)
  def test_every_step(self, mode):
    traj = run_flags(
        lambda: lsm.ExponentialUpdateLossScaleManager(4, 1, 1, 2, 0.5),
        [True, True, False, True, False, False], mode)
    self.assertEqual(scales(traj), [8, 16, 8, 16, 8, 4])

  @parameterized.parameters(*MODES)
  def test_alternating(self, mode):
    flags = [True, False] * 6
    make = lambda: lsm.ExponentialUpdateLossScaleManager(2**10, 2, 3, 2, 0.8)
    self.assertEqual(
        run_flags(make, flags, mode),
        policy_reference.exponential_policy(flags, 2**10, 2, 3, 2, 0.8))

  @parameterized.parameters(*MODES)
  def test_default_arguments_match_tf115(self, mode):
    # decr_every_n_nan_or_inf=2, incr_ratio=2, decr_ratio=0.8.
    flags = [False, False, True, True, True, False, False]
    self.assertEqual(
        run_flags(lambda: lsm.ExponentialUpdateLossScaleManager(1000.0, 3),
                  flags, mode),
        policy_reference.exponential_policy(flags, 1000.0, 3))

  # Random configurations over the whole valid range, random flag sequences
  # and both sides (manager and LossScale): tests/policy_property_test.py.

  @parameterized.parameters(*MODES)
  def test_largest_step_counts_never_grow_or_shrink(self, mode):
    # 2**31 - 1 steps are never reached: the scale must stay put. (Before,
    # counts at or above 2**31 wrapped when compared with the int32 counter,
    # and sys.maxsize, meant as "never", doubled the scale every step.)
    flags = [True] * 3 + [False] * 3
    self.assertEqual(
        run_flags(lambda: lsm.ExponentialUpdateLossScaleManager(
            64, 2**31 - 1, 2**31 - 1), flags, mode),
        [(64.0, 1, 0), (64.0, 2, 0), (64.0, 3, 0), (64.0, 0, 1),
         (64.0, 0, 2), (64.0, 0, 3)])

  def test_shared_manager_updates_in_one_run_are_never_lost(self):
    # Two optimizers sharing one manager, both run in one session.run (a
    # GAN's `sess.run([train_d, train_g])`): each update must see the
    # other's result. Unserialized, both read 1024 and the last write won
    # (2048 or 512 after the step).
    with tf.Graph().as_default():
      manager = lsm.ExponentialUpdateLossScaleManager(1024, 1, 1, 2, 0.5)
      d_update = manager.update_loss_scale(tf.constant(True))
      g_update = manager.update_loss_scale(tf.constant(False))
      reset = tf.compat.v1.variables_initializer(manager.variables())
      serial = policy_reference.exponential_policy([True, False], 1024, 1, 1,
                                                   2, 0.5)[-1]
      self.assertEqual(serial, (1024.0, 0, 0))
      with tf.compat.v1.Session() as sess:
        results = set()
        for _ in range(200):
          sess.run(reset)
          sess.run([d_update, g_update])
          scale, good, bad = sess.run(_state(manager))
          results.add((float(scale), int(good), int(bad)))
      self.assertEqual(results, {serial})

  def test_keyword_and_positional_forms(self):
    # The forms legacy code uses (shared/clients/README.md).
    managers = [
        lsm.ExponentialUpdateLossScaleManager(
            init_loss_scale=2**32, incr_every_n_steps=1000,
            decr_every_n_nan_or_inf=2, decr_ratio=0.5),
        lsm.ExponentialUpdateLossScaleManager(2**32, 1000),
        lsm.ExponentialUpdateLossScaleManager(16.0, 32),
        lsm.ExponentialUpdateLossScaleManager(5000, 100),
        lsm.ExponentialUpdateLossScaleManager(128, 100),
    ]
    self.assertEqual(
        [float(m.get_loss_scale().numpy()) for m in managers],
        [2.0**32, 2.0**32, 16.0, 5000.0, 128.0])
    self.assertEqual(managers[0].loss_scale.decr_ratio, 0.5)
    self.assertEqual(managers[1].loss_scale.decr_ratio, 0.8)

  def test_variables_names_dtypes_and_collections(self):
    with tf.Graph().as_default() as g:
      with tf.compat.v1.name_scope("mp"):
        first = lsm.ExponentialUpdateLossScaleManager(8, 2)
      second = lsm.ExponentialUpdateLossScaleManager(8, 2)
      third = lsm.ExponentialUpdateLossScaleManager(8, 2)
      self.assertEqual([v.name for v in first.variables()],
                       ["mp/loss_scale:0", "mp/good_steps:0",
                        "mp/bad_steps:0"])
      self.assertEqual([v.name for v in second.variables()],
                       ["loss_scale:0", "good_steps:0", "bad_steps:0"])
      self.assertEqual([v.name for v in third.variables()],
                       ["loss_scale_1:0", "good_steps_1:0", "bad_steps_1:0"])
      self.assertEqual([v.dtype.base_dtype for v in first.variables()],
                       [tf.float32, tf.int32, tf.int32])
      global_vars = g.get_collection(tf.compat.v1.GraphKeys.GLOBAL_VARIABLES)
      trainable = g.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES)
      for manager in (first, second, third):
        for v in manager.variables():
          self.assertIn(v, global_vars)
          self.assertNotIn(v, trainable)
      # get_loss_scale() is the variable itself, as in TF 1.15.
      self.assertIs(first.get_loss_scale(), first.variables()[0])

  def test_ref_variables_under_v1_behavior(self):
    # Legacy hooks fetch 'loss_scale:0' by name; that needs ref variables,
    # the default kind under disable_v2_behavior().
    program = textwrap.dedent("""
        import tensorflow as tf
        tf.compat.v1.disable_v2_behavior()
        import contrib_mixed_precision as mp
        manager = mp.ExponentialUpdateLossScaleManager(2**15, 1, 1, 2, 0.5)
        update = manager.update_loss_scale(tf.constant(False))
        assert not isinstance(manager.get_loss_scale(),
                              tf.__internal__.CompositeTensor), type(
                                  manager.get_loss_scale())
        with tf.compat.v1.Session() as sess:
          sess.run(tf.compat.v1.global_variables_initializer())
          sess.run(update)
          print("FETCHED", sess.run("loss_scale:0"),
                type(manager.get_loss_scale()).__name__)
        """)
    out = forkserver.run_python(["-c", program],
                                capture_output=True, text=True, timeout=120)
    self.assertEqual(out.returncode, 0, out.stderr[-3000:])
    self.assertIn("FETCHED 16384.0 RefVariable", out.stdout)

  def test_works_in_a_second_graph(self):
    with tf.Graph().as_default():
      manager = lsm.ExponentialUpdateLossScaleManager(4, 1, 1, 2, 0.5)
      first_graph_vars = manager.variables()
    with tf.Graph().as_default() as second:
      # Estimator builds a new graph per train() call: state is created
      # lazily there, from the initial values.
      update = manager.update_loss_scale(tf.constant(True))
      second_vars = manager.variables()
      for v in second_vars:
        self.assertIs(v.graph, second)
      self.assertNotEqual([id(v) for v in second_vars],
                          [id(v) for v in first_graph_vars])
      with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(update)
        self.assertEqual(sess.run(manager.get_loss_scale()), 8.0)

  def test_state_is_created_outside_function_and_cond(self):
    with tf.Graph().as_default() as g:
      manager = lsm.ExponentialUpdateLossScaleManager(4, 1, 1, 2, 0.5)
    with tf.Graph().as_default() as g:
      flag = tf.compat.v1.placeholder(tf.bool, [])
      # First use in this graph is inside a cond branch: the variables must
      # still be plain graph variables, initialisable outside the branch.
      op = tf.cond(flag, lambda: tf.group(manager.update_loss_scale(True)),
                   tf.no_op)
      variables = manager.variables()
      self.assertLen(variables, 3)
      for v in variables:
        self.assertIn(v, g.get_collection(
            tf.compat.v1.GraphKeys.GLOBAL_VARIABLES))
      with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(op, {flag: True})
        self.assertEqual(sess.run(manager.get_loss_scale()), 8.0)

  def test_saver_round_trip(self):
    ckpt = os.path.join(tempfile.mkdtemp(dir=self.get_temp_dir()), "model")
    with tf.Graph().as_default():
      manager = lsm.ExponentialUpdateLossScaleManager(2**20, 3, 2, 2, 0.5)
      flag = tf.compat.v1.placeholder(tf.bool, [])
      update = manager.update_loss_scale(flag)
      saver = tf.compat.v1.train.Saver()
      with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        for f in [False, True, True, False, False, True, True]:
          sess.run(update, {flag: f})
        saved = sess.run(_state(manager))
        saver.save(sess, ckpt)
    expected = policy_reference.exponential_policy(
        [False, True, True, False, False, True, True], 2**20, 3, 2, 2, 0.5)[-1]
    self.assertEqual((float(saved[0]), int(saved[1]), int(saved[2])),
                     expected)
    self.assertEqual(expected, (2.0**19, 2, 1))
    reader = tf.compat.v1.train.NewCheckpointReader(ckpt)
    self.assertEqual(
        reader.get_variable_to_dtype_map(),
        {"loss_scale": tf.float32, "good_steps": tf.int32,
         "bad_steps": tf.int32})
    with tf.Graph().as_default():
      restored = lsm.ExponentialUpdateLossScaleManager(1, 3, 2, 2, 0.5)
      update = restored.update_loss_scale(True)
      with tf.compat.v1.Session() as sess:
        tf.compat.v1.train.Saver().restore(sess, ckpt)
        self.assertEqual([x.item() for x in sess.run(_state(restored))],
                         [2.0**19, 2, 1])
        sess.run(update)  # The third good step grows the restored scale.
        self.assertEqual(sess.run(restored.get_loss_scale()), 2.0**20)

  def test_checkpoint_round_trip(self):
    manager = lsm.ExponentialUpdateLossScaleManager(2**20, 3, 2, 2, 0.5)
    for f in [False, True, True, False, False, True, True]:
      manager.update_loss_scale(f)
    path = tf.train.Checkpoint(loss_scale=manager.loss_scale).save(
        os.path.join(self.get_temp_dir(), "ckpt"))
    restored = lsm.ExponentialUpdateLossScaleManager(1, 3, 2, 2, 0.5)
    tf.train.Checkpoint(loss_scale=restored.loss_scale).restore(
        path).assert_consumed()
    self.assertEqual([v.numpy().item() for v in restored.variables()],
                     [2.0**19, 2, 1])

  def test_checkpoint_restore_before_variables_exist_in_graph(self):
    # A deferred restore: the object is restored before a graph creates its
    # variables; they pick up the saved values when created.
    manager = lsm.ExponentialUpdateLossScaleManager(64, 3, 2, 2, 0.5)
    manager.update_loss_scale(False)
    manager.update_loss_scale(True)
    path = tf.train.Checkpoint(loss_scale=manager.loss_scale).save(
        os.path.join(self.get_temp_dir(), "deferred"))
    with tf.Graph().as_default():
      restored = lsm.ExponentialUpdateLossScaleManager(1, 3, 2, 2, 0.5)
      status = tf.train.Checkpoint(loss_scale=restored.loss_scale).restore(
          path)
      with tf.compat.v1.Session() as sess:
        status.initialize_or_restore(sess)
        self.assertEqual([x.item() for x in sess.run(_state(restored))],
                         [64.0, 1, 1])

  @parameterized.parameters(*MODES)
  def test_reset_stats(self, mode):
    def make():
      return lsm.ExponentialUpdateLossScaleManager(8, 5, 5, 2, 0.5)
    if mode == "graph":
      with tf.Graph().as_default():
        manager = make()
        steps = [manager.update_loss_scale(f) for f in (True, False, True)]
        reset = manager._reset_stats()
        with tf.compat.v1.Session() as sess:
          sess.run(tf.compat.v1.global_variables_initializer())
          for op in steps:
            sess.run(op)
          self.assertEqual(sess.run(_state(manager)[1:]), [1, 1])
          sess.run(reset)
          self.assertEqual(sess.run(_state(manager)[1:]), [0, 0])
      return
    manager = make()
    for f in (True, False, True):
      manager.update_loss_scale(f)
    self.assertEqual([v.numpy() for v in _state(manager)[1:]], [1, 1])
    if mode == "function":
      tf.function(lambda: manager._reset_stats() and None)()
    else:
      self.assertIsNone(manager._reset_stats())
    self.assertEqual([v.numpy() for v in _state(manager)[1:]], [0, 0])


class _TF115StyleManager(lsm.ExponentialUpdateLossScaleManager):
  """A TF 1.15-era subclass that never calls the base constructor."""

  def __init__(self, init_loss_scale, incr_every_n_steps):  # pylint: disable=super-init-not-called
    self._incr_every_n_steps = incr_every_n_steps
    self._decr_every_n_nan_or_inf = 1
    self._incr_ratio = 4
    self._decr_ratio = 0.25
    self._loss_scale = tf.compat.v1.Variable(
        float(init_loss_scale), name="my_scale", trainable=False)
    self._num_good_steps = tf.compat.v1.Variable(0, name="my_good",
                                                 trainable=False)
    self._num_bad_steps = tf.compat.v1.Variable(0, name="my_bad",
                                                trainable=False)


class _TwoMethodManager(lsm.LossScaleManager):
  """A user manager implementing only the two abstract methods."""

  def __init__(self):
    self.calls = []
    self._scale = tf.compat.v1.Variable(256.0, trainable=False)

  def get_loss_scale(self):
    return self._scale

  def update_loss_scale(self, finite_grads):
    self.calls.append(finite_grads)
    return self._scale.assign(self._scale / 2)


class SubclassTest(tf.test.TestCase, parameterized.TestCase):

  @parameterized.parameters(*MODES)
  def test_subclass_without_super_init_uses_its_attributes(self, mode):
    flags = [True, True, False, True, True, True]
    traj = run_flags(lambda: _TF115StyleManager(2.0, 2), flags, mode)
    self.assertEqual(
        traj, policy_reference.exponential_policy(flags, 2.0, 2, 1, 4, 0.25))

  def test_subclass_without_super_init_names_its_variables(self):
    with tf.Graph().as_default():
      manager = _TF115StyleManager(2.0, 2)
      self.assertEqual([v.name for v in manager.variables()],
                       ["my_scale:0", "my_good:0", "my_bad:0"])
      self.assertIs(manager.get_loss_scale(), manager._loss_scale)

  def test_subclass_missing_attribute_says_what_to_set(self):

    class Broken(lsm.ExponentialUpdateLossScaleManager):

      def __init__(self):  # pylint: disable=super-init-not-called
        pass

    with self.assertRaisesRegex(AttributeError, "must set it itself"):
      Broken().get_loss_scale()

  def test_two_method_subclass(self):
    manager = _TwoMethodManager()
    manager.update_loss_scale(True)
    self.assertEqual(manager.get_loss_scale().numpy(), 128.0)
    self.assertEqual(manager.calls, [True])
    self.assertEqual(manager.variables(), [])

  def test_abstract_base_cannot_be_instantiated(self):
    with self.assertRaises(TypeError):
      lsm.LossScaleManager()  # pylint: disable=abstract-class-instantiated


class FixedLossScaleManagerTest(tf.test.TestCase, parameterized.TestCase):

  @parameterized.parameters(8192, 128., 2**15, 5000, 1)
  def test_get_loss_scale(self, value):
    manager = lsm.FixedLossScaleManager(value)
    scale = manager.get_loss_scale()
    self.assertEqual(scale.dtype, tf.float32)
    self.assertEqual(scale.numpy(), float(value))
    self.assertIsInstance(manager.loss_scale,
                          tf.compat.v1.mixed_precision.FixedLossScale)
    self.assertEqual(manager.loss_scale().numpy(), float(value))
    self.assertEqual(manager.variables(), [])

  def test_no_misleading_deprecation_notice(self):
    # TF logs "FixedLossScale is deprecated, use Keras" on first use; the
    # user never called it, so building a manager must not show it.
    program = ("import contrib_mixed_precision as mp\n"
               "mp.FixedLossScaleManager(128)\n"
               "mp.LossScaleManager.from_loss_scale('dynamic')\n"
               "import tensorflow as tf\n"
               "print('LEVEL', tf.get_logger().level)\n")
    out = forkserver.run_python(["-c", program],
                                capture_output=True, text=True, timeout=120)
    self.assertEqual(out.returncode, 0, out.stderr[-3000:])
    self.assertNotIn("deprecat", out.stderr.lower())
    # The logger's level is restored afterwards.
    self.assertIn("LEVEL 0", out.stdout)

  @parameterized.parameters(*MODES)
  def test_update_never_changes_the_scale(self, mode):
    if mode == "graph":
      with tf.Graph().as_default():
        manager = lsm.FixedLossScaleManager(128)
        op = manager.update_loss_scale(tf.constant(False))
        self.assertIsInstance(op, tf.Operation)
        with tf.compat.v1.Session() as sess:
          sess.run(op)
          self.assertEqual(sess.run(manager.get_loss_scale()), 128.0)
      return
    manager = lsm.FixedLossScaleManager(128)
    if mode == "eager":
      self.assertIsNone(manager.update_loss_scale(False))
    else:
      tf.function(lambda: manager.update_loss_scale(False) and None)()
    self.assertEqual(manager.get_loss_scale().numpy(), 128.0)


class BadInputTest(tf.test.TestCase, parameterized.TestCase):

  @parameterized.parameters(
      (0.5, ValueError, "must be a number >= 1.0 .*, but got 0.5 of type"),
      (0, ValueError, "must be a number >= 1.0 .*, but got 0 of type int"),
      (-3, ValueError, "must be a number >= 1.0"),
      (float("nan"), ValueError, "but got nan of type float"),
      (float("inf"), ValueError, "but got inf of type float"),
      (1e39, ValueError, r"<= 3.40282347e\+38 \(float32 max\), but got 1e\+39"),
      (10**400, ValueError, "float32 max"),
      (True, TypeError, "got True of type bool"),
      ("128", TypeError, "got '128' of type str"),
      (None, TypeError, "got None of type NoneType"),
  )
  def test_fixed_loss_scale(self, value, error, message):
    with self.assertRaisesRegex(error, "`loss_scale`.*" + message):
      lsm.FixedLossScaleManager(value)

  @parameterized.parameters(
      (dict(init_loss_scale=0), ValueError,
       r"`init_loss_scale` must be a number >= 1.17549435e-38 \(the "
       "smallest normal float32\\)"),
      (dict(init_loss_scale=1e-40), ValueError,
       "`init_loss_scale` must be .*, but got 1e-40"),
      (dict(init_loss_scale=-1.0), ValueError, "`init_loss_scale` must be"),
      (dict(init_loss_scale=float("nan")), ValueError,
       "`init_loss_scale` must be .*got nan"),
      (dict(init_loss_scale=float("inf")), ValueError,
       "`init_loss_scale` must be .*got inf"),
      (dict(init_loss_scale=1e39), ValueError,
       "`init_loss_scale` must be .*float32 max.*got 1e\\+39"),
      (dict(init_loss_scale="big"), TypeError, "`init_loss_scale` must be a"),
      (dict(init_loss_scale=False), TypeError, "`init_loss_scale` must be a"),
      (dict(incr_every_n_steps=0), ValueError,
       r"`incr_every_n_steps` must be an int in \[1, 2147483647\].*got 0"),
      (dict(incr_every_n_steps=2**31), ValueError,
       r"`incr_every_n_steps` must be an int in \[1, 2147483647\]"
       r".*got 2147483648"),
      (dict(incr_every_n_steps=2.5), TypeError,
       "`incr_every_n_steps` must be an int.*got 2.5"),
      (dict(incr_every_n_steps=True), TypeError,
       "`incr_every_n_steps` must be an int"),
      (dict(decr_every_n_nan_or_inf=0), ValueError,
       "`decr_every_n_nan_or_inf` must be an int.*got 0"),
      (dict(decr_every_n_nan_or_inf="2"), TypeError,
       "`decr_every_n_nan_or_inf` must be an int"),
      (dict(incr_ratio=0.5), ValueError, "`incr_ratio` must be a number >= 1"),
      (dict(incr_ratio=float("inf")), ValueError,
       "`incr_ratio` must be .*got inf"),
      (dict(decr_ratio=0), ValueError,
       "`decr_ratio` must be a number >= 1.17549435e-38"),
      (dict(decr_ratio=1e-50), ValueError, "`decr_ratio` must be .*<= 1.0"),
      (dict(decr_ratio=1.5), ValueError, "`decr_ratio` must be .*<= 1.0"),
      (dict(decr_ratio=-0.5), ValueError, "but got -0.5"),
      (dict(decr_ratio=float("nan")), ValueError, "but got nan"),
      (dict(decr_ratio=None), TypeError, "`decr_ratio` must be a number"),
  )
  def test_exponential_arguments(self, override, error, message):
    kwargs = dict(init_loss_scale=2**15, incr_every_n_steps=1000)
    kwargs.update(override)
    with self.assertRaisesRegex(error, message):
      lsm.ExponentialUpdateLossScaleManager(**kwargs)

  @parameterized.parameters(
      ("yes", "scalar bool tensor, but got a string tensor"),
      (1.0, "scalar bool tensor, but got a float32"),
      ([True, False], "shape \\(2,\\)"),
  )
  def test_update_flag(self, flag, message):
    for manager in (lsm.ExponentialUpdateLossScaleManager(4, 2),
                    lsm.FixedLossScaleManager(4)):
      with self.assertRaisesRegex(TypeError, "`finite_grads`.*" + message):
        manager.update_loss_scale(flag)

  @parameterized.parameters(
      (object(), TypeError, "got <object"),
      ("static", TypeError,
       "`loss_scale` must be .*'dynamic', but got 'static' "
       "of type str. 'dynamic' is the only string"),
      (0.5, ValueError, "must be a number >= 1.0"),
      (None, TypeError, "got None"),
  )
  def test_from_loss_scale(self, value, error, message):
    with self.assertRaisesRegex(error, message):
      lsm.LossScaleManager.from_loss_scale(value)


class AdapterTest(tf.test.TestCase, parameterized.TestCase):

  @parameterized.parameters(*MODES)
  def test_dynamic_loss_scale_follows_its_own_policy(self, mode):
    flags = [True, True, True, False, False, True, True]
    traj = run_flags_adapter(flags, mode)
    self.assertEqual(traj, policy_reference.dynamic_policy(flags, 8, 2, 2.0))
    # TF 1.15's exponential policy would differ on the same flags.
    self.assertNotEqual(
        traj, scales(policy_reference.exponential_policy(flags, 8, 2, 2, 2,
                                                         0.5)))

  def test_dynamic_string(self):
    manager = lsm.LossScaleManager.from_loss_scale("dynamic")
    self.assertIsInstance(manager.loss_scale,
                          tf.compat.v1.mixed_precision.DynamicLossScale)
    self.assertEqual(manager.get_loss_scale().numpy(), 2.0**15)
    self.assertEqual(
        sorted(v.name for v in manager.variables()),
        ["current_loss_scale:0", "good_steps:0"])

  def test_number_becomes_fixed_manager(self):
    manager = lsm.LossScaleManager.from_loss_scale(512)
    self.assertIsInstance(manager, lsm.FixedLossScaleManager)
    self.assertEqual(manager.get_loss_scale().numpy(), 512.0)

  def test_round_trip_between_manager_and_loss_scale(self):
    manager = lsm.ExponentialUpdateLossScaleManager(64, 3, 2, 2, 0.5)
    loss_scale = manager.loss_scale
    self.assertIsInstance(loss_scale, tf.compat.v1.mixed_precision.LossScale)
    config = loss_scale.get_config()
    rebuilt = type(loss_scale).from_config(config)
    self.assertEqual(rebuilt.get_config(), config)
    back = lsm.LossScaleManager.from_loss_scale(rebuilt)
    self.assertIsInstance(back, lsm.ExponentialUpdateLossScaleManager)
    self.assertIs(back.loss_scale, rebuilt)
    self.assertIs(lsm.LossScaleManager.from_loss_scale(manager), manager)
    fixed = lsm.LossScaleManager.from_loss_scale(
        tf.compat.v1.mixed_precision.FixedLossScale(32))
    self.assertIsInstance(fixed, lsm.FixedLossScaleManager)
    self.assertEqual(fixed.get_loss_scale().numpy(), 32.0)

  def test_user_loss_scale_subclass(self):

    class CountingLossScale(tf.compat.v1.mixed_precision.LossScale):
      """Halves on bad steps, counts good ones in Python."""

      def __init__(self):
        super().__init__()
        self.value = tf.Variable(1024.0, trainable=False)
        self.good = 0

      def __call__(self):
        return tf.convert_to_tensor(self.value)

      def update(self, grads):
        finite = skip_decision.all_finite(grads)
        if bool(finite):
          self.good += 1
        else:
          self.value.assign(self.value / 2)
        return None, finite

      def get_config(self):
        return {}

    manager = lsm.LossScaleManager.from_loss_scale(CountingLossScale())
    for f in [True, False, True, False]:
      manager.update_loss_scale(f)
    self.assertEqual(manager.get_loss_scale().numpy(), 256.0)
    self.assertEqual(manager.loss_scale.good, 2)


def run_flags_adapter(flags, mode):
  """Scales after each flag for a DynamicLossScale(8, 2, 2) behind a manager."""

  def make():
    return lsm.LossScaleManager.from_loss_scale(
        tf.compat.v1.mixed_precision.DynamicLossScale(
            initial_loss_scale=8, increment_period=2, multiplier=2.0))

  if mode == "graph":
    with tf.Graph().as_default():
      manager = make()
      flag = tf.compat.v1.placeholder(tf.bool, [])
      op = manager.update_loss_scale(flag)
      with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        out = []
        for f in flags:
          sess.run(op, {flag: f})
          out.append(float(sess.run(manager.get_loss_scale())))
        return out
  manager = make()
  update = manager.update_loss_scale
  if mode == "function":
    fn = tf.function(lambda f: manager.update_loss_scale(f) and None)
    update = lambda f: fn(tf.constant(f))
  out = []
  for f in flags:
    update(f)
    out.append(float(manager.get_loss_scale().numpy()))
  return out


_DISTRIBUTED_PROGRAM = textwrap.dedent("""
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import contrib_mixed_precision as mp

    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
      manager = mp.ExponentialUpdateLossScaleManager(64, 2, 2, 2, 0.5)
    print("KIND", type(manager.get_loss_scale()).__name__)

    @tf.function
    def step(poison_replica):
      def replica_fn():
        rid = tf.distribute.get_replica_context().replica_id_in_sync_group
        manager.update_loss_scale(tf.not_equal(rid, poison_replica))
      strategy.run(replica_fn)

    for poison in [-1, -1, 1, 0, -1]:   # -1: no replica is poisoned
      step(tf.constant(poison))
      print("STATE", *[v.numpy().item() for v in manager.variables()])
    """)


class DistributionTest(tf.test.TestCase):

  def test_mirrored_update_moves_once_with_consensus(self):
    out = forkserver.run_python(["-c", _DISTRIBUTED_PROGRAM],
                                capture_output=True, text=True, timeout=300)
    self.assertEqual(out.returncode, 0, out.stderr[-3000:])
    self.assertIn("KIND Mirrored", out.stdout)
    states = [
        tuple(float(x) for x in line.split()[1:])
        for line in out.stdout.splitlines() if line.startswith("STATE")
    ]
    # A step is finite only if every replica is; the state moves once.
    flags = [True, True, False, False, True]
    expected = policy_reference.exponential_policy(flags, 64, 2, 2, 2, 0.5)
    self.assertEqual(states, [tuple(float(x) for x in e) for e in expected])


if __name__ == "__main__":
  tf.test.main()
