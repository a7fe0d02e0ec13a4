# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Whether a file still uses TF 1's API, which only `tf_upgrade_v2` converts.

The report recommends TensorFlow's `tf_upgrade_v2` only for a tree that
needs it: on TF 2.x code it converts nothing useful, and it renames
`tf.keras.optimizers.X` to `tf.keras.optimizers.legacy.X`, which Keras 3
refuses (docs/design.md, contract 18). A file needs it when it uses, as
written from `tensorflow` itself (not through `tf.compat.v1`, which TF 2
keeps), a name TF 2 removed; `_GONE` lists the common ones.

This module needs only the standard library.
"""

import ast
from typing import List

from contrib_mp_upgrade import keras2

# Names under `tensorflow.` that TF 2 removed (tf_upgrade_v2 renames them
# to `tf.compat.v1.X` or their TF 2 successor). Prefixes: `train.` covers
# `tf.train.AdamOptimizer` and the rest of TF 1's training API that TF 2
# dropped (listed apart below, since `tf.train.Checkpoint` stayed).
_GONE = frozenset((
    "placeholder", "placeholder_with_default", "sparse_placeholder",
    "Session", "InteractiveSession", "get_variable", "variable_scope",
    "get_variable_scope", "global_variables_initializer",
    "local_variables_initializer", "variables_initializer",
    "tables_initializer", "trainable_variables", "global_variables",
    "local_variables", "model_variables", "get_collection",
    "add_to_collection", "GraphKeys", "get_default_graph",
    "reset_default_graph", "set_random_seed", "random_normal",
    "random_uniform", "truncated_normal", "to_float", "to_int32",
    "to_int64", "log", "py_func", "layers", "contrib", "logging", "gfile",
    "app", "flags", "assign", "assign_add", "Print", "AUTO_REUSE",
    "div", "sparse_to_dense", "ConfigProto", "GPUOptions", "RunOptions",
    "RunMetadata", "losses.softmax_cross_entropy",
    "losses.sparse_softmax_cross_entropy", "nn.rnn_cell",
    "summary.FileWriter", "summary.merge_all", "summary.merge",
    "global_norm",
))
_GONE_TRAIN = frozenset((
    "AdamOptimizer", "GradientDescentOptimizer", "MomentumOptimizer",
    "RMSPropOptimizer", "AdagradOptimizer", "AdadeltaOptimizer",
    "FtrlOptimizer", "Optimizer", "Saver", "get_or_create_global_step",
    "get_global_step", "create_global_step", "SessionRunHook",
    "SessionRunArgs", "MonitoredTrainingSession", "MonitoredSession",
    "LoggingTensorHook", "StopAtStepHook", "CheckpointSaverHook",
    "exponential_decay", "piecewise_constant", "polynomial_decay",
    "cosine_decay", "natural_exp_decay", "inverse_time_decay",
    "SyncReplicasOptimizer", "replica_device_setter", "Scaffold",
    "start_queue_runners", "Coordinator", "string_input_producer",
    "shuffle_batch", "batch", "init_from_checkpoint", "list_variables",
    "load_variable", "import_meta_graph", "write_graph",
))


def lines(source: bytes) -> List[int]:
  """Lines of `source` that use TF 1's API as written from `tensorflow`.

  Args:
    source: A Python source.

  Returns:
    The lines, sorted; empty when there are none or it does not parse.
  """
  if b"tensorflow" not in source and b"tf." not in source:
    return []  # Most files of a large tree: Python's parser is spared.
  try:
    tree = ast.parse(source)
  except (SyntaxError, ValueError, RecursionError, MemoryError):
    return []
  bindings = keras2.Bindings(tree)
  if "tf" not in bindings.bound and b"tf." in source:
    bindings.bound["tf"] = "tensorflow"  # Notebooks and snippets.
  found = set()
  for node in ast.walk(tree):
    if not isinstance(node, ast.Attribute):
      continue
    path = bindings.path(node) or ""
    if path.startswith("tensorflow_core."):
      path = "tensorflow." + path[len("tensorflow_core."):]
    if not path.startswith("tensorflow."):
      continue
    rest = path[len("tensorflow."):]
    parts = rest.split(".")
    if rest in _GONE or (parts[0] == "train" and len(parts) == 2 and
                         parts[1] in _GONE_TRAIN):
      found.add(node.lineno)
  for module, line in bindings.imports:
    if module in ("tensorflow.contrib", "tensorflow.layers") or (
        module.startswith(("tensorflow.contrib.", "tensorflow.layers."))):
      found.add(line)
  return sorted(found)
