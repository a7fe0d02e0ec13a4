# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""What needs Keras 2 (`keras2`) and what needs tf_upgrade_v2 (`tf1_api`).

In-process, on sources written here: no TensorFlow. Each Keras 2 use was
run on TF 2.21's Keras 3 and fails there (tests/upgrade_tf2x_test.py runs
a converted tree that has them, under Keras 3 and tf-keras).
"""

import textwrap

from absl.testing import absltest
from absl.testing import parameterized

from contrib_mp_upgrade import keras2
from contrib_mp_upgrade import tf1_api


def _source(text):
  return textwrap.dedent(text).encode()


class Keras2Test(parameterized.TestCase):

  @parameterized.named_parameters(
      ("add_metric", "model.add_metric(loss, name='l')\n", "`add_metric`"),
      ("add_update", "layer.add_update(op)\n", "`Layer.add_update`"),
      ("fit_generator", "model.fit_generator(gen, steps_per_epoch=2)\n",
       "`Model.fit_generator`"),
      ("legacy_optimizer", "opt = tf.keras.optimizers.legacy.SGD(0.1)\n",
       "`tf.keras.optimizers.legacy.X`"),
      ("legacy_import",
       "from tensorflow.keras.optimizers.legacy import Adam\n",
       "`tf.keras.optimizers.legacy.X`"),
      ("engine", "from keras.engine import data_adapter\n",
       "`keras.engine`"),
      ("learning_phase", "tf.keras.backend.set_learning_phase(1)\n",
       "`tf.keras.backend.set_learning_phase`"),
      ("aggregate_gradients",
       "opt.apply_gradients(pairs, experimental_aggregate_gradients=False)\n",
       "experimental_aggregate_gradients=False)`"),
      ("decay", "opt = tf.keras.optimizers.SGD(0.1, decay=1e-4)\n",
       "`decay=`"),
      ("learning_rate_call", "lr = opt.learning_rate(opt.iterations)\n",
       "`optimizer.learning_rate(step)`"),
      ("layers_experimental",
       "n = tf.keras.layers.experimental.preprocessing.Normalization()\n",
       "`tf.keras.layers.experimental`"),
  )
  def test_each_keras_2_only_use_is_found(self, line, why):
    found = keras2.find(b"import tensorflow as tf\n" + line.encode())
    self.assertLen(found, 1, found)
    self.assertEqual(found[0][0], 2)
    self.assertIn(why, found[0][1])

  def test_keras_3_arguments_need_nothing(self):
    self.assertEqual(keras2.find(_source("""\
        import tensorflow as tf
        opt = tf.keras.optimizers.SGD(0.1, weight_decay=1e-4)
        opt.apply_gradients(pairs, experimental_aggregate_gradients=True)
        schedule = tf.keras.optimizers.schedules.ExponentialDecay(1., 10, .5)
        """)), [])

  def test_a_build_that_reads_a_tensor_shape(self):
    found = keras2.find(_source("""\
        import tensorflow as tf

        class Scale(tf.keras.layers.Layer):

          def build(self, input_shape):
            n = input_shape.as_list()[-1]
            m = input_shape[-1].value
            self.w = self.add_weight("w", shape=(n, m))
        """))
    self.assertEqual([line for line, _ in found], [6, 7])
    self.assertIn("`TensorShape` (`.as_list`)", found[0][1])
    self.assertIn("`input_shape[i].value`", found[1][1])

  def test_keras_3_code_needs_nothing(self):
    self.assertEqual(keras2.find(_source("""\
        import tensorflow as tf

        class Scale(tf.keras.layers.Layer):

          def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1],))

        opt = tf.keras.optimizers.SGD(0.1)
        model = tf.keras.Sequential([Scale()])
        model.compile(opt, "mse", metrics=["mae"])
        model.fit(x, y)
        """)), [])

  def test_the_install_line_is_exact_where_tensorflow_is_known(self):
    lines = "\n".join(keras2.install_advice(("tensorflow-cpu", "2.21.0")))
    self.assertIn("python -m pip install --no-deps 'tf-keras==2.21.*'",
                  lines)
    self.assertIn("TF_USE_LEGACY_KERAS=1 python train.py", lines)
    self.assertEqual(lines.count("pip install"), 1)

  def test_the_install_line_reads_the_tensorflow_where_it_runs(self):
    for here in (None, ("tensorflow", "1.15.5"), ("tensorflow", "2.15.1")):
      with self.subTest(here=here):
        lines = "\n".join(keras2.install_advice(here))
        self.assertIn(keras2.GENERIC_INSTALL, lines)
        self.assertIn("--no-deps", lines)


class Tf1ApiTest(parameterized.TestCase):

  @parameterized.named_parameters(
      ("placeholder", "x = tf.placeholder(tf.float32)\n"),
      ("optimizer", "opt = tf.train.AdamOptimizer(1e-3)\n"),
      ("session", "with tf.Session() as sess:\n  pass\n"),
      ("contrib", "from tensorflow.contrib import layers\n"),
      ("logging", "tf.logging.info('x')\n"),
  )
  def test_tf1_api_written_from_tensorflow(self, line):
    self.assertEqual(tf1_api.lines(b"import tensorflow as tf\n" +
                                   line.encode()), [2])

  @parameterized.named_parameters(
      ("keras", "opt = tf.keras.optimizers.SGD(0.1)\n"
                "m = tf.keras.Sequential()\n"),
      ("compat_v1", "x = tf.compat.v1.placeholder(tf.float32)\n"
                    "opt = tf.compat.v1.train.AdamOptimizer()\n"),
      ("tf2_train", "ckpt = tf.train.Checkpoint(step=tf.Variable(1))\n"),
  )
  def test_tf2_code_does_not_need_tf_upgrade_v2(self, line):
    self.assertEqual(tf1_api.lines(b"import tensorflow as tf\n" +
                                   line.encode()), [])

  def test_compat_v1_imported_as_tf_is_tf1_api_already_converted(self):
    self.assertEqual(tf1_api.lines(
        b"import tensorflow.compat.v1 as tf\nx = tf.placeholder(tf.int32)\n"),
                     [])


if __name__ == "__main__":
  absltest.main()
