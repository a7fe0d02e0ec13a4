# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The TF 1.15 oracle harness: both optimizers on one model, bit for bit.

Issue 41 and docs/design.md, contract 15. `tf115_reference` (TF 1.15's contrib
`LossScaleOptimizer` and managers, re-expressed with public ops) and
`contrib_mixed_precision` are built side by side on the same model: two
copies of the variables with the same initial values, in one
`tf.compat.v1.Session` (Grappler at its defaults), one `tf.function`, or
eagerly. After every step each piece of state must be equal to the bit:
every model variable, every slot and non-slot variable of the inner
optimizer, `global_step`, the loss scale and the exponential manager's
counters.

A `Case` names a model of the zoo (`MODELS`), a dtype, an inner optimizer
and a scale; `trajectories` trains both sides of it in a mode, and
`mismatches` lists every bit that differs. The `V1_GRAPH` mode runs its
cases in `programs/tf115_v1_graph.py` under `disable_v2_behavior()`, which
must never be called in the test process. A test that trains a model of
its own writes one `build(lib, inputs)`; `sides` builds it with each side's
classes (`Library`) and trains both the same way. `OracleTestCase` turns
either result into an assertion.

Used by `tf115_oracle_test.py` (issue 41's defects and one model per
mode), `tf115_zoo_test.py` (the wide zoo), `programs/tf115_v1_graph.py`,
and every test of training numbers that predates the oracle.
"""

import dataclasses
import functools
import json
import re
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import contrib_mixed_precision as mp
import program_util
import tf115_reference as tf115

GRAPH, V1_GRAPH, FUNCTION, EAGER = "graph", "v1_graph", "function", "eager"
MODES = (GRAPH, V1_GRAPH, FUNCTION, EAGER)
_V1_PROGRAM = "tf115_v1_graph.py"
# The line of the program's output that carries its JSON result.
V1_RESULT_PREFIX = "TF115_ORACLE_RESULT "
# What one mismatch report lists at most; the count says how many there were.
_MAX_REPORTED = 12

# -- The model zoo -------------------------------------------------------
#
# Each model is a function `loss(xs, data)` of its variables (`xs`, already
# cast to the compute dtype) and its inputs (`data`), returning one loss per
# head; `Model.heads` says which variables each head trains.

_RNG = np.random.RandomState(41)
_X_MLP = _RNG.uniform(-1, 1, [4, 3])
_Y_MLP = _RNG.uniform(-1, 1, [4, 2])
_X_CONV = _RNG.uniform(-1, 1, [2, 5, 5, 2])
_X_RNN = _RNG.uniform(-1, 1, [4, 2, 3])
_X_ATTENTION = _RNG.uniform(-1, 1, [3, 4])
_Z_GAN = _RNG.uniform(-1, 1, [4, 2])
_REAL_GAN = _RNG.uniform(-1, 1, [4, 3])


def _mlp(xs, data):
  w1, b1, w2, b2 = xs
  hidden = tf.tanh(tf.matmul(data.const(_X_MLP), w1) + b1)
  error = tf.matmul(hidden, w2) + b2 - data.const(_Y_MLP)
  return [tf.reduce_mean(tf.square(error))]


def _conv(xs, data):
  kernel, bias = xs
  y = tf.nn.conv2d(data.const(_X_CONV), kernel, strides=1, padding="SAME")
  return [tf.reduce_mean(tf.square(tf.nn.relu(y + bias)))]


def _rnn(xs, data):
  """A tanh RNN over 4 time steps, unrolled in a `tf.while_loop`."""
  wx, wh, b = xs
  inputs = data.const(_X_RNN)

  def body(t, h):
    x = tf.gather(inputs, t)
    return t + 1, tf.tanh(tf.matmul(x, wx) + tf.matmul(h, wh) + b)

  h0 = tf.zeros([2, 4], dtype=inputs.dtype)
  _, h = tf.while_loop(lambda t, h: t < 4, body, [tf.constant(0), h0])
  return [tf.reduce_sum(tf.square(h))]


def _embedding(xs, data):
  """Issue 41's defect 2: the gradient is an `IndexedSlices`."""
  (table,) = xs
  return [tf.reduce_sum(tf.nn.embedding_lookup(table, data.ids)**2)]


def _embedding_linear(xs, data):
  """Each id's row gets a gradient of 30000: float16 overflows at three."""
  (table,) = xs
  return [tf.reduce_sum(tf.nn.embedding_lookup(table, data.ids) *
                        data.const(30000.0))]


def _attention(xs, data):
  wq, wk, wv = xs
  x = data.const(_X_ATTENTION)
  q, k, v = tf.matmul(x, wq), tf.matmul(x, wk), tf.matmul(x, wv)
  weights = tf.nn.softmax(tf.matmul(q, k, transpose_b=True) * 0.5)
  return [tf.reduce_mean(tf.square(tf.matmul(weights, v) - 0.25))]


