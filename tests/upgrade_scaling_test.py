# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Rewriting one file costs work linear in its length and its uses.

Contract 14: a 1,000-line file of dense uses once took 11 s and an 8,000-line
one 147 s, because each replacement looked at every other one (the argument
realignment, the guard checks, the string check). Nothing here is timed:
the work is the number of Python function calls `upgrade_source` makes, which
is the same on every machine. Growing a file four times must grow that
count about four times, not sixteen.
"""

import cProfile
import pstats

from absl.testing import absltest
from absl.testing import parameterized

from contrib_mp_upgrade import rewrite
from contrib_mp_upgrade import tf_upgrade_v2_pass

# Linear work grows 4x when the file grows 4x; fixed costs (imports added,
# the module's own nodes) make the ratio a little lower, not higher. A
# quadratic step gives 8x or more at these sizes.
_GROWTH = 4
_SLACK = 1.2


def _module_level(n: int) -> str:
  lines = ["import tensorflow as tf", ""]
  for i in range(n):
    lines.append("m{0} = tf.contrib.mixed_precision.FixedLossScaleManager"
                 "({0})".format(i + 1))
  return "\n".join(lines) + "\n"


def _in_one_function(n: int) -> str:
  # A long function body: every use is checked for a TF-2 guard before it
  # and for a `raise` that stops it first.
  lines = ["import tensorflow as tf", "", "def build(opt):"]
  for i in range(n):
    lines.append("  m{0} = tf.contrib.mixed_precision."
                 "ExponentialUpdateLossScaleManager({0}, 2)".format(i + 1))
  lines.append("  return m1")
  return "\n".join(lines) + "\n"


def _aligned_calls(n: int) -> str:
  # Calls whose name changes length, with arguments aligned under the `(`:
  # each is realigned.
  lines = ["import tensorflow as tf", ""]
  for i in range(n):
    first = "o{} = tf.contrib.mixed_precision.LossScaleOptimizer(opt,".format(i)
    lines.append(first)
    lines.append(" " * first.index("(opt") + " manager)")
  return "\n".join(lines) + "\n"


def _strings_and_dynamic_imports(n: int) -> str:
  lines = ["import importlib", "import tensorflow as tf", ""]
  for i in range(n):
    lines.append("s{} = 'an ordinary string'".format(i))
    lines.append("d{} = importlib.import_module("
                 "'tensorflow.contrib.mixed_precision')".format(i))
  return "\n".join(lines) + "\n"


def _data_module(n: int) -> str:
  # A generated data module: one use, and a large literal.
  lines = ["import tensorflow as tf", "",
           "OPT = tf.contrib.mixed_precision.LossScaleOptimizer", "",
           "DATA = ["]
  lines += ["    ({}, {}.5, 'row{}'),".format(i, i, i) for i in range(n)]
  lines.append("]")
  return "\n".join(lines) + "\n"


def _reassigned_names(n: int) -> str:
  # A model written as `net = layer(net)` line after line: each use of
  # `net` could be any of its assignments. Resolving each use by looking
  # at every assignment made a 4,000-line file take 40 s (issue 43).
  lines = ["import tensorflow as tf", "",
           "opt = tf.contrib.mixed_precision.LossScaleOptimizer(o, m)", "",
           "def build(net):"]
  for i in range(n):
    lines.append("  net = tf.layers.dense(net, {})".format(i + 1))
    lines.append("  a = {}".format(i))
  lines.append("  return net, a")
  return "\n".join(lines) + "\n"


def _calls(source: str) -> int:
  profile = cProfile.Profile()
  profile.enable()
  result = rewrite.upgrade_source(source.encode("utf-8"))
  profile.disable()
  if result.error is not None or not result.changed:
    raise AssertionError("the fixture did not convert: {}".format(
        result.error))
  return pstats.Stats(profile).total_calls


class LinearRewriteTest(parameterized.TestCase):

  @parameterized.named_parameters(
      ("module_level", _module_level, 60),
      ("in_one_function", _in_one_function, 60),
      ("aligned_calls", _aligned_calls, 60),
      ("strings_and_dynamic_imports", _strings_and_dynamic_imports, 40),
      ("data_module", _data_module, 300),
      ("reassigned_names", _reassigned_names, 60),
  )
  def test_work_grows_linearly(self, make, size):
    small = _calls(make(size))
    large = _calls(make(size * _GROWTH))
    self.assertLess(
        large / small, _GROWTH * _SLACK,
        "{} -> {} calls when the file grew {}x".format(small, large,
                                                      _GROWTH))

  def test_each_use_is_converted(self):
    # The fixtures above exercise the code they claim to: every use is
    # rewritten.
    result = rewrite.upgrade_source(_in_one_function(7).encode("utf-8"))
    self.assertLen(result.changes, 7)
    result = rewrite.upgrade_source(_aligned_calls(5).encode("utf-8"))
    self.assertLen(result.changes, 5)
    text = result.new_source.decode("utf-8")
    self.assertIn("o4 = contrib_mixed_precision.LossScaleOptimizer(opt,\n" +
                  " " * 48 + "manager)", text)
    result = rewrite.upgrade_source(
        _strings_and_dynamic_imports(3).encode("utf-8"))
    self.assertLen(result.changes, 3)


class MetadataOnceTest(parameterized.TestCase):
  """libcst's scope analysis, the costliest pass, runs once per file."""

  @parameterized.named_parameters(
      ("module_level", _module_level),
      ("in_one_function", _in_one_function),
      ("local_import", lambda n: (
          "import tensorflow as tf\n\ndef f():\n"
          "  from tensorflow.contrib import mixed_precision as mp\n"
          "  return mp.FixedLossScaleManager(2), "
          "tf.contrib.mixed_precision.LossScaleOptimizer\n")),
  )
  def test_scope_analysis_runs_once(self, make):
    profile = cProfile.Profile()
    profile.enable()
    result = rewrite.upgrade_source(make(5).encode("utf-8"))
    profile.disable()
    self.assertTrue(result.added, "the fixture needs an import added")
    scope_passes = sum(
        calls for (path, _, function), (calls, *_) in
        pstats.Stats(profile).stats.items()
        if path.endswith("scope_provider.py") and function == "visit_Module")
    self.assertEqual(scope_passes, 1)


