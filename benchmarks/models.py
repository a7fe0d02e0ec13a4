# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The models timed, each with its inner optimizer, and the cases they make.

A case is `<model>_<mode>`: one model built and stepped one way (see
`benchmarks/__main__.py`'s help for the models and modes). Each model
builder returns (variables, loss_fn); its data are constants.
"""

import numpy as np
import tensorflow as tf

MODELS = ("mlp", "small", "emb", "attn", "embgd", "embmom")
# The cases of the goals (tf_mp's count among them).
GOAL_CASES = ("mlp_graph", "mlp_graph_v1", "mlp_function", "mlp_eager",
              "small_graph", "small_build",
              "emb_graph", "emb_graph_v1", "emb_function", "emb_eager",
              "attn_graph", "attn_graph_v1", "attn_function", "attn_eager")
# The embedding with other inner optimizers (issue 51): GradientDescent,
# whose update the exact default computes by the touched rows as Adagrad's,
# and Momentum, which moves every row and stays dense.
EMBEDDING_CASES = ("embgd_graph", "embgd_graph_v1", "embgd_function",
                   "embmom_graph")
ALL_CASES = GOAL_CASES + EMBEDDING_CASES
# The models whose table's gradient is IndexedSlices.
EMBEDDINGS = ("emb", "embgd", "embmom")
GRAPH_MODES = ("graph", "graph_v1")


def split_case(case):
  """`<model>_<mode>` -> (model, mode)."""
  model, mode = case.split("_", 1)
  return model, mode


def inner_optimizer(model):
  """The optimizer that every configuration of `model` wraps."""
  if model == "emb":
    return tf.compat.v1.train.AdagradOptimizer(1e-3)
  if model == "embgd":
    return tf.compat.v1.train.GradientDescentOptimizer(1e-3)
  if model == "embmom":
    return tf.compat.v1.train.MomentumOptimizer(1e-3, 0.9)
  return tf.compat.v1.train.AdamOptimizer(1e-5)


def _mlp(depth, width, batch, rng):
  x = tf.constant(rng.standard_normal((batch, width)).astype(np.float32))
  y = tf.constant(rng.standard_normal((batch, width)).astype(np.float32))
  variables = []
  for i in range(depth):
    init = rng.standard_normal((width, width)).astype(np.float32)
    init *= np.sqrt(2.0 / width)
    variables.append(tf.compat.v1.Variable(init, name="w%d" % i))
    variables.append(tf.compat.v1.Variable(
        np.zeros((width,), np.float32), name="b%d" % i))

  def loss_fn():
    h = x
    for i in range(depth):
      h = tf.matmul(h, variables[2 * i]) + variables[2 * i + 1]
      if i < depth - 1:
        h = tf.nn.relu(h)
    return tf.reduce_mean(tf.square(h - y))

  return variables, loss_fn


def _many_small(blocks, width, batch, rng):
  """4 variables per block: a chain of small, cheap layers."""
  x = tf.constant(rng.standard_normal((batch, width)).astype(np.float32))
  variables = []
  for i in range(blocks):
    w = np.eye(width, dtype=np.float32) + 0.01 * rng.standard_normal(
        (width, width)).astype(np.float32)
    variables.extend([
        tf.compat.v1.Variable(w, name="w%d" % i),
        tf.compat.v1.Variable(np.zeros((width,), np.float32), name="b%d" % i),
        tf.compat.v1.Variable(np.ones((width,), np.float32), name="g%d" % i),
        tf.compat.v1.Variable(np.zeros((width,), np.float32), name="s%d" % i),
    ])

  def loss_fn():
    h = x
    for i in range(blocks):
      w, b, g, s = variables[4 * i:4 * i + 4]
      h = tf.tanh((tf.matmul(h, w) + b) * g + s)
    return tf.reduce_mean(tf.square(h))

  return variables, loss_fn


def _embedding(vocab, dim, ids_per_step, bag, rng):
  """A table looked up by `ids_per_step` ids, pooled in bags, one dense layer.

  The table's gradient is IndexedSlices with `ids_per_step` rows; the table
  is initialised by an op, not a constant, to keep its 100 MB out of the
  GraphDef.
  """
  ids = tf.constant(rng.integers(0, vocab, size=(ids_per_step // bag, bag)),
                    dtype=tf.int64)
  y = tf.constant(rng.standard_normal((ids_per_step // bag, dim)).astype(
      np.float32))
  table = tf.compat.v1.Variable(
      tf.random.stateless_normal([vocab, dim], seed=[1, 2], stddev=0.05),
      name="table")
  w = tf.compat.v1.Variable(
      (rng.standard_normal((dim, dim)) / np.sqrt(dim)).astype(np.float32),
      name="w")
  b = tf.compat.v1.Variable(np.zeros((dim,), np.float32), name="b")
  variables = [table, w, b]

  def loss_fn():
    pooled = tf.reduce_mean(tf.nn.embedding_lookup(table, ids), axis=1)
    return tf.reduce_mean(tf.square(tf.matmul(pooled, w) + b - y))

  return variables, loss_fn


def _attention(blocks, d, heads, seq, batch, rng):
  """Pre-norm transformer encoder blocks (attention + 4x ReLU MLP)."""
  x0 = tf.constant(rng.standard_normal((batch, seq, d)).astype(np.float32))
  y = tf.constant(rng.standard_normal((batch, seq, d)).astype(np.float32))
  dh = d // heads
  variables = []

  def var(shape, name, scale=None):
    if scale is None:  # A norm's gain (1) or a bias (0).
      value = np.ones(shape, np.float32) if name.startswith("g") else (
          np.zeros(shape, np.float32))
    else:
      value = (scale * rng.standard_normal(shape)).astype(np.float32)
    v = tf.compat.v1.Variable(value, name=name)
    variables.append(v)
    return v

  params = []
  for i in range(blocks):
    params.append(dict(
        g1=var((d,), "g1_%d" % i), c1=var((d,), "c1_%d" % i),
        wqkv=var((d, 3 * d), "wqkv_%d" % i, d**-0.5),
        wo=var((d, d), "wo_%d" % i, d**-0.5),
        g2=var((d,), "g2_%d" % i), c2=var((d,), "c2_%d" % i),
        w1=var((d, 4 * d), "w1_%d" % i, d**-0.5),
        b1=var((4 * d,), "b1_%d" % i),
        w2=var((4 * d, d), "w2_%d" % i, (4 * d)**-0.5),
        b2=var((d,), "b2_%d" % i)))

  def norm(h, gain, shift):
    mean, variance = tf.nn.moments(h, axes=[-1], keepdims=True)
    return (h - mean) * tf.math.rsqrt(variance + 1e-6) * gain + shift

  def loss_fn():
    h = x0
    for p in params:
      a = tf.reshape(norm(h, p["g1"], p["c1"]), [batch * seq, d])
      qkv = tf.reshape(tf.matmul(a, p["wqkv"]), [batch, seq, 3, heads, dh])
      q, k, v = [tf.transpose(qkv[:, :, j], [0, 2, 1, 3]) for j in range(3)]
      att = tf.nn.softmax(tf.matmul(q, k, transpose_b=True) * dh**-0.5)
      o = tf.reshape(tf.transpose(tf.matmul(att, v), [0, 2, 1, 3]),
                     [batch * seq, d])
      h += tf.reshape(tf.matmul(o, p["wo"]), [batch, seq, d])
      f = tf.reshape(norm(h, p["g2"], p["c2"]), [batch * seq, d])
      f = tf.matmul(tf.nn.relu(tf.matmul(f, p["w1"]) + p["b1"]), p["w2"])
      h += tf.reshape(f + p["b2"], [batch, seq, d])
    return tf.reduce_mean(tf.square(h - y))

  return variables, loss_fn


def model_fn(model, quick):
  """A builder of `model` (quick: a tiny one), taking a numpy Generator."""
  if model == "mlp":
    depth, width = (3, 64) if quick else (16, 1024)
    return lambda rng: _mlp(depth, width, 64, rng)
  if model == "small":
    blocks = 10 if quick else 125
    return lambda rng: _many_small(blocks, 32, 64, rng)
  if model in EMBEDDINGS:
    args = (1000, 16, 64, 8) if quick else (200000, 128, 4096, 8)
    return lambda rng: _embedding(*args, rng)
  if model == "attn":
    args = (1, 32, 2, 16, 2) if quick else (3, 256, 4, 128, 2)
    return lambda rng: _attention(*args, rng)
  raise ValueError(model)