def _gan(xs, data):
  """Two heads: the discriminator's loss, then the generator's."""
  wg, bg, wd, bd = xs
  fake = tf.tanh(tf.matmul(data.const(_Z_GAN), wg) + bg)
  d_real = tf.matmul(data.const(_REAL_GAN), wd) + bd
  d_fake = tf.matmul(fake, wd) + bd
  d_loss = (tf.reduce_mean(tf.nn.softplus(-d_real)) +
            tf.reduce_mean(tf.nn.softplus(d_fake)))
  g_loss = tf.reduce_mean(tf.nn.softplus(-d_fake))
  return [d_loss, g_loss]


def _many_small(xs, data):
  """Issue 41's defect 1: small variables of one shape."""
  del data
  return [sum(tf.reduce_sum(tf.square(x) * 1.5) for x in xs)]


def _many_small_sin(xs, data):
  del data
  return [sum(tf.reduce_sum(tf.sin(x) * 1.2345) for x in xs)]


@dataclasses.dataclass(frozen=True)
class Model:
  """A loss function and its variables' names and shapes."""
  loss: object
  shapes: Tuple[Tuple[str, Tuple[int, ...]], ...]
  heads: Tuple[Tuple[int, ...], ...] = ((),)  # (): every variable.
  # Ids per step, cycled (the embeddings): `data.ids`.
  ids: Optional[Tuple[Tuple[int, ...], ...]] = None


MODELS = {
    "mlp": Model(_mlp, (("w1", (3, 5)), ("b1", (5,)), ("w2", (5, 2)),
                        ("b2", (2,)))),
    "conv": Model(_conv, (("kernel", (3, 3, 2, 3)), ("bias", (3,)))),
    "rnn": Model(_rnn, (("wx", (3, 4)), ("wh", (4, 4)), ("b", (4,)))),
    "embedding": Model(_embedding, (("table", (10, 4)),),
                       ids=((1, 2), (3,), (3,), (4,))),
    "embedding_dup": Model(_embedding, (("table", (10, 4)),),
                           ids=((1, 1, 3), (2, 2), (3,), (1, 1, 1, 4))),
    # 64 elements: the dense kernels' SIMD loops have no scalar tail, so
    # Adagrad's update by rows is exact (`sparse_rows`). Three distinct
    # rows (12 elements) end in a part of a SIMD packet.
    "embedding_dup64": Model(_embedding, (("table", (16, 4)),),
                             ids=((1, 1, 3, 8), (2, 2), (15, 3, 7),
                                  (1, 1, 1, 4), (0, 15, 15))),
    # float16: two ids of one row sum to 60000, three to Inf (a skip).
    "embedding_sum_overflow": Model(_embedding_linear,
                                    (("table", (16, 4)),),
                                    ids=((1, 1), (2, 2, 2), (3, 5))),
    "attention": Model(_attention, (("wq", (4, 4)), ("wk", (4, 4)),
                                    ("wv", (4, 4)))),
    "gan": Model(_gan, (("wg", (2, 3)), ("bg", (3,)), ("wd", (3, 1)),
                        ("bd", (1,))), heads=((2, 3), (0, 1))),
    "many_small": Model(_many_small,
                        tuple(("v{}".format(i), (3, 2)) for i in range(8))),
    "many_small_sin": Model(
        _many_small_sin, tuple(("v{}".format(i), (3, 2)) for i in range(8))),
}

# -- Dtypes, inner optimizers and scales -------------------------------------

# name: (variable dtype, compute dtype). "mixed": float32 master variables,
# cast to float16 inside the model, and a float32 loss.
DTYPES = {
    "float16": (tf.float16, tf.float16),
    "bfloat16": (tf.bfloat16, tf.bfloat16),
    "float32": (tf.float32, tf.float32),
    "mixed": (tf.float32, tf.float16),
}

_V1 = tf.compat.v1.train
# name: the inner optimizer, given its side's `global_step`.
OPTIMIZERS = {
    "sgd": lambda step: _V1.GradientDescentOptimizer(0.1),
    "momentum": lambda step: _V1.MomentumOptimizer(0.1, 0.9),
    "nesterov": lambda step: _V1.MomentumOptimizer(0.1, 0.9,
                                                   use_nesterov=True),
    "adam": lambda step: _V1.AdamOptimizer(0.01),
    "adagrad": lambda step: _V1.AdagradOptimizer(0.1),
    "adagrad_da": lambda step: _V1.AdagradDAOptimizer(
        0.1, step, l1_regularization_strength=0.01,
        l2_regularization_strength=0.01),
    "adadelta": lambda step: _V1.AdadeltaOptimizer(1.0),
    "rmsprop": lambda step: _V1.RMSPropOptimizer(0.01),
    "rmsprop_momentum": lambda step: _V1.RMSPropOptimizer(0.1, momentum=0.5),
    "rmsprop_centered": lambda step: _V1.RMSPropOptimizer(
        0.01, momentum=0.2, centered=True),
    "ftrl": lambda step: _V1.FtrlOptimizer(0.1),
    "proximal_sgd": lambda step: _V1.ProximalGradientDescentOptimizer(
        0.1, l1_regularization_strength=0.01,
        l2_regularization_strength=0.01),
    "proximal_adagrad": lambda step: _V1.ProximalAdagradOptimizer(
        0.1, l1_regularization_strength=0.01,
        l2_regularization_strength=0.01),
    # Without regularization a zero gradient leaves a row as it was.
    "proximal_sgd_plain": lambda step: _V1.ProximalGradientDescentOptimizer(
        0.1),
    "proximal_adagrad_plain": lambda step: _V1.ProximalAdagradOptimizer(0.1),
}