class LayersRenameTest(parameterized.TestCase):
  """After tf_upgrade_v2, `tf.layers` is renamed; other files cost little.

  Every file tf_upgrade_v2 changes is looked at for `tf.layers`. With
  `tf.contrib.layers` in most files of a tree, running libcst on each made
  `--tf_upgrade_v2` cost three times the two converters run apart.
  """

  @parameterized.named_parameters(
      ("bare", "x = tf.layers.dense(y, 4)\n", [2]),
      ("through_an_alias", "l = tf.layers\nx = l.dense(y, 4)\n", [2]),
      ("compat_v1", "x = tf.compat.v1.layers.dense(y, 4)\n", []),
      ("contrib", "x = tf.contrib.layers.fully_connected(y, 4)\n", []),
      ("keras", "x = tf.keras.layers.Dense(4)(y)\n", []),
  )
  def test_renamed_exactly_where_tf_layers_is_used(self, code, lines):
    source = ("import tensorflow as tf\n" + code).encode("utf-8")
    new, renamed = tf_upgrade_v2_pass.rename_bare_layers(source)
    self.assertEqual(renamed, lines)
    if lines:
      self.assertIn(b"tf.compat.v1.layers", new)
    else:
      self.assertEqual(new, source)

  def test_a_file_without_tf_layers_is_not_analysed(self):
    body = ["import tensorflow as tf", "", "def build(net):"]
    body += ["  net = tf.contrib.layers.fully_connected(net, {})".format(i)
             for i in range(200)]
    source = ("\n".join(body + ["  return net"]) + "\n").encode("utf-8")
    profile = cProfile.Profile()
    profile.enable()
    tf_upgrade_v2_pass.rename_bare_layers(source)
    profile.disable()
    # libcst's parse and scope analysis make about a thousand calls per
    # line; a regular expression makes a handful.
    self.assertLess(pstats.Stats(profile).total_calls, 200)


if __name__ == "__main__":
  absltest.main()
