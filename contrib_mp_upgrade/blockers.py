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
    "tpu": "use `tf.compat.v1.tpu` or `tf.distribute.TPUStrategy`",
    "rnn": "use `tf.compat.v1.nn.rnn_cell` or Keras RNN layers",
    "cudnn_rnn": "use Keras `LSTM`/`GRU`, which pick cuDNN themselves",
    "data": "use `tf.data` (most of it moved there unchanged)",
    "distribute": "use `tf.distribute`",
}
_NO_SUCCESSOR = ("this command knows no drop-in: see TensorFlow's TF 2 "
                 "migration guide")

LEGACY_KERAS_FIX = (
    "on TensorFlow 2.16 and later it needs tf-keras (pip install "
    "'contrib_mixed_precision[legacy-keras]') and TF_USE_LEGACY_KERAS=1 set "
    "before TensorFlow is imported")

SESSION = "Session code under TF 2's eager default"
SESSION_FIX = (
    "`tf.placeholder`, `Session.run` and fetching tensors by name (such as "
    "'loss_scale:0') need graph mode: call "
    "`tf.compat.v1.disable_eager_execution()` (or "
    "`tf.compat.v1.disable_v2_behavior()`) once, right after TensorFlow is "
    "imported, in the program's entry script")
_SESSION_NAMES = frozenset((
    "Session", "InteractiveSession", "placeholder", "MonitoredTrainingSession",
    "MonitoredSession", "SingularMonitoredSession", "get_tensor_by_name"))
_GRAPH_MODE_CALLS = frozenset(("disable_eager_execution",
                               "disable_v2_behavior"))

SUMMARY = "tf.summary on TF 2's API in Session code"
_V1_SUMMARY = frozenset((
    "scalar", "histogram", "image", "audio", "text", "tensor_summary",
    "merge", "merge_all", "FileWriter", "FileWriterCache"))


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
_INTERESTING = frozenset(("contrib", "layers", "summary", "as_default")) | (
    _SESSION_NAMES) | _GRAPH_MODE_CALLS


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
    attributes, assigns = [], []
    for node in ast.walk(tree):
      if isinstance(node, ast.Attribute):
        value = node.value
        if node.attr in _INTERESTING or (
            isinstance(value, ast.Attribute) and
            value.attr in ("contrib", "summary")):
          attributes.append(node)
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

  def _import(self, module: str, line: int) -> None:
    """Counts an imported module: another contrib module, or `tf.layers`."""
    self._contrib(module, line)
    v1 = _v1(module)
    if v1 == "tensorflow.layers" or v1.startswith("tensorflow.layers."):
      self.layers.append(line)

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
    if len(parts) >= 3 and parts[1] == "contrib" and (
        parts[2] != "mixed_precision"):
      self.contrib.setdefault(parts[2], []).append(line)

  def _attribute(self, node: ast.Attribute) -> None:
    if node.attr in _GRAPH_MODE_CALLS:
      self.graph_mode = True
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
    if len(v1.split(".")) == 3 and v1_base == "tensorflow.contrib":
      self._contrib(path, node.lineno)
    elif v1 == "tensorflow.layers" and v1_base == "tensorflow":
      self.layers.append(node.lineno)
      if base == "tensorflow":
        self.bare_layers.append(node.lineno)  # Gone in TF 2 as written.
    elif node.attr in _SESSION_NAMES and v1_base in (
        "tensorflow", "tensorflow.train"):
      self.session.append(node.lineno)
    elif (base == "tensorflow.summary" and node.attr in _V1_SUMMARY):
      # Written `tf.summary.X` with `tf` the TF 2 API, not `compat.v1`.
      self.summary.setdefault(node.attr, []).append(node.lineno)


def _quick_reject(source: bytes) -> bool:
  return not any(word in source for word in (
      b"contrib", b"layers", b"Session", b"placeholder", b"summary",
      b"get_tensor_by_name"))


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
  if scan.session and not scan.graph_mode:
    found.append(Blocker(SESSION, tuple(sorted(set(scan.session))),
                         SESSION_FIX))
    for name, lines in sorted(scan.summary.items()):
      fix = ("on TF 2 it {}: use `tf.compat.v1.summary.{}` (tf_upgrade_v2 "
             "makes this rename)").format(
                 "does not exist" if name in ("merge", "merge_all",
                                              "FileWriter",
                                              "FileWriterCache")
                 else "records nothing in a Session", name)
      found.append(Blocker("tf.summary." + name, tuple(sorted(set(lines))),
                           fix))
  found.sort(key=lambda b: (-len(b.lines), b.what))
  return found


def switches_graph_mode(source: bytes) -> bool:
  """Whether `source` turns TF 2's eager default off for its program."""
  return any(call in source for call in (b"disable_eager_execution",
                                         b"disable_v2_behavior"))


def is_script(source: bytes) -> bool:
  """Whether `source` is an entry script rather than a library module."""
  return b"__main__" in source


def contrib_modules(blockers: List[Blocker]) -> List[str]:
  """The other `tf.contrib` modules among `blockers`."""
  return [b.what[len("tf.contrib."):] for b in blockers
          if b.what.startswith("tf.contrib.")]