class _TF115TrainableScaleManager(object):
  """Issue 41's defect 5: a user manager whose scale is trainable, as TF
  1.15 code wrote it (no base class)."""

  def __init__(self, variable):
    self._variable = variable

  def get_loss_scale(self):
    return self._variable

  def update_loss_scale(self, finite_grads):
    del finite_grads
    return tf.no_op()


class _TrainableScaleManager(_TF115TrainableScaleManager,
                             mp.LossScaleManager):
  """The same manager, subclassing the package's base as its users do."""


def _managers(scale, variable=None):
  """`(oracle manager factory, package manager factory)` for a scale spec.

  `scale` is `("fixed", value)`, `("exp", init, incr_every_n_steps,
  decr_every_n_nan_or_inf, incr_ratio, decr_ratio)`, or `("trainable",
  dtype name, value)` with `variable` the side's trainable scale variable.
  Each head of a side calls its factory once: a manager per optimizer.
  """
  kind = scale[0]
  if kind == "fixed":
    return (lambda: tf115.FixedLossScaleManager(scale[1]),
            lambda: mp.FixedLossScaleManager(scale[1]))
  if kind == "exp":
    return (lambda: tf115.ExponentialUpdateLossScaleManager(*scale[1:]),
            lambda: mp.ExponentialUpdateLossScaleManager(*scale[1:]))
  if kind == "trainable":
    return (lambda: _TF115TrainableScaleManager(variable),
            lambda: _TrainableScaleManager(variable))
  raise ValueError("unknown scale {!r}".format(scale))


# -- Cases ---------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Case:
  """One comparison: a model, a dtype, an inner optimizer and a scale.

  Attributes:
    model, dtype, optimizer: keys of `MODELS`, `DTYPES`, `OPTIMIZERS`.
    scale: see `_managers`.
    steps: how many training steps; state is compared after each.
    poison: `(step, "nan" | "inf")` pairs: on those (0-based) steps the loss
      is multiplied by NaN or Inf, so every gradient is non-finite.
    method: "minimize", or "clip": `compute_gradients`, then
      `tf.clip_by_global_norm(grads, 0.5)`, then `apply_gradients`.
    unused_variable: the package's `var_list` holds one more variable,
      which the loss does not use (a None gradient: TF 1.15 crashed,
      tensorflow#31956). The oracle trains the model without it.
    var_list_none: eagerly, `var_list=None` (the tape's watched variables).
    keep_sparse: build the package with `keep_sparse_gradients=True`.
  """
  model: str
  dtype: str
  optimizer: str
  scale: Tuple = ("fixed", 2**15)
  steps: int = 5
  poison: Tuple[Tuple[int, str], ...] = ()
  method: str = "minimize"
  unused_variable: bool = False
  var_list_none: bool = False
  keep_sparse: bool = False

  @property
  def name(self) -> str:
    parts = [self.model, self.dtype, self.optimizer,
             "_".join(str(s) for s in self.scale), str(self.steps)]
    if self.poison:
      parts.append("poison" + "".join(
          "{}{}".format(kind, step) for step, kind in self.poison))
    if self.method != "minimize":
      parts.append(self.method)
    for flag in ("unused_variable", "var_list_none", "keep_sparse"):
      if getattr(self, flag):
        parts.append(flag)
    return "-".join(parts)

  def to_json(self) -> dict:
    return dataclasses.asdict(self)

  @classmethod
  def from_json(cls, data: dict) -> "Case":
    data = dict(data)
    data["scale"] = tuple(data["scale"])
    data["poison"] = tuple(tuple(p) for p in data["poison"])
    return cls(**data)


def named(cases: Sequence[Case], mode: str) -> List[dict]:
  """Parameters for `parameterized.named_parameters`: one per case."""
  return [dict(testcase_name="{}-{}".format(mode, c.name), case=c, mode=mode)
          for c in cases]


# -- The harness ---------------------------------------------------------


