# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Runs every ```python and ```sh block of README.md and docs/*.md.

Each block runs in a fresh subprocess (this interpreter, the package as
tests/program_util.child_env() finds it), in a temporary directory, with a
timeout. A block that is a fragment names its prelude in an HTML comment
just above it in the Markdown, visible to anyone editing the doc:

    <!-- snippet: prelude=graph_loss -->

The prelude (defined in PRELUDES below) runs first and may end with an
epilogue that uses what the block built (runs a few steps, checks a value).
A block whose lines are alternatives, not one script, says `each-line`: each
command then runs on its own, after a fresh prelude. A block that cannot run
here says why:

    <!-- snippet: skip: needs network (pip install) -->

`test_inventory` lists the blocks run and the blocks skipped with their
reasons, and fails when the counts change: a new block runs (or fails)
unless it is marked, and marking one more block skipped is a visible edit of
EXPECTED below.
"""

import collections
import os
import re
import shlex
import subprocess
import sys
import tempfile
import textwrap

from absl.testing import absltest
from absl.testing import parameterized

import program_util

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Every page: `test_every_page_is_listed` fails when a docs/*.md is not.
DOCS = ("README.md", "docs/design.md", "docs/estimator.md", "docs/horovod.md",
        "docs/install.md", "docs/keras2_api.md", "docs/migration.md",
        "docs/observability.md", "docs/performance.md", "docs/testing.md",
        "docs/training_loops.md", "docs/upgrade_report.md")
TIMEOUT_S = 180

# (blocks run, blocks marked skip) per file. Change it together with the
# Markdown: the point is that neither changes silently.
EXPECTED = {
    "README.md": (4, 2),
    "docs/design.md": (0, 0),
    "docs/estimator.md": (2, 1),
    "docs/horovod.md": (0, 3),
    "docs/install.md": (0, 1),
    "docs/keras2_api.md": (0, 0),
    "docs/migration.md": (5, 8),
    "docs/observability.md": (2, 1),
    "docs/performance.md": (0, 6),
    "docs/testing.md": (0, 1),
    "docs/training_loops.md": (7, 2),
    "docs/upgrade_report.md": (0, 0),
}

_MODEL = """
import tensorflow as tf


def _tiny_model():
  # A scalar loss on one float16 layer with float32 master weights.
  x = tf.random.stateless_normal([8, 4], seed=[1, 2])
  w = tf.compat.v1.get_variable("w", [4, 1], initializer=tf.ones_initializer())
  y = tf.matmul(tf.cast(x, tf.float16), tf.cast(w, tf.float16))
  return tf.reduce_mean(tf.square(tf.cast(y, tf.float32)))
"""

_RUN_STEPS = """
with tf.compat.v1.Session() as _sess:
  _sess.run(tf.compat.v1.global_variables_initializer())
  for _ in range(3):
    _sess.run(train_op)
  print("snippet ran 3 steps; global_step", _sess.run(
      tf.compat.v1.train.get_or_create_global_step()))
"""

_WARM_START_BEFORE = _MODEL + """
import os
import tempfile
import contrib_mixed_precision as cmp

tf.compat.v1.disable_eager_execution()
# An fp32 run without loss scaling, saved with a plain Adam.
with tf.Graph().as_default():
  _loss = _tiny_model()
  _train = tf.compat.v1.train.AdamOptimizer(0.1).minimize(
      _loss, global_step=tf.compat.v1.train.get_or_create_global_step())
  with tf.compat.v1.Session() as _s:
    _s.run(tf.compat.v1.global_variables_initializer())
    _s.run(_train)
    _w_saved = _s.run(tf.compat.v1.trainable_variables()[0])
    fp32_checkpoint = tf.compat.v1.train.Saver().save(
        _s, os.path.join(tempfile.mkdtemp(), "fp32"))
# The mixed-precision model that warm-starts from it.
global_step = tf.compat.v1.train.get_or_create_global_step()
manager = cmp.ExponentialUpdateLossScaleManager(2**15, 1000)
opt = cmp.LossScaleOptimizer(tf.compat.v1.train.AdamOptimizer(1e-3), manager)
train_op = opt.minimize(_tiny_model(), global_step=global_step)
sess = tf.compat.v1.Session()
"""

_WARM_START_AFTER = """
import numpy as np
np.testing.assert_array_equal(
    _w_saved, sess.run(tf.compat.v1.trainable_variables()[0]))
