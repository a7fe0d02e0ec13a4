# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Tests for `contrib_mp_upgrade.tf2x_names`: TF 2.0-2.8 names, converted.

In-process and TensorFlow-free: each test converts a source with
`rewrite.upgrade_source` and reads the text, the notes and what was not
kept. tests/upgrade_tf2x_test.py runs the converted programs.
"""

import contextlib
import importlib.util
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap

from absl.testing import absltest
from absl.testing import parameterized

from contrib_mp_upgrade import check
from contrib_mp_upgrade import cli
from contrib_mp_upgrade import rewrite
from contrib_mp_upgrade import tf2x_names


def _upgrade(source):
  result = rewrite.upgrade_source(textwrap.dedent(source).encode())
  return result.new_source.decode(), result


class Tf2xNamesTest(parameterized.TestCase):

  @parameterized.named_parameters(
      ("train_experimental",
       "tf.train.experimental.DynamicLossScale(2**15, 20, 4.)",
       "tf.compat.v1.mixed_precision.DynamicLossScale(2**15, 20, 4.)"),
      ("compat_v2", "tf.compat.v2.train.experimental.FixedLossScale(128)",
       "tf.compat.v1.mixed_precision.FixedLossScale(128)"),
      ("mixed_precision_experimental",
       "tf.mixed_precision.experimental.LossScale",
       "tf.compat.v1.mixed_precision.LossScale"),
      ("set_policy",
       "tf.keras.mixed_precision.experimental.set_policy('mixed_float16')",
       "tf.keras.mixed_precision.set_global_policy('mixed_float16')"),
      ("global_policy", "tf.keras.mixed_precision.experimental.global_policy()",
       "tf.keras.mixed_precision.global_policy()"),
      ("get_layer_policy",
       "tf.keras.mixed_precision.experimental.get_layer_policy(layers[0])",
       "layers[0].dtype_policy"),
      ("get_layer_policy_parenthesized",
       "tf.keras.mixed_precision.experimental.get_layer_policy(a or b)",
       "(a or b).dtype_policy"),
      ("lso",
       "tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 8)",
       "contrib_mixed_precision.KerasLossScaleOptimizer(opt, 8)"),
      ("today_lso_with_loss_scale",
       "tf.keras.mixed_precision.LossScaleOptimizer(opt, loss_scale=ls)",
       "contrib_mixed_precision.KerasLossScaleOptimizer(opt, loss_scale=ls)"),
      ("disable",
       "tf.train.experimental.disable_mixed_precision_graph_rewrite()",
       "tf.compat.v1.mixed_precision.disable_mixed_precision_graph_rewrite()"),
  )
  def test_converts(self, old, new):
    text, result = _upgrade("import tensorflow as tf\nx = {}\n".format(old))
    self.assertIn("x = {}\n".format(new), text)
    self.assertTrue(all(c.tf2x for c in result.changes), result.changes)

  @parameterized.named_parameters(
      ("compat_v1_train", "tf.compat.v1.train.experimental.DynamicLossScale()"),
      ("compat_v1_mp",
       "tf.compat.v1.mixed_precision.experimental.FixedLossScale(8)"),
      ("today_policy", "tf.keras.mixed_precision.Policy('mixed_float16')"),
      ("not_tensorflow", "np.train.experimental.DynamicLossScale()"),
  )
  def test_leaves_valid_names_alone(self, code):
    source = "import numpy as np\nimport tensorflow as tf\nx = {}\n".format(
        code)
    text, result = _upgrade(source)
    self.assertEqual(text, source)
    self.assertEqual(result.changes, [])

  def test_aliased_module_imports(self):
    text, _ = _upgrade("""\
        from tensorflow.keras.mixed_precision import experimental as mixed_precision
        import tensorflow.keras.mixed_precision.experimental as kmp
        mixed_precision.set_policy('mixed_float16')
        p = kmp.global_policy()
        """)
    self.assertEqual(text, textwrap.dedent("""\
        from tensorflow.keras import mixed_precision
        import tensorflow.keras.mixed_precision as kmp
        mixed_precision.set_global_policy('mixed_float16')
        p = kmp.global_policy()
        """))

  def test_imported_names(self):
    text, result = _upgrade("""\
        from tensorflow.keras.mixed_precision.experimental import (
            Policy, set_policy, get_layer_policy, LossScaleOptimizer as LSO)
        from tensorflow.train.experimental import DynamicLossScale
        set_policy(Policy('mixed_float16'))
        opt = LSO(opt, DynamicLossScale())
        print(get_layer_policy(layer).name)
        """)
    self.assertEqual(text, textwrap.dedent("""\
        from tensorflow.keras.mixed_precision import Policy
        from tensorflow.keras.mixed_precision import set_global_policy as set_policy
        from contrib_mixed_precision import KerasLossScaleOptimizer as LSO
        from tensorflow.compat.v1.mixed_precision import DynamicLossScale
        set_policy(Policy('mixed_float16'))
        opt = LSO(opt, DynamicLossScale())
        print(layer.dtype_policy.name)
        """))
    self.assertTrue(any("skipped_steps_advance_iterations=True" in note
                        for _, note in result.tf2x_notes))

  def test_graph_rewrite_follows_the_optimizer(self):
    text, result = _upgrade("""\
        import tensorflow as tf
        v1 = tf.compat.v1.train.MomentumOptimizer(0.1, 0.9)
        v1 = tf.train.experimental.enable_mixed_precision_graph_rewrite(v1, 'dynamic')
        k = tf.keras.optimizers.Adam()
        k = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt=k)
        u = tf.train.experimental.enable_mixed_precision_graph_rewrite(make())
        """)
    self.assertIn("v1 = tf.compat.v1.mixed_precision."
                  "enable_mixed_precision_graph_rewrite(v1, 'dynamic')", text)
    self.assertIn("k = contrib_mixed_precision.KerasLossScaleOptimizer("
                  "optimizer=k)", text)
    self.assertIn("u = tf.compat.v1.mixed_precision."
                  "enable_mixed_precision_graph_rewrite(make())", text)
    self.assertIn("import contrib_mixed_precision\n", text)
    # What was kept for the Keras optimizer, and what was not.
    self.assertEqual([(l, w) for l, w, _ in result.tf2x_lost],
                     [(5, tf2x_names.LOST_REWRITE)])
    self.assertEqual([l for l, _ in result.warnings], [6])
    self.assertIn("only on a GPU", dict(result.tf2x_notes)[3])

  @parameterized.named_parameters(
      # NVIDIA's TF2 BERT: a Keras model's optimizer, in a Keras-only file.
      ("keras_file", """\
        import tensorflow as tf
        model = tf.keras.Model(inputs, outputs)
        model.optimizer = make_optimizer()
        model.optimizer = (
            tf.train.experimental.enable_mixed_precision_graph_rewrite(
                model.optimizer))
        """, "contrib_mixed_precision.KerasLossScaleOptimizer(\n"),
      # NVIDIA's TF1 BERT: an optimizer built by a helper, in an Estimator
      # file.
      ("v1_file", """\
        import tensorflow as tf
        spec = tf.estimator.EstimatorSpec(mode, loss=loss)
        opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(
            make_optimizer(), loss_scaler)
        """, "tf.compat.v1.mixed_precision.enable_mixed_precision_graph_"
         "rewrite(\n"),
  )
  def test_graph_rewrite_of_an_unseen_optimizer_follows_the_file(
      self, source, expected):
    text, result = _upgrade(source)
    self.assertIn(expected, text)
    self.assertEqual(len(result.warnings), 1)
    self.assertIn("because this file uses", result.warnings[0][1])

  def test_policy_loss_scale_is_reported(self):
    text, result = _upgrade("""\
        import tensorflow as tf
        p = tf.keras.mixed_precision.experimental.Policy(
            'mixed_float16', loss_scale=tf.train.experimental.FixedLossScale(
                64))
        q = tf.keras.mixed_precision.experimental.Policy('float32', None)
        """)
    self.assertIn("p = tf.keras.mixed_precision.Policy(\n    'mixed_float16')",
                  text)
    self.assertIn("q = tf.keras.mixed_precision.Policy('float32')", text)
    self.assertEqual([(l, w) for l, w, _ in result.tf2x_lost],
                     [(2, tf2x_names.LOST_POLICY)])
    notes = dict(result.tf2x_notes)
    self.assertIn("use `tf.train.experimental.FixedLossScale( 64)` as "
                  "`loss_scale`", notes[2])
    self.assertIn("scales nothing today either", notes[5])

  def test_report_names_what_was_not_kept_under_its_file(self):
    # The converted file's own block gives the line and the fix, besides
    # the count in "Before you run it".
    with tempfile.TemporaryDirectory() as tmp:
      with open(os.path.join(tmp, "model.py"), "w") as f:
        f.write("import tensorflow as tf\n"
                "p = tf.keras.mixed_precision.experimental.Policy(\n"
                "    'mixed_float16', loss_scale=128)\n")
      report = os.path.join(tmp, "report.txt")
      status, _, _ = _run_command("--intree", tmp, "--inplace",
                                  "--reportfile", report)
      self.assertEqual(status, 0)
      with open(report) as f:
        text = f.read()
    block = text.split("\nmodel.py\n", 1)[1].split("\n\n", 1)[0]
    self.assertIn("  2: NOT KEPT: {}. Fix: {}.".format(
        tf2x_names.LOST_POLICY, tf2x_names.FIX_POLICY), block)
    self.assertIn("`loss_scale=128` was dropped", block)

  def test_policy_loss_scale_is_not_lost_where_the_file_wraps(self):
    # NVIDIA's Electra pattern: the policy says "dynamic", and the training
    # loop wraps its optimizer explicitly.
    _, result = _upgrade("""\
        import tensorflow as tf
        policy = tf.keras.mixed_precision.experimental.Policy(
            "mixed_float16", loss_scale="dynamic")
        tf.keras.mixed_precision.experimental.set_policy(policy)
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
            opt, "dynamic")
        """)
    self.assertEqual(result.tf2x_lost, [])
    self.assertIn("wraps its optimizer", dict(result.tf2x_notes)[2])

  def test_environment_variable_is_reported_not_changed(self):
    source = ("import os\n"
              "os.environ['TF_ENABLE_AUTO_MIXED_PRECISION'] = '1'\n")
    text, result = _upgrade(source)
    self.assertEqual(text, source)
    self.assertEqual([(l, w) for l, w, _ in result.tf2x_lost],
                     [(2, tf2x_names.LOST_ENV)])

  @parameterized.named_parameters(
      ("set_on", "os.environ['TF_ENABLE_AUTO_MIXED_PRECISION'] = '1'", True),
      ("set_by_flag",
       "os.environ['TF_ENABLE_AUTO_MIXED_PRECISION'] = '1' if amp else '0'",
       True),
      ("graph_rewrite_form",
       "os.environ['TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE'] = '1'",
       True),
      ("setdefault",
       "os.environ.setdefault('TF_ENABLE_AUTO_MIXED_PRECISION', '1')", True),
      ("set_off", "os.environ['TF_ENABLE_AUTO_MIXED_PRECISION'] = '0'", False),
      ("read", "amp = int(os.environ['TF_ENABLE_AUTO_MIXED_PRECISION'])",
       False),
  )
  def test_environment_variable_reported_only_where_set_on(self, line,
                                                           reported):
    # NVIDIA's ConvNets sets it to '0' when AMP is off: nothing is lost.
    _, result = _upgrade("import os\n" + line + "\n")
    self.assertEqual(bool(result.tf2x_lost), reported)

  def test_check_names_the_tf2x_name(self):
    _, result = _upgrade("""\
        import tensorflow as tf
        from tensorflow.keras.mixed_precision import experimental as mp
        mp.set_policy('mixed_float16')
        """)
    messages = [check.message(c) for c in result.changes]
    self.assertEqual(messages, [
        "from tensorflow.keras.mixed_precision import experimental as mp "
        "imports TF 2.0-2.8's experimental mixed precision, which TF 2.9 "
        "removed: run contrib-mp-upgrade to convert it",
        "mp.set_policy is TF 2.0-2.8's "
        "`tf.keras.mixed_precision.experimental.set_policy`, which TF 2.9 "
        "removed: run contrib-mp-upgrade to convert it"])


_DYNAMIC = ("tf.compat.v1.mixed_precision.DynamicLossScale(initial_loss_scale="
            "{}, increment_period={}, multiplier=2.)")
_WRAP = ("contrib_mixed_precision.KerasLossScaleOptimizer(opt, {}, "
         "skipped_steps_advance_iterations=True)")


class Keras2NamesTest(parameterized.TestCase):
  """TF 2.4-2.15's Keras 2 `LossScaleOptimizer`, converted for Keras 3."""

  @parameterized.named_parameters(
      ("defaults", "tf.keras.mixed_precision.LossScaleOptimizer(opt)",
       _WRAP.format(_DYNAMIC.format("2 ** 15", "2000"))),
      ("keywords", "tf.keras.mixed_precision.LossScaleOptimizer(opt, "
       "initial_scale=4., dynamic_growth_steps=3)",
       _WRAP.format(_DYNAMIC.format("4.", "3"))),
      ("positional", "tf.keras.mixed_precision.LossScaleOptimizer(opt, True, "
       "8., 2)", _WRAP.format(_DYNAMIC.format("8.", "2"))),
      ("growth_only", "tf.keras.mixed_precision.LossScaleOptimizer("
       "opt, dynamic_growth_steps=n)",
       _WRAP.format(_DYNAMIC.format("2 ** 15", "n"))),
      ("fixed", "tf.keras.mixed_precision.LossScaleOptimizer(opt, "
       "dynamic=False, initial_scale=128)",
       _WRAP.format("tf.compat.v1.mixed_precision.FixedLossScale(128)")),
      ("fixed_positional", "tf.keras.mixed_precision.LossScaleOptimizer(opt, "
       "False, args.scale)",
       _WRAP.format("tf.compat.v1.mixed_precision.FixedLossScale("
                    "args.scale)")),
      ("keyword_optimizer", "tf.keras.mixed_precision.LossScaleOptimizer("
       "inner_optimizer=opt)",
       _WRAP.format(_DYNAMIC.format("2 ** 15", "2000"))),
  )
  def test_converts(self, old, new):
    text, result = _upgrade("import tensorflow as tf\nx = {}\n".format(old))
    self.assertIn("x = {}\n".format(new), text)
    self.assertEqual(result.tf2x_stops, [])
    self.assertIn("Keras 2's numbers kept", result.tf2x_notes[0][1])

  @parameterized.named_parameters(
      ("from_module", "from tensorflow.keras import mixed_precision",
       "mixed_precision.LossScaleOptimizer"),
      ("from_class",
       "from tensorflow.keras.mixed_precision import LossScaleOptimizer",
       "LossScaleOptimizer"),
      ("import_as", "import tensorflow.keras.mixed_precision as mp",
       "mp.LossScaleOptimizer"),
      ("compat_v2", "import tensorflow.compat.v2 as tf2",
       "tf2.keras.mixed_precision.LossScaleOptimizer"),
  )
  def test_every_import_style(self, imports, name):
    text, _ = _upgrade("import tensorflow as tf\n{}\nx = {}(opt)\n".format(
        imports, name))
    self.assertIn("x = " + _WRAP.format(_DYNAMIC.format("2 ** 15", "2000")),
                  text)

  def test_without_tensorflow_bound_imports_it(self):
    text, _ = _upgrade("""\
        from tensorflow.keras import mixed_precision
        x = mixed_precision.LossScaleOptimizer(opt, dynamic=False,
                                               initial_scale=8)
        """)
    self.assertIn("import tensorflow\n", text)
    self.assertIn("tensorflow.compat.v1.mixed_precision.FixedLossScale(8)",
                  text)

  def test_standalone_keras_2(self):
    text, _ = _upgrade("""\
        import keras
        opt = keras.mixed_precision.LossScaleOptimizer(sgd, dynamic=False,
                                                       initial_scale=8)
        """)
    self.assertIn("contrib_mixed_precision.KerasLossScaleOptimizer(sgd, "
                  "tensorflow.compat.v1.mixed_precision.FixedLossScale(8), "
                  "skipped_steps_advance_iterations=True)", text)

  @parameterized.named_parameters(
      ("get_scaled_loss", "scaled = opt.get_scaled_loss(loss)"),
      ("get_unscaled_gradients", "grads = opt.get_unscaled_gradients(g)"),
      ("dynamic_counter", "n = opt.dynamic_counter"),
  )
  def test_standalone_keras_2_told_by_what_only_keras_2_has(self, use):
    # No `dynamic=`: only the file's use of Keras 2's own methods says the
    # standalone `keras` is Keras 2's (Keras 3's class has none of them).
    text, result = _upgrade(
        "import keras\n"
        "opt = keras.mixed_precision.LossScaleOptimizer(sgd)\n"
        "{}\n".format(use))
    self.assertIn("opt = contrib_mixed_precision.KerasLossScaleOptimizer("
                  "sgd, " + _DYNAMIC.replace("tf.", "tensorflow.").format(
                      "2 ** 15", "2000") +
                  ", skipped_steps_advance_iterations=True)\n", text)
    self.assertIn("Keras 2's numbers kept", result.tf2x_notes[0][1])

  def test_standalone_keras_3_code_is_left(self):
    # Valid Keras 3 code: nothing in the file is Keras 2's only.
    source = ("import keras\n"
              "opt = keras.mixed_precision.LossScaleOptimizer(sgd)\n")
    text, result = _upgrade(source)
    self.assertEqual(text, source)
    self.assertEqual(result.tf2x_stops, [])

  def test_the_class_itself_is_left(self):
    source = ("import tensorflow as tf\n"
              "ok = isinstance(o, tf.keras.mixed_precision.LossScaleOptimizer)"
              "\n")
    text, _ = _upgrade(source)
    self.assertEqual(text, source)

  @parameterized.named_parameters(
      ("kwargs", "tf.keras.mixed_precision.LossScaleOptimizer(opt, **kw)",
       "`*args` or `**kwargs`"),
      ("args", "tf.keras.mixed_precision.LossScaleOptimizer(*a)",
       "`*args` or `**kwargs`"),
      ("dynamic_variable", "tf.keras.mixed_precision.LossScaleOptimizer("
       "opt, dynamic=flag)", "`dynamic` is not written"),
      ("fixed_without_scale", "tf.keras.mixed_precision.LossScaleOptimizer("
       "opt, dynamic=False)", "which Keras 2 refused too"),
      # tf-keras raises ValueError ("dynamic_growth_steps" must be None if
      # "dynamic" is False): no fixed scale to convert it to.
      ("fixed_with_growth_steps", "tf.keras.mixed_precision."
       "LossScaleOptimizer(opt, dynamic=False, initial_scale=8, "
       "dynamic_growth_steps=3)", "which Keras 2 refused too"),
      ("unknown_keyword", "tf.keras.mixed_precision.LossScaleOptimizer("
       "opt, name='x')", "arguments Keras 2's class does not take"),
  )
  def test_left_and_named_under_before_you_run_it(self, code, why):
    source = "import tensorflow as tf\nx = {}\n".format(code)
    text, result = _upgrade(source)
    self.assertEqual(text, source)
    self.assertLen(result.tf2x_stops, 1)
    line, what, fix = result.tf2x_stops[0]
    self.assertEqual(line, 2)
    self.assertIn(why, what)
    self.assertIn("FixedLossScale(initial_scale)", fix)

  def test_report_never_says_a_stopped_file_will_run(self):
    with tempfile.TemporaryDirectory() as tmp:
      path = os.path.join(tmp, "train.py")
      with open(path, "w") as f:
        f.write("import tensorflow as tf\n"
                "opt = tf.keras.mixed_precision.LossScaleOptimizer(o, **kw)\n")
      report = os.path.join(tmp, "report.txt")
      status, _, _ = _run_command("--intree", tmp, "--inplace",
                                  "--reportfile", report)
      self.assertEqual(status, 0)
      with open(report) as f:
        text = f.read()
      before = text.split("Before you run it", 1)[1].split("\n\n", 1)[0]
      self.assertIn("0 of 1 Python file will run", before)
      self.assertIn("train.py:2: a Keras 2 `LossScaleOptimizer` call", before)
      # "Left to do by hand" counts the NOT CONVERTED line it lists.
      left = text.split("Left to do by hand:\n", 1)[1]
      self.assertNotIn("nothing this command knows of", left)
      self.assertIn("the 1 file that will not run", left)
      # `--check` names it too.
      findings, _ = check.check(trees=[tmp])
      self.assertEqual([(f.line, f.message.split(":")[0]) for f in findings],
                       [(2, "a Keras 2 `LossScaleOptimizer` call this "
                            "command cannot map exactly (`*args` or "
                            "`**kwargs`)")])