class _Inputs(object):
  """The per-step inputs both sides share: embedding ids and the poison.

  In a graph they are placeholders, fed each step; eagerly and in a
  `tf.function` they are variables, assigned before each step.
  """

  def __init__(self, case: Case, graph: bool):
    self._case = case
    self._graph = graph
    self._ids_schedule = MODELS[case.model].ids
    self.ids = self.poison = None
    if graph:
      if self._ids_schedule:
        self.ids = tf.compat.v1.placeholder(tf.int32, [None], name="ids")
      if case.poison:
        self.poison = tf.compat.v1.placeholder(tf.float32, [], name="poison")
    else:
      if self._ids_schedule:
        self.ids = tf.Variable(self._ids_schedule[0], dtype=tf.int32,
                               shape=tf.TensorShape([None]), trainable=False,
                               name="ids")
      if case.poison:
        self.poison = tf.Variable(1.0, trainable=False, name="poison")

  def _values(self, step: int) -> list:
    """`(input, value)` pairs (a variable is no dict key eagerly)."""
    values = []
    if self.ids is not None:
      values.append((self.ids, np.array(
          self._ids_schedule[step % len(self._ids_schedule)], np.int32)))
    if self.poison is not None:
      kind = dict(self._case.poison).get(step)
      values.append((self.poison, np.float32(
          {None: 1.0, "nan": np.nan, "inf": np.inf}[kind])))
    return values

  def set(self, step: int) -> Optional[dict]:
    """The step's feed dict in a graph; else assigns the variables."""
    values = self._values(step)
    if self._graph:
      return dict(values)
    for variable, value in values:
      variable.assign(value)
    return None


class _Data(object):
  """What a model reads: its constants (in the compute dtype) and inputs."""

  def __init__(self, compute_dtype, inputs):
    self._dtype = compute_dtype
    self.ids = inputs.ids

  def const(self, array):
    return tf.cast(tf.constant(np.asarray(array, np.float32)), self._dtype)


def initial_values(case: Case) -> List[np.ndarray]:
  """The model's initial values, in its variable dtype, seeded by model."""
  rng = np.random.RandomState(sum(map(ord, case.model)))
  dtype = DTYPES[case.dtype][0].as_numpy_dtype
  return [rng.uniform(-1, 1, shape).astype(np.float32).astype(dtype)
          for _, shape in MODELS[case.model].shapes]


_UNUSED_INITIAL = np.array([0.5, -0.25], np.float32)