assert sess.run(manager.get_loss_scale()) == 2**15
sess.run(train_op)
print("warm start restored w; loss scale starts at", 2**15)
"""

_LEGACY_TREE = """
mkdir -p old src
cat > old/train.py <<'EOF'
import tensorflow as tf
manager = tf.contrib.mixed_precision.FixedLossScaleManager(128)
opt = tf.contrib.mixed_precision.LossScaleOptimizer(
    tf.compat.v1.train.AdamOptimizer(1e-3), manager)
EOF
cp old/train.py src/train.py
cp old/train.py train.py
"""

# After docs/training_loops.md's eager and tf.function examples: their `w`
# after 3 steps, against the same steps in NumPy (float64, no loss scaling). A
# scaled gradient that was not unscaled moves `w` 128 or 2**15 times too far
# under plain SGD; Adam's step is checked with its bias correction.
_NUMPY_STEPS = """
import numpy as np
_x = np.array([[1e-3, 2e-3]])
_w = np.ones([2, 1])
_m = np.zeros_like(_w)
_v = np.zeros_like(_w)
for _t in range(1, 4):
  _g = _x.T * 2.0 * (_x @ _w)  # d/dw of mean((x w)**2), one element
  if _OPTIMIZER == "sgd":
    _w = _w - 1.0 * _g
  else:  # TF 1.15's AdamOptimizer, lr 1e-3, epsilon 1e-8.
    _m = 0.9 * _m + 0.1 * _g
    _v = 0.999 * _v + 0.001 * _g * _g
    _lr = 1e-3 * np.sqrt(1 - 0.999**_t) / (1 - 0.9**_t)
    _w = _w - _lr * _m / (np.sqrt(_v) + 1e-8)