class CompileUnderPolicyTest(parameterized.TestCase):
  """A `mixed_float16` policy and `compile` in the same module."""

  def test_keras2_compile_is_wrapped_with_keras2_numbers(self):
    text, result = _upgrade("""\
        import tensorflow as tf
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
        opt = tf.keras.optimizers.Adam()
        model.compile(optimizer=opt, loss="mse")
        model.compile(optimizer="adam", loss="mse")
        """)
    scale = _DYNAMIC.format("2 ** 15", "2000")
    self.assertIn("model.compile(optimizer=" + _WRAP.format(scale), text)
    self.assertIn(
        "model.compile(optimizer=contrib_mixed_precision."
        "KerasLossScaleOptimizer(tf.keras.optimizers.get(\"adam\"), " +
        scale, text)
    self.assertEqual(result.tf2x_stops, [])
    self.assertEqual(result.tf2x_lost, [])

  @parameterized.named_parameters(
      ("lso", "tf.keras.mixed_precision.LossScaleOptimizer(tf.keras."
       "optimizers.SGD())"),
      ("lso_name", "opt"),
  )
  def test_an_optimizer_wrapped_by_hand_is_not_wrapped_again(self, value):
    text, result = _upgrade("""\
        import tensorflow as tf
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
        opt = tf.keras.mixed_precision.LossScaleOptimizer(
            tf.keras.optimizers.SGD())
        model.compile(optimizer={}, loss="mse")
        """.format(value))
    self.assertEqual(text.count("KerasLossScaleOptimizer("), 1 + (
        value != "opt"), text)
    self.assertEqual(result.tf2x_stops, [])

  def test_an_optimizer_it_cannot_see_is_named(self):
    source = textwrap.dedent("""\
        import tensorflow as tf
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
        model.compile(optimizer=make_optimizer(), loss="mse")
        """)
    text, result = _upgrade(source)
    self.assertEqual(text, source)
    self.assertEqual([(l, w.split(" (")[0]) for l, w, _ in result.tf2x_stops],
                     [(3, "a `compile` under a `mixed_float16` policy whose "
                          "optimizer this command cannot wrap")])

  def test_a_policy_without_compile_in_the_module_is_no_blocker(self):
    # A tree that never calls `compile` lost nothing; one that calls it in
    # another module is told once, as a note.
    with tempfile.TemporaryDirectory() as tmp:
      with open(os.path.join(tmp, "train.py"), "w") as f:
        f.write("import tensorflow as tf\n"
                "tf.keras.mixed_precision.set_global_policy("
                "'mixed_float16')\n")
      report = os.path.join(tmp, "report.txt")
      status, _, _ = _run_command("--intree", tmp, "--inplace",
                                  "--reportfile", report)
      self.assertEqual(status, 0)
      with open(report) as f:
        text = f.read()
    self.assertNotIn("NOT KEPT", text)
    self.assertIn("train.py:2: if you call `compile` under this policy",
                  text)
    left = text.split("Left to do by hand:\n", 1)[1]
    self.assertEqual(left, "  - nothing this command knows of.\n")

  def test_a_float32_policy_changes_nothing(self):
    source = ("import tensorflow as tf\n"
              "tf.keras.mixed_precision.set_global_policy('float32')\n"
              "model.compile(optimizer=tf.keras.optimizers.SGD(), loss='mse')"
              "\n")
    text, result = _upgrade(source)
    self.assertEqual(text, source)
    self.assertEqual(result.tf2x_lost, [])

  def test_tf20_policy_loss_scale_goes_to_compile(self):
    text, result = _upgrade("""\
        import tensorflow as tf
        from tensorflow.keras.mixed_precision import experimental as mp
        policy = mp.Policy("mixed_float16",
                           loss_scale=tf.train.experimental.DynamicLossScale(
                               8., 2, 4.))
        mp.set_policy(policy)
        model.compile(optimizer=tf.keras.optimizers.SGD(), loss="mse")
        """)
    self.assertIn(
        "model.compile(optimizer=contrib_mixed_precision."
        "KerasLossScaleOptimizer(tf.keras.optimizers.SGD(), "
        "tf.compat.v1.mixed_precision.DynamicLossScale( 8., 2, 4.)), "
        "loss=\"mse\")", text)
    self.assertEqual(result.tf2x_lost, [])

  def test_tf20_policy_without_loss_scaling_compiles_with_scale_1(self):
    # TF 2.0-2.3's `Policy("mixed_float16", loss_scale=None)` trained
    # without loss scaling: a fixed scale of 1, never a dynamic one.
    text, result = _upgrade("""\
        import tensorflow as tf
        from tensorflow.keras.mixed_precision import experimental as mp
        mp.set_policy(mp.Policy("mixed_float16", loss_scale=None))
        model.compile(optimizer=tf.keras.optimizers.SGD(), loss="mse")
        """)
    self.assertIn(
        "model.compile(optimizer=contrib_mixed_precision."
        "KerasLossScaleOptimizer(tf.keras.optimizers.SGD(), 1), "
        "loss=\"mse\")", text)
    self.assertEqual(result.tf2x_lost, [])

  def test_tf20_loss_scale_compile_cannot_see_is_named(self):
    source = textwrap.dedent("""\
        import tensorflow as tf
        from tensorflow.keras.mixed_precision import experimental as mp
        def build(scale):
          mp.set_policy(mp.Policy("mixed_float16", loss_scale=scale))
        def train():
          model.compile(optimizer=tf.keras.optimizers.SGD(), loss="mse")
        """)
    text, result = _upgrade(source)
    self.assertIn("model.compile(optimizer=tf.keras.optimizers.SGD(), ",
                  text)
    self.assertEqual([l for l, _, _ in result.tf2x_stops], [6])
    self.assertIn("reads names `compile` does not see",
                  result.tf2x_stops[0][1])
    self.assertEqual([(l, w) for l, w, _ in result.tf2x_lost],
                     [(4, tf2x_names.LOST_POLICY)])

  @parameterized.named_parameters(
      ("string", "mp.set_policy('mixed_float16')"),
      ("name_variable", "mp.set_policy(mp.Policy(name))"),
  )
  def test_tf20_default_loss_scale_without_compile_is_not_kept(self, code):
    _, result = _upgrade("import tensorflow as tf\n"
                         "from tensorflow.keras.mixed_precision import "
                         "experimental as mp\n{}\n".format(code))
    self.assertEqual([(l, w) for l, w, _ in result.tf2x_lost],
                     [(3, tf2x_names.LOST_DEFAULT)])

  def test_tf20_name_variable_is_wrapped_when_mixed_at_run_time(self):
    text, _ = _upgrade("""\
        import tensorflow as tf
        from tensorflow.keras.mixed_precision import experimental as mp
        mp.set_policy(mp.Policy(name))
        model.compile(optimizer=tf.keras.optimizers.SGD(), loss="mse")
        """)
    self.assertIn(
        "model.compile(optimizer=(contrib_mixed_precision."
        "KerasLossScaleOptimizer(tf.keras.optimizers.SGD()) if "
        "tf.keras.mixed_precision.global_policy().name == \"mixed_float16\" "
        "else tf.keras.optimizers.SGD()), loss=\"mse\")", text)

  def test_policy_reads(self):
    text, result = _upgrade("""\
        import tensorflow as tf
        policy = tf.keras.mixed_precision.experimental.Policy("mixed_float16")
        a = policy.should_cast_variables
        b = policy.loss_scale
        c = layer.dtype_policy.loss_scale
        d = optimizer.loss_scale
        """)
    self.assertIn("a = (policy.variable_dtype != policy.compute_dtype)\n",
                  text)
    self.assertEqual([l for l, _, _ in result.tf2x_stops], [4, 5])
    self.assertIn("`loss_scale` of a Policy", result.tf2x_stops[0][1])

  def test_whether_a_policy_has_a_loss_scale(self):
    # TF 2.1-2.3 gave a Policy made without `loss_scale=` (and the global
    # policy, set by name) a loss scale exactly when it was
    # `mixed_float16`; one given its own `loss_scale=` stays a stop.
    source = """\
        import sys
        import tensorflow as tf
        from tensorflow.keras.mixed_precision import experimental as mp
        mp.set_policy(sys.argv[1])
        policy = mp.global_policy()
        a = policy.loss_scale is None
        b = tf.keras.mixed_precision.experimental.Policy(
            "float32").loss_scale is not None
        c = mp.Policy("mixed_float16", loss_scale=128).loss_scale is None
        print(a, b)
        """
    text, result = _upgrade(source)
    self.assertIn('a = (policy.name != "mixed_float16")\n', text)
    self.assertIn('b = (tf.keras.mixed_precision.Policy(\n'
                  '    "float32").name == "mixed_float16")\n', text)
    self.assertEqual([l for l, _, _ in result.tf2x_stops], [9])
    self.assertIn("whether the global policy had a loss scale",
                  " ".join(t for _, t in result.tf2x_notes))
    # The converted test answers as TF 2.1-2.3's did, on today's Keras.
    work = tempfile.mkdtemp()
    self.addCleanup(shutil.rmtree, work, ignore_errors=True)
    path = os.path.join(work, "reads.py")
    with open(path, "w") as f:
      f.write(text.replace("c = ", "# c = "))
    for policy, want in (("mixed_float16", "False False"),
                         ("float32", "True False")):
      proc = subprocess.run([sys.executable, path, policy],
                            capture_output=True, text=True, check=False)
      self.assertEqual((proc.returncode, proc.stdout.strip()), (0, want),
                       proc.stderr[-2000:])

  def test_a_layers_policy_by_its_tf20_name(self):
    # TF 2.0-2.3's private `_mixed_precision_policy` is `dtype_policy` in
    # every Keras since; setting it is left alone.
    text, _ = _upgrade("""\
        import tensorflow as tf
        class D(tf.keras.layers.Dense):
          def call(self, x):
            p = self._mixed_precision_policy
            if self._mixed_precision_policy.should_cast_variables:
              return x
            self._mixed_precision_policy = p
            return x
        """)
    self.assertIn("    p = self.dtype_policy\n", text)
    self.assertIn("    if (self.dtype_policy.variable_dtype != "
                  "self.dtype_policy.compute_dtype):\n", text)
    self.assertIn("    self._mixed_precision_policy = p\n", text)

  def test_policy_loss_scale_given_to_a_loss_scale_optimizer(self):
    # TF 2.1-2.3's `Policy('mixed_float16')` held "dynamic" unless given a
    # `loss_scale=`; the optimizer is built before `compile`, so reading
    # `model.optimizer.loss_scale` cannot stand in for it.
    text, result = _upgrade("""\
        import tensorflow as tf
        from tensorflow.keras.mixed_precision import experimental as mp
        p1 = mp.Policy("mixed_float16")
        p2 = mp.Policy("mixed_float16", loss_scale=128)
        p3 = mp.global_policy()
        a = mp.LossScaleOptimizer(tf.keras.optimizers.SGD(), p1.loss_scale)
        b = mp.LossScaleOptimizer(tf.keras.optimizers.SGD(),
                                  loss_scale=p2.loss_scale)
        c = mp.LossScaleOptimizer(tf.keras.optimizers.SGD(),
                                  loss_scale=p3.loss_scale)
        d = mp.LossScaleOptimizer(tf.keras.optimizers.SGD(),
                                  loss_scale=a_policy.loss_scale)
        """)
    self.assertNotIn(".loss_scale)", text.replace("a_policy.loss_scale)", ""))
    self.assertEqual([l for l, _, _ in result.tf2x_stops], [12])
    self.assertIn("SGD(), \"dynamic\"", text)
    self.assertIn("loss_scale=128", text)
    self.assertEqual(text.count("\"dynamic\""), 2, text)
    self.assertEqual([l for l, m in result.tf2x_notes
                      if "global policy's `loss_scale`" in m], [10])

