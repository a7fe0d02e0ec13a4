# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Which inner optimizers `keep_sparse_gradients=True` changes, measured.

TF 1.15 made an embedding's `IndexedSlices` gradient dense when it
unscaled it, so every inner optimizer took its dense update. Kept sparse,
the inner optimizer takes its sparse update, and where that differs from
the dense one the training run differs. Which optimizers differ is a fact
to measure, not to guess (issue 52, item 15: the docs named four; nine
classes differ): this test trains each inner optimizer of the harness
beside TF 1.15's optimizer (`tf115_reference`, through `tf115_harness`),
kept sparse, and compares every variable, slot and non-slot variable to
the bit. It then holds the lists in `LossScaleOptimizer`'s docstring and in
docs/migration.md to what it measured, so the docs cannot drift.

Graph mode only: a `tf.function` and eager steps gave the same verdict for
every optimizer when this was written.
"""

import os
import re

import tensorflow as tf

import contrib_mixed_precision as mp
import tf115_harness as harness

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The harness's optimizers, by the `tf.compat.v1.train` class the docs name
# (`<Name>Optimizer`). Momentum and RMSProp are measured in each of their
# configurations: a class differs if any configuration does.
_CLASSES = {
    "sgd": "GradientDescent",
    "momentum": "Momentum",
    "nesterov": "Momentum",
    "adam": "Adam",
    "adagrad": "Adagrad",
    "adagrad_da": "AdagradDA",
    "adadelta": "Adadelta",
    "rmsprop": "RMSProp",
    "rmsprop_momentum": "RMSProp",
    "rmsprop_centered": "RMSProp",
    "ftrl": "Ftrl",
    "proximal_sgd": "ProximalGradientDescent",
    "proximal_adagrad": "ProximalAdagrad",
}
# Verdicts, as the docs word them.
DIFFERS = "differs"
SAME_WITHOUT_REPEATS = "same when no id repeats within a step"
SAME = "same"


def _differs(model, dtype, optimizer):
  case = harness.Case(model, dtype, optimizer, ("fixed", 128), steps=4,
                      keep_sparse=True)
  return bool(harness.mismatches(harness.trajectories(case, harness.GRAPH)))


def _measure():
  """{class name: verdict}, from the harness's embedding models.

  "embedding" looks up distinct ids in each step, "embedding_dup" repeats
  some within a step. GradientDescent is also measured in float16 (the
  docs used to name float16 only); the others in float32.
  """
  verdicts = {}
  for optimizer, name in sorted(_CLASSES.items()):
    dtypes = ("float32", "float16") if name == "GradientDescent" else (
        "float32",)
    if any(_differs("embedding", d, optimizer) for d in dtypes):
      verdict = DIFFERS
    elif any(_differs("embedding_dup", d, optimizer) for d in dtypes):
      verdict = SAME_WITHOUT_REPEATS
    else:
      verdict = SAME
    order = (SAME, SAME_WITHOUT_REPEATS, DIFFERS)
    verdicts[name] = max(verdicts.get(name, SAME), verdict, key=order.index)
  return verdicts


def _documented(text, where):
  """{class name: verdict}, from the two lists the docs give.

  The docs say "Differs for: A, B and C." and "Same as TF 1.15 only when
  no id repeats within a step: D." (line breaks and Markdown backticks
  aside).
  """
  text = " ".join(text.replace("`", "").split())
  found = {}
  for verdict, pattern in (
      (DIFFERS, r"Differs for: ([^.]*)\."),
      (SAME_WITHOUT_REPEATS,
       r"Same as TF 1\.15 only when no id repeats within a step: ([^.]*)\.")):
    match = re.search(pattern, text)
    if match is None:
      raise AssertionError("{} has no list matching {!r}".format(
          where, pattern))
    for name in re.split(r",\s*|\s+and\s+", match.group(1)):
      found[name.strip()] = verdict
  return found


class KeepSparseGradientsTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.measured = _measure()

  def test_measured_verdicts(self):
    # What the docs say must be true, measured again here: everything but
    # GradientDescent takes another update kept sparse, even with distinct
    # ids (their dense update moves or decays rows a step did not touch,
    # or rounds differently), and GradientDescent differs only when an id
    # repeats (TF 1.15 summed the rows, then unscaled the sum).
    self.assertEqual(SAME_WITHOUT_REPEATS, self.measured["GradientDescent"])
    for name in ("Ftrl", "ProximalAdagrad", "Adagrad", "Adadelta",
                 "Momentum", "RMSProp", "Adam"):
      self.assertEqual(DIFFERS, self.measured[name], name)

  def test_docstring_names_what_was_measured(self):
    doc = mp.LossScaleOptimizer.__init__.__doc__
    section = doc[doc.index("keep_sparse_gradients:"):doc.index("Raises:")]
    self.assertEqual(self.measured,
                     _documented(section, "The keep_sparse_gradients "
                                 "docstring"))

  def test_migration_guide_names_what_was_measured(self):
    with open(os.path.join(_REPO, "docs", "migration.md")) as f:
      text = f.read()
    start = text.index("**`keep_sparse_gradients=True`**")
    section = text[start:text.index("\n- **", start + 1)]
    self.assertEqual(self.measured,
                     _documented(section, "docs/migration.md"))


if __name__ == "__main__":
  tf.test.main()