class _Side(object):
  """One side of the comparison: the oracle's model and optimizers, or ours.

  Its own copy of the variables, `global_step`, managers and inner
  optimizers, one per head. `step()` builds (graph, `tf.function`) or runs
  (eagerly) one training step; `state()` names every piece of state.
  """

  def __init__(self, which: str, case: Case, inputs: _Inputs,
               callable_loss: bool):
    self.which = which
    self._case = case
    self._model = MODELS[case.model]
    self._inputs = inputs
    self._callable_loss = callable_loss
    var_dtype, self._compute_dtype = DTYPES[case.dtype]
    with tf.name_scope(which):
      self.variables = [
          tf.compat.v1.Variable(value, name=name, dtype=var_dtype)
          for (name, _), value in zip(self._model.shapes,
                                      initial_values(case))]
      self.names = [name for name, _ in self._model.shapes]
      self.global_step = tf.compat.v1.Variable(
          0, dtype=tf.int64, trainable=False, name="global_step")
      self.unused = None
      if case.unused_variable and which == "package":
        self.unused = tf.compat.v1.Variable(_UNUSED_INITIAL, name="unused",
                                            dtype=tf.float32)
      self.scale_variable = None
      if case.scale[0] == "trainable":
        self.scale_variable = tf.compat.v1.Variable(
            case.scale[2], dtype=tf.as_dtype(case.scale[1]),
            name="loss_scale_variable")
      oracle_manager, package_manager = _managers(case.scale,
                                                  self.scale_variable)
      self.managers, self.inner, self.optimizers = [], [], []
      for _ in self._model.heads:
        inner = OPTIMIZERS[case.optimizer](self.global_step)
        if which == "oracle":
          manager = oracle_manager()
          optimizer = tf115.LossScaleOptimizer(inner, manager)
        else:
          manager = package_manager()
          kwargs = ({"keep_sparse_gradients": True}
                    if case.keep_sparse else {})
          optimizer = mp.LossScaleOptimizer(inner, manager, **kwargs)
        self.managers.append(manager)
        self.inner.append(inner)
        self.optimizers.append(optimizer)
    self._losses = None if callable_loss else self._compute_losses()

  def _compute_losses(self):
    xs = [tf.cast(v, self._compute_dtype) if v.dtype.base_dtype !=
          self._compute_dtype else v for v in self.variables]
    losses = self._model.loss(xs, _Data(self._compute_dtype, self._inputs))
    result = []
    for loss in losses:
      if self._compute_dtype != DTYPES[self._case.dtype][0]:
        loss = tf.cast(loss, tf.float32)
      if self._inputs.poison is not None:
        loss = loss * tf.cast(self._inputs.poison, loss.dtype)
      result.append(loss)
    return result

  def _head_variables(self, head: int) -> List[tf.Variable]:
    indices = self._model.heads[head] or range(len(self.variables))
    result = [self.variables[i] for i in indices]
    if self.scale_variable is not None:
      result.append(self.scale_variable)
    if self.unused is not None:
      result.append(self.unused)
    return result

  def step(self):
    """One training step of every head, in order (a GAN's D, then G)."""
    ops = []
    last = len(self.optimizers) - 1
    for head, optimizer in enumerate(self.optimizers):
      if self._callable_loss:
        loss = functools.partial(
            lambda h: self._compute_losses()[h], head)
      else:
        loss = self._losses[head]
      var_list = None if self._case.var_list_none else (
          self._head_variables(head))
      global_step = self.global_step if head == last else None
      # A later head's gradients wait for the earlier head's update, so the
      # step does not race on the variables they share (ref variables
      # under disable_v2_behavior() are read in place).
      with tf.control_dependencies(ops[-1:]):
        if self._case.method == "minimize":
          op = optimizer.minimize(loss, global_step=global_step,
                                  var_list=var_list)
        else:
          grads_and_vars = optimizer.compute_gradients(loss,
                                                       var_list=var_list)
          grads, variables = zip(*grads_and_vars)
          clipped, _ = tf.clip_by_global_norm(grads, 0.5)
          op = optimizer.apply_gradients(zip(clipped, variables),
                                         global_step=global_step)
      if op is not None:
        ops.append(op)
    return tf.group(*ops) if ops else None

  def state(self) -> Dict[str, object]:
    """Every piece of state, by a name shared by both sides."""
    state = {"global_step": self.global_step}
    for name, variable in zip(self.names, self.variables):
      state["var/" + name] = variable
    if self.scale_variable is not None:
      state["var/loss_scale_variable"] = self.scale_variable
    all_variables = list(self.variables)
    if self.scale_variable is not None:
      all_variables.append(self.scale_variable)
    names = dict(zip(map(id, all_variables),
                     self.names + ["loss_scale_variable"]))
    for head, (optimizer, inner, manager) in enumerate(
        zip(self.optimizers, self.inner, self.managers)):
      prefix = "head{}/".format(head)
      slots = set()
      for variable in all_variables:
        for slot_name in optimizer.get_slot_names():
          slot = optimizer.get_slot(variable, slot_name)
          if slot is not None:
            state["slot/{}/{}".format(names[id(variable)], slot_name)] = slot
            slots.add(id(slot))
      for variable in inner.variables():
        if id(variable) in slots:
          continue
        role = re.sub(r"_\d+$", "",
                      variable.name.split(":")[0].split("/")[-1])
        key = prefix + "non_slot/" + role
        if key in state:
          raise AssertionError("Two non-slot variables of one role: {} "
                               "and {}".format(state[key], variable))
        state[key] = variable
      manager_variables = list(getattr(manager, "variables", list)())
      if len(manager_variables) == 3:
        for role, variable in zip(("loss_scale", "good_steps", "bad_steps"),
                                  manager_variables):
          state[prefix + role] = variable
      else:
        state[prefix + "loss_scale"] = manager.get_loss_scale()
    return state


@dataclasses.dataclass
class Trajectories:
  """The state of both sides after each step (a list of dicts per side)."""
  oracle: List[Dict[str, np.ndarray]]
  package: List[Dict[str, np.ndarray]]
  # The package-only unused variable's value after each step.
  unused: List[np.ndarray]


def _value(x) -> np.ndarray:
  return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def _graph_trajectories(case: Case) -> Trajectories:
  """Both sides in one graph and one Session, each step a run per side."""
  with tf.Graph().as_default():
    inputs = _Inputs(case, graph=True)
    oracle = _Side("oracle", case, inputs, callable_loss=False)
    package = _Side("package", case, inputs, callable_loss=False)
    train = [oracle.step(), package.step()]
    fetches = [oracle.state(), package.state()]
    unused = package.unused if package.unused is not None else tf.no_op()
    result = Trajectories([], [], [])
    with tf.compat.v1.Session() as sess:
      sess.run(tf.compat.v1.global_variables_initializer())
      for step in range(case.steps):
        feed = inputs.set(step)
        # A run per side: Grappler optimizes each side's graph as it would
        # alone.
        for op in train:
          sess.run(op, feed_dict=feed)
        oracle_state, package_state, unused_value = sess.run(
            fetches + [unused])
        result.oracle.append(oracle_state)
        result.package.append(package_state)
        result.unused.append(unused_value)
  return result