# float16 gradients: the change in w within 1% of NumPy's.
np.testing.assert_allclose(w.numpy() - 1.0, _w - 1.0, rtol=1e-2)
print("w after 3 steps matches NumPy:", w.numpy().ravel())
"""

# After docs/estimator.md's Keras ports of an Estimator model: every step
# was applied, the scale moved as TF 1.15's policy moves it (docs/design.md,
# contract 2: doubled after every 2 finite steps), and the weights are those
# of the same steps in float32 with plain Keras SGD and no loss scaling. A
# gradient left scaled would move them 256 times too far.
_KERAS_PORT_CHECK = """
import numpy as np
assert int(opt.iterations.numpy()) == 8, opt.iterations
assert float(opt.loss_scale) == 2.0**8 * 2**(8 // 2), float(opt.loss_scale)
tf.keras.mixed_precision.set_global_policy("float32")
_ref = tf.keras.Sequential([
    tf.keras.Input((4,)),
    tf.keras.layers.Dense(1, kernel_initializer="ones"),
])
_ref_opt = tf.keras.optimizers.SGD(0.01, momentum=0.9)
for _i in range(0, 64, 8):
  with tf.GradientTape() as _tape:
    _loss = tf.reduce_mean(tf.square(_ref(x[_i:_i + 8]) - y[_i:_i + 8]))
  _ref_opt.apply_gradients(zip(_tape.gradient(_loss, _ref.trainable_variables),
                               _ref.trainable_variables))
for _got, _want in zip(model.trainable_variables, _ref.trainable_variables):
  _start = np.ones_like(_want.numpy()) if _want.shape.rank == 2 else 0.0
  np.testing.assert_allclose(np.asarray(_got.numpy(), np.float64) - _start,
                             _want.numpy() - _start, rtol=2e-2, atol=1e-4)
print("scale, steps and weights as expected")
"""

# name: (what it stands for, language, code before the block, code after).
PRELUDES = {
    "graph_loss": (
        "graph mode (disable_eager_execution) and `loss`, `global_step`; "
        "runs 3 steps of `train_op` after the block",
        "python", _MODEL + """
import contrib_mixed_precision
tf.compat.v1.disable_eager_execution()
global_step = tf.compat.v1.train.get_or_create_global_step()
loss = _tiny_model()
""", _RUN_STEPS),
    "build_model": (
        "`build_model()`, returning a loss, its variables and global_step "
        "(call it after disable_v2_behavior()); after the block, 40 steps "
        "in a Session, checking that global_step counts each applied step "
        "once",
        "python", _MODEL + """
def build_model():
  loss = _tiny_model()
  return (loss, tf.compat.v1.trainable_variables(),
          tf.compat.v1.train.get_or_create_global_step())
""", """
with tf.compat.v1.Session() as _sess:
  _sess.run(tf.compat.v1.global_variables_initializer())
  # From 2**32 the scale halves every 2 overflowing steps until the float16
  # gradients fit, then steps are applied.
  _applied = sum(_sess.run([train_op, all_are_finite])[1] for _ in range(40))
  assert _applied > 0
  # One increment per applied step: not two, not one per step run.
  assert _sess.run(global_step) == _applied, (_sess.run(global_step),
                                              _applied)
  print("40 steps,", _applied, "applied; global_step", _applied,
        "; loss_scale:0 =", _sess.run("loss_scale:0"))
"""),
    "monitored": (
        "graph mode and `cmp`, `manager`, `loss`, `global_step`, `model_dir`",
        "python", _MODEL + """
import tempfile
import contrib_mixed_precision as cmp
tf.compat.v1.disable_eager_execution()
model_dir = tempfile.mkdtemp()
global_step = tf.compat.v1.train.get_or_create_global_step()
manager = cmp.ExponentialUpdateLossScaleManager(2**15, 1000)
loss = _tiny_model()
""", """
print("final global_step", tf.compat.v1.train.load_variable(
    model_dir, "global_step"))
"""),
    "eager_check": (
        "nothing before (eager, TF2's default); after the block, `w` is "
        "checked against 3 Adam steps in NumPy and the scale is unchanged",
        "python", "", """
_OPTIMIZER = "adam"
""" + _NUMPY_STEPS + """
assert manager.get_loss_scale().numpy() == 2**15
"""),
    "function_check": (
        "nothing before (eager, TF2's default); after the block, `w` is "
        "checked against 3 SGD steps in NumPy",
        "python", "", """
_OPTIMIZER = "sgd"
""" + _NUMPY_STEPS),
    "cmp": ("`tf` and `cmp` (contrib_mixed_precision)", "python", """
import tensorflow as tf
import contrib_mixed_precision as cmp
""", ""),
    "warm_start": (
        "graph mode, an fp32 checkpoint `fp32_checkpoint` of the same model, "
        "the LSO model with `manager`, and `sess`; after the block, checks "
        "that the weights were restored and the scale starts fresh",
        "python", _WARM_START_BEFORE, _WARM_START_AFTER),
    "observe": (
        "graph mode, the package's names, `loss`, `global_step`, `model_dir`",
        "python", _MODEL + """
import tempfile
from contrib_mixed_precision import ExponentialUpdateLossScaleManager
from contrib_mixed_precision import LossScaleOptimizer
tf.compat.v1.disable_eager_execution()
model_dir = tempfile.mkdtemp()
global_step = tf.compat.v1.train.get_or_create_global_step()
loss = _tiny_model()
""", ""),
    "fetch_flag": (
        "graph mode, `GraphKeys`, `train_op` of an LSO and `sess`",
        "python", _MODEL + """
from contrib_mixed_precision import GraphKeys
import contrib_mixed_precision as cmp
tf.compat.v1.disable_eager_execution()
train_op = cmp.LossScaleOptimizer(
    tf.compat.v1.train.AdamOptimizer(1e-3),
    cmp.FixedLossScaleManager(128)).minimize(_tiny_model())
sess = tf.compat.v1.Session()
sess.run(tf.compat.v1.global_variables_initializer())
""", """
assert was_applied, was_applied
print("applied:", was_applied)
"""),
    "legacy_module": (
        "a legacy_trainer.py in the working directory that uses "
        "tf.contrib.mixed_precision",
        "python", """
with open("legacy_trainer.py", "w") as _f:
  _f.write(
      "import tensorflow as tf\\n"
      "m = tf.contrib.mixed_precision.ExponentialUpdateLossScaleManager(\\n"
      "    2**15, 1000)\\n"
      "print('legacy_trainer built', type(m).__name__)\\n")
""", ""),
    "keras_port": (
        "nothing before; after the block, checks `opt`'s steps and scale "
        "against TF 1.15's policy and `model`'s weights against a plain "
        "float32 Keras run on `x`, `y`",
        "python", "", _KERAS_PORT_CHECK),
    "legacy_tree": (
        "a legacy tree old/ (and src/, train.py) using "
        "tf.contrib.mixed_precision; `contrib-mp-upgrade` is "
        "`python -m contrib_mp_upgrade` of this interpreter",
        "sh", _LEGACY_TREE, """
for f in new/train.py train_tf2.py; do
  if [ -e "$f" ]; then grep -q contrib_mixed_precision "$f"; fi
done
"""),
}

# hooks.py's report line, as docs/observability.md shows it.
_LOG_LINE = (r"LossScaleHook: step \d+ \(global_step \d+\): loss scale "
             r"\d+; skipped \d+ of the last \d+ steps, \d+ of \d+ in "
             r"total\.")

_MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$")
_FENCE = re.compile(r"^(\s*)```(\w*)\s*$")

Block = collections.namedtuple(
    "Block", "doc line lang code prelude each_line skip")


def _parse_marker(text, where):
  """`prelude=NAME[, each-line]` or `skip: REASON`; returns the fields."""
  if text.startswith("skip:"):
    reason = text[len("skip:"):].strip()
    if not reason:
      raise ValueError("{}: a skip marker needs a reason".format(where))
    return None, False, reason
  prelude, each_line = None, False
  for part in (p.strip() for p in text.split(",")):
    if part.startswith("prelude="):
      prelude = part[len("prelude="):]
      if prelude not in PRELUDES:
        raise ValueError("{}: unknown prelude {!r}; known: {}".format(
            where, prelude, ", ".join(sorted(PRELUDES))))
    elif part == "each-line":
      each_line = True
    else:
      raise ValueError("{}: unknown snippet marker part {!r}".format(
          where, part))
  return prelude, each_line, None


def extract_blocks(doc):
  """The ```python and ```sh blocks of `doc`, with their markers."""
  with open(os.path.join(_REPO, doc), encoding="utf-8") as f:
    lines = f.read().split("\n")
  blocks = []
  marker = None
  i = 0
  while i < len(lines):
    m = _MARKER.match(lines[i])
    fence = _FENCE.match(lines[i])
    if m:
      if marker is not None:
        raise ValueError("{}:{}: two snippet markers in a row".format(
            doc, i + 1))
      marker = (m.group(1), i + 1)
    elif fence:
      indent, lang = fence.group(1), fence.group(2)
      start = i + 1
      i += 1
      while not re.match(r"^\s*```\s*$", lines[i]):
        i += 1
      code = textwrap.dedent("\n".join(
          l[len(indent):] if l.startswith(indent) else l
          for l in lines[start:i])) + "\n"
      if lang in ("python", "sh"):
        where = "{}:{}".format(doc, start)
        prelude, each_line, skip = (
            _parse_marker(marker[0], where) if marker else (None, False, None))
        if prelude and PRELUDES[prelude][1] != lang:
          raise ValueError("{}: prelude {!r} is for {} blocks".format(
              where, prelude, PRELUDES[prelude][1]))
        blocks.append(Block(doc, start, lang, code, prelude, each_line,
                            skip))
      elif marker:
        raise ValueError("{}:{}: a snippet marker above a ```{} block".format(
            doc, marker[1], lang))
      marker = None
    elif marker and lines[i].strip():
      raise ValueError("{}:{}: a snippet marker must be just above a code "
                       "block".format(doc, marker[1]))
    i += 1
  return blocks


ALL_BLOCKS = [b for doc in DOCS for b in extract_blocks(doc)]


def _name(block):
  return "{}_line{}".format(re.sub(r"\W", "_", block.doc), block.line)


def _commands(code):
  """A sh block's commands, continuation lines joined, comments dropped."""
  joined = code.replace("\\\n", " ")
  return [l for l in joined.split("\n")
          if l.strip() and not l.strip().startswith("#")]


def _run(block, body, cwd):
  """Runs one script built from `block`'s prelude and `body`."""
  before, after = ("", "")
  if block.prelude:
    _, _, before, after = PRELUDES[block.prelude]
  env = program_util.child_env()
  if block.lang == "python":
    path = os.path.join(cwd, "snippet.py")
    with open(path, "w", encoding="utf-8") as f:
      f.write("\n".join([before, body, after]))
    argv = [sys.executable, path]
  else:
    path = os.path.join(cwd, "snippet.sh")
    header = ("set -euo pipefail\n"
              "python() {{ {py} \"$@\"; }}\n"
              "contrib-mp-upgrade() {{ {py} -m contrib_mp_upgrade \"$@\"; }}\n"
              ).format(py=shlex.quote(sys.executable))
    with open(path, "w", encoding="utf-8") as f:
      f.write("\n".join([header, before, body, after]))
    argv = ["bash", path]
    # tf_upgrade_v2 is found beside this interpreter.
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable),
                                   env.get("PATH", "")])
  proc = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, timeout=TIMEOUT_S,
                        check=False)
  output = proc.stdout.decode("utf-8", "replace")
  if proc.returncode:
    raise AssertionError(
        "{}:{} ({} block{}) failed with exit status {}.\n--- script ---\n"
        "{}\n--- output (end) ---\n{}".format(
            block.doc, block.line, block.lang,
            ", prelude " + block.prelude if block.prelude else "",
            proc.returncode, body, output[-5000:]))
  return output


