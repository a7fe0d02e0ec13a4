# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Follows docs/migration.md's walkthrough, step by step, as a reader would.

The walkthrough takes one TF 1.15 Session program to a TF 2 run "using only
the command and what its report says". This test reads its blocks out of
the Markdown, so the page and the test cannot drift apart:

0. writes the TF 1.15 `train.py` it shows;
1. runs the command line it shows (`contrib-mp-upgrade ...`, here as
   `python -m contrib_mp_upgrade`, the same entry point);
2. checks that the report's "Before you run it" says what the page quotes,
   and that the converted program, run as it is, stops as the page says;
3. adds the one line the page (and the report) names;
4. runs it, and checks the printed numbers against the page's comment and
   against a NumPy replay of TF 1.15's gradient descent and loss-scale
   policy.
"""

import os
import re
import shlex
import shutil
import tempfile
import textwrap

from absl.testing import absltest
import numpy as np

import upgrade_fixture_util as util

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_DOC = os.path.join(_REPO, "docs", "migration.md")


def _walkthrough_blocks():
  """The walkthrough's fenced blocks, as (language, text) pairs, in order."""
  with open(_DOC, encoding="utf-8") as f:
    text = f.read()
  start = text.index("\n## Walkthrough")
  end = text.index("\n## ", start + 1)
  # A block inside a numbered step is indented with it.
  return [(lang, textwrap.dedent(body)) for lang, body in re.findall(
      r"(?ms)^[ ]*```(\w+)\n(.*?)^[ ]*```", text[start:end])]


def _replay(steps, learning_rate, init_scale, incr_every):
  """TF 1.15's numbers for the walkthrough's program: w, b, final scale.

  Every step is finite: gradient descent on the mean squared error, and the
  exponential policy doubles the scale after every `incr_every` good steps.
  """
  x = np.array([1.0, 2.0, 3.0, 4.0])
  y = 3.0 * x + 1.0
  w = b = 0.0
  for _ in range(steps):
    residual = x * w + b - y
    w, b = (w - learning_rate * 2.0 * np.mean(x * residual),
            b - learning_rate * 2.0 * np.mean(residual))
  scale = util.expected_scale(
      ("exponential", init_scale, incr_every, 2, 2.0, 0.5), [True] * steps)
  return w, b, scale


class WalkthroughTest(absltest.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    blocks = _walkthrough_blocks()
    languages = [lang for lang, _ in blocks]
    # The page's shape: the program, the command, the report's words, the
    # line to add, the run.
    assert languages == ["python", "sh", "text", "python", "sh"], languages
    (_, cls.source), (_, cls.command), (_, cls.report_quote), (
        _, cls.added_line), (_, cls.run_line) = blocks
    cls.tmp = tempfile.mkdtemp()
    with open(os.path.join(cls.tmp, "train.py"), "w") as f:
      f.write(cls.source)
    argv = shlex.split(cls.command)
    assert argv[0] == "contrib-mp-upgrade", argv
    cls.convert = util.run_python(["-m", "contrib_mp_upgrade"] + argv[1:],
                                  cwd=cls.tmp)
    cls.converted = os.path.join(cls.tmp, argv[argv.index("--outfile") + 1])

  @classmethod
  def tearDownClass(cls):
    shutil.rmtree(cls.tmp, ignore_errors=True)
    super().tearDownClass()

  def _run_converted(self, path):
    return util.run_python([os.path.basename(path)], cwd=self.tmp)

  def test_step1_the_command_converts_the_program(self):
    self.assertEqual(self.convert.returncode, 0,
                     msg=self.convert.stdout + self.convert.stderr)
    with open(self.converted) as f:
      converted = f.read()
    self.assertIn("import contrib_mixed_precision", converted)
    self.assertNotIn("tf.contrib", converted)
    self.assertIn("tf.compat.v1.placeholder", converted)

  def test_step2_the_report_says_what_the_page_quotes(self):
    with open(os.path.join(self.tmp, "contrib_mp_upgrade_report.txt")) as f:
      report = f.read()
    # The page elides the ranking's explanation as "(...)"; every other
    # character of the quote is in the report, in order, as one passage.
    pattern = r"\s+".join(
        r"\(.*?\):" if word == "(...):" else re.escape(word)
        for word in self.report_quote.split())
    self.assertRegex(report, re.compile(pattern, re.S))

  def test_step2_unfixed_it_stops_as_the_page_says(self):
    proc = self._run_converted(self.converted)
    self.assertNotEqual(proc.returncode, 0)
    self.assertIn("tf.placeholder() is not compatible with eager execution",
                  proc.stderr)

  def test_steps3_and_4_with_the_named_fix_it_trains_to_tf115s_numbers(self):
    with open(self.converted) as f:
      lines = f.read().splitlines(keepends=True)
    at = lines.index("import tensorflow as tf\n") + 1
    fixed = os.path.join(self.tmp, "train_fixed.py")
    with open(fixed, "w") as f:
      f.writelines(lines[:at] + [self.added_line] + lines[at:])
    argv = shlex.split(self.run_line, comments=True)
    self.assertEqual(argv, ["python", os.path.basename(self.converted)])
    proc = self._run_converted(fixed)
    self.assertEqual(proc.returncode, 0, msg=proc.stderr[-4000:])
    printed = proc.stdout.strip().splitlines()[-1]
    # The page's comment is what the run prints.
    self.assertEqual(printed, self.run_line.split("#", 1)[1].strip())
    # And that is TF 1.15's result, computed here without TensorFlow.
    steps = int(re.search(r"for step in range\((\d+)\)", self.source)[1])
    rate = float(re.search(r"GradientDescentOptimizer\(([\d.]+)\)",
                           self.source)[1])
    init = float(re.search(r"init_loss_scale=(\d+)", self.source)[1])
    every = int(re.search(r"incr_every_n_steps=(\d+)", self.source)[1])
    w, b, scale = _replay(steps, rate, init, every)
    self.assertEqual(printed,
                     "w %.3f, b %.3f, loss scale %.0f" % (w, b, scale))


if __name__ == "__main__":
  absltest.main()