def _eager_trajectories(case: Case, function: bool) -> Trajectories:
  """Both sides eagerly, or both steps in one `tf.function`."""
  inputs = _Inputs(case, graph=False)
  oracle = _Side("oracle", case, inputs, callable_loss=True)
  package = _Side("package", case, inputs, callable_loss=True)

  def train():
    oracle.step()
    package.step()

  if function:
    train = tf.function(train, autograph=False)
  result = Trajectories([], [], [])
  for step in range(case.steps):
    inputs.set(step)
    train()
    result.oracle.append(
        {k: _value(v) for k, v in oracle.state().items()})
    result.package.append(
        {k: _value(v) for k, v in package.state().items()})
    result.unused.append(None if package.unused is None else
                         _value(package.unused))
  return result


def trajectories(case: Case, mode: str) -> Trajectories:
  """Trains both sides `case.steps` steps in `mode` (not V1_GRAPH)."""
  if mode == GRAPH:
    return _graph_trajectories(case)
  if mode in (FUNCTION, EAGER):
    return _eager_trajectories(case, function=mode == FUNCTION)
  raise ValueError("mode {!r} runs in a subprocess (v1_graph_report)".format(
      mode))


def _difference(name, step, oracle, package) -> Optional[str]:
  """Why `package` is not `oracle` to the bit, or None if it is."""
  oracle, package = np.asarray(oracle), np.asarray(package)
  where = "step {}: {}".format(step, name)
  if oracle.dtype != package.dtype or oracle.shape != package.shape:
    return "{}: oracle is {} {}, package is {} {}".format(
        where, oracle.dtype, oracle.shape, package.dtype, package.shape)
  if oracle.tobytes() == package.tobytes():
    return None
  width = max(oracle.dtype.itemsize, 1)
  differs = np.any(
      oracle.reshape(-1).view(np.uint8).reshape(-1, width) !=
      package.reshape(-1).view(np.uint8).reshape(-1, width), axis=1)
  with np.errstate(invalid="ignore", over="ignore"):
    a = oracle.reshape(-1).astype(np.float64)
    b = package.reshape(-1).astype(np.float64)
    gaps = np.where(differs, np.abs(a - b), 0.0)
  # NaN where one side is NaN (or infinities of one sign): largest of all.
  largest = np.inf if np.any(np.isnan(gaps)) else float(np.max(gaps))
  first = int(np.argmax(differs))
  index = np.unravel_index(first, oracle.shape) if oracle.shape else ()
  return ("{}: {} of {} elements differ, largest |difference| {!r} "
          "(first at {}: oracle {!r}, package {!r})".format(
              where, int(np.sum(differs)), oracle.size, largest,
              tuple(int(i) for i in index), a[first].item(),
              b[first].item()))


def mismatches(result: Trajectories) -> List[str]:
  """Every difference between the sides, step by step (steps from 1)."""
  found = []
  for step, (oracle, package, unused) in enumerate(
      zip(result.oracle, result.package, result.unused), 1):
    if set(oracle) != set(package):
      found.append("step {}: the state differs in names: only the oracle "
                   "has {}, only the package has {}".format(
                       step, sorted(set(oracle) - set(package)),
                       sorted(set(package) - set(oracle))))
    for name in sorted(set(oracle) & set(package)):
      difference = _difference(name, step, oracle[name], package[name])
      if difference:
        found.append(difference)
    if unused is not None:
      difference = _difference("the unused variable", step, _UNUSED_INITIAL,
                               unused)
      if difference:
        found.append(difference + " (it has no gradient: it must not move)")
  return found


def compared(result: Trajectories) -> int:
  """How many (step, state) pairs were compared."""
  return sum(len(o) for o in result.oracle)


def final_global_step(result: Trajectories) -> int:
  """The oracle's `global_step` after the last step (steps it applied)."""
  return int(result.oracle[-1]["global_step"])


def case_report(case: Case, mode: str) -> dict:
  """A case's result, JSON-ready: what differs and what was compared."""
  result = trajectories(case, mode)
  return {"mismatches": mismatches(result), "compared": compared(result),
          "oracle_global_step": final_global_step(result)}


@functools.lru_cache(maxsize=None)
def _v1_reports(cases_json: str) -> Dict[str, dict]:
  output = program_util.run_program(_V1_PROGRAM, cases_json, timeout=600)
  for line in reversed(output.splitlines()):
    if line.startswith(V1_RESULT_PREFIX):
      return json.loads(line[len(V1_RESULT_PREFIX):])
  raise AssertionError("{} printed no result:\n{}".format(
      _V1_PROGRAM, output[-4000:]))


def v1_graph_report(case: Case, batch: Sequence[Case]) -> dict:
  """`case_report(case, GRAPH)` under `disable_v2_behavior()`.

  Every case of `batch` (which holds `case`) runs in one subprocess, once
  per test process.
  """
  cases_json = json.dumps([c.to_json() for c in batch])
  return _v1_reports(cases_json)[case.name]