def _inventory():
  ran = ["  {}:{} ({}{}{})".format(
      b.doc, b.line, b.lang, ", prelude=" + b.prelude if b.prelude else "",
      ", each line" if b.each_line else "")
         for b in ALL_BLOCKS if not b.skip]
  skipped = ["  {}:{} ({}): {}".format(b.doc, b.line, b.lang, b.skip)
             for b in ALL_BLOCKS if b.skip]
  return ("Code blocks run ({}):\n{}\nCode blocks marked not runnable, with "
          "their reasons ({}):\n{}\n".format(len(ran), "\n".join(ran),
                                              len(skipped),
                                              "\n".join(skipped)))


class DocsSnippetsTest(parameterized.TestCase):

  def test_inventory(self):
    inventory = _inventory()
    print(inventory)
    counts = {doc: (0, 0) for doc in DOCS}
    for b in ALL_BLOCKS:
      ran, skipped = counts[b.doc]
      counts[b.doc] = (ran + (not b.skip), skipped + bool(b.skip))
    self.assertEqual(EXPECTED, counts,
                     "The docs' code blocks changed: (run, skipped) per "
                     "file. Update EXPECTED with the docs.\n" + inventory)

  def test_every_page_is_listed(self):
    pages = {"README.md"} | {
        "docs/" + name for name in os.listdir(os.path.join(_REPO, "docs"))
        if name.endswith(".md")}
    self.assertEqual(pages, set(DOCS),
                     "Add each page to DOCS and EXPECTED (and to the data of "
                     "docs_snippets_test in BUILD), so its blocks run.")

  def test_every_prelude_is_used(self):
    self.assertEqual(set(PRELUDES),
                     {b.prelude for b in ALL_BLOCKS if b.prelude})

  def test_documented_log_line_is_what_the_hook_logs(self):
    pattern = _LOG_LINE
    with open(os.path.join(_REPO, "docs/observability.md"),
              encoding="utf-8") as f:
      self.assertRegex(f.read(), pattern)
    # test_block_runs checks that the observability snippet logs it.



