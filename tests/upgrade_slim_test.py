# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""`--contrib-to-slim`: contrib.layers, framework and slim to tf_slim, then run.

The tree is a TF 1.15 Session program of the slim era: `fully_connected`
layers under an `arg_scope` with a Xavier initializer and an L2
regularizer, reached three ways (`tf.contrib.layers.X`, `import
tensorflow.contrib.slim as slim`, `from tensorflow.contrib import layers`),
trained with `tf.contrib.mixed_precision` loss scaling. A helper module
beside it uses names tf_slim does not have (`embed_sequence`).

The command converts it with `--contrib-to-slim`; the test applies what the
report says, runs the program on this TensorFlow, and checks that it
trains: the loss falls, the regularizer reached every layer (so the
`arg_scope` still applies to the rewritten layers), steps fed NaN change
nothing, and the loss scale follows TF 1.15's policy
(tests/policy_reference.py). It also checks that what tf_slim lacks is
reported and left as written, that a second run changes nothing, that
without the flag the output is what it always was, and, with
`--tf_upgrade_v2`, that TensorFlow's converter runs after the rewrite and
the result still trains.
"""

import os
import shutil
import sys
import tempfile

from absl.testing import parameterized
import tensorflow as tf

from contrib_mp_upgrade import rewrite
from contrib_mp_upgrade import slim
import policy_reference
import upgrade_fixture_util as util

_TRAIN = '''\
"""Trains a small slim-style regression net with fp16 loss scaling."""
from __future__ import print_function

import json

import numpy as np
import {tf_import}
from tensorflow.contrib.framework import arg_scope

import nets

RNG = np.random.RandomState(0)
X = RNG.uniform(-1.0, 1.0, (16, 3)).astype(np.float32)
Y = (X.dot([[1.0], [-2.0], [0.5]]) + 0.3).astype(np.float32)
BAD_STEPS = (3, 6)

tf.set_random_seed(1)
x = tf.placeholder(tf.float32, [16, 3], name="x")
y = tf.placeholder(tf.float32, [16, 1], name="y")
with arg_scope([tf.contrib.layers.fully_connected],
               weights_initializer=tf.contrib.layers.xavier_initializer(
                   seed=7),
               weights_regularizer=tf.contrib.layers.l2_regularizer(1e-4)):
  prediction = nets.head(nets.body(x))
regularizers = tf.losses.get_regularization_losses()
loss = tf.reduce_mean(tf.square(prediction - y)) + tf.add_n(regularizers)
manager = tf.contrib.mixed_precision.ExponentialUpdateLossScaleManager(
    256, 2, 1, 2.0, 0.5)
optimizer = tf.contrib.mixed_precision.LossScaleOptimizer(
    tf.train.GradientDescentOptimizer(0.05), manager)
train_op = optimizer.minimize(loss)
weights = tf.trainable_variables()
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  losses, scales, changed = [], [], []
  for step in range(10):
    before = sess.run(weights)
    feed = {{x: X * np.nan if step in BAD_STEPS else X, y: Y}}
    sess.run(train_op, feed)
    after = sess.run(weights)
    changed.append(any(bool((a != b).any()) for a, b in zip(after, before)))
    losses.append(float(sess.run(loss, {{x: X, y: Y}})))
    scales.append(float(sess.run(manager.get_loss_scale())))
  print(json.dumps({{"losses": losses, "scales": scales, "changed": changed,
                    "regularizers": len(regularizers),
                    "layers": len(weights) // 2}}))
'''

_NETS = '''\
"""The layers, written three ways."""
import tensorflow as tf
import tensorflow.contrib.slim as slim
from tensorflow.contrib import layers


def body(x):
  hidden = slim.fully_connected(x, 8, scope="hidden1")
  return layers.fully_connected(hidden, 8, scope="hidden2")


def head(hidden):
  return tf.contrib.layers.fully_connected(hidden, 1, activation_fn=None,
                                           scope="out")
'''

_EXTRAS = '''\
"""Helpers that tf_slim cannot serve: TF 1.15's embedding layers."""
import tensorflow as tf
from tensorflow.contrib.layers import embed_sequence


def embed(ids):
  step = tf.contrib.framework.get_or_create_global_step()
  return tf.contrib.layers.embed_sequence(ids, 10, 4), step


def encode(ids):
  return embed_sequence(ids, vocab_size=10, embed_dim=4)
'''

# What the rewrite makes of nets.py: each binding names tf_slim, the
# continuation line keeps its alignment, and `import tf_slim` follows the
# TensorFlow import.
_NETS_CONVERTED = '''\
"""The layers, written three ways."""
import tensorflow as tf
import tf_slim
import tf_slim as slim
import tf_slim as layers


