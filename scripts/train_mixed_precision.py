# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""What loss scaling buys in float16: four TF1 training runs, side by side.

Trains one small regression MLP four times, on generated data, in
`tf.compat.v1` sessions:

  1. float32;
  2. float16 compute, no loss scaling;
  3. float16 compute, `FixedLossScaleManager`;
  4. float16 compute, `ExponentialUpdateLossScaleManager` (starting at 2**32
     and halving after 2 bad steps, as NVIDIA's BERT does; doubling after
     `--incr_every_n_steps` good steps).

The float16 runs keep float32 master weights and compute the forward pass and
its gradients in float16, with the loss in float32, as mixed-precision
training does. The task is built so that float16 gradients underflow, as
they do in real models: the loss is a mean over `batch_size * output_dim`
elements (a dense-prediction loss), and the targets and the model's output
are in small units (`--target_scale`). Each element's gradient entering the
float16 graph starts near 1e-6, among float16's imprecise subnormals, and
shrinks as the model improves until it falls below the smallest one (6e-8)
and flushes to zero: the unscaled run stalls (Micikevicius et al., 2018).
Loss scaling lifts the gradients back into range. Every run is judged by
the same float32 evaluation of its float32 weights, relative to the
targets' variance.

Writes to `--output_dir`: TensorBoard event files (one directory per run,
with `LossScaleHook`'s loss-scale and skipped-step scalars), `results.json`,
and `demo.png` (loss curves; loss-scale trajectory with skipped steps).

Usage (it runs the installed package: `pip install '.[demo]'` first):
  python scripts/train_mixed_precision.py            # full run, about 30 s
  python scripts/train_mixed_precision.py --fast     # seconds, for tests
  tensorboard --logdir demo_output/tensorboard
"""

import argparse
import importlib.util
import json
import math
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# The demo shows the package the quick start installed, not this clone's
# source: `python scripts/train_mixed_precision.py` puts scripts/ first on
# sys.path, not the clone's root.
if importlib.util.find_spec("contrib_mixed_precision") is None:
  sys.exit("train_mixed_precision.py: error: contrib_mixed_precision is not "
           "installed in {} ({}). The demo runs the installed package: from "
           "the root of the clone (in a virtualenv), run\n"
           "  python -m pip install '.[tensorflow-cpu,demo]'\n"
           "(or '.[demo]' beside a TensorFlow you already have), then run "
           "this script again.".format(sys.executable, sys.version.split()[0]))

from absl import logging as absl_logging  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

# pylint: disable=g-import-not-at-top,wrong-import-position
from contrib_mixed_precision import hooks
from contrib_mixed_precision import loss_scale_manager as lsm
from contrib_mixed_precision import loss_scale_optimizer as lso
# pylint: enable=g-import-not-at-top,wrong-import-position

# (name, compute dtype, manager factory or None)
RUNS = (
    ("fp32", tf.float32, None),
    ("fp16_no_scaling", tf.float16, None),
    ("fp16_fixed", tf.float16,
     lambda args: lsm.FixedLossScaleManager(args.fixed_loss_scale)),
    ("fp16_exponential", tf.float16,
     lambda args: lsm.ExponentialUpdateLossScaleManager(
         init_loss_scale=2**32, incr_every_n_steps=args.incr_every_n_steps,
         decr_every_n_nan_or_inf=2, decr_ratio=0.5)),
)
# One colour per run in every panel. float32, the reference the scaled runs
# should track, is a wide translucent band drawn under them, so both it and
# the thin curves on it stay visible.
STYLES = {
    "fp32": dict(color="black", linestyle="-", linewidth=7, alpha=0.25,
                 zorder=1),
    "fp16_no_scaling": dict(color="tab:red", linestyle="-", linewidth=1.5,
                            zorder=2),
    "fp16_fixed": dict(color="tab:blue", linestyle="-", linewidth=1.5,
                       zorder=3),
    "fp16_exponential": dict(color="tab:green", linestyle="--",
                             linewidth=1.5, zorder=4),
}
LABELS = {
    "fp32": "float32",
    "fp16_no_scaling": "float16, no loss scaling",
    "fp16_fixed": "float16, FixedLossScaleManager",
    "fp16_exponential": "float16, ExponentialUpdateLossScaleManager",
}


def parse_args(argv=None):
  parser = argparse.ArgumentParser(
      description=__doc__.split("\n\n")[0] + " See the module docstring.",
      formatter_class=argparse.ArgumentDefaultsHelpFormatter)
  parser.add_argument("--output_dir", default="demo_output",
                      help="where event files, results.json and demo.png go")
  parser.add_argument("--steps", type=int, default=3000,
                      help="training steps per run")
  parser.add_argument("--fast", action="store_true",
                      help="a short run for tests (overrides --steps)")
  parser.add_argument("--batch_size", type=int, default=512)
  parser.add_argument("--learning_rate", type=float, default=1e-3,
                      help="Adam learning rate")
  parser.add_argument("--target_scale", type=float, default=0.03,
                      help="multiplies the teacher's output: smaller targets "
                      "mean smaller gradients, and more float16 underflow")
  parser.add_argument("--output_dim", type=int, default=64,
                      help="outputs per example; the loss is a mean over "
                      "batch_size * output_dim elements, as dense-prediction "
                      "losses are, so each element's gradient is tiny")
  parser.add_argument("--fixed_loss_scale", type=float, default=2.0**12)
  parser.add_argument("--incr_every_n_steps", type=int, default=100,
                      help="for the exponential manager")
  parser.add_argument("--log_every", type=int, default=0,
                      help="progress line and TensorBoard interval in steps "
                      "(0: steps/10)")
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--no_plot", action="store_true",
                      help="skip demo.png (no matplotlib needed)")
  args = parser.parse_args(argv)
  if args.fast:
    args.steps = 600
    args.incr_every_n_steps = 50
  if args.steps < 1:
    parser.error("--steps must be >= 1, got {}".format(args.steps))
  if args.log_every <= 0:
    args.log_every = max(1, args.steps // 10)
  return args


def make_data(args):
  """A fixed random teacher MLP's outputs on Gaussian inputs, scaled down."""
  rng = np.random.RandomState(args.seed)
  dim, hidden, n = 32, 64, 8192
  w1 = rng.randn(dim, hidden) / math.sqrt(dim)
  w2 = rng.randn(hidden, args.output_dim) / math.sqrt(hidden)

  def teacher(x):
    return np.tanh(x @ w1) @ w2 * args.target_scale

  x_train = rng.randn(n, dim).astype(np.float32)
  x_eval = rng.randn(2048, dim).astype(np.float32)
  return (x_train, teacher(x_train).astype(np.float32), x_eval,
          teacher(x_eval).astype(np.float32))


def mlp(x, params, dtype, output_scale):
  """Two hidden tanh layers, computed in `dtype` from float32 weights.

  The output is multiplied by the fixed `output_scale` (the targets' units),
  so the weights stay of order 1, where Adam's step size suits them.
  """
  h = tf.cast(x, dtype)
  for i, (w, b) in enumerate(params):
    h = tf.matmul(h, tf.cast(w, dtype)) + tf.cast(b, dtype)
    if i < len(params) - 1:
      h = tf.tanh(h)
  return h * tf.constant(output_scale, dtype)


def train_one(name, dtype, make_manager, data, args):
  """One training run; returns its history and summary as a dict."""
  x_train, y_train, x_eval, y_eval = data
  run_dir = os.path.join(args.output_dir, "tensorboard", name)
  history = {"step": [], "eval_loss": [], "loss_scale": [], "finite": []}
  with tf.Graph().as_default():
    tf.compat.v1.set_random_seed(args.seed)
    global_step = tf.compat.v1.train.get_or_create_global_step()
    sizes = [x_train.shape[1], 64, 64, args.output_dim]
    params = []
    for i in range(len(sizes) - 1):
      params.append((
          # The output layer starts at zero (a common choice), so the
          # errors, and the gradients, are target-sized from the start.
          tf.compat.v1.get_variable(
              "w{}".format(i), [sizes[i], sizes[i + 1]],
              initializer=(tf.compat.v1.glorot_uniform_initializer()
                           if i < len(sizes) - 2 else tf.zeros_initializer())),
          tf.compat.v1.get_variable("b{}".format(i), [sizes[i + 1]],
                                    initializer=tf.zeros_initializer())))
    dataset = (tf.data.Dataset.from_tensor_slices((x_train, y_train))
               .shuffle(len(x_train), seed=args.seed).repeat()
               .batch(args.batch_size))
    x, y = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
    # The loss is taken in float32, as mixed-precision training does; the
    # gradient entering the float16 graph is what underflows.
    prediction = mlp(x, params, dtype, args.target_scale)
    loss = tf.reduce_mean(tf.square(tf.cast(prediction, tf.float32) - y))
    opt = tf.compat.v1.train.AdamOptimizer(args.learning_rate)
    run_hooks = []
    finite = scale = None
    if make_manager is not None:
      opt = lso.LossScaleOptimizer(opt, make_manager(args))
      run_hooks.append(hooks.LossScaleHook(every_n_steps=args.log_every,
                                           summary_dir=run_dir))
    train_op = opt.minimize(loss, global_step=global_step)
    if make_manager is not None:
      finite = tf.compat.v1.get_collection(lso.GraphKeys.FINITE_GRADS)[-1]
      scale = tf.compat.v1.get_collection(lso.GraphKeys.LOSS_SCALE)[-1]
    # Judge every run the same way: float32 maths on its float32 weights.
    # Reported relative to the targets' variance (1.0: predicts the mean).
    eval_loss = tf.reduce_mean(tf.square(
        mlp(tf.constant(x_eval), params, tf.float32, args.target_scale) -
        y_eval)) / float(
            np.var(y_eval))
    writer = tf.compat.v1.summary.FileWriterCache.get(run_dir)
    config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=2,
                                      inter_op_parallelism_threads=1)
    fetches = {"train": train_op}
    if finite is not None:
      fetches.update(finite=finite, scale=scale)
    eval_every = max(1, args.steps // 60)
    start = time.time()
    with tf.compat.v1.train.MonitoredSession(
        session_creator=tf.compat.v1.train.ChiefSessionCreator(config=config),
        hooks=run_hooks) as sess:
      skipped = 0
      for step in range(1, args.steps + 1):
        out = sess.run(fetches)
        if finite is not None:
          history["finite"].append(bool(out["finite"]))
          history["loss_scale"].append(float(out["scale"]))
          skipped += not out["finite"]
        if step % eval_every == 0 or step == 1 or step == args.steps:
          # Through the step context's raw session: an eval is not a
          # training step for the hooks.
          value = float(sess.run_step_fn(
              lambda step_context: step_context.session.run(eval_loss)))
          history["step"].append(step)
          history["eval_loss"].append(value)
          writer.add_summary(tf.compat.v1.Summary(value=[
              tf.compat.v1.Summary.Value(tag="eval_loss",
                                         simple_value=value)]), step)
        if step % args.log_every == 0 or step == 1 or step == args.steps:
          scale_text = ("" if finite is None else
                        "  loss scale {:>10g}  skipped {:>4d}".format(
                            history["loss_scale"][-1], skipped))
          print("[{:<16}] step {:>5d}/{}  eval loss {:.3e}{}".format(
              name, step, args.steps, history["eval_loss"][-1], scale_text),
                flush=True)
    writer.flush()
  history.update(
      name=name, label=LABELS[name], wall_s=time.time() - start,
      final_eval_loss=history["eval_loss"][-1],
      skipped_steps=(None if finite is None else
                     history["finite"].count(False)),
      final_loss_scale=(None if finite is None else
                        history["loss_scale"][-1]))
  return history


def format_table(results):
  """The final table, one row per run."""
  base = results[0]["final_eval_loss"]
  lines = ["{:<44} {:>12} {:>8} {:>8} {:>12}".format(
      "run", "final loss", "vs fp32", "skipped", "final scale")]
  for r in results:
    lines.append("{:<44} {:>12.4e} {:>7.2f}x {:>8} {:>12}".format(
        r["label"], r["final_eval_loss"], r["final_eval_loss"] / base,
        "-" if r["skipped_steps"] is None else r["skipped_steps"],
        "-" if r["final_loss_scale"] is None else
        "{:g}".format(r["final_loss_scale"])))
  return "\n".join(lines)


def plot(results, path):
  """Two panels: eval loss curves; loss-scale trajectories with skips."""
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

  fig, (ax_loss, ax_scale) = plt.subplots(1, 2, figsize=(12, 4.5))
  for r in results:
    ax_loss.plot(r["step"], r["eval_loss"], label=r["label"],
                 **STYLES[r["name"]])
  ax_loss.set_yscale("log")
  ax_loss.set_xlabel("step")
  ax_loss.set_ylabel("eval loss (float32 MSE)")
  ax_loss.set_title("Loss")
  ax_loss.legend(fontsize=8)
  for r in results:
    if not r["loss_scale"]:
      continue
    steps = np.arange(1, len(r["loss_scale"]) + 1)
    scales = np.array(r["loss_scale"])
    ax_scale.plot(steps, scales, label=r["label"], **STYLES[r["name"]])
    bad = ~np.array(r["finite"])
    ax_scale.scatter(steps[bad], scales[bad], marker="x", s=20,
                     color=STYLES[r["name"]]["color"], zorder=5,
                     label="skipped steps ({})".format(int(bad.sum())))
  ax_scale.set_yscale("log", base=2)
  ax_scale.set_xlabel("step")
  ax_scale.set_ylabel("loss scale")
  ax_scale.set_title("Loss scale (x: skipped, non-finite gradients)")
  ax_scale.legend(fontsize=8)
  fig.tight_layout()
  fig.savefig(path, dpi=100)
  plt.close(fig)


def main(argv=None):
  args = parse_args(argv)
  # LossScaleHook logs its lines at INFO, which absl hides by default.
  absl_logging.set_verbosity(absl_logging.INFO)
  os.makedirs(args.output_dir, exist_ok=True)
  start = time.time()
  data = make_data(args)
  results = [train_one(name, dtype, make_manager, data, args)
             for name, dtype, make_manager in RUNS]
  table = format_table(results)
  print("\n" + table)
  with open(os.path.join(args.output_dir, "results.json"), "w") as f:
    json.dump({"args": vars(args), "runs": results}, f, indent=1)
  if not args.no_plot:
    png = os.path.join(args.output_dir, "demo.png")
    plot(results, png)
    print("\nWrote {}".format(png))
  # TensorBoard comes with the [demo] extra (TF 2.20+ no longer installs it).
  print("TensorBoard: tensorboard --logdir {}".format(
      os.path.join(args.output_dir, "tensorboard")))
  print("Total wall time: {:.1f} s".format(time.time() - start))
  return 0


if __name__ == "__main__":
  sys.exit(main())