def _block_test_class(doc):
  """A test class running `doc`'s blocks, one test each.

  One class per file, so pytest-xdist's `--dist loadscope` (one class per
  worker) spreads the files over the workers.
  """

  class BlocksTest(parameterized.TestCase):

    @parameterized.named_parameters(
        (_name(b), b) for b in ALL_BLOCKS if b.doc == doc and not b.skip)
    def test_block_runs(self, block):
      bodies = _commands(block.code) if block.each_line else [block.code]
      for body in bodies:
        with tempfile.TemporaryDirectory() as cwd:
          print("{}:{}: {}".format(block.doc, block.line,
                                   body if block.each_line else block.lang))
          output = _run(block, body, cwd)
          if block.prelude == "observe":
            # The documented sample line's format, logged for real.
            self.assertRegex(output, _LOG_LINE)

  name = "".join(w.capitalize() for w in re.split(
      r"[\W_]", os.path.splitext(os.path.basename(doc))[0])) + "BlocksTest"
  BlocksTest.__name__ = BlocksTest.__qualname__ = name
  return name, BlocksTest


for _doc in DOCS:
  if any(b.doc == _doc and not b.skip for b in ALL_BLOCKS):
    _class_name, _class = _block_test_class(_doc)
    globals()[_class_name] = _class
del _doc, _class_name, _class


if __name__ == "__main__":
  absltest.main()