# -- A test's own model --------------------------------------------------
#
# A test that trains a model of its own (its own variables, loss, manager
# and steps) writes one `build(lib, inputs)`; `sides` calls it once with TF
# 1.15's classes and once with the package's, and trains both as
# `trajectories` trains a `Case`.

ORACLE, PACKAGE = "oracle", "package"
SIDES = (ORACLE, PACKAGE)


class Library(object):
  """The classes one side builds a test's own model with.

  The oracle's side gets TF 1.15's optimizer and managers
  (`tf115_reference`), the package's side the package's. A user's manager
  (any object with `get_loss_scale` and `update_loss_scale`) serves both
  sides unchanged: TF 1.15's optimizer only called those two methods.
  """

  def __init__(self, which: str):
    if which not in SIDES:
      raise ValueError("`which` must be one of {}, not {!r}".format(
          SIDES, which))
    self.which = which
    module = tf115 if which == ORACLE else mp
    self.FixedLossScaleManager = module.FixedLossScaleManager
    self.ExponentialUpdateLossScaleManager = (
        module.ExponentialUpdateLossScaleManager)

  @property
  def is_oracle(self) -> bool:
    return self.which == ORACLE

  def var_list(self, variables):
    """A `var_list` the test leaves to the optimizer: None, but not for 1.15.

    In a `tf.function` TF 1.15's optimizer found no variables (the TF1
    collections are empty there), where the package takes the tape's; so
    its side names the model's `variables`. Elsewhere both find the same.
    """
    return list(variables) if self.is_oracle else None

  # pylint: disable-next=invalid-name
  def LossScaleOptimizer(self, opt, loss_scale_manager, **options):
    """This side's optimizer; `options` are the package's own keywords.

    TF 1.15 had none, so the oracle's side is built without them. A test
    compares only where an option keeps TF 1.15's numbers: `xla_unscale`
    always; `keep_sparse_gradients` where the sparse update is the dense
    one: GradientDescent without an id repeated within a step, and no
    other optimizer (tests/keep_sparse_gradients_test.py measures it).
    (`advance_global_step_on_skip` moves `global_step` by design.)
    """
    if self.which == PACKAGE:
      return mp.LossScaleOptimizer(opt, loss_scale_manager, **options)
    return tf115.LossScaleOptimizer(opt, loss_scale_manager)


@dataclasses.dataclass
class Built:
  """What a test's `build` returns for one side.

  Attributes:
    step: Builds one training step (in a graph, or traced into the
      `tf.function`), or runs it (eagerly). Returns an op or None.
    state: Returns every piece of state to compare, by name: variables or
      tensors. Called once in a graph, after each step otherwise.
  """
  step: Callable[[], object]
  state: Callable[[], Dict[str, object]]


def _shared_inputs(inputs: Dict[str, object], graph: bool) -> dict:
  """Placeholders (in a graph) or variables both sides read, by name."""
  shared = {}
  for name, value in inputs.items():
    value = np.asarray(value)
    dtype = tf.as_dtype(value.dtype)
    if graph:
      shared[name] = tf.compat.v1.placeholder(dtype, value.shape, name=name)
    else:
      shared[name] = tf.Variable(value, dtype=dtype, trainable=False,
                                 name=name)
  return shared


def sides(build: Callable[[Library, dict], Built], mode: str,
          steps: int = 1, inputs: Optional[Dict[str, object]] = None,
          schedule: Sequence[Dict[str, object]] = ()) -> Trajectories:
  """Builds a test's own model on both sides and trains both in `mode`.

  As `trajectories` does for a `Case`, in one `tf.function` (without
  autograph) or eagerly, the oracle's side first; but in graph mode each
  side has a graph and a Session of its own (Grappler at its defaults, as
  in one Session run per side), so that a step that leaves `var_list` to
  the optimizer finds its own side's variables only, as the test meant.

  Args:
    build: `build(lib, inputs)` makes one side's variables, manager and
      optimizer with `lib` (a `Library`) and returns a `Built`. `inputs`
      maps each name of `inputs` to what both sides read.
    mode: `GRAPH`, `FUNCTION` or `EAGER`.
    steps: How many steps, if `schedule` is empty.
    inputs: Values both sides read, by name (a poison multiplier, data):
      fed to placeholders in a graph, assigned to variables otherwise.
    schedule: One dict per step: the inputs' values that step (an input
      not named there has its value in `inputs`).

  Returns:
    `Trajectories`: each side's state after each step, as NumPy values.
  """
  inputs = dict(inputs or {})
  steps = len(schedule) if schedule else steps
  schedule = list(schedule) or [{}] * steps

  def values(step):
    return {name: np.asarray(schedule[step].get(name, value),
                             np.asarray(value).dtype)
            for name, value in inputs.items()}

  result = Trajectories([], [], [None] * steps)
  if mode == GRAPH:
    runs = []
    for which in SIDES:
      graph = tf.Graph()
      with graph.as_default():
        shared = _shared_inputs(inputs, graph=True)
        built = build(Library(which), shared)
        runs.append((tf.compat.v1.Session(graph=graph), shared, built.step(),
                     built.state()))
        runs[-1][0].run(tf.compat.v1.global_variables_initializer())
    try:
      for step in range(steps):
        states = []
        for sess, shared, op, fetch in runs:
          feed = {shared[k]: v for k, v in values(step).items()}
          if op is not None:
            sess.run(op, feed_dict=feed)
          states.append(sess.run(fetch, feed_dict=feed))
        result.oracle.append(states[0])
        result.package.append(states[1])
    finally:
      for sess, _, _, _ in runs:
        sess.close()
    return result
  if mode not in (FUNCTION, EAGER):
    raise ValueError("`sides` runs in {}, not {!r}".format(
        (GRAPH, FUNCTION, EAGER), mode))
  shared = _shared_inputs(inputs, graph=False)
  built = [build(Library(which), shared) for which in SIDES]

  def train():
    for side in built:
      side.step()

  if mode == FUNCTION:
    train = tf.function(train, autograph=False)
  for step in range(steps):
    for name, value in values(step).items():
      shared[name].assign(value)
    train()
    result.oracle.append(
        {k: _value(v) for k, v in built[0].state().items()})
    result.package.append(
        {k: _value(v) for k, v in built[1].state().items()})
  return result