def body(x):
  hidden = slim.fully_connected(x, 8, scope="hidden1")
  return layers.fully_connected(hidden, 8, scope="hidden2")


def head(hidden):
  return tf_slim.fully_connected(hidden, 1, activation_fn=None,
                                 scope="out")
'''

# ExponentialUpdateLossScaleManager(256, 2, 1, 2.0, 0.5) of _TRAIN.
_MANAGER = (256.0, 2, 1, 2.0, 0.5)
_BAD_STEPS = (3, 6)


_main = util.run_command
_write = util.write_files
_read = util.read_text


def _legacy_tree(root, tf_import):
  _write(root, {"train.py": _TRAIN.format(tf_import=tf_import),
                "nets.py": _NETS, "extras.py": _EXTRAS})
  return root


def _convert(tmp, name, intree, *flags):
  outtree = os.path.join(tmp, name)
  report = os.path.join(tmp, name + "_report.txt")
  status, stdout, stderr = _main("--intree", intree, "--outtree", outtree,
                                 "--reportfile", report, *flags)
  if status != 0:
    raise AssertionError("exit {}: {}{}".format(status, stdout, stderr))
  return outtree, _read(report)


def _run_with_advice(tmp, outtree, name):
  """Runs train.py as the report says: graph mode on in the entry script."""
  work = os.path.join(tmp, name)
  shutil.copytree(outtree, work)
  train = _read(os.path.join(work, "train.py"))
  anchor = "\nimport tf_slim\n"
  assert anchor in train, train
  train = train.replace(
      anchor, anchor + "tf.compat.v1.disable_eager_execution()\n", 1)
  _write(work, {"train.py": train})
  proc = util.run_python([os.path.join(work, "train.py")], cwd=work)
  return util.last_json(proc)


class ContribToSlimTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tmp = tempfile.mkdtemp(prefix="upgrade_slim_test_")
    # Code half-way to TF 2 already reads the TF1 API through compat.v1;
    # without --tf_upgrade_v2 that is what lets the Session code run.
    cls.intree = _legacy_tree(os.path.join(cls.tmp, "legacy"),
                              "tensorflow.compat.v1 as tf")
    cls.outtree, cls.report = _convert(cls.tmp, "tf2", cls.intree,
                                       "--contrib-to-slim")

  @classmethod
  def tearDownClass(cls):
    shutil.rmtree(cls.tmp, ignore_errors=True)
    super().tearDownClass()

  def _assert_trains(self, values):
    losses = values["losses"]
    # Each finite step lowers the loss; a skipped one leaves it as it was.
    for step in range(1, 10):
      if step in _BAD_STEPS:
        self.assertEqual(losses[step], losses[step - 1], msg=losses)
      else:
        self.assertLess(losses[step], losses[step - 1], msg=losses)
    self.assertLess(losses[-1], 0.7 * losses[0], msg=losses)
    # The arg_scope's regularizer reached all three layers, whichever way
    # each was written.
    self.assertEqual(values["layers"], 3)
    self.assertEqual(values["regularizers"], 3)
    flags = [step not in _BAD_STEPS for step in range(10)]
    self.assertEqual(values["changed"], flags)
    expected = [scale for scale, _, _ in policy_reference.exponential_policy(
        flags, *_MANAGER)]
    self.assertEqual(values["scales"], expected)

  def test_converted_program_trains_with_the_reports_advice(self):
    self.assertIn("tf.compat.v1.disable_eager_execution()", self.report)
    self._assert_trains(_run_with_advice(self.tmp, self.outtree, "run"))

  def test_every_provided_use_is_rewritten_and_bound_once(self):
    self.assertEqual(_read(os.path.join(self.outtree, "nets.py")),
                     _NETS_CONVERTED)
    train = _read(os.path.join(self.outtree, "train.py"))
    self.assertIn("import tensorflow.compat.v1 as tf\n"
                  "import contrib_mixed_precision\nimport tf_slim\n"
                  "from tf_slim import arg_scope\n", train)
    self.assertIn(
        "with arg_scope([tf_slim.fully_connected],\n"
        "               weights_initializer=tf_slim.xavier_initializer(\n"
        "                   seed=7),\n"
        "               weights_regularizer=tf_slim.l2_regularizer(1e-4)):\n",
        train)
    self.assertEqual(train.count("import tf_slim\n"), 1)
    self.assertNotIn("contrib", train.replace("contrib_mixed_precision", ""))

  def test_what_tf_slim_lacks_is_reported_not_rewritten(self):
    extras = _read(os.path.join(self.outtree, "extras.py"))
    self.assertIn("from tensorflow.contrib.layers import embed_sequence\n",
                  extras)
    self.assertIn("tf.contrib.layers.embed_sequence(ids, 10, 4)", extras)
    self.assertIn("step = tf_slim.get_or_create_global_step()", extras)
    for line in (3, 8):
      self.assertIn(
          "\n  {}: not rewritten to tf_slim: `tf.contrib.layers."
          "embed_sequence`: tf_slim does not provide `embed_sequence` with "
          "TF 1.15's meaning, so it is left unchanged; migrate it by "
          "hand\n".format(line), self.report)
    # The summary ranks what is left, with the right fix, and says what
    # was rewritten and what that needs.
    self.assertIn("  - tf.contrib.layers: 1 file, 2 uses (first: "
                  "extras.py). Fix: " + slim.LEFT_FIX + ".", self.report)
    self.assertNotIn("tf.contrib.framework:", self.report)
    self.assertNotIn("tf.contrib.slim:", self.report)
    self.assertIn("Rewritten to tf_slim (--contrib-to-slim): 8 lines in 3 "
                  "files (first: extras.py, nets.py, train.py). tf_slim must "
                  "be installed where they run: pip install "
                  "'contrib_mixed_precision[slim]'.", self.report)
    self.assertIn("extras.py\n", self.report)
    self.assertIn("still uses other tf.contrib modules (not converted): "
                  "layers x2 (lines 3, 8)", self.report)

  def test_a_second_run_changes_nothing(self):
    again, report = _convert(self.tmp, "again", self.outtree,
                             "--contrib-to-slim")
    self.assertEqual(util.tree_files(again), util.tree_files(self.outtree))
    self.assertIn("Python files: 3 read, 0 converted", report)

  def test_without_the_flag_nothing_changes(self):
    plain, report = _convert(self.tmp, "plain", self.intree)
    files = util.tree_files(plain)
    for name in ("nets.py", "extras.py"):
      self.assertEqual(files[name], util.tree_files(self.intree)[name])
    self.assertNotIn(b"tf_slim", files["train.py"])
    self.assertIn(b"from tensorflow.contrib.framework import arg_scope",
                  files["train.py"])
    self.assertNotIn("--contrib-to-slim):", report)
    self.assertIn("  - tf.contrib.layers: 3 files", report)

  def test_with_tf_upgrade_v2_the_rewrite_comes_first_and_it_trains(self):
    intree = _legacy_tree(os.path.join(self.tmp, "legacy_tf1"),
                          "tensorflow as tf")
    outtree, report = _convert(self.tmp, "both", intree,
                               "--contrib-to-slim", "--tf_upgrade_v2")
    train = _read(os.path.join(outtree, "train.py"))
    # tf_upgrade_v2 saw tf_slim's names, not contrib's, so it did not turn
    # the initializer or the regularizer into Keras ones.
    self.assertIn("weights_initializer=tf_slim.xavier_initializer(", train)
    self.assertIn("weights_regularizer=tf_slim.l2_regularizer(1e-4)", train)
    self.assertNotIn("keras", train)
    self.assertIn("tf.compat.v1.placeholder(", train)
    self.assertIn("tf_upgrade_v2 also changed this file", report)
    self.assertNotIn("tf.contrib.framework:", report)
    self._assert_trains(_run_with_advice(self.tmp, outtree, "run_both"))

  def test_the_table_names_what_tf_slim_has_at_its_top(self):
    import tf_slim  # pylint: disable=g-import-not-at-top
    layers = sys.modules["tf_slim.layers"]
    for module, names in slim.EXACT.items():
      for name in names:
        self.assertTrue(hasattr(tf_slim, name), msg=(module, name))
    for name in slim.EXACT["tensorflow.contrib.layers"]:
      self.assertIs(getattr(tf_slim, name), getattr(layers, name), msg=name)
    for name in slim.EXACT["tensorflow.contrib.framework"]:
      self.assertIn(getattr(tf_slim, name).__module__,
                    ("tf_slim.ops.arg_scope", "tf_slim.ops.variables"),
                    msg=name)
    # Why `tf_slim.X`: its `layers` attribute is the submodule of the
    # layer functions, without the initializers.
    self.assertFalse(hasattr(tf_slim.layers, "xavier_initializer"))
    # Why `summaries` is left: tf_slim's is slim's module, not layers'.
    self.assertIsNot(tf_slim.summaries, layers.summaries)
    for name in ("embed_sequence", "bow_encoder", "feature_column"):
      self.assertFalse(hasattr(tf_slim, name), msg=name)


# (input, output) of `upgrade_source(..., contrib_to_slim=True)`: every
# import style resolve.py understands, and the bindings that go or stay.
_STYLES = (
    ("getattr_and_compat_v1",
     "import tensorflow.compat.v1 as tf\n"
     "f = getattr(tf.contrib.layers, 'fully_connected')\n"
     "s = tf.contrib.slim.arg_scope\n",
     "import tensorflow.compat.v1 as tf\nimport tf_slim\n"
     "f = tf_slim.fully_connected\ns = tf_slim.arg_scope\n"),
    ("dotted_import_becomes_its_root",
     "import tensorflow.contrib.layers\n"
     "x = tensorflow.contrib.layers.flatten(y)\n",
     "import tensorflow\nimport tf_slim\nx = tf_slim.flatten(y)\n"),
    ("module_alias_kept_while_a_use_needs_it",
     "import tensorflow.contrib.slim as slim\n"
     "x = slim.fully_connected(y, 2)\nz = slim.learning.train\n",
     "import tensorflow.contrib.slim as slim\nimport tf_slim\n"
     "x = tf_slim.fully_connected(y, 2)\nz = slim.learning.train\n"),
    ("from_contrib_beside_mixed_precision_and_opt",
     "from tensorflow.contrib import layers, mixed_precision, opt\n"
     "x = layers.flatten(y)\nm = mixed_precision.FixedLossScaleManager(2)\n"
     "o = opt.LazyAdamOptimizer\n",
     "from tensorflow.contrib import opt\nimport tf_slim as layers\n"
     "import contrib_mixed_precision as mixed_precision\n"
     "x = layers.flatten(y)\nm = mixed_precision.FixedLossScaleManager(2)\n"
     "o = opt.LazyAdamOptimizer\n"),
    ("function_local_import_after_docstring_and_future",
     '"""Doc."""\nfrom __future__ import division\n\n\ndef f():\n'
     "  import tensorflow as tf\n"
     "  from tensorflow.contrib.framework import arg_scope as scope\n"
     "  return tf.contrib.layers.flatten(scope)\n",
     '"""Doc."""\nfrom __future__ import division\nimport tf_slim\n\n\n'
     "def f():\n  import tensorflow as tf\n"
     "  from tf_slim import arg_scope as scope\n"
     "  return tf_slim.flatten(scope)\n"),
    ("crlf_kept",
     "import tensorflow as tf\r\nx = tf.contrib.layers.flatten(y)\r\n",
     "import tensorflow as tf\r\nimport tf_slim\r\nx = tf_slim.flatten(y)\r\n"),
    ("star_import_left",
     "from tensorflow.contrib.slim import *\nx = fully_connected(y, 2)\n",
     "from tensorflow.contrib.slim import *\nx = fully_connected(y, 2)\n"),
)


class RewriteStylesTest(tf.test.TestCase, parameterized.TestCase):
  """The rewrite of each import style, without running TensorFlow."""

  @parameterized.named_parameters(*_STYLES)
  def test_style(self, source, expected):
    result = rewrite.upgrade_source(source.encode(), contrib_to_slim=True)
    self.assertEqual(result.new_source.decode(), expected)
    again = rewrite.upgrade_source(result.new_source, contrib_to_slim=True)
    self.assertEqual(again.new_source, result.new_source)
    self.assertFalse(again.changed)

  def test_a_file_that_binds_tf_slim_itself_is_left_and_warned(self):
    source = (b"import tensorflow as tf\ntf_slim = None\n"
              b"x = tf.contrib.layers.flatten(y)\n")
    result = rewrite.upgrade_source(source, contrib_to_slim=True)
    self.assertEqual(result.new_source, source)
    self.assertEqual(result.warnings, [(0, (
        "this file binds the name `tf_slim` itself (line 2), so "
        "--contrib-to-slim rewrote nothing in it; rename that binding and "
        "run again"))])
    self.assertEqual(result.other_contrib, {"layers": [3]})

  def test_infile_mode_takes_the_flag(self):
    tmp = tempfile.mkdtemp(prefix="upgrade_slim_test_")
    self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
    infile, outfile = (os.path.join(tmp, n) for n in ("in.py", "out.py"))
    _write(tmp, {"in.py": _STYLES[0][1]})
    status, _, err = _main("--infile", infile, "--outfile", outfile,
                           "--reportfile", os.path.join(tmp, "r.txt"),
                           "--contrib_to_slim")
    self.assertEqual(status, 0, err)
    self.assertEqual(_read(outfile), _STYLES[0][2])

  def test_without_the_flag_the_source_is_kept(self):
    for _, source, _ in _STYLES:
      result = rewrite.upgrade_source(source.encode())
      self.assertNotIn(b"tf_slim", result.new_source)
      self.assertFalse(result.slim_lines)


if __name__ == "__main__":
  tf.test.main()
