# Copyright 2026 The contrib_mixed_precision Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
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
_SLIM = ("`tf_slim` provides it unchanged: `pip install "
         "'contrib_mixed_precision[slim]'`, then `import tf_slim` and use "
         "{}")
_SUCCESSORS = {
    "layers": _SLIM.format("`tf_slim.layers.X`"),
    "framework": _SLIM.format("`tf_slim.X` (`arg_scope`, `add_arg_scope`, "
                              "the variables functions)"),
    "slim": _SLIM.format("`tf_slim.X`"),
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


def _v1(path: str) -> str:
  """`path` with `tensorflow.compat.v1` and `tensorflow_core` as `tensorflow`."""
  for prefix in ("tensorflow.compat.v1", "tensorflow_core"):
    if path == prefix or path.startswith(prefix + "."):
      return "tensorflow" + path[len(prefix):]
  return path


class _Scan(ast.NodeVisitor):
  """Collects the uses `find` classifies, with imports resolved."""

  def __init__(self, tree: ast.AST):
    self.bound: Dict[str, str] = {}
    self.graph_mode = False
    for node in ast.walk(tree):
      if isinstance(node, ast.Import):
        for alias in node.names:
          if alias.asname:
            self.bound[alias.asname] = alias.name
          else:
            root = alias.name.split(".")[0]
            self.bound[root] = root
      elif isinstance(node, ast.ImportFrom) and node.module and not (
          node.level):
        for alias in node.names:
          self.bound[alias.asname or alias.name] = (
              node.module + "." + alias.name)
      elif isinstance(node, ast.Assign) and len(node.targets) == 1 and (
          isinstance(node.targets[0], ast.Name)):
        path = self.path(node.value)
        if path is not None:
          self.bound.setdefault(node.targets[0].id, path)
    self.contrib: Dict[str, List[int]] = {}
    self.layers: List[int] = []
    self.session: List[int] = []
    self.summary: Dict[str, List[int]] = {}

  def path(self, node: ast.AST) -> Optional[str]:
    """The TF path `node` names, as written, or None."""
    dotted = _dotted(node)
    if dotted is None:
      return None
    root, _, rest = dotted.partition(".")
    base = self.bound.get(root, "tensorflow" if root == "tf" else None)
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

  def visit_Import(self, node: ast.Import) -> None:
    for alias in node.names:
      self._contrib(alias.name, node.lineno)

  def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
    if node.module and not node.level:
      for alias in node.names:
        self._contrib(node.module + "." + alias.name, node.lineno)

  def visit_Name(self, node: ast.Name) -> None:
    path = self.path(node)
    if path is not None and len(_v1(path).split(".")) >= 3:
      self._contrib(path, node.lineno)  # `slim` bound to tf.contrib.slim.

  def visit_Attribute(self, node: ast.Attribute) -> None:
    if node.attr in _GRAPH_MODE_CALLS:
      self.graph_mode = True
    path = self.path(node)
    base = self.path(node.value)
    self.generic_visit(node)
    if path is None or base is None:
      return
    v1, v1_base = _v1(path), _v1(base)
    if len(v1.split(".")) == 3 and v1_base == "tensorflow.contrib":
      self._contrib(path, node.lineno)
    elif v1 == "tensorflow.layers" and v1_base == "tensorflow":
      self.layers.append(node.lineno)
    elif node.attr in _SESSION_NAMES and v1_base in (
        "tensorflow", "tensorflow.train"):
      self.session.append(node.lineno)
    elif (base == "tensorflow.summary" and node.attr in _V1_SUMMARY):
      # Written `tf.summary.X` with `tf` the TF 2 API, not `compat.v1`.
      self.summary.setdefault(node.attr, []).append(node.lineno)

  def visit_Call(self, node: ast.Call) -> None:
    # `graph.as_default()` on a `tf.Graph()`: the file builds its own graph.
    if (isinstance(node.func, ast.Attribute) and
        node.func.attr == "as_default" and
        isinstance(node.func.value, ast.Call) and
        _v1(self.path(node.func.value.func) or "") == "tensorflow.Graph"):
      self.graph_mode = True
    self.generic_visit(node)


def _quick_reject(source: bytes) -> bool:
  return not any(word in source for word in (
      b"contrib", b"layers", b"Session", b"placeholder", b"summary",
      b"get_tensor_by_name"))


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
  scan.visit(tree)
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


def contrib_modules(blockers: List[Blocker]) -> List[str]:
  """The other `tf.contrib` modules among `blockers`."""
  return [b.what[len("tf.contrib."):] for b in blockers
          if b.what.startswith("tf.contrib.")]
