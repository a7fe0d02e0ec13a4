# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Tests for `contrib_mixed_precision.install_alias()`.

The alias changes process-wide state (`sys.modules`, attributes of the
`tensorflow` module), so every test runs its code in a fresh subprocess.
"""

import json
import os
import tempfile
import textwrap

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import tf2x_programs as programs
import upgrade_fixture_util as util

_PRELUDE = """
import sys
import contrib_mixed_precision as cmp
from contrib_mixed_precision import loss_scale_manager as lsm
from contrib_mixed_precision import loss_scale_optimizer as lso
from contrib_mixed_precision.alias import install_alias
"""


def _run(code):
  """Runs `code` after `_PRELUDE` in a subprocess; returns its stdout."""
  proc = util.run_python(["-c", _PRELUDE + textwrap.dedent(code)])
  if proc.returncode != 0:
    raise AssertionError("The subprocess failed (exit {}):\n{}\n{}".format(
        proc.returncode, proc.stdout, proc.stderr[-6000:]))
  return proc.stdout


class AliasTest(tf.test.TestCase, parameterized.TestCase):

  @parameterized.named_parameters(
      ("attribute", """
       import tensorflow as tf
       m = tf.contrib.mixed_precision
       assert m.LossScaleOptimizer is cmp.LossScaleOptimizer
       """),
      ("compat_v1_attribute", """
       import tensorflow as tf
       m = tf.compat.v1.contrib.mixed_precision
       assert m.FixedLossScaleManager is cmp.FixedLossScaleManager
       """),
      ("compat_v1_module_attribute", """
       import tensorflow.compat.v1 as tf
       m = tf.contrib.mixed_precision
       assert m.LossScaleManager is cmp.LossScaleManager
       """),
      ("from_import", """
       from tensorflow.contrib.mixed_precision import (
           ExponentialUpdateLossScaleManager, FixedLossScaleManager,
           LossScaleManager, LossScaleOptimizer)
       assert LossScaleOptimizer is cmp.LossScaleOptimizer
       assert LossScaleManager is cmp.LossScaleManager
       assert FixedLossScaleManager is cmp.FixedLossScaleManager
       assert (ExponentialUpdateLossScaleManager is
               cmp.ExponentialUpdateLossScaleManager)
       """),
      ("from_contrib_import", """
       from tensorflow.contrib import mixed_precision
       assert (mixed_precision.ExponentialUpdateLossScaleManager is
               cmp.ExponentialUpdateLossScaleManager)
       """),
      ("import_as", """
       import tensorflow.contrib.mixed_precision as m
       import tensorflow as tf
       assert m is tf.contrib.mixed_precision
       assert m.LossScaleOptimizer is cmp.LossScaleOptimizer
       """),
      ("plain_import", """
       import tensorflow.contrib.mixed_precision
       import tensorflow
       assert tensorflow.contrib.mixed_precision.LossScaleOptimizer is (
           cmp.LossScaleOptimizer)
       """),
      ("module_paths_from", """
       from tensorflow.contrib.mixed_precision.python import (
           loss_scale_manager, loss_scale_optimizer)
       assert loss_scale_manager is lsm and loss_scale_optimizer is lso
       from tensorflow.contrib.mixed_precision.python.loss_scale_manager \\
           import FixedLossScaleManager
       assert FixedLossScaleManager is cmp.FixedLossScaleManager
       """),
      ("module_paths_import", """
       import tensorflow.contrib.mixed_precision.python.loss_scale_optimizer
       import tensorflow.contrib.mixed_precision.python.loss_scale_manager as m
       import tensorflow
       assert m is lsm
       assert (tensorflow.contrib.mixed_precision.python.loss_scale_optimizer
               is lso)
       """),
      ("compat_v1_module_path", """
       import tensorflow.compat.v1.contrib.mixed_precision as m
       assert m.LossScaleOptimizer is cmp.LossScaleOptimizer
       """),
  )
  def test_import_style_resolves_to_this_package(self, code):
    stdout = _run("install_alias()\n" + textwrap.dedent(code) +
                  "\nprint('ok')\n")
    self.assertEqual(stdout.strip().splitlines()[-1], "ok")

  def test_exported_from_the_package(self):
    stdout = _run("""
        from contrib_mixed_precision import alias
        assert cmp.install_alias is alias.install_alias
        assert "install_alias" in cmp.__all__
        print("ok")
        """)
    self.assertIn("ok", stdout)

  def test_not_installed_on_plain_import(self):
    stdout = _run("""
        import tensorflow as tf
        assert not any(k.startswith("tensorflow.contrib") for k in sys.modules)
        assert "contrib" not in tf.__dict__
        try:
          import tensorflow.contrib.mixed_precision
        except ImportError:
          print("absent")
        """)
    self.assertIn("absent", stdout)

  def test_install_is_idempotent(self):
    stdout = _run("""
        import tensorflow as tf
        install_alias()
        first = (tf.contrib, sys.modules["tensorflow.contrib.mixed_precision"])
        install_alias()
        install_alias()
        assert tf.contrib is first[0]
        assert sys.modules["tensorflow.contrib.mixed_precision"] is first[1]
        assert tf.compat.v1.contrib is first[0]
        print("ok")
        """)
    self.assertIn("ok", stdout)

  def test_exports_exactly_the_tf115_names(self):
    stdout = _run("""
        install_alias()
        import tensorflow.contrib.mixed_precision as m
        print(sorted(m.__all__))
        ns = {}
        exec("from tensorflow.contrib.mixed_precision import *", ns)
        print(sorted(k for k in ns if not k.startswith("__")))
        """)
    names = str(sorted(["LossScaleManager", "FixedLossScaleManager",
                        "ExponentialUpdateLossScaleManager",
                        "LossScaleOptimizer"]))
    self.assertEqual(stdout.strip().splitlines(), [names, names])

  def test_other_contrib_modules_raise_a_clear_error(self):
    stdout = _run("""
        install_alias()
        import tensorflow as tf
        try:
          tf.contrib.layers
        except AttributeError as e:
          print(e)
        try:
          from tensorflow.contrib import slim
        except ImportError:
          print("ImportError slim")
        """)
    self.assertIn("`tf.contrib.layers` does not exist: TensorFlow 2 removed "
                  "`tf.contrib`", stdout)
    self.assertIn("aliases only `tf.contrib.mixed_precision`", stdout)
    self.assertIn("ImportError slim", stdout)

  def test_unknown_attribute_of_the_alias_says_what_exists(self):
    stdout = _run("""
        install_alias()
        import tensorflow as tf
        try:
          tf.contrib.mixed_precision.NoSuchThing
        except AttributeError as e:
          print(e)
        """)
    self.assertIn("has no attribute 'NoSuchThing'", stdout)
    self.assertIn("LossScaleOptimizer", stdout)

  def test_a_real_contrib_keeps_its_other_attributes(self):
    stdout = _run("""
        import types
        import tensorflow as tf
        real = types.ModuleType("tensorflow.contrib")
        real.layers = "the real layers"
        sys.modules["tensorflow.contrib"] = real
        tf.contrib = real
        install_alias()
        assert tf.contrib is real and sys.modules["tensorflow.contrib"] is real
        assert real.layers == "the real layers"
        from tensorflow.contrib import mixed_precision
        assert mixed_precision.LossScaleOptimizer is cmp.LossScaleOptimizer
        print("ok")
        """)
    self.assertIn("ok", stdout)

  def test_import_system_queries_work_as_for_real_modules(self):
    # "Is contrib here?" checks: before the alias, find_spec says None;
    # after it, every aliased module answers find_spec, find_loader,
    # reload and getfile as a real module does, and stays the alias.
    stdout = _run("""
        import importlib, importlib.util, inspect, os, pkgutil, warnings
        warnings.simplefilter("ignore", DeprecationWarning)  # find_loader
        import tensorflow as tf
        print(importlib.util.find_spec("tensorflow.contrib"))
        install_alias()
        names = ["tensorflow.contrib", "tensorflow.contrib.mixed_precision",
                 "tensorflow.contrib.mixed_precision.python",
                 "tensorflow.compat.v1.contrib",
                 "tensorflow.compat.v1.contrib.mixed_precision"]
        for name in names:
          module = sys.modules[name]
          spec = importlib.util.find_spec(name)
          assert spec is module.__spec__ and spec.loader is not None, name
          assert pkgutil.find_loader(name) is spec.loader, name
          assert os.path.isfile(inspect.getfile(module)), name
          assert importlib.reload(module) is module, name
          assert sys.modules[name] is module, name
        m = importlib.import_module("tensorflow.contrib.mixed_precision")
        assert m.LossScaleOptimizer is cmp.LossScaleOptimizer
        assert tf.contrib.mixed_precision is m
        assert m.python.loss_scale_manager is lsm
        # A module dropped from sys.modules imports again, as itself.
        del sys.modules["tensorflow.contrib.mixed_precision"]
        import tensorflow.contrib.mixed_precision as again
        assert again is m, again
        try:
          importlib.import_module("tensorflow.contrib.slim")
        except ImportError:
          print("no slim")
        print("ok")
        """)
    self.assertEqual(["None", "no slim", "ok"], stdout.strip().splitlines())

  @parameterized.parameters(*util.PROGRAMS)
  def test_unconverted_program_trains_behind_the_alias(
      self, path, steps, bad_steps, manager):
    program = util.Program(path, steps, bad_steps, manager)
    # A private copy: importing the fixture's `common` writes its bytecode
    # beside it, and the source tree is not this test's to write.
    fixture = util.real_tree(util.FIXTURE_DIR)
    script = os.path.join(fixture, path)
    stdout = _run("""
        install_alias()
        import runpy
        sys.path.insert(0, {fixture!r})
        sys.argv = [{script!r}]
        runpy.run_path({script!r}, run_name="__main__")
        """.format(fixture=fixture, script=script))
    values = util.last_json(_Stdout(stdout))
    expected = util.expected_values(program)
    self.assertEqual(values["scale"], expected["scale"])
    for key in ("loss", "w", "b"):
      self.assertAllClose(values[key], expected[key], rtol=1e-5, atol=1e-6,
                          msg=key)


  @parameterized.named_parameters(
      ("train_experimental", """
       import tensorflow as tf
       v1 = tf.compat.v1.mixed_precision
       assert tf.train.experimental.DynamicLossScale is v1.DynamicLossScale
       assert tf.compat.v2.train.experimental.LossScale is v1.LossScale
       from tensorflow.train.experimental import FixedLossScale
       assert FixedLossScale is v1.FixedLossScale
       """),
      ("mixed_precision_experimental", """
       import tensorflow as tf
       v1 = tf.compat.v1.mixed_precision
       assert tf.mixed_precision.experimental.DynamicLossScale is (
           v1.DynamicLossScale)
       from tensorflow.mixed_precision import experimental as mpe
       from tensorflow.mixed_precision.experimental import LossScale
       import tensorflow.mixed_precision.experimental as mpe2
       assert mpe is mpe2 and LossScale is v1.LossScale
       """),
      ("keras_experimental", """
       import tensorflow as tf
       from tensorflow.keras.mixed_precision import experimental as mp
       from tensorflow.keras.mixed_precision.experimental import (
           get_layer_policy)
       assert tf.keras.mixed_precision.experimental is mp
       mp.set_policy(mp.Policy("mixed_float16"))
       assert mp.global_policy().name == "mixed_float16"
       layer = tf.keras.layers.Dense(2)
       assert get_layer_policy(layer).compute_dtype == "float16"
       assert layer(tf.ones([1, 3])).dtype == tf.float16
       """),
  )
  def test_tf2x_names_come_back(self, code):
    # Unconverted TF 2.0-2.8 code, on the Keras this TF has by default.
    stdout = _run("install_alias()\n" + textwrap.dedent(code) +
                  "\nprint('ok')\n")
    self.assertEqual(stdout.strip().splitlines()[-1], "ok")

  def test_tf2x_policy_loss_scale_warns(self):
    stdout = _run("""
        install_alias()
        import warnings
        import tensorflow as tf
        with warnings.catch_warnings(record=True) as caught:
          warnings.simplefilter("always")
          p = tf.keras.mixed_precision.experimental.Policy(
              "mixed_float16", loss_scale=128)
        assert p.name == "mixed_float16"
        print(str(caught[-1].message))
        """)
    self.assertIn("KerasLossScaleOptimizer(optimizer, loss_scale)", stdout)

  def test_tf2x_policy_without_loss_scale_warns_and_advice_runs(self):
    # TF 2.4-2.8's `Policy('mixed_float16', loss_scale=None)` made
    # `compile` leave the optimizer alone: no loss scaling. Today's
    # `compile` wraps it in Keras' dynamic LossScaleOptimizer: other
    # numbers, so it must warn, with advice that runs and trains as TF 2.x
    # did (every step applied, a NaN one too; the scale stays 1).
    stdout = _run("""
        install_alias()
        import json, warnings
        import numpy as np
        import tensorflow as tf
        mpe = tf.keras.mixed_precision.experimental
        with warnings.catch_warnings(record=True) as caught:
          warnings.simplefilter("always")
          mpe.Policy("float32", loss_scale=None)
          quiet = len(caught)
          policy = mpe.Policy("mixed_float16", loss_scale=None)
        mpe.set_policy(policy)
        model = tf.keras.Sequential([tf.keras.Input([2]),
                                     tf.keras.layers.Dense(1)])
        mpe.set_policy("float32")
        opt = cmp.KerasLossScaleOptimizer(tf.keras.optimizers.SGD(0.1), 1)
        model.compile(optimizer=opt, loss="mse")
        x = np.ones([8, 2], np.float32)
        x[5, 0] = np.nan
        model.fit(x, np.ones([8, 1], np.float32), batch_size=4, verbose=0)
        print(json.dumps({
            "quiet": quiet, "warning": str(caught[-1].message),
            "same_optimizer": model.optimizer is opt,
            "iterations": int(opt.iterations), "scale": float(opt.loss_scale),
            "finite": bool(np.all(np.isfinite(model.get_weights()[0])))}))
        """)
    result = json.loads(stdout.strip().splitlines()[-1])
    self.assertEqual(0, result["quiet"])
    self.assertIn("did not scale the loss", result["warning"])
    self.assertIn("KerasLossScaleOptimizer(optimizer, 1)", result["warning"])
    self.assertEqual(
        {"same_optimizer": True, "iterations": 2, "scale": 1.0,
         "finite": False},
        {k: result[k] for k in ("same_optimizer", "iterations", "scale",
                                "finite")})

  @parameterized.parameters("row1_train_experimental.py",
                            "row3_graph_rewrite_v1.py")
  def test_unconverted_tf2x_program_keeps_tf20_numbers(self, name):
    # The program as TF 2.0-2.8 users wrote it, run behind the alias, judged
    # by TF 2.0's own classes in a Session (tests/tf2x_programs.py).
    cases = json.dumps(programs.CASES)
    reference = programs.traces(util.run_python(
        ["-c", programs.REFERENCE, cases]))
    # A file, not `-c`: AutoGraph reads a `tf.function`'s source.
    with tempfile.TemporaryDirectory() as tmp:
      path = os.path.join(tmp, name)
      with open(path, "w") as f:
        f.write(_PRELUDE + "install_alias()\n" + programs.TREE[name])
      found = programs.traces(util.run_python([path, cases]))
    self.assertEqual(sorted(found), sorted(reference))
    for case in sorted(reference):
      np.testing.assert_array_equal(found[case], reference[case])


class _Stdout(object):
  """Adapts a stdout string to what `util.last_json` reads."""

  def __init__(self, stdout):
    self.stdout = stdout
    self.stderr = ""
    self.returncode = 0


if __name__ == "__main__":
  tf.test.main()
