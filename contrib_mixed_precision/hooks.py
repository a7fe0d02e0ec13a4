# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""`LossScaleHook`: see the loss scale and skipped steps of a TF1 training run.

`LossScaleOptimizer` files each step's finite-gradients flag, loss scale and
step op in graph collections (`graph_keys.GraphKeys`). This hook reads them
with no reference to the optimizer, so it works wherever a
`tf.compat.v1.train.SessionRunHook` does: `MonitoredTrainingSession`,
`MonitoredSession` and Estimator `training_hooks`. It answers the questions
users of every loss-scaling system ask: is my run skipping steps, what is the
scale doing, and is the run stuck at the minimum scale, skipping forever?
"""

import collections.abc
import os
from typing import NamedTuple, Optional, Union

from absl import logging
import tensorflow as tf

from contrib_mixed_precision import _validation
from contrib_mixed_precision.graph_keys import GraphKeys

# TensorBoard tags. With several LossScaleOptimizers in one graph (a GAN),
# the second one's tags end in `_1`, the third's in `_2`, and so on.
LOSS_SCALE_TAG = "mixed_precision/loss_scale"
SKIPPED_STEPS_TAG = "mixed_precision/skipped_steps"
SKIPPED_STEPS_TOTAL_TAG = "mixed_precision/skipped_steps_total"


def _as_op(element):
  return element if isinstance(element, tf.Operation) else element.op


def _leaves(structure):
  """The leaves of a `session.run` fetch or feed-key structure.

  Reads the structures `session.run` accepts (lists, tuples, namedtuples,
  dicts with keys of any type, attrs classes, composite tensors expanded
  into their component tensors) without sorting or rebuilding them, so any
  fetch the session takes is walked, never rejected.
  """
  pending = [structure]
  while pending:
    item = pending.pop()
    if item is None:
      continue
    if isinstance(item, (tf.Tensor, tf.Operation, tf.Variable, str, bytes)):
      yield item
    elif isinstance(item, collections.abc.Mapping):
      pending.extend(item.values())
    elif isinstance(item, (list, tuple)):
      pending.extend(item)
    elif hasattr(type(item), "__attrs_attrs__"):
      pending.extend(getattr(item, a.name) for a in type(item).__attrs_attrs__)
    else:
      flat = tf.nest.flatten(item, expand_composites=True)
      if len(flat) == 1 and flat[0] is item:
        yield item
      else:
        pending.extend(flat)


class _ObservedSteps(NamedTuple):
  """One entry per observable optimizer step, in the order they were built."""
  finite: list  # Scalar bool tensors: the step's gradients were finite.
  scales: list  # Scalar float32 tensors: the scale the step used.
  floors: list  # Constants: the scale below which the step counts as stuck.
  step_ops: list  # The step's ops, applied or skipped.


def _observed_steps(graph) -> _ObservedSteps:
  """Reads what each observable `LossScaleOptimizer` step filed in `graph`.

  `apply_gradients` files four entries per optimizer (graph_keys.py); the
  hook fetches them on the runs that execute that optimizer's step. An
  `apply_gradients` built inside a TF1 cond or while body, a
  control-flow-v2 cond branch or a `tf.function` cannot be observed (its
  tensors cannot be fetched): it files only its name, and a warning names
  any such step beside observable ones.

  Raises:
    RuntimeError: If no observable `LossScaleOptimizer.apply_gradients`
      was built in `graph` (the message says why), or its collections were
      edited inconsistently.
  """
  keys = (GraphKeys.FINITE_GRADS, GraphKeys.LOSS_SCALE,
          GraphKeys.MIN_LOSS_SCALE, GraphKeys.STEP_OPS)
  finite, scales, floors, step_ops = [graph.get_collection(k) for k in keys]
  # Strings; bytes once a MetaGraph round trip has been through them.
  unobserved = [u.decode("utf-8", "replace") if isinstance(u, bytes) else
                str(u) for u in graph.get_collection(
                    GraphKeys.UNOBSERVED_STEPS)]
  if not finite and unobserved:
    raise RuntimeError(
        "LossScaleHook cannot observe any LossScaleOptimizer in this "
        "graph: {}. Their finite flag and scale exist only inside that "
        "body, where a `session.run` cannot fetch them (a skipped "
        "accumulation step has no value to fetch). Build "
        "`apply_gradients` outside the cond, loop or function to use the "
        "hook, or remove the hook.".format("; ".join(sorted(
            set(unobserved)))))
  if not finite:
    raise RuntimeError(
        "LossScaleHook found no LossScaleOptimizer in the graph: the "
        "collection {!r} is empty. Build the train op with "
        "`LossScaleOptimizer.apply_gradients` (or `minimize`) in graph "
        "mode, in the graph the session runs, before the session is "
        "created. With Estimator, build it in `model_fn` and pass the "
        "hook as `training_hooks` or `train(hooks=...)`.".format(
            GraphKeys.FINITE_GRADS))
  if unobserved:
    logging.warning(
        "LossScaleHook observes %d LossScaleOptimizer step(s) but not "
        "these, whose tensors cannot be fetched: %s. Their steps are not "
        "counted, logged or guarded against a stuck scale.", len(finite),
        "; ".join(sorted(set(unobserved))))
  counts = [len(c) for c in (finite, scales, floors, step_ops)]
  if len(set(counts)) != 1:
    raise RuntimeError(
        "LossScaleHook needs one entry per LossScaleOptimizer in each of "
        "the collections {}, but found {} entries. Do not add to or clear "
        "these collections yourself.".format(
            ", ".join(repr(k) for k in keys),
            ", ".join(str(c) for c in counts)))
  return _ObservedSteps(finite, scales, floors, step_ops)


class LossScaleStuckError(RuntimeError):
  """Raised by `LossScaleHook` when steps keep failing at the lowest scale.

  A RuntimeError rather than a `tf.errors.AbortedError`: `MonitoredSession`
  treats `AbortedError` as a preemption, recreates the session and carries on,
  so the run would spin forever instead of stopping.

  Attributes:
    loss_scale: The loss scale the skipped steps ran at.
    skipped_steps: How many consecutive steps were skipped at that scale.
    step: The stuck optimizer's step count (since the session started) when
      the hook stopped the run.
  """

  def __init__(self, message: str, loss_scale: float, skipped_steps: int,
               step: int):
    super().__init__(message)
    self.loss_scale = loss_scale
    self.skipped_steps = skipped_steps
    self.step = step


class LossScaleHook(tf.compat.v1.train.SessionRunHook):
  """Logs, summarises and guards the loss scale of a `LossScaleOptimizer`.

  Every `every_n_steps` steps it logs one line (absl logging, INFO; absl
  hides INFO by default, so `begin()` then warns once how to show it): the
  step, the loss scale, and how many steps were skipped (not applied because
  a gradient was NaN or Inf) in that window and in total. With `summary_dir`
  it also writes the scale and the skipped-step counts as TensorBoard
  scalars. With `max_skips_at_min_scale=K`, it stops the run with
  `LossScaleStuckError` after K consecutive steps skipped at the lowest
  scale the manager can reach (1 for `ExponentialUpdateLossScaleManager`;
  the scale itself for `FixedLossScaleManager`, so every skip counts), where
  lowering the scale can no longer help.

  Why it exists: a dynamic loss scale hides overflow by skipping steps, and
  a run whose gradients are NaN for a reason no scale can fix skips every
  step forever while looking alive.

  It only observes. A `session.run` that executes an optimizer's step op
  (the op its `apply_gradients` returned, alone, in a `tf.group`, or as a
  control dependency of what is fetched) gets that optimizer's flag and
  scale added to its fetches: two scalars the step computes anyway. Any
  other run (`sess.run(global_step)`, an evaluation, a GAN running only its
  discriminator) gets nothing added, costs nothing, and does not count as a
  step of that optimizer. Which optimizers a run executes is worked out once
  per distinct set of fetches and feeds, by walking the graph back from the
  fetches, and cached. An `apply_gradients` built inside a cond or while
  body or a `tf.function` cannot be observed (its tensors cannot be fetched
  from outside); `begin()` names it. See docs/observability.md.

  Each optimizer's steps are counted separately, from when the session
  started; that is not `global_step`, which a skipped step does not
  advance. TensorBoard steps continue from the `global_step` read at session
  start, counted in runs that executed at least one optimizer.

  Example (TF1 graph mode):

  ```python
  opt = LossScaleOptimizer(tf.compat.v1.train.AdamOptimizer(1e-3),
                           ExponentialUpdateLossScaleManager(2**15, 1000))
  train_op = opt.minimize(loss, global_step=global_step)
  hook = LossScaleHook(every_n_steps=100, summary_dir=model_dir,
                       max_skips_at_min_scale=50)
  with tf.compat.v1.train.MonitoredTrainingSession(hooks=[hook]) as sess:
    while not sess.should_stop():
      sess.run(train_op)
  ```
  """

  def __init__(self,
               every_n_steps: int = 100,
               summary_dir: Optional[Union[str, os.PathLike]] = None,
               max_skips_at_min_scale: Optional[int] = None):
    """Creates the hook.

    Args:
      every_n_steps: Log (and write summaries) every this many steps; a
        Python or NumPy int >= 1 (the hook counts in Python, so there is no
        upper bound).
      summary_dir: Where to write TensorBoard scalars (a non-empty str or
        `os.PathLike`), or None for none. The writer is shared with any
        other writer of that directory through
        `tf.compat.v1.summary.FileWriterCache`, as TF's own hooks do.
      max_skips_at_min_scale: Stop the run after this many consecutive steps
        skipped at the lowest reachable scale; a Python or NumPy int >= 1,
        or None (the default) to never stop it.

    Raises:
      TypeError: If `every_n_steps` or `max_skips_at_min_scale` is not a
        Python or NumPy int (bools included; None is allowed for the
        latter), or `summary_dir` is neither None, a str nor an
        `os.PathLike` of a str.
      ValueError: If `every_n_steps` or `max_skips_at_min_scale` is below 1,
        or `summary_dir` is the empty string.
    """
    # The hook's counts are Python ints, so any int >= 1 means what it says
    # (sys.maxsize never stops the run); no int32 bound applies here.
    every_n_steps = _validation.check_int("every_n_steps", every_n_steps,
                                          maximum=None)
    max_skips_at_min_scale = _validation.check_int(
        "max_skips_at_min_scale", max_skips_at_min_scale, maximum=None,
        allow_none=True, hint="None never stops the run.")
    summary_dir = _validation.check_path(
        "summary_dir", summary_dir,
        hint="Pass None to write no summaries.")
    self._every_n_steps = every_n_steps
    self._summary_dir = summary_dir
    self._max_skips = max_skips_at_min_scale
    self._warned_info_hidden = False

  # -- SessionRunHook ------------------------------------------------------

  def begin(self):
    """Finds the optimizers' tensors in the default graph (`_observed_steps`).

    Raises:
      RuntimeError: If no observable `LossScaleOptimizer.apply_gradients`
        was built in the default graph (the message says why), or its
        collections were edited inconsistently.
    """
    graph = tf.compat.v1.get_default_graph()
    self._graph = graph
    finite, scales, floors, step_ops = _observed_steps(graph)
    self._warn_if_info_is_hidden()
    self._finite = finite
    self._scales = scales
    self._step_ops = [_as_op(op) for op in step_ops]
    # The floors are constants: read them now rather than fetch every step.
    self._floors = [float(tf.get_static_value(f)) for f in floors]
    self._global_step = tf.compat.v1.train.get_global_step(graph)
    self._writer = None
    if self._summary_dir is not None:
      self._writer = tf.compat.v1.summary.FileWriterCache.get(
          self._summary_dir)
    n = len(finite)
    self._plans = {}
    self._run_active = []  # Optimizers the current run executes.
    self._runs = 0  # Runs that executed at least one optimizer's step.
    self._first_summary_step = 0
    self._steps = [0] * n
    self._window_steps = [0] * n
    self._window_skipped = [0] * n
    self._total_skipped = [0] * n
    self._stuck_run = [0] * n
    self._last_scale = [float("nan")] * n
    self._last_global_step = None

  def _warn_if_info_is_hidden(self):
    """Says once per hook how to see its INFO lines when absl hides them.

    absl hides INFO unless the program sets its verbosity (absl.app's
    `--verbosity`, or `absl.logging.set_verbosity`), so a newcomer would see
    none of the lines `every_n_steps` asks for. The stuck-run error is
    logged at ERROR and warnings at WARNING, which absl shows by default.
    """
    if self._warned_info_hidden:
      return
    info = logging.converter.absl_to_standard(logging.INFO)
    if logging.get_absl_logger().isEnabledFor(info):
      return
    self._warned_info_hidden = True
    logging.warning(
        "LossScaleHook logs the loss scale every %d steps at INFO, which "
        "absl's logging hides now (absl shows WARNING and above unless the "
        "program sets its verbosity). To see those lines, call "
        "`absl.logging.set_verbosity(absl.logging.INFO)` before training, "
        "or pass --verbosity=0 to a program run by absl.app. TensorBoard "
        "scalars and LossScaleStuckError do not depend on it.",
        self._every_n_steps)

  def after_create_session(self, session, coord):
    del coord  # Unused.
    if self._global_step is not None:
      # One read, so TensorBoard steps continue a restored run's numbering.
      self._first_summary_step = int(session.run(self._global_step))

  def before_run(self, run_context):
    active, fetches = self._run_plan(run_context.original_args)
    self._run_active = active
    if not active:
      return None
    if (self._global_step is not None and
        (self._runs + 1) % self._every_n_steps == 0):
      fetches = fetches + [self._global_step]
    # One flat list: the session's per-run fetch handling costs less than
    # for a nested structure.
    return tf.compat.v1.train.SessionRunArgs(fetches)

  def after_run(self, run_context, run_values):
    """Counts the step, logs on logging steps, and stops a stuck run.

    Raises:
      LossScaleStuckError: After `max_skips_at_min_scale` consecutive steps
        skipped at the lowest reachable scale.
    """
    del run_context  # Unused.
    results = run_values.results
    if not results:
      return  # This run executed no optimizer's step.
    self._runs += 1
    n = len(self._run_active)
    if len(results) > 2 * n:
      self._last_global_step = int(results[-1])
    stuck = None
    for i, finite, scale in zip(self._run_active, results[:n],
                                results[n:2 * n]):
      scale = float(scale)
      self._steps[i] += 1
      self._window_steps[i] += 1
      self._last_scale[i] = scale
      if bool(finite):
        self._stuck_run[i] = 0
        continue
      self._window_skipped[i] += 1
      self._total_skipped[i] += 1
      # A skip above the floor lowers the scale (eventually), which may fix
      # an overflow; only skips at the floor show a run that cannot recover.
      if scale <= self._floors[i]:
        self._stuck_run[i] += 1
      else:
        self._stuck_run[i] = 0
      if self._max_skips is not None and self._stuck_run[i] >= self._max_skips:
        stuck = i
    if stuck is not None or self._runs % self._every_n_steps == 0:
      self._report()
    if stuck is not None:
      if self._writer is not None:
        self._writer.flush()
      raise self._stuck_error(stuck)

  def end(self, session):
    del session  # Unused.
    if any(self._window_steps):
      self._report()
    if self._writer is not None:
      self._writer.flush()

  # -- Helpers -------------------------------------------------------------

  def _run_plan(self, run_args):
    """The optimizers this run executes, and their flags and scales.

    Returns:
      `(indices, fetches)`: the indices of the optimizers whose step op the
      run executes, and their finite flags followed by their scales. Worked
      out once per distinct set of fetch and feed names, then cached.
    """
    fetched = self._graph_elements(run_args.fetches, allow_operation=True)
    fed = self._graph_elements(list(run_args.feed_dict or {}),
                               allow_operation=False)
    key = (tuple(e.name for e in fetched), tuple(sorted(t.name for t in fed)))
    plan = self._plans.get(key)
    if plan is None:
      active = self._reachable_step_ops(fetched, fed)
      plan = (active, [self._finite[i] for i in active] +
              [self._scales[i] for i in active])
      self._plans[key] = plan
    return plan

  def _graph_elements(self, structure, allow_operation):
    """The ops and tensors of this graph in a fetch or feed-key structure.

    Anything else (another graph's tensor, a typo'd name) is left for the
    session to report; the hook only needs what it can walk from.
    """
    elements = []
    for item in _leaves(structure):
      try:
        elements.append(self._graph.as_graph_element(
            item, allow_tensor=True, allow_operation=allow_operation))
      except (TypeError, ValueError, KeyError):
        continue
    return elements

  def _reachable_step_ops(self, fetched, fed):
    """Walks back from `fetched` over data and control inputs.

    A fed tensor's producer does not run, so the walk stops there, as the
    session's pruning does.
    """
    targets = {op: i for i, op in enumerate(self._step_ops)}
    fed = set(fed)
    stack = [e if isinstance(e, tf.Operation) else e.op for e in fetched
             if not (isinstance(e, tf.Tensor) and e in fed)]
    seen = set()
    found = set()
    while stack and len(found) < len(targets):
      op = stack.pop()
      if op in seen:
        continue
      seen.add(op)
      if op in targets:
        found.add(targets[op])
      stack.extend(op.control_inputs)
      stack.extend(t.op for t in op.inputs if t not in fed)
    return sorted(found)

  def _report(self):
    """Logs and summarises the window just ended, then starts a new one."""
    n = len(self._finite)
    global_step = ("" if self._last_global_step is None else
                   " (global_step {})".format(self._last_global_step))
    values = []
    for i in range(n):
      if not self._window_steps[i]:
        continue  # Not run in this window: nothing new to say.
      which = "" if n == 1 else " [optimizer {}]".format(i)
      logging.info(
          # %.9g: every float32 scale, exactly.
          "LossScaleHook%s: step %d%s: loss scale %.9g; skipped %d of the "
          "last %d steps, %d of %d in total.", which, self._steps[i],
          global_step, self._last_scale[i], self._window_skipped[i],
          self._window_steps[i], self._total_skipped[i], self._steps[i])
      suffix = "" if i == 0 else "_{}".format(i)
      for tag, value in ((LOSS_SCALE_TAG, self._last_scale[i]),
                         (SKIPPED_STEPS_TAG, self._window_skipped[i]),
                         (SKIPPED_STEPS_TOTAL_TAG, self._total_skipped[i])):
        values.append(tf.compat.v1.Summary.Value(
            tag=tag + suffix, simple_value=float(value)))
    if self._writer is not None and values:
      self._writer.add_summary(tf.compat.v1.Summary(value=values),
                               self._first_summary_step + self._runs)
    self._window_steps = [0] * n
    self._window_skipped = [0] * n

  def _stuck_error(self, i: int) -> LossScaleStuckError:
    scale = self._last_scale[i]
    which = "" if len(self._finite) == 1 else " of optimizer {}".format(i)
    message = (
        "LossScaleHook stopped training at step {step}: the last {count} "
        "steps{which} were all skipped because their gradients were NaN or "
        "Inf, while the loss scale was {scale:g}, the lowest this loss-scale "
        "manager can reach, so lowering it cannot help. This is usually a "
        "real NaN or Inf in the model (log or sqrt of 0 or a negative, a "
        "division by zero, a diverged weight, a bad input batch), not a "
        "float16 overflow. Check the loss and inputs, e.g. with "
        "`tf.debugging.enable_check_numerics()`. To wait longer, raise "
        "`max_skips_at_min_scale` (now {limit}).").format(
            step=self._steps[i], count=self._stuck_run[i], which=which,
            scale=scale, limit=self._max_skips)
    logging.error("%s", message)
    return LossScaleStuckError(message, scale, self._stuck_run[i],
                               self._steps[i])