_ADVICE_PROGRAM = """\
import sys
import tensorflow as tf
import contrib_mixed_precision
loss_scale = "dynamic"
for expression in sys.argv[1:]:
  wrapped = contrib_mixed_precision.KerasLossScaleOptimizer(
      tf.keras.optimizers.SGD())
  opt = optimizer = wrapped
  if eval(expression) is not wrapped:  # pylint: disable=eval-used
    raise SystemExit("wrapped twice: " + expression)
  opt = optimizer = tf.keras.optimizers.SGD()
  if not isinstance(eval(expression),  # pylint: disable=eval-used
                    contrib_mixed_precision.KerasLossScaleOptimizer):
    raise SystemExit("not wrapped: " + expression)
"""


class CompileAdviceTest(absltest.TestCase):
  """What the report tells a person to pass to `compile`, run as written."""

  def test_the_advice_never_wraps_a_loss_scale_optimizer_twice(self):
    if os.environ.get("TEST_SRCDIR"):
      # Under Bazel the child finds no installed package (this target
      # depends on the command only); every pytest environment runs it.
      self.skipTest("runs in the pytest environments, not under Bazel")
    # Keras 2's `compile` wrapped only an optimizer that was not already a
    # LossScaleOptimizer; the advice must do the same, since the tree may
    # have converted that optimizer elsewhere.
    expressions = []
    for text in (tf2x_names.FIX_COMPILE, tf2x_names.FIX_DEFAULT,
                 tf2x_names.FIX_POLICY):
      found = [c for c in re.findall("`([^`]*)`", text)
               if "KerasLossScaleOptimizer(" in c]
      self.assertLen(found, 1, text)
      expressions.append(found[0])
    # Keras 3 and tf-keras where tf-keras is installed (TF 2.16+); Keras 2
    # alone on TF 2.15, whose default Keras it is.
    kerases = ("0", "1") if importlib.util.find_spec("tf_keras") else ("0",)
    for legacy in kerases:
      env = dict(os.environ, TF_USE_LEGACY_KERAS=legacy)
      proc = subprocess.run(
          [sys.executable, "-c", _ADVICE_PROGRAM] + expressions, env=env,
          capture_output=True, text=True, timeout=300, check=False)
      self.assertEqual(proc.returncode, 0, (legacy, proc.stderr[-3000:]))


