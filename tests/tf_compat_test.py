# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Fails loudly if TensorFlow moves a private attribute `_tf_compat` uses."""

import importlib
import importlib.util

import tensorflow as tf

from contrib_mixed_precision import _tf_compat

# The v1 optimizers `sparse_rows` updates by rows, with their other
# hyperparameters.
_V1_OPTIMIZERS = (
    (tf.compat.v1.train.GradientDescentOptimizer, {}),
    (tf.compat.v1.train.AdagradOptimizer, {"initial_accumulator_value": 0.5}),
    (tf.compat.v1.train.ProximalGradientDescentOptimizer,
     {"l1_regularization_strength": 0.125,
      "l2_regularization_strength": 0.0625}),
    (tf.compat.v1.train.ProximalAdagradOptimizer,
     {"initial_accumulator_value": 0.5, "l1_regularization_strength": 0.125,
      "l2_regularization_strength": 0.0625}),
)

class TfCompatTest(tf.test.TestCase):

  def test_graph_key(self):
    self.assertIsNone(_tf_compat.graph_key())
    with tf.Graph().as_default() as g:
      key = _tf_compat.graph_key()
      self.assertIsInstance(key, str)
      self.assertEqual(_tf_compat.graph_key(g), key)

  def test_function_graph_shares_outer_key(self):
    with tf.Graph().as_default():
      outer = _tf_compat.graph_key()
      keys = []

      @tf.function
      def fn():
        keys.append(_tf_compat.graph_key())
        self.assertTrue(_tf_compat.is_building_function())
        return tf.constant(0)

      fn.get_concrete_function()
      self.assertEqual(keys, [outer])
      self.assertFalse(_tf_compat.is_building_function())

  def test_can_feed_any_tensor(self):
    seen = {}

    def record():
      seen["graph"] = tf.compat.v1.get_default_graph()
      return tf.constant(0)

    # A TF1 graph (Session.run feeds), a wrapped function's graph
    # (`WrappedFunction.prune` feeds), and a `tf.function`'s (no feeds).
    with tf.Graph().as_default() as graph:
      self.assertTrue(_tf_compat.can_feed_any_tensor(graph))
    tf.compat.v1.wrap_function(record, [])
    self.assertTrue(_tf_compat.can_feed_any_tensor(seen["graph"]))
    tf.compat.v1.wrap_function(record, [], name="named")
    self.assertTrue(_tf_compat.can_feed_any_tensor(seen["graph"]))
    wrapped = tf.compat.v1.wrap_function.__globals__["WrappedGraph"]()
    wrapped.wrap_function(record, [])
    self.assertTrue(_tf_compat.can_feed_any_tensor(seen["graph"]))
    tf.function(record).get_concrete_function()
    self.assertFalse(_tf_compat.can_feed_any_tensor(seen["graph"]))

  def test_outermost_graph(self):
    # In eager mode: the global default graph, also while tracing a function
    # and one of its cond branches (inside tf.init_scope() there,
    # get_default_graph() still returns the function's graph).
    global_graph = tf.compat.v1.get_default_graph()
    seen = []

    @tf.function
    def fn():
      seen.append(_tf_compat.outermost_graph())
      with tf.init_scope():
        seen.append(_tf_compat.outermost_graph())

      def branch():
        seen.append(_tf_compat.outermost_graph())
        return tf.constant(1)

      return tf.cond(tf.constant(True), branch, lambda: tf.constant(2))

    fn.get_concrete_function()
    self.assertLen(seen, 3)
    for graph in seen:
      self.assertIs(graph, global_graph)
    # In a graph: that graph, also from a function traced in it.
    with tf.Graph().as_default() as g:
      self.assertIs(_tf_compat.outermost_graph(), g)
      tf.function(lambda: seen.append(_tf_compat.outermost_graph()) or
                  tf.constant(0)).get_concrete_function()
      self.assertIs(seen[-1], g)

  def test_in_xla_context(self):
    seen = {}

    def record(key):
      seen[key] = _tf_compat.in_xla_context()
      return tf.constant(0.0)

    with tf.Graph().as_default():
      record("graph")
      tf.function(lambda: record("function")).get_concrete_function()
      tf.function(lambda: record("xla"),
                  jit_compile=True).get_concrete_function()

      def nested():
        return tf.cond(tf.constant(True), lambda: record("xla_cond"),
                       lambda: tf.constant(1.0))

      tf.function(nested, jit_compile=True).get_concrete_function()
    self.assertEqual(seen, {"graph": False, "function": False, "xla": True,
                            "xla_cond": True})

  def test_loss_scale_weight_registry(self):
    loss_scale = tf.compat.v1.mixed_precision.DynamicLossScale()
    names = sorted(v.name for v in _tf_compat.loss_scale_weights(loss_scale))
    self.assertEqual(names, ["current_loss_scale:0", "good_steps:0"])
    extra = tf.Variable(3.0)
    _tf_compat.register_loss_scale_weight(loss_scale, "extra", extra, None)
    self.assertIn(extra, _tf_compat.loss_scale_weights(loss_scale))
    with self.assertRaisesRegex(RuntimeError, "already exists"):
      _tf_compat.register_loss_scale_weight(loss_scale, "extra", extra, None)
    # Registered weights are checkpoint dependencies of the LossScale.
    path = tf.train.Checkpoint(ls=loss_scale).save(
        self.get_temp_dir() + "/ckpt")
    self.assertIn("ls/extra/.ATTRIBUTES/VARIABLE_VALUE",
                  [name for name, _ in tf.train.list_variables(path)])

  def test_loss_scale_weight(self):
    loss_scale = tf.compat.v1.mixed_precision.DynamicLossScale(8., 3, 2.)
    counter = _tf_compat.loss_scale_weight(loss_scale, "good_steps")
    self.assertEqual(tf.int64, counter.dtype)
    loss_scale.update([tf.constant(1.0)])
    self.assertEqual(1, int(counter.numpy()))
    self.assertIsNone(_tf_compat.loss_scale_weight(loss_scale, "no_such"))

  def test_step_graph(self):
    seen = {}

    def record(name):
      seen[name] = _tf_compat.step_graph()
      return tf.constant(1.0)

    @tf.function
    def inner():
      return record("nested")

    @tf.function
    def outer(x):
      seen["outer"] = tf.compat.v1.get_default_graph()
      record("body")
      tf.cond(x > 0, lambda: record("cond"), lambda: tf.constant(0.0))
      tf.while_loop(lambda i: i < 2,
                    lambda i: (record("while"), i + 1)[1], [0])
      return inner()

    outer(tf.constant(1.0))
    for name in ("body", "cond", "while"):
      self.assertIs(seen["outer"], seen[name], name)
    # A nested tf.function is a trace of its own.
    self.assertIsNot(seen["outer"], seen["nested"])
    with tf.Graph().as_default() as g:
      self.assertIs(g, _tf_compat.step_graph())

  def test_track_trackable(self):
    opt = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    child = tf.Variable(1.0)
    _tf_compat.track_trackable(opt, child, "child")
    path = tf.train.Checkpoint(opt=opt).save(self.get_temp_dir() + "/t")
    self.assertIn("opt/child/.ATTRIBUTES/VARIABLE_VALUE",
                  [name for name, _ in tf.train.list_variables(path)])


  def test_called_from_keras_tf_optimizer(self):
    # Keras 2 (TF 2.15's tf.keras, or tf-keras) wraps a v1 optimizer in its
    # TFOptimizer; its apply_gradients must be recognised, and nothing else.
    if importlib.util.find_spec("tf_keras") is not None:
      keras2 = importlib.import_module("tf_keras")
    else:
      keras2 = tf.keras
    seen = []

    class Probe(tf.compat.v1.train.GradientDescentOptimizer):

      def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        seen.append(_tf_compat.called_from_keras_tf_optimizer())

    probe = Probe(0.1)
    wrapper = keras2.optimizers.get(probe)
    self.assertEqual("TFOptimizer", type(wrapper).__name__)
    v = tf.Variable(1.0)
    wrapper.apply_gradients([(tf.constant(1.0), v)])
    probe.apply_gradients([(tf.constant(1.0), v)])
    self.assertEqual([True, False], seen)


  def test_keras_loss_scale_optimizer_bases(self):
    kerases = [tf.keras]
    if importlib.util.find_spec("tf_keras") is not None:
      kerases.append(importlib.import_module("tf_keras"))
    for keras in kerases:
      bases = _tf_compat.keras_loss_scale_optimizer_bases(keras)
      public = keras.mixed_precision.LossScaleOptimizer
      self.assertEqual((public,), bases.wrapper_classes)
      if bases.keras3 is not None:
        self.assertIs(public, bases.keras3)
        self.assertIsInstance(keras.optimizers.SGD(), bases.keras3_optimizer)
        continue
      # Keras 2: the unexported subclasses the metaclass builds, one per
      # optimizer family.
      self.assertIs(bases.legacy,
                    type(public(keras.optimizers.legacy.SGD())))
      self.assertIs(bases.v3, type(public(keras.optimizers.SGD())))
      self.assertTrue(issubclass(bases.legacy, public))
      self.assertTrue(issubclass(bases.v3, public))

  def test_create_keras_legacy_optimizer_weights(self):
    package = importlib.import_module(
        tf.keras.optimizers.SGD.__module__.split(".")[0])
    # Keras 2 (TF 2.15's tf.keras) and tf-keras have legacy optimizers.
    kerases = [] if package.__version__.startswith("3") else [tf.keras]
    if importlib.util.find_spec("tf_keras") is not None:
      kerases.append(importlib.import_module("tf_keras"))
    checked = []
    for keras in kerases:
      opt = keras.optimizers.legacy.SGD(0.1, momentum=0.9)
      var = tf.Variable([1.0, 2.0])
      _tf_compat.create_keras_legacy_optimizer_weights(opt, [var])
      checked.append(keras)
      # Created before any apply: iterations, the hyperparameters, the slot.
      self.assertEqual(0, int(opt.iterations.numpy()))
      self.assertIsNotNone(opt.get_slot(var, "momentum"))
    self.assertNotEmpty(checked)  # Every environment has a Keras 2.


  def test_v1_optimizer_tensor(self):
    for make, extra in _V1_OPTIMIZERS:
      with self.subTest(make.__name__), tf.Graph().as_default():
        opt = make(0.25, **extra)
        opt._prepare()  # pylint: disable=protected-access
        # Every hyperparameter the constructor took, as the tensor
        # `_prepare()` made of it.
        expected = dict(extra, learning_rate=0.25)
        expected.pop("initial_accumulator_value", None)
        for name, value in expected.items():
          tensor = _tf_compat.v1_optimizer_tensor(opt, name)
          self.assertIsInstance(tensor, tf.Tensor, name)
          self.assertEqual(value, tf.get_static_value(tensor), name)
        with self.assertRaisesRegex(AttributeError, "`_momentum_tensor`"):
          _tf_compat.v1_optimizer_tensor(opt, "momentum")

  def test_v1_optimizer_use_locking(self):
    for make, extra in _V1_OPTIMIZERS:
      for locking in (False, True):
        with self.subTest((make.__name__, locking)):
          opt = make(0.25, use_locking=locking, **extra)
          self.assertIs(locking, _tf_compat.v1_optimizer_use_locking(opt))

  def test_v1_dense_apply_methods(self):
    for make, _ in _V1_OPTIMIZERS:
      for method in _tf_compat.V1_DENSE_APPLY_METHODS:
        with self.subTest((make.__name__, method)):
          self.assertTrue(callable(getattr(make, method, None)))
          # The optimizer's own update, not the base class's
          # NotImplementedError.
          self.assertIsNot(getattr(tf.compat.v1.train.Optimizer, method),
                           getattr(make, method))

  def test_patched_dense_apply(self):
    for make, extra in _V1_OPTIMIZERS:
      for use_resource in (True, False):
        with self.subTest((make.__name__, use_resource)), \
            tf.Graph().as_default():
          var = tf.compat.v1.get_variable(
              "v", initializer=[1.0, 2.0], use_resource=use_resource)
          opt = make(0.25, **extra)
          calls = []

          def replace(original, calls=calls):
            def recorded(grad, v):
              calls.append(original.__name__)
              return original(grad, v)
            return recorded

          with _tf_compat.patched_dense_apply(opt, replace):
            opt.apply_gradients([(tf.constant([0.5, 0.5]), var)])
          # `apply_gradients` called the replacement of the method for
          # this kind of variable, once, and the instance is as before.
          expected = ("_resource_apply_dense" if use_resource
                      else "_apply_dense")
          self.assertEqual([expected], calls)
          for method in _tf_compat.V1_DENSE_APPLY_METHODS:
            self.assertNotIn(method, vars(opt))

  def test_patched_dense_apply_restores_instance_attributes(self):
    opt = tf.compat.v1.train.GradientDescentOptimizer(0.25)
    own = opt._apply_dense = lambda grad, var: None  # pylint: disable=protected-access
    with _tf_compat.patched_dense_apply(opt, lambda original: "replaced"):
      for method in _tf_compat.V1_DENSE_APPLY_METHODS:
        self.assertEqual("replaced", getattr(opt, method))
    self.assertIs(own, vars(opt)["_apply_dense"])
    self.assertNotIn("_resource_apply_dense", vars(opt))

if __name__ == "__main__":
  tf.test.main()
