# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Blockers: what still stops a converted file on TensorFlow 2, and the fix.

Run over each file's final output (after `--tf_upgrade_v2`, if it ran), so
that what a converter already fixed is never reported. It reads the code
with the standard library's `ast`, which is fast enough to run on every
file of a large tree, and resolves names through the file's imports only
(`import tensorflow.compat.v1 as tf`; `tf` bound by nothing is TensorFlow).

Each `Blocker` names one kind of failure, the lines, and what to do; the
report ranks them over the tree.
"""

import ast
import dataclasses
import re
from typing import Dict, List, Optional, Tuple

# Other tf.contrib modules, and their maintained successor.
_SLIM = ("`tf_slim` provides {} unchanged, as `tf_slim.X` (not "
         "`tf_slim.layers.X`, which lacks the initializers and "
         "regularizers): --contrib-to-slim rewrites those uses and lists "
         "the rest, then `pip install 'contrib_mixed_precision[slim]'`")
_SUCCESSORS = {
    "layers": _SLIM.format("most of it"),
    "framework": _SLIM.format("`arg_scope`, `add_arg_scope` and the "
                              "variables functions"),
    "slim": _SLIM.format("most of it"),
    "training": (
        "no drop-in exists: replace `HParams` with a dict or "
        "`types.SimpleNamespace` (its string `parse()` has no successor)"),
    "opt": ("no drop-in exists: use a `tf.compat.v1.train` optimizer, or "
            "a Keras optimizer"),
    "tpu": (
        "`TPUEstimator`, `TPUEstimatorSpec`, `RunConfig`, `TPUConfig` and "
        "`InputPipelineConfig` are `tf.compat.v1.estimator.tpu.X` (an "
        "Estimator API: TensorFlow 2.15 or older; --tf_upgrade_v2 renames "
        "them), the TPU functions (`shard`, `rewrite`, "
        "`CrossShardOptimizer`, ...) `tf.compat.v1.tpu.X`, "
        "`TPUClusterResolver` "
        "`tf.distribute.cluster_resolver.TPUClusterResolver`; on TensorFlow "
        "2.16+ port the model to `tf.distribute.TPUStrategy`"),
    "rnn": "use `tf.compat.v1.nn.rnn_cell` or Keras RNN layers",
    "cudnn_rnn": "use Keras `LSTM`/`GRU`, which pick cuDNN themselves",
    "data": "use `tf.data` (most of it moved there unchanged)",
    "distribute": "use `tf.distribute`",
}
_NO_SUCCESSOR = ("this command knows no drop-in: see TensorFlow's TF 2 "
                 "migration guide")

# tf-keras requires the `tensorflow` package: beside `tensorflow-cpu` (or a
# vendor's build) pip would install a second TensorFlow into the same
# directory, and removing either breaks both. `--no-deps` is right for all.
LEGACY_KERAS_INSTALL = (
    "`pip install --no-deps 'tf-keras~=2.N.0'` for your TensorFlow 2.N "
    "(`--no-deps`: tf-keras requires the `tensorflow` package, and with "
    "`tensorflow-cpu` pip would install a second TensorFlow)")
LEGACY_KERAS_FIX = (
    "on TensorFlow 2.16 and later it needs tf-keras of your TensorFlow's "
    "version, " + LEGACY_KERAS_INSTALL + ", and TF_USE_LEGACY_KERAS=1 set "
    "before TensorFlow is imported")

SESSION = "Session code under TF 2's eager default"
SESSION_FIX = (
    "`tf.placeholder`, `Session.run` and fetching tensors by name need "
    "graph mode: call "
    "`tf.compat.v1.disable_eager_execution()` (or "
    "`tf.compat.v1.disable_v2_behavior()`) once, right after TensorFlow is "
    "imported, in the program's entry script")
SESSION_FIX_V1_SHAPES = (
    "`tf.placeholder`, `Session.run` and fetching tensors by name need graph "
    "mode, and this file reads Dimension `.value` too: call "
    "`tf.compat.v1.disable_v2_behavior()` once, right after TensorFlow is "
    "imported, in the program's entry script "
    "(`disable_eager_execution()` is not enough here)")

BY_NAME = "the loss scale's variable fetched by name ('loss_scale:0')"
BY_NAME_FIX = (
    "under TF 2 behaviour the state is resource variables, and "
    "'loss_scale:0' (also 'good_steps:0', 'bad_steps:0') names the "
    "variable's handle, not its value: a hook or `sess.run` that fetches it "
    "gets a handle (the step fails with TypeError). Call "
    "`tf.compat.v1.disable_v2_behavior()` once, right after TensorFlow is "
    "imported, in the program's entry script: its ref variables hold the "
    "value under that name, as TF 1.15's did "
    "(`disable_eager_execution()` is not enough); or fetch "
    "`manager.get_loss_scale()` instead")
# A variable of the managers' state, by its tensor name: `loss_scale:0`,
# `loss_scale_1:0` (uniquified), `scope/good_steps:0`.
_STATE_TENSOR_NAME = re.compile(
    r"(?:^|/)(?:loss_scale|good_steps|bad_steps)(?:_\d+)?:0$")
_REF_VARIABLE_CALLS = frozenset(("disable_v2_behavior",
                                 "disable_resource_variables"))

DIMENSION = "Dimension `.value` under TF 2 shapes"
DIMENSION_FIX = (
    "TF 2 shapes hold plain ints, which have no `.value` "
    "(`shape[-1].value` raises AttributeError): call "
    "`tf.compat.v1.disable_v2_behavior()` once, right after TensorFlow is "
    "imported, in the program's entry script; it brings back TF 1 shapes, "
    "which `disable_eager_execution()` alone does not. Or drop `.value` "
    "(`tf.compat.dimension_value(shape[-1])` works on both)")

ESTIMATOR = "Estimator (needs TensorFlow 2.15 or older)"
ESTIMATOR_FIX = (
    "TensorFlow 2.16 removed `tf.estimator`, `tf.compat.v1.estimator` and "
    "`tensorflow_estimator`: run it on TensorFlow 2.15 with its Estimator "
    "(`pip install 'tensorflow==2.15.*' 'tensorflow-estimator==2.15.*'`), "
    "or port it to Keras (`Model.fit`) or a custom training loop with "
    "`tf.distribute` to run on 2.16 or later")
_ESTIMATOR_MODULES = ("tensorflow.estimator", "tensorflow_estimator",
                      "tensorflow.python.estimator")
_ESTIMATOR_CLASSES = frozenset(("TPUEstimator", "TPUEstimatorSpec"))

OPTIMIZER_V2_SUBCLASS = (
    "a subclass of a tf.keras optimizer that overrides OptimizerV2's hooks")
OPTIMIZER_V2_SUBCLASS_FIX = (
    "since TF 2.11 `tf.keras.optimizers.X` is Keras' new optimizer, which "
    "never calls `_resource_apply_dense`, `_resource_apply_sparse`, "
    "`_prepare_local` or `_create_slots`: the class runs, and what those "
    "methods did (weight decay, in BERT-style AdamWeightDecay) silently does "
    "not happen, and an `apply_gradients` override with TF 2.x's arguments "
    "fails. On Keras 2 (TF 2.15, or tf-keras with TF_USE_LEGACY_KERAS=1), "
    "subclass `tf.keras.optimizers.legacy.X` instead; Keras 3 has no "
    "OptimizerV2: rewrite the update as `update_step`")
# The OptimizerV2 methods a TF 2.0-2.10 optimizer subclass overrode.
_OPTIMIZER_V2_HOOKS = frozenset((
    "_resource_apply_dense", "_resource_apply_sparse", "_prepare_local",
    "_create_slots", "_resource_apply_sparse_duplicate_indices"))

# TensorFlow-internal (`tensorflow.python`) modules that TF 2.x-era training
# code imported and that TensorFlow 2.16 removed, with their public successor.
# Others still import on TF 2.21 (`tensorflow.python.keras`), and are not
# listed: this command cannot know what an internal module will do.
_TRAINING_OPS_FIX = (
    "TensorFlow 2.16 removed this internal module (the program stops at "
    "import). Its functions are ops: use `tf.raw_ops`, with keyword "
    "arguments only (`training_ops.resource_apply_adam(v, m, ...)` becomes "
    "`tf.raw_ops.ResourceApplyAdam(var=v, m=m, ...)`), which every "
    "TensorFlow 2 has")
_REMOVED_INTERNAL_MODULES = {
    "tensorflow.python.training.training_ops": _TRAINING_OPS_FIX,
    "tensorflow.python.training.gen_training_ops": _TRAINING_OPS_FIX,
}

# TensorFlow Addons imports Keras 2 as `keras` (`keras.src.engine`), which
# TF 2.16+ has under no name: its import fails there with or without
# tf-keras. Its last release, 0.23, is for TF 2.12-2.15.
ADDONS = "tensorflow_addons (does not import on TF 2.16+)"
ADDONS_FIX = (
    "TensorFlow Addons ended with 0.23, for TensorFlow 2.12-2.15 (Python "
    "3.9-3.11); on TensorFlow 2.16 and later `import tensorflow_addons` "
    "fails (`No module named 'keras.src.engine'`), with or without tf-keras. "
    "Run this file on TensorFlow 2.15 with tensorflow-addons==0.23.0, or "
    "replace what it uses from Addons with code of your own or another "
    "library")

FLAGS = "tf.flags (removed in TF 2)"
FLAGS_FIX = (
    "TensorFlow 2 has no `tf.flags` or `tf.app.flags` (the program stops at "
    "import): add `from absl import flags` and write `flags.X` for "
    "`tf.flags.X` and `tf.app.flags.X` (`flags.FLAGS`, "
    "`flags.DEFINE_string`, ...); absl-py comes with TensorFlow, and "
    "`tf.compat.v1.app.run()` parses its flags")
# TF 1's `tf.flags.FLAGS` parsed `sys.argv` on the first read; absl's raise
# `UnparsedFlagAccessError` until `app.run()` parses them.
FLAGS_EARLY_READ_FIX = (
    "; and {} reads `FLAGS` before `app.run()`, which absl's flags do not "
    "allow (TF 1's parsed themselves on the first read; absl's raise "
    "UnparsedFlagAccessError): add `import sys` and call "
    "`flags.FLAGS(sys.argv, known_only=True)` before that first read, as "
    "TF 1 did")
# `FlagValues` methods: reading them reads no flag.
_FLAG_VALUES_METHODS = frozenset((
    "mark_as_parsed", "is_parsed", "unparse_flags", "set_default",
    "flag_values_dict", "get_flag_value", "append_flags_into_file",
    "read_flags_from_files", "is_gnu_getopt", "set_gnu_getopt",
    "register_key_flag_for_module", "find_module_defining_flag",
    "main_module_help", "module_help", "get_help", "remove_flag_values",
    "append_flag_values", "get_key_flags_for_module"))

# TF 1.15 `tf.contrib.tpu` classes that are Estimator classes, which
# tf_upgrade_v2 up to TF 2.15 renamed `tf.compat.v1.estimator.tpu.X`.
TPU_ESTIMATOR_NAMES = frozenset((
    "TPUEstimator", "TPUEstimatorSpec", "RunConfig", "TPUConfig",
    "InputPipelineConfig"))

_SESSION_NAMES = frozenset((
    "Session", "InteractiveSession", "placeholder", "MonitoredTrainingSession",
    "MonitoredSession", "SingularMonitoredSession", "get_tensor_by_name"))
_GRAPH_MODE_CALLS = frozenset(("disable_eager_execution",
                               "disable_v2_behavior"))
_V1_SHAPE_CALLS = frozenset(("disable_v2_behavior", "disable_v2_tensorshape"))

SUMMARY = "tf.summary on TF 2's API in Session code"
_V1_SUMMARY = frozenset((
    "scalar", "histogram", "image", "audio", "text", "tensor_summary",
    "merge", "merge_all", "FileWriter", "FileWriterCache"))
# Every `tf.summary.X` that tf_upgrade_v2 up to TF 2.15 renamed
# `tf.compat.v1.summary.X` (TF 2.16+'s leaves `audio`, `histogram`, `image`,
# `scalar` and `text`, which TF 2 also has, with another meaning).
V1_SUMMARY_RENAMED = _V1_SUMMARY | frozenset((
    "Event", "SessionLog", "Summary", "SummaryDescription",
    "TaggedRunMetadata", "all_v2_summary_ops", "get_summary_description",
    "initialize"))


@dataclasses.dataclass(frozen=True)
class Blocker:
  """One thing that stops a file on TF 2.

  Attributes:
    what: What fails, as the report ranks it (`tf.contrib.layers`).
    lines: Output-file lines where it is used.
    fix: What to do about it.
  """
  what: str
  lines: Tuple[int, ...]
  fix: str


def _dotted(node: ast.AST) -> Optional[str]:
  if isinstance(node, ast.Name):
    return node.id
  if isinstance(node, ast.Attribute):
    base = _dotted(node.value)
    return None if base is None else base + "." + node.attr
  return None


def _dynamic_import(call: ast.Call, root_only: bool = False) -> Optional[str]:
  """The module `importlib.import_module("m")` or `__import__("m")` loads.

  With `root_only`, what the call returns: `__import__("a.b")` returns `a`
  unless it has a `fromlist`.
  """
  func = _dotted(call.func)
  if func not in ("importlib.import_module", "import_module", "__import__"):
    return None
  if not call.args or not isinstance(call.args[0], ast.Constant) or (
      not isinstance(call.args[0].value, str)):
    return None
  module = call.args[0].value
  if root_only and func == "__import__" and len(call.args) < 4 and not any(
      k.arg == "fromlist" for k in call.keywords):
    return module.split(".")[0]
  return module


def _v1(path: str) -> str:
  """`path` with `tensorflow.compat.v1` or `tensorflow_core` as `tensorflow`."""
  for prefix in ("tensorflow.compat.v1", "tensorflow_core"):
    if path == prefix or path.startswith(prefix + "."):
      return "tensorflow" + path[len(prefix):]
  return path


# Attribute names worth resolving: everything else is skipped unresolved.
_INTERESTING = frozenset(("contrib", "layers", "summary", "as_default",
                          "estimator", "flags", "value")) | (
    _SESSION_NAMES) | _GRAPH_MODE_CALLS | _V1_SHAPE_CALLS | (
        _ESTIMATOR_CLASSES) | _REF_VARIABLE_CALLS


class _Scan:
  """Collects the uses `find` classifies, with imports resolved.

  One walk over the tree collects the bindings and the few attributes
  worth resolving (a real tree's files are mostly other code); they are
  resolved after it, so a binding later in the file still counts.
  """

  def __init__(self, tree: ast.AST):
    self.bound: Dict[str, str] = {}
    self.graph_mode = False
    self.contrib: Dict[str, List[int]] = {}
    self.layers: List[int] = []
    self.bare_layers: List[int] = []
    self.session: List[int] = []
    self.summary: Dict[str, List[int]] = {}
    self.v1_shapes = False  # Whether it calls disable_v2_behavior().
    self.ref_variables = False  # Whether TF 1 ref variables are back.
    self.by_name: List[int] = []  # 'loss_scale:0' and its siblings.
    self.dimension: List[int] = []
    self.estimator: List[int] = []
    self.flags: List[int] = []
    self.optimizer_v2_subclasses: List[int] = []
    self.removed_internal: Dict[str, List[int]] = {}
    self.addons: List[int] = []
    # `tf.summary.X` and `tf.contrib.tpu.X` written out, which
    # `--tf_upgrade_v2` renames (see tf_upgrade_v2_pass).
    self.summary_nodes: List[ast.Attribute] = []
    self.tpu_nodes: List[ast.Attribute] = []
    attributes, assigns, classes = [], [], []
    for node in ast.walk(tree):
      if isinstance(node, ast.Attribute):
        value = node.value
        if node.attr in _INTERESTING or (
            isinstance(value, ast.Attribute) and
            value.attr in ("contrib", "summary", "tpu")):
          attributes.append(node)
      elif isinstance(node, ast.Constant):
        # Wherever the name is written (`get_tensor_by_name`, a hook's
        # `SessionRunArgs`, a dict of fetches): a string is the fetch.
        if isinstance(node.value, str) and _STATE_TENSOR_NAME.search(
            node.value):
          self.by_name.append(node.lineno)
      elif isinstance(node, ast.ClassDef):
        if any(isinstance(item, ast.FunctionDef) and
               item.name in _OPTIMIZER_V2_HOOKS for item in node.body):
          classes.append(node)
      elif isinstance(node, ast.Call):
        module = _dynamic_import(node)
        if module is not None:
          self._import(module, node.lineno)
      elif isinstance(node, ast.Import):
        for alias in node.names:
          self._import(alias.name, node.lineno)
          if alias.asname:
            self.bound[alias.asname] = alias.name
          else:
            root = alias.name.split(".")[0]
            self.bound[root] = root
      elif isinstance(node, ast.ImportFrom):
        if node.module and not node.level:
          for alias in node.names:
            self._import(node.module + "." + alias.name, node.lineno)
            self.bound[alias.asname or alias.name] = (
                node.module + "." + alias.name)
      elif isinstance(node, ast.Assign):
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
          assigns.append(node)
    for node in assigns:
      path = self.path(node.value)
      if path is not None:
        self.bound.setdefault(node.targets[0].id, path)
    for node in attributes:
      self._attribute(node)
    for node in classes:
      for base in node.bases:
        path = _v1(self.path(base) or "")
        if path.startswith("tensorflow.compat.v2."):
          path = "tensorflow." + path[len("tensorflow.compat.v2."):]
        parts = path.split(".")
        # `tf.keras.optimizers.Adam`, not `...optimizers.legacy.Adam`.
        if parts[:3] == ["tensorflow", "keras", "optimizers"] and (
            "legacy" not in parts):
          self.optimizer_v2_subclasses.append(node.lineno)

  def _import(self, module: str, line: int) -> None:
    """Counts an imported module: another contrib module, or `tf.layers`."""
    self._contrib(module, line)
    v1 = _v1(module)
    if _under(v1, _ESTIMATOR_MODULES) or (
        module.split(".")[-1] in _ESTIMATOR_CLASSES):
      self.estimator.append(line)
    # As written: `tf.compat.v1.flags` and `tf.compat.v1.app.flags` are
    # still in TF 2.
    if _under(module, ("tensorflow.flags", "tensorflow.app.flags")):
      self.flags.append(line)
    if v1 == "tensorflow.layers" or v1.startswith("tensorflow.layers."):
      self.layers.append(line)
    if _under(module, ("tensorflow_addons",)):
      self.addons.append(line)
    for removed in _REMOVED_INTERNAL_MODULES:
      if _under(v1, (removed,)):
        self.removed_internal.setdefault(removed, []).append(line)

  def path(self, node: ast.AST) -> Optional[str]:
    """The TF path `node` names, as written, or None."""
    rest = ""
    while isinstance(node, ast.Attribute):
      rest = "." + node.attr + rest
      node = node.value
    if isinstance(node, ast.Call):
      module = _dynamic_import(node, root_only=True)
      if module is None:
        return None
      dotted = module + rest
    elif isinstance(node, ast.Name):
      dotted = node.id + rest
    else:
      return None
    root, _, rest = dotted.partition(".")
    base = self.bound.get(root, "tensorflow" if root == "tf" else None)
    if isinstance(node, ast.Call):
      base = root
    if base is None or not (base == "tensorflow" or
                            base.startswith(("tensorflow.",
                                             "tensorflow_core"))):
      return None
    return base + ("." + rest if rest else "")

  def _contrib(self, path: str, line: int) -> None:
    parts = _v1(path).split(".")
    # TensorFlow's: another package's `contrib` (`pypinyin.contrib`) is not.
    if len(parts) >= 3 and parts[:2] == ["tensorflow", "contrib"] and (
        parts[2] != "mixed_precision"):
      self.contrib.setdefault(parts[2], []).append(line)

  def _attribute(self, node: ast.Attribute) -> None:
    if node.attr in _GRAPH_MODE_CALLS:
      self.graph_mode = True
    if node.attr in _V1_SHAPE_CALLS:
      self.v1_shapes = True
    if node.attr in _REF_VARIABLE_CALLS:
      self.ref_variables = True
    if node.attr == "value":
      if _is_dimension(node.value):
        self.dimension.append(node.lineno)
      return
    if node.attr in _ESTIMATOR_CLASSES:
      # Whatever module it is reached through, this class is Estimator's.
      self.estimator.append(node.lineno)
    if node.attr == "as_default":
      # `tf.Graph().as_default()`: the file builds its own graph.
      if isinstance(node.value, ast.Call) and _v1(
          self.path(node.value.func) or "") == "tensorflow.Graph":
        self.graph_mode = True
      return
    base = self.path(node.value)
    if base is None:
      return
    path = base + "." + node.attr
    v1, v1_base = _v1(path), _v1(base)
    if v1 == "tensorflow.estimator" and v1_base == "tensorflow":
      self.estimator.append(node.lineno)
    elif path in ("tensorflow.flags", "tensorflow.app.flags"):
      self.flags.append(node.lineno)
    if len(v1.split(".")) == 3 and v1_base == "tensorflow.contrib":
      self._contrib(path, node.lineno)
    elif base == "tensorflow.contrib.tpu" and (
        node.attr in TPU_ESTIMATOR_NAMES):
      self.tpu_nodes.append(node)
    elif v1 == "tensorflow.layers" and v1_base == "tensorflow":
      self.layers.append(node.lineno)
      if base == "tensorflow":
        self.bare_layers.append(node.lineno)  # Gone in TF 2 as written.
    elif node.attr in _SESSION_NAMES and v1_base in (
        "tensorflow", "tensorflow.train"):
      self.session.append(node.lineno)
    elif base == "tensorflow.summary" and node.attr in V1_SUMMARY_RENAMED:
      # Written `tf.summary.X` with `tf` the TF 2 API, not `compat.v1`.
      if node.attr in _V1_SUMMARY:
        self.summary.setdefault(node.attr, []).append(node.lineno)
      self.summary_nodes.append(node)


def _early_flag_reads(tree: ast.AST, scan: "_Scan") -> List[int]:
  """Lines that read a TF 1 flag outside any function (so before `run()`).

  Module-level code, `if __name__ == "__main__":` included, runs before
  `tf.app.run()` (or absl's `app.run()`) has parsed the command line.
  """
  lines = set()
  stack = list(getattr(tree, "body", []))
  while stack:
    node = stack.pop()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                         ast.ClassDef, ast.Lambda)):
      continue
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and (
        not node.attr.startswith("_")) and (
            node.attr not in _FLAG_VALUES_METHODS):
      base = _v1(scan.path(node.value) or "")
      if base in ("tensorflow.flags.FLAGS", "tensorflow.app.flags.FLAGS"):
        lines.add(node.lineno)
    stack.extend(ast.iter_child_nodes(node))
  return sorted(lines)


def _under(path: str, modules) -> bool:
  return any(path == m or path.startswith(m + ".") for m in modules)


def _is_dimension(node: ast.AST) -> bool:
  """Whether `node` is a TF 1 `Dimension`: `x.shape[i]`, `x.get_shape()[i]`.

  Also `x.shape.dims[i]`; a shape held in a variable is not recognised.
  """
  if not isinstance(node, ast.Subscript) or isinstance(node.slice,
                                                       ast.Slice):
    return False
  shape = node.value
  if isinstance(shape, ast.Call) and not shape.args:
    shape = shape.func
    return isinstance(shape, ast.Attribute) and shape.attr == "get_shape"
  return isinstance(shape, ast.Attribute) and shape.attr in ("shape", "dims")


def _quick_reject(source: bytes) -> bool:
  return not any(word in source for word in (
      b"contrib", b"layers", b"Session", b"placeholder", b"summary",
      b"get_tensor_by_name", b"estimator", b"Estimator", b"flags",
      b"].value", b"loss_scale", b"_steps", b"_resource_apply",
      b"_prepare_local", b"_create_slots", b"training_ops",
      b"tensorflow_addons"))


@dataclasses.dataclass
class Uses:
  """What the report lists for a file this command does not rewrite.

  Attributes:
    other_contrib: `{module: [lines]}` of other `tf.contrib` modules.
    legacy_layers: Lines that use `tf.layers` or `tf.compat.v1.layers`.
    bare_layers: The subset written `tf.layers`.
  """
  other_contrib: Dict[str, List[int]]
  legacy_layers: List[int]
  bare_layers: List[int]


def uses(tree: ast.AST) -> Uses:
  """The `Uses` of a parsed module."""
  scan = _Scan(tree)
  return Uses({m: sorted(l) for m, l in sorted(scan.contrib.items())},
              sorted(set(scan.layers)), sorted(set(scan.bare_layers)))


def find(source: bytes) -> List[Blocker]:
  """What stops `source` on TensorFlow 2, most common first.

  Args:
    source: A converted Python source.

  Returns:
    The `Blocker`s; empty when nothing known stops it, or when it does not
    parse (the report says that elsewhere).
  """
  if _quick_reject(source):
    return []
  try:
    tree = ast.parse(source)
  except (SyntaxError, ValueError):
    return []
  scan = _Scan(tree)
  found = []
  for module, lines in scan.contrib.items():
    found.append(Blocker("tf.contrib." + module, tuple(sorted(set(lines))),
                         _SUCCESSORS.get(module, _NO_SUCCESSOR)))
  if scan.layers:
    found.append(Blocker("tf.layers", tuple(sorted(set(scan.layers))),
                         LEGACY_KERAS_FIX))
  v1_shapes_needed = bool(scan.dimension) and not scan.v1_shapes
  if scan.session and not scan.graph_mode:
    found.append(Blocker(SESSION, tuple(sorted(set(scan.session))),
                         SESSION_FIX_V1_SHAPES if v1_shapes_needed
                         else SESSION_FIX))
  if v1_shapes_needed:
    found.append(Blocker(DIMENSION, tuple(sorted(set(scan.dimension))),
                         DIMENSION_FIX))
  if scan.session:
    # Session code, graph mode or not: TF 2's `tf.summary.scalar` records
    # nothing there, and `merge_all` is gone.
    for name, lines in sorted(scan.summary.items()):
      fix = ("on TF 2 it {}: use `tf.compat.v1.summary.{}` "
             "(--tf_upgrade_v2 makes this rename, whichever TensorFlow "
             "runs it)").format(
                 "does not exist" if name in ("merge", "merge_all",
                                              "FileWriter",
                                              "FileWriterCache")
                 else "records nothing in a Session", name)
      found.append(Blocker("tf.summary." + name, tuple(sorted(set(lines))),
                           fix))
  if scan.by_name and not scan.ref_variables:
    found.append(Blocker(BY_NAME, tuple(sorted(set(scan.by_name))),
                         BY_NAME_FIX))
  if scan.estimator:
    found.append(Blocker(ESTIMATOR, tuple(sorted(set(scan.estimator))),
                         ESTIMATOR_FIX))
  if scan.optimizer_v2_subclasses:
    found.append(Blocker(OPTIMIZER_V2_SUBCLASS,
                         tuple(sorted(set(scan.optimizer_v2_subclasses))),
                         OPTIMIZER_V2_SUBCLASS_FIX))
  for module, lines in sorted(scan.removed_internal.items()):
    found.append(Blocker(module + " (removed in TF 2.16)",
                         tuple(sorted(set(lines))),
                         _REMOVED_INTERNAL_MODULES[module]))
  if scan.addons:
    found.append(Blocker(ADDONS, tuple(sorted(set(scan.addons))),
                         ADDONS_FIX))
  if scan.flags:
    early = _early_flag_reads(tree, scan)
    fix = FLAGS_FIX
    if early:
      fix += FLAGS_EARLY_READ_FIX.format(
          ("line {}" if len(early) == 1 else "lines {}").format(
              ", ".join(str(l) for l in early[:3]) +
              (", ..." if len(early) > 3 else "")))
    found.append(Blocker(FLAGS, tuple(sorted(set(scan.flags))), fix))
  found.sort(key=lambda b: (-len(b.lines), b.what))
  return found


def v1_renames(source: bytes) -> List[Tuple[int, int, bytes, str, int]]:
  """The renames up to TF 2.15's tf_upgrade_v2 made, that later ones skip.

  Args:
    source: A UTF-8 Python source with LF line endings.

  Returns:
    `(start, end, replacement, kind, line)` byte spans of `source`, in
    order: kind `summary` turns `tf.summary.X` into
    `tf.compat.v1.summary.X`, kind `tpu` turns `tf.contrib.tpu.X` (an
    Estimator class) into `tf.compat.v1.estimator.tpu.X`. Only uses
    written out from a name bound to `tensorflow`; empty when it does not
    parse.
  """
  # Most files tf_upgrade_v2 changes have neither: Python's parser is
  # spared for them (`--tf_upgrade_v2` must cost no more than the two
  # converters run apart).
  if b"summary" not in source and not (
      b"tpu" in source and
      any(name.encode() in source for name in TPU_ESTIMATOR_NAMES)):
    return []
  try:
    tree = ast.parse(source)
  except (SyntaxError, ValueError, RecursionError, MemoryError):
    return []
  scan = _Scan(tree)
  if not (scan.summary_nodes or scan.tpu_nodes):
    return []
  starts = [0] + [m.end() for m in re.finditer(b"\n", source)]
  spans = []
  for kind, nodes, text, inner in (
      ("summary", scan.summary_nodes, b".compat.v1.summary", 1),
      ("tpu", scan.tpu_nodes, b".compat.v1.estimator.tpu", 2)):
    for node in nodes:
      # `inner` attributes (`.summary`, or `.contrib.tpu`) follow the root.
      root, ok = node.value, True
      for _ in range(inner):
        ok = ok and isinstance(root, ast.Attribute)
        root = root.value if ok else root
      if not ok or not isinstance(node.value, ast.Attribute):
        continue
      start = starts[root.end_lineno - 1] + root.end_col_offset
      end = starts[node.value.end_lineno - 1] + node.value.end_col_offset
      spans.append((start, end, text, kind, node.lineno))
  return sorted(spans)


def switches_graph_mode(source: bytes) -> bool:
  """Whether `source` turns TF 2's eager default off for its program."""
  return any(call in source for call in (b"disable_eager_execution",
                                         b"disable_v2_behavior"))


def switches_v1_shapes(source: bytes) -> bool:
  """Whether `source` brings back TF 1 shapes (`Dimension`) for its program."""
  return any(call in source for call in (b"disable_v2_behavior",
                                         b"disable_v2_tensorshape"))


def switches_ref_variables(source: bytes) -> bool:
  """Whether `source` brings back TF 1 ref variables for its program."""
  return any(call.encode() in source for call in _REF_VARIABLE_CALLS)


def is_script(source: bytes) -> bool:
  """Whether `source` is an entry script rather than a library module."""
  return b"__main__" in source


def contrib_modules(blockers: List[Blocker]) -> List[str]:
  """The other `tf.contrib` modules among `blockers`."""
  return [b.what[len("tf.contrib."):] for b in blockers
          if b.what.startswith("tf.contrib.")]