def _run_command(*argv):
  out, err = io.StringIO(), io.StringIO()
  with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    status = cli.main(list(argv))
  return status, out.getvalue(), err.getvalue()

class OptimizerKindTest(parameterized.TestCase):
  """Which loss-scale optimizer a Keras LossScaleOptimizer call becomes."""

  @parameterized.named_parameters(
      ("attribute",
       "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n"
       "    tf.compat.v1.train.AdamOptimizer(), 'dynamic')\n"),
      ("keyword",
       "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n"
       "    optimizer=tf.compat.v1.train.AdamOptimizer(), loss_scale=8)\n"),
      ("name",
       "from tensorflow.keras.mixed_precision.experimental import "
       "LossScaleOptimizer\n"
       "inner = tf.compat.v1.train.GradientDescentOptimizer(0.1)\n"
       "opt = LossScaleOptimizer(inner, 'dynamic')\n"),
      ("today",
       "opt = tf.keras.mixed_precision.LossScaleOptimizer(\n"
       "    tf.compat.v1.train.AdamOptimizer(), loss_scale=8)\n"),
  )
  def test_a_tf1_optimizer_gets_tfs_v1_loss_scale_optimizer(self, source):
    # KerasLossScaleOptimizer refuses a tf.compat.v1 optimizer at run time
    # (tests/upgrade_tf2x_test.py runs one converted).
    text, result = _upgrade("import tensorflow as tf\n"
                            "m = tf.keras.Sequential()\n" + source)
    self.assertIn("compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(",
                  text)
    self.assertNotIn("KerasLossScaleOptimizer(", text)
    self.assertNotIn("optimizer=", text)
    self.assertTrue(any("was given a `tf.compat.v1` optimizer" in n
                        for _, n in result.tf2x_notes), result.tf2x_notes)

  def test_a_keras_optimizer_keeps_the_keras_wrapper(self):
    text, _ = _upgrade(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n"
        "    tf.keras.optimizers.Adam(), 'dynamic')\n")
    self.assertIn("contrib_mixed_precision.KerasLossScaleOptimizer(", text)