class OracleTestCase(tf.test.TestCase, parameterized.TestCase):
  """`assertMatchesOracle` and `assertSidesMatch`: the oracle's verdicts."""

  def _fail_on(self, what: str, found: Sequence[str]):
    if found:
      self.fail("{}: {} difference(s) from TF 1.15's optimizer:"
                "\n  {}{}".format(
                    what, len(found), "\n  ".join(found[:_MAX_REPORTED]),
                    "\n  ..." if len(found) > _MAX_REPORTED else ""))

  def report(self, case: Case, mode: str,
             v1_batch: Sequence[Case] = ()) -> dict:
    if mode == V1_GRAPH:
      return v1_graph_report(case, v1_batch or [case])
    return case_report(case, mode)

  def assertMatchesOracle(self, case: Case, mode: str,
                          v1_batch: Sequence[Case] = (),
                          oracle_global_step: Optional[int] = None):
    """Every piece of state equals the oracle's to the bit, after each step.

    Args:
      case: The model, dtype, optimizer and scale.
      mode: One of `MODES`.
      v1_batch: In `V1_GRAPH` mode, the cases that share its subprocess.
      oracle_global_step: If given, the oracle's `global_step` at the end,
        to show that the case tests the steps it means to (applied or
        skipped).

    Returns:
      The report (`case_report`).
    """
    report = self.report(case, mode, v1_batch)
    if mode == V1_GRAPH:
      self.assertFalse(report["resource_variables"],
                       msg="disable_v2_behavior() left resource variables on")
    if "error" in report:
      self.fail("{} in {} mode raised:\n{}".format(case.name, mode,
                                                  report["error"]))
    self.assertGreater(report["compared"], 0)
    self._fail_on("{} in {} mode".format(case.name, mode),
                  report["mismatches"])
    if oracle_global_step is not None:
      self.assertEqual(report["oracle_global_step"], oracle_global_step,
                       msg="the oracle's global_step after {}".format(
                           case.name))
    return report

  def assertSidesMatch(self, result: Trajectories,
                       package_only: Sequence[str] = (), msg: str = ""):
    """A test's own model (`sides`): equal to the oracle's, to the bit.

    Args:
      result: What `sides` returned.
      package_only: The names of the package's state that the oracle's
        side lacks (a variable TF 1.15 crashed on, left out of its model);
        the test checks them itself.
      msg: What the test was doing, for the failure message.
    """
    self.assertNotEmpty(result.oracle, msg="no step was compared")
    oracle_names = set(result.oracle[0])
    package_names = set(result.package[0])
    self.assertEqual(
        (sorted(oracle_names - package_names),
         sorted(package_names - oracle_names)), ([], sorted(package_only)),
        msg="the names of the state (only the oracle's, only the "
        "package's)")
    compared = Trajectories(
        result.oracle,
        [{k: v for k, v in state.items() if k not in package_only}
         for state in result.package], result.unused)
    self._fail_on(msg or "the test's own model", mismatches(compared))

  def judged(self, build: Callable[[Library, dict], Built], mode: str,
             package_only: Sequence[str] = (), msg: str = "",
             **sides_kwargs) -> List[Dict[str, np.ndarray]]:
    """Trains a test's own model on both sides and asserts that they match.

    `sides(build, mode, **sides_kwargs)`, then `assertSidesMatch`.

    Returns:
      The package's state after each step, for the test's own checks.
    """
    result = sides(build, mode, **sides_kwargs)
    self.assertSidesMatch(result, package_only=package_only,
                          msg=msg or "{} mode".format(mode))
    return result.package