class IterationsRuleTest(parameterized.TestCase):
  """`skipped_steps_advance_iterations`, from the tree's pin (`pins`)."""

  @parameterized.named_parameters(
      ("lso", "tf.keras.mixed_precision.experimental.LossScaleOptimizer("
       "sgd, 'dynamic')",
       "contrib_mixed_precision.KerasLossScaleOptimizer(sgd, 'dynamic', "
       "skipped_steps_advance_iterations=True)"),
      ("today", "tf.keras.mixed_precision.LossScaleOptimizer(sgd, "
       "loss_scale=8)",
       "contrib_mixed_precision.KerasLossScaleOptimizer(sgd, loss_scale=8, "
       "skipped_steps_advance_iterations=True)"),
      ("rewrite", "tf.train.experimental."
       "enable_mixed_precision_graph_rewrite(sgd)",
       "contrib_mixed_precision.KerasLossScaleOptimizer(sgd, "
       "skipped_steps_advance_iterations=True)"),
  )
  def test_a_tf_2_3_pin_advances_iterations(self, old, new):
    source = ("import tensorflow as tf\nsgd = tf.keras.optimizers.SGD(0.1)\n"
              "opt = {}\n".format(old)).encode()
    pinned = rewrite.upgrade_source(source, advance_iterations=True)
    self.assertIn("opt = {}\n".format(new), pinned.new_source.decode())
    self.assertTrue(any("advance `iterations`, as in TF 2.3 to 2.8" in n
                        for _, n in pinned.tf2x_notes), pinned.tf2x_notes)
    # Without a pin: TF 2.0's rule, today's default, and no keyword.
    default = rewrite.upgrade_source(source)
    self.assertNotIn("skipped_steps_advance_iterations=True",
                     default.new_source.decode())


if __name__ == "__main__":
  absltest.main()
