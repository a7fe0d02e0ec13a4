# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""TF 2.0-2.8's experimental mixed-precision names, and what each becomes.

TensorFlow 2.0 to 2.8 exported its loss scales as
`tf.train.experimental.{LossScale, FixedLossScale, DynamicLossScale}` (and
`tf.mixed_precision.experimental.*` from 2.1), the graph rewrite as
`tf.train.experimental.enable_mixed_precision_graph_rewrite`, and Keras'
mixed precision as `tf.keras.mixed_precision.experimental`. TF 2.9 removed
them all, so such code stops with an AttributeError on every TensorFlow
this package supports. `plan` decides, per use, the spelling that keeps TF
2.0's numbers on TF 2.15 to 2.21 (contract 16):

* TF's own `tf.compat.v1.mixed_precision` class where it is exact (the loss
  scales are the very classes TF 2.0 exported; the v1 graph rewrite takes
  a `tf.compat.v1` optimizer exactly as TF 2.0's did);
* `tf.keras.mixed_precision.{Policy, set_global_policy, global_policy}`
  for the Keras policy functions, and a layer's `dtype_policy` for
  `get_layer_policy(layer)`;
* this package's `KerasLossScaleOptimizer` where no TF class is exact: the
  experimental Keras `LossScaleOptimizer(opt, loss_scale)`, and the graph
  rewrite of a Keras optimizer.

What no spelling keeps (a Policy's `loss_scale`, the float16 graph rewrite
of a Keras optimizer, NVIDIA's `TF_ENABLE_AUTO_MIXED_PRECISION`) is recorded
as "not kept", with the fix, for the report's "Before you run it".

Names reached through `tf.compat.v1` (`tf.compat.v1.train.experimental.X`,
`tf.compat.v1.mixed_precision.experimental.X`) still exist and are left
alone; Keras' experimental module is gone under `compat.v1` too.

This module needs only the standard library and libcst.
"""

import dataclasses
from typing import Callable, Dict, List, Optional, Tuple

import libcst as cst
from libcst import metadata

from contrib_mp_upgrade import resolve
from contrib_mp_upgrade import syntax
from contrib_mp_upgrade import uses as uses_lib

KERAS_LSO = syntax.PACKAGE + ".KerasLossScaleOptimizer"
_V1_MP = "tensorflow.compat.v1.mixed_precision"
_KERAS_MP = "tensorflow.keras.mixed_precision"
_KERAS_EXP = _KERAS_MP + ".experimental"
_TRAIN_EXP = "tensorflow.train.experimental"
_MP_EXP = "tensorflow.mixed_precision.experimental"

# The bytes a file must hold for `plan` to find anything in it.
_MARKERS = (b"LossScale", b"mixed_precision", b"TF_ENABLE_AUTO_MIXED_PRECISION")

ENV_VAR = "TF_ENABLE_AUTO_MIXED_PRECISION"

# Kinds of conversion.
EXACT = "exact"            # A rename to the same TF class or function.
ENABLE = "enable"          # The graph rewrite: v1 function or Keras wrapper.
LSO = "lso"                # Keras' experimental LossScaleOptimizer.
POLICY = "policy"          # A Policy, whose `loss_scale` has no home today.
LAYER_POLICY = "layer"     # get_layer_policy(layer) -> layer.dtype_policy.
# Today's names, called with TF 2.x's arguments (never valid there).
TODAY_LSO = "today_lso"
TODAY_POLICY = "today_policy"

# Gone modules, and the module an import or a use of one becomes.
MODULES = {
    _KERAS_EXP: _KERAS_MP,
    _MP_EXP: _V1_MP,
    "tensorflow.mixed_precision": _V1_MP,
}

# Gone names (rooted at `tensorflow`, `compat.v2` left out): (target, kind).
NAMES: Dict[str, Tuple[str, str]] = {}
for _cls in ("LossScale", "FixedLossScale", "DynamicLossScale"):
  NAMES[_TRAIN_EXP + "." + _cls] = (_V1_MP + "." + _cls, EXACT)
  NAMES[_MP_EXP + "." + _cls] = (_V1_MP + "." + _cls, EXACT)
NAMES[_TRAIN_EXP + ".enable_mixed_precision_graph_rewrite"] = (
    _V1_MP + ".enable_mixed_precision_graph_rewrite", ENABLE)
NAMES[_TRAIN_EXP + ".disable_mixed_precision_graph_rewrite"] = (
    _V1_MP + ".disable_mixed_precision_graph_rewrite", EXACT)
NAMES[_KERAS_EXP + ".Policy"] = (_KERAS_MP + ".Policy", POLICY)
NAMES[_KERAS_EXP + ".set_policy"] = (_KERAS_MP + ".set_global_policy", EXACT)
NAMES[_KERAS_EXP + ".global_policy"] = (_KERAS_MP + ".global_policy", EXACT)
NAMES[_KERAS_EXP + ".get_layer_policy"] = ("", LAYER_POLICY)
NAMES[_KERAS_EXP + ".LossScaleOptimizer"] = (KERAS_LSO, LSO)

# Today's names, converted only when called with TF 2.x's `loss_scale`.
_TODAY = {
    _KERAS_MP + ".LossScaleOptimizer": (KERAS_LSO, TODAY_LSO),
    _KERAS_MP + ".Policy": (_KERAS_MP + ".Policy", TODAY_POLICY),
}

ITERATIONS_NOTE = (
    "skipped (non-finite) steps do not advance `iterations`, as in TF 2.0 "
    "to 2.2 (the default); TF 2.3 to 2.8 advanced it: pass "
    "`skipped_steps_advance_iterations=True` for that. Code elsewhere that "
    "asks `isinstance(opt, tf.keras.mixed_precision.LossScaleOptimizer)` "
    "before scaling must accept this class too")
# The same, where the tree pins TF 2.3 or later (`pins`), and the call got
# `skipped_steps_advance_iterations=True`.
ADVANCE = "skipped_steps_advance_iterations"
ITERATIONS_NOTE_ADVANCE = (
    "skipped (non-finite) steps advance `iterations`, as in TF 2.3 to 2.8 "
    "(`{}=True`, chosen from the TensorFlow the tree pins: see the top of "
    "the report). Code elsewhere that asks `isinstance(opt, "
    "tf.keras.mixed_precision.LossScaleOptimizer)` before scaling must "
    "accept this class too").format(ADVANCE)
ITERATIONS_NOTE_UNCALLED = (
    "the tree pins TF 2.3 or later, where skipped steps advanced "
    "`iterations`, but this use is not a call this command can change: "
    "pass `{}=True` where it is called").format(ADVANCE)
GPU_ONLY = (
    "the graph rewrite casts to float16 only on a GPU, and only in graphs "
    "and `tf.function`s; on a CPU it changes nothing, as on TF 2.x")

LOST_POLICY = "a Policy's `loss_scale` (today's Policy has none)"
LOST_REWRITE = ("the float16 graph rewrite of a Keras optimizer "
                "(`enable_mixed_precision_graph_rewrite`)")
LOST_ENV = ("`TF_ENABLE_AUTO_MIXED_PRECISION` (and its `_GRAPH_REWRITE`, "
            "`_LOSS_SCALING` forms: read only by NVIDIA's containers; stock "
            "TensorFlow ignores them)")
FIX_REWRITE = (
    "on a GPU, call `tf.config.optimizer.set_experimental_options("
    "{'auto_mixed_precision': True})` before the model is built, as TF 2.x's "
    "function did; or set a `mixed_float16` policy "
    "(`tf.keras.mixed_precision.set_global_policy('mixed_float16')`), which "
    "also casts in eager mode and on a CPU")
FIX_ENV = (
    "set a `mixed_float16` policy "
    "(`tf.keras.mixed_precision.set_global_policy('mixed_float16')`) and "
    "wrap the optimizer in `contrib_mixed_precision.KerasLossScaleOptimizer`, "
    "or, for a `tf.compat.v1` optimizer, call "
    "`opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite"
    "(opt)` (which casts on a GPU only)")


def display(path: str) -> str:
  """`tf.X` for `tensorflow.X`, as users write it."""
  if path.startswith("tensorflow."):
    return "tf." + path[len("tensorflow."):]
  return path


def may_apply(source: bytes) -> bool:
  """Whether `source` may hold a TF 2.0-2.8 name (a quick byte test)."""
  return any(marker in source for marker in _MARKERS)


def key(raw: Optional[str]) -> Optional[str]:
  """A raw TF path as TF 2's own API names it, or None if still valid.

  `tensorflow_core` becomes `tensorflow`, `compat.v2` is TF 2's API itself,
  and Keras' experimental module is gone under `compat.v1` too; any other
  `tf.compat.v1` path is left alone (it still exists).
  """
  if raw is None:
    return None
  path = raw
  if path == "tensorflow_core" or path.startswith("tensorflow_core."):
    path = "tensorflow" + path[len("tensorflow_core"):]
  while syntax.under(path, "tensorflow.compat.v2"):
    path = "tensorflow" + path[len("tensorflow.compat.v2"):]
  if syntax.under(path, "tensorflow.compat.v1.keras"):
    path = "tensorflow" + path[len("tensorflow.compat.v1"):]
  return path


def new_module(path: Optional[str]) -> Optional[str]:
  """Where a raw module path lives once its gone parts are renamed."""
  k = key(path)
  if k is None:
    return path
  for old in sorted(MODULES, key=len, reverse=True):
    if syntax.under(k, old):
      return MODULES[old] + k[len(old):]
  return path


@dataclasses.dataclass
class Found:
  """What `plan` found in a file, beside the edits it put in the plan.

  Attributes:
    notes: `(line, text)`: what a use became, where it differs from TF 2.x.
    lost: `(line, what, fix)`: what could not be kept, and the fix.
    warnings: `(line, text)`: uses a person must check.
    noted: `{node: TF 2.x name}` of expressions replaced, for the report.
    advance: Whether skipped steps advance `iterations` in the
      KerasLossScaleOptimizers made (the tree pins TF 2.3+).
  """
  notes: List[Tuple[int, str]] = dataclasses.field(default_factory=list)
  lost: List[Tuple[int, str, str]] = dataclasses.field(default_factory=list)
  warnings: List[Tuple[int, str]] = dataclasses.field(default_factory=list)
  noted: Dict[cst.CSTNode, str] = dataclasses.field(default_factory=dict)
  advance: bool = False


class _Uses(cst.CSTVisitor):
  """Finds attribute chains and names that reach a gone TF 2.x name."""

  def __init__(self, analysis: resolve.Analysis):
    super().__init__()
    self.a = analysis
    self.attributes: List[Tuple[cst.CSTNode, str]] = []
    self.names: List[Tuple[cst.Name, str]] = []
    self.env: List[cst.CSTNode] = []
    self.imports: List[cst.SimpleStatementLine] = []

  def visit_SimpleStatementLine(self, node) -> None:
    if any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in node.body):
      self.imports.append(node)

  def visit_Import(self, node) -> bool:
    return False

  def visit_ImportFrom(self, node) -> bool:
    return False

  def visit_Attribute(self, node: cst.Attribute) -> None:
    k = key(self.a.path(node, raw=True))
    if k in NAMES or k in MODULES or k in _TODAY:
      self.attributes.append((node, k))

  def visit_Name(self, node: cst.Name) -> None:
    parent = self.a.parents.get(node)
    if isinstance(parent, cst.Attribute) and parent.attr is node:
      return
    k = key(self.a.path(node, raw=True))
    if k in NAMES or k in _TODAY:
      self.names.append((node, k))

  def visit_SimpleString(self, node) -> None:
    if ENV_VAR in (syntax.string_value(node) or ""):
      self.env.append(node)


_OFF = ("0", "false", "False", "")


def _sets_env_on(analysis: resolve.Analysis, node: cst.CSTNode) -> bool:
  """Whether `node`, an NVIDIA variable's name, is set, to other than off.

  `os.environ[NAME] = value`, `os.environ.setdefault(NAME, value)` and
  `os.putenv(NAME, value)`; a literal "0" (or "false") turns NVIDIA's
  rewrite off, which stock TensorFlow never ran either, and a read sets
  nothing.
  """
  parent = analysis.parents.get(node)
  value = None
  if isinstance(parent, cst.Index):
    subscript = analysis.parents.get(analysis.parents.get(parent))
    target = analysis.parents.get(subscript)
    statement = analysis.parents.get(target)
    if not (isinstance(target, cst.AssignTarget) and
            isinstance(statement, cst.Assign)):
      return False
    value = statement.value
  elif isinstance(parent, cst.Arg):
    call = analysis.parents.get(parent)
    if not (isinstance(call, cst.Call) and
            syntax.attribute_name(call.func) in ("setdefault", "putenv") and
            len(call.args) == 2 and call.args[0] is parent):
      return False
    value = call.args[1].value
  else:
    return False
  return syntax.string_value(value) not in _OFF


def _root(analysis: resolve.Analysis, node: cst.CSTNode) -> cst.CSTNode:
  while analysis.base_of(node) is not None:
    node = analysis.base_of(node)
  return node


def _spelling(analysis: resolve.Analysis, node: cst.CSTNode, target: str,
              package_name: Callable[[cst.CSTNode], str]) -> str:
  """How `target` is written where `node` is, from the same root name."""
  if syntax.under(target, syntax.PACKAGE):
    return package_name(node) + target[len(syntax.PACKAGE):]
  root = _root(analysis, node)
  if isinstance(root, cst.Name):
    base = new_module(analysis.path(root, raw=True))
    if base is not None:
      if base == "tensorflow_core" or base.startswith("tensorflow_core."):
        base = "tensorflow" + base[len("tensorflow_core"):]
      if syntax.under(target, base):
        return root.value + target[len(base):]
      if base in ("tensorflow", "tensorflow.compat.v2"):
        return root.value + target[len("tensorflow"):]
      if base == "tensorflow.compat.v1":
        prefix = ("tensorflow.compat.v1"
                  if syntax.under(target, "tensorflow.compat.v1")
                  else "tensorflow")
        return root.value + target[len(prefix):]
  return target  # Rooted at `tensorflow`; the import is added if missing.


def _name(k: str, kind: str) -> str:
  """How the report and `--check` name a use of `k`."""
  if kind in (TODAY_LSO, TODAY_POLICY):
    return display(k) + "(..., loss_scale=...)"
  return display(k)


def _call_of(analysis: resolve.Analysis,
             node: cst.CSTNode) -> Optional[cst.Call]:
  parent = analysis.parents.get(node)
  if isinstance(parent, cst.Call) and parent.func is node:
    return parent
  return None


_KERAS_OPTIMIZERS = ("tensorflow.keras.optimizers", "tensorflow.optimizers",
                     "keras.optimizers", "tf_keras.optimizers")
_V1_OPTIMIZERS = ("tensorflow.train", "tensorflow.compat.v1.train")


def _optimizer_kind(analysis: resolve.Analysis,
                    value: cst.BaseExpression, depth: int = 0) -> str:
  """`keras`, `v1` or `unknown`: what kind of optimizer `value` is.

  Read from the call that built it, written in place or assigned once to a
  name in the same scope.
  """
  if depth > 3:
    return "unknown"
  if isinstance(value, cst.Call):
    path = (analysis.path(value.func, raw=True) or
            analysis.imported_path(value.func) or "")
    if any(syntax.under(path, m) for m in _KERAS_OPTIMIZERS) or (
        syntax.under(syntax.normalize(path), "tensorflow.keras")):
      return "keras"
    if any(syntax.under(syntax.normalize(path), m) for m in _V1_OPTIMIZERS):
      return "v1"
    return "unknown"
  if isinstance(value, cst.Name):
    # The last assignment above the use, in the same scope (`opt = SGD()`
    # then `opt = enable_...(opt)` reads the first).
    scope = analysis.scopes.get(value)
    assignments = list(scope[value.value]) if scope is not None else []
    line = analysis.line(value)
    before = []
    for assignment in assignments:
      node = getattr(assignment, "node", None)
      if not isinstance(assignment, metadata.Assignment) or not isinstance(
          node, cst.Name) or assignment.scope is not scope:
        return "unknown"
      if analysis.line(node) < line:
        before.append(node)
    if before:
      node = max(before, key=analysis.line)
      assigned = analysis.assigned_value(node)
      if assigned is not None:
        return _optimizer_kind(analysis, assigned, depth + 1)
  return "unknown"


def _argument(call: cst.Call, position: int, keyword: str):
  known, arg = syntax.call_argument(call, position, keyword)
  return arg if known else None


def _without(call: cst.Call, drop: cst.Arg) -> cst.Call:
  args = [a for a in call.args if a is not drop]
  if args and drop is call.args[-1]:
    args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
  return call.with_changes(args=args)


def _dtype_policy(call: cst.Call) -> cst.BaseExpression:
  layer = call.args[0].value
  if not isinstance(layer, (cst.Name, cst.Attribute, cst.Call,
                            cst.Subscript)):
    layer = layer.with_changes(lpar=[cst.LeftParen()],
                               rpar=[cst.RightParen()])
  return cst.Attribute(value=layer, attr=cst.Name("dtype_policy"))


def _set_call(calls, call: cst.Call, rewrite, name: str) -> None:
  """Adds a whole-call rewrite, after any already there for `call`."""
  previous = calls.get(call)
  if previous is not None:
    first = previous[0]
    calls[call] = (lambda updated: rewrite(first(updated)), name)
  else:
    calls[call] = (rewrite, name)


def plan(analysis: resolve.Analysis, the_plan: uses_lib.Plan,
         package_name: Callable[[cst.CSTNode], str],
         advance_iterations: bool = False) -> Found:
  """Decides the conversion of every TF 2.0-2.8 name in a module.

  Args:
    analysis: The module's `resolve.Analysis`.
    the_plan: The file's `uses.Plan`: expressions to replace, import lines
      and calls to rewrite are added to it.
    package_name: The name this package is reachable by at a node.
    advance_iterations: Whether the tree pins TF 2.3 or later (`pins`):
      each `KerasLossScaleOptimizer` made from TF 2.0-2.8's Keras
      optimizer then gets `skipped_steps_advance_iterations=True`.

  Returns:
    A `Found`, with the notes, what was not kept, and warnings.
  """
  replace, statements = the_plan.replace, the_plan.statements
  calls = the_plan.calls
  found = Found()
  # Read by `_iterations` for each KerasLossScaleOptimizer made.
  found.advance = advance_iterations
  uses = _Uses(analysis)
  analysis.module.visit(uses)
  chosen = {}
  for node, k in uses.attributes:
    chosen[node] = k
  outer = [n for n in chosen
           if not any(p in chosen for p in analysis.ancestors(n))]
  for node in outer:
    k = chosen[node]
    line = analysis.line(node)
    if k in MODULES:
      target, kind = MODULES[k], EXACT
    elif k in _TODAY:
      target, kind = _TODAY[k]
    else:
      target, kind = NAMES[k]
    call = _call_of(analysis, node)
    name = _name(k, kind)
    if kind in (TODAY_LSO, TODAY_POLICY):
      if call is None or _argument(call, 99, "loss_scale") is None:
        continue  # Today's class, used as today's class: nothing to do.
    if kind == LAYER_POLICY:
      _layer_policy(analysis, node, call, calls, found, name)
      continue
    if kind == ENABLE:
      target = _enable(analysis, call, calls, found, name, line)
    elif kind in (LSO, TODAY_LSO) and _wraps_v1(analysis, call):
      target = _v1_lso(call, calls, found, name, line)
    elif kind in (LSO, TODAY_LSO):
      found.notes.append((line, "`{}` became `{}`: {}".format(
          name, display(KERAS_LSO), _iterations(call, calls, found, name))))
    elif kind in (POLICY, TODAY_POLICY) and call is not None:
      _policy(analysis, call, calls, found, name, line)
    new = _spelling(analysis, node, target, package_name)
    if new != syntax.code(node):
      replace[node] = new
      found.noted[node] = name
  for node, k in uses.names:
    _name_use(analysis, node, k, calls, found, package_name)
  for statement in uses.imports:
    new = _imports(analysis, statement, package_name, found)
    if new is not None:
      statements[statement] = new
  for node in uses.env:
    if _sets_env_on(analysis, node):
      found.lost.append((analysis.line(node), LOST_ENV, FIX_ENV))
  wrapped = sorted(line for line, text in found.notes
                   if "became `{}`".format(display(KERAS_LSO)) in text)
  if wrapped:
    # The file wraps its optimizer itself (NVIDIA's Electra: a Policy with
    # `loss_scale="dynamic"` and an explicit LossScaleOptimizer): the
    # Policy's loss scale is not lost, only redundant.
    kept = []
    for line, what, fix in found.lost:
      if what in (LOST_POLICY, LOST_DEFAULT):
        found.notes.append((line, (
            "this file wraps its optimizer in `{}` itself ({}), so the "
            "Policy's loss scale is not needed; check that every optimizer "
            "a `mixed_float16` model trains with is wrapped").format(
                display(KERAS_LSO), syntax.lines_text(wrapped))))
      else:
        kept.append((line, what, fix))
    found.lost = kept
  return found


def _layer_policy(analysis, node, call, calls, found, name) -> None:
  line = analysis.line(node)
  if call is None or len(call.args) != 1 or call.args[0].star or (
      call.args[0].keyword not in (None,) and
      call.args[0].keyword.value != "layer"):
    found.warnings.append((line, (
        "`{}` is gone on TensorFlow 2.9 and later, and this use is not a "
        "call this command can read, so it is left unchanged: read a "
        "layer's policy as `layer.dtype_policy`.").format(name)))
    return
  _set_call(calls, call, _dtype_policy, name)


def _enable(analysis, call, calls, found, name, line) -> str:
  """The target of one graph-rewrite use (the v1 function or the wrapper)."""
  target = NAMES[_TRAIN_EXP + ".enable_mixed_precision_graph_rewrite"][0]
  if call is None:
    found.warnings.append((line, (
        "`{}` is used here without being called, so this command cannot "
        "tell which optimizer it gets; it became TF's `{}`, which takes only "
        "a `tf.compat.v1` optimizer. For a Keras optimizer use "
        "`contrib_mixed_precision.KerasLossScaleOptimizer(opt, "
        "loss_scale)`.").format(name, display(target))))
    return target
  opt = _argument(call, 0, "opt")
  kind = "unknown" if opt is None else _optimizer_kind(analysis, opt.value)
  guessed = ""
  if kind == "unknown" and opt is not None:
    # Not written where it was built (`model.optimizer`, a helper's
    # result): the file's own API says which generation it is.
    kind = _file_kind(analysis)
    guessed = {"keras": "uses `tf.keras` and no TF1 training API",
               "v1": "uses TF1's training API and no `tf.keras`"}.get(
                   kind, "")
    if guessed:
      found.warnings.append((line, (
          "this command cannot see how the optimizer given to `{}` was "
          "built; it took it for a {} optimizer because this file {}. If "
          "it is not, write {} instead.").format(
              name, "Keras" if kind == "keras" else "`tf.compat.v1`",
              guessed,
              "TF's `{}`".format(display(target)) if kind == "keras" else
              "`opt = contrib_mixed_precision.KerasLossScaleOptimizer(opt, "
              "loss_scale)`")))
  if kind == "keras":
    if opt.keyword is not None:
      _set_call(calls, call, _renamed_keyword(opt.keyword.value,
                                              "optimizer"), name)
    found.notes.append((line, (
        "`{}` of a Keras optimizer became `{}`: {}").format(
            name, display(KERAS_LSO), _iterations(call, calls, found,
                                                  name))))
    found.lost.append((line, LOST_REWRITE, FIX_REWRITE))
    return KERAS_LSO
  found.notes.append((line, "`{}` became TF's `{}` (exact for a "
                      "`tf.compat.v1` optimizer): {}".format(
                          name, display(target), GPU_ONLY)))
  if kind == "unknown":
    found.warnings.append((line, (
        "this command cannot tell whether the optimizer given to `{}` is a "
        "`tf.compat.v1` optimizer or a Keras one. It became TF's `{}`, which "
        "takes only a `tf.compat.v1` optimizer (and the Keras 2 legacy "
        "ones): for a Keras optimizer, write `opt = "
        "contrib_mixed_precision.KerasLossScaleOptimizer(opt, loss_scale)` "
        "instead ({}).").format(name, display(target), FIX_REWRITE)))
  return target


_KERAS_MODULES = ("tensorflow.keras", "tensorflow.optimizers")
_V1_MODULES = ("tensorflow.compat.v1.train", "tensorflow.estimator",
               "tensorflow.compat.v1.estimator", "tensorflow.contrib",
               "tensorflow.compat.v1.Session", "tensorflow.Session",
               "tensorflow.compat.v1.placeholder", "tensorflow.placeholder")


def _file_kind(analysis: resolve.Analysis) -> str:
  """`keras` or `v1` when a module uses only one generation's API."""
  key_ = ("tf2x_file_kind", analysis.module)
  if key_ in analysis.memo:
    return analysis.memo[key_]
  keras = v1 = False
  for node, parent in analysis.parents.items():
    if not isinstance(node, cst.Attribute) or (
        isinstance(parent, cst.Attribute) and parent.value is node):
      continue  # Only whole chains: `tf.keras.layers.Dense`, once.
    path = analysis.path(node, raw=True) or ""
    if any(syntax.under(path, m) for m in _KERAS_MODULES):
      keras = True
    if any(syntax.under(path, m) for m in _V1_MODULES) or (
        syntax.under(path, "tensorflow.train") and
        path.endswith("Optimizer")):
      v1 = True
  kind = "unknown" if keras == v1 else ("keras" if keras else "v1")
  analysis.memo[key_] = kind
  return kind


def _renamed_keyword(old: str, new: str):
  def rewrite(call: cst.Call) -> cst.Call:
    args = [a.with_changes(keyword=cst.Name(new))
            if a.keyword is not None and a.keyword.value == old else a
            for a in call.args]
    return call.with_changes(args=args)
  return rewrite


LOST_DEFAULT = ("the loss scale a `mixed_float16` Policy gave `compile` "
                "(TF 2.0's `DynamicLossScale`, floor 1)")
FIX_DEFAULT = (
    "Keras' `compile` now wraps a `mixed_float16` model's optimizer in its "
    "own LossScaleOptimizer (on Keras 3 without TF 2.0's floor of 1; with "
    "tf-keras, skipped steps advance `iterations`). To keep TF 2.0's, pass "
    "`contrib_mixed_precision.KerasLossScaleOptimizer(optimizer)` to "
    "`compile`")


FIX_POLICY = (
    "wrap the optimizer the model is compiled with in "
    "`contrib_mixed_precision.KerasLossScaleOptimizer(optimizer, "
    "loss_scale)`, with the Policy's loss scale (each use below says "
    "which). Without it, Keras' `compile` wraps a `mixed_float16` model's "
    "optimizer in its own LossScaleOptimizer: dynamic, with TF 2.3+'s "
    "`iterations`, and on Keras 3 without TF 2.0's floor of 1")


def _policy(analysis, call, calls, found, name, line) -> None:
  scale = _argument(call, 1, "loss_scale")
  if scale is None:
    policy = _argument(call, 0, "name")
    if policy is not None and syntax.string_value(
        policy.value) == "mixed_float16":
      found.lost.append((line, LOST_DEFAULT, FIX_DEFAULT))
    return
  index = next(i for i, a in enumerate(call.args) if a is scale)
  _set_call(calls, call, lambda updated, i=index: (
      _without(updated, updated.args[i])), name)
  value = syntax.short(syntax.code(scale.value))
  policy = _argument(call, 0, "name")
  policy = None if policy is None else syntax.string_value(policy.value)
  if isinstance(scale.value, cst.Name) and scale.value.value == "None":
    if policy is not None and policy != "mixed_float16":
      found.notes.append((line, (
          "`loss_scale=None` was dropped from `{}`: a `{}` policy scales "
          "nothing today either").format(name, policy)))
      return
    found.lost.append((line, LOST_POLICY, FIX_POLICY))
    found.notes.append((line, (
        "`loss_scale=None` was dropped from `{}`: TF 2.x trained this model "
        "without loss scaling; pass `contrib_mixed_precision."
        "KerasLossScaleOptimizer(optimizer, 1)` (a fixed scale of 1, which "
        "applies every step as TF 2.x did) to `compile`").format(name)))
    return
  found.lost.append((line, LOST_POLICY, FIX_POLICY))
  found.notes.append((line, (
      "`loss_scale={}` was dropped from `{}`: pass it on as "
      "`contrib_mixed_precision.KerasLossScaleOptimizer(optimizer, {})`"
      ).format(value, name, value)))


def _name_use(analysis, node, k, calls, found, package_name) -> None:
  """A use through a name that `from <gone module> import X` bound."""
  target, kind = NAMES.get(k) or _TODAY[k]
  name, line = _name(k, kind), analysis.line(node)
  call = _call_of(analysis, node)
  if kind == LAYER_POLICY:
    _layer_policy(analysis, node, call, calls, found, name)
  elif kind == ENABLE:
    if _enable(analysis, call, calls, found, name, line) == KERAS_LSO:
      # The name stays bound to TF's v1 function; this call wraps instead.
      new_func = package_name(node) + KERAS_LSO[len(syntax.PACKAGE):]
      _set_call(calls, call, lambda u, f=new_func: u.with_changes(
          func=syntax.dotted_node(f)), name)
  elif kind in (LSO, TODAY_LSO):
    if kind == TODAY_LSO and (call is None or _argument(
        call, 99, "loss_scale") is None):
      return
    if _wraps_v1(analysis, call):
      target = _v1_lso(call, calls, found, name, line)
      _set_call(calls, call, lambda u, f=target: u.with_changes(
          func=syntax.dotted_node(f)), name)
      return
    if kind == TODAY_LSO:
      new_func = package_name(node) + KERAS_LSO[len(syntax.PACKAGE):]
      _set_call(calls, call, lambda u, f=new_func: u.with_changes(
          func=syntax.dotted_node(f)), name)
    found.notes.append((line, "`{}` became `{}`: {}".format(
        name, display(KERAS_LSO), _iterations(call, calls, found, name))))
  elif kind in (POLICY, TODAY_POLICY) and call is not None:
    _policy(analysis, call, calls, found, name, line)


# TF's TF 2.0-era loss-scale optimizer for a `tf.compat.v1` optimizer.
V1_LSO = _V1_MP + ".MixedPrecisionLossScaleOptimizer"


def _wraps_v1(analysis: resolve.Analysis, call: Optional[cst.Call]) -> bool:
  """Whether a Keras LossScaleOptimizer call is given a TF1 optimizer."""
  if call is None:
    return False
  opt = _argument(call, 0, "optimizer")
  return opt is not None and _optimizer_kind(analysis, opt.value) == "v1"


def _v1_lso(call: cst.Call, calls, found: Found, name: str,
            line: int) -> str:
  """The target of a Keras LossScaleOptimizer given a TF1 optimizer.

  `KerasLossScaleOptimizer` (a Keras optimizer) refuses a
  `tf.compat.v1.train` optimizer when it is built. TF's own
  `MixedPrecisionLossScaleOptimizer` takes it with the same `LossScale`
  and keeps TF 2.0's numbers (contract 16): a skipped step does not run
  the inner apply, so `global_step` does not advance.
  """
  if any(a.keyword is not None and a.keyword.value == "optimizer"
         for a in call.args):
    _set_call(calls, call, _renamed_keyword("optimizer", "opt"), name)
  found.notes.append((line, (
      "`{}` was given a `tf.compat.v1` optimizer, which "
      "`contrib_mixed_precision.KerasLossScaleOptimizer` (a Keras "
      "optimizer) refuses: it became TF's `{}`, which takes it and keeps TF "
      "2.0's loss scale, skips and `global_step`").format(
          name, display(V1_LSO))))
  return V1_LSO


def _iterations(call: Optional[cst.Call], calls, found: Found,
                name: str) -> str:
  """The `iterations` rule of one KerasLossScaleOptimizer made; its note.

  With `found.advance` (the tree pins TF 2.3+), the call gets
  `skipped_steps_advance_iterations=True` unless it already says.
  """
  if not found.advance:
    return ITERATIONS_NOTE
  if call is None:
    return ITERATIONS_NOTE_UNCALLED
  if any(a.keyword is not None and a.keyword.value == ADVANCE
         for a in call.args):
    return ITERATIONS_NOTE_ADVANCE

  def add(updated: cst.Call) -> cst.Call:
    args = list(updated.args)
    args.append(cst.Arg(keyword=cst.Name(ADVANCE), value=cst.Name("True"),
                        equal=cst.AssignEqual(
                            whitespace_before=cst.SimpleWhitespace(""),
                            whitespace_after=cst.SimpleWhitespace(""))))
    return updated.with_changes(args=args)

  _set_call(calls, call, add, name)
  return ITERATIONS_NOTE_ADVANCE


def _import_line(module: str, name: str, bound: str) -> cst.ImportFrom:
  asname = None if bound == name else cst.AsName(name=cst.Name(bound))
  return cst.ImportFrom(module=syntax.dotted_node(module),
                        names=[cst.ImportAlias(name=cst.Name(name),
                                               asname=asname)])


def _imports(analysis, statement, package_name,
             found) -> Optional[List[cst.BaseSmallStatement]]:
  """The import statements of one line, with gone TF 2.x paths renamed."""
  changed = False
  body: List[cst.BaseSmallStatement] = []
  for small in statement.body:
    if isinstance(small, cst.ImportFrom) and not small.relative and (
        small.module is not None and
        not isinstance(small.names, cst.ImportStar)):
      module = syntax.dotted(small.module)
      kept, extra = [], []
      for alias in small.names:
        full = key(module + "." + syntax.dotted(alias.name))
        bound = syntax.binding_name(alias)
        if full in NAMES:
          target, kind = NAMES[full]
          changed = True
          if kind == LAYER_POLICY:
            continue  # Its calls become `layer.dtype_policy`.
          parent, _, last = target.rpartition(".")
          if parent == syntax.PACKAGE:
            parent = package_name(small)
            if parent != syntax.PACKAGE:
              # This package is imported under another name in this module.
              extra.append(cst.Assign(
                  targets=[cst.AssignTarget(cst.Name(bound))],
                  value=syntax.dotted_node(parent + "." + last)))
              continue
          extra.append(_import_line(parent, last, bound))
        elif full in MODULES or new_module(full) != full:
          changed = True
          parent, _, last = new_module(full).rpartition(".")
          extra.append(_import_line(parent, last, bound))
        else:
          kept.append(alias)
      if kept and len(kept) < len(small.names):
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        body.append(small.with_changes(names=kept))
      elif kept:
        moved = new_module(module)
        if moved != module:
          changed = True
          body.append(small.with_changes(module=syntax.dotted_node(moved)))
        else:
          body.append(small)
      body.extend(extra)
    elif isinstance(small, cst.Import):
      names = []
      for alias in small.names:
        full = syntax.dotted(alias.name)
        moved = new_module(full)
        if key(full) != full and moved == full:
          names.append(alias)  # A `compat.v2` path that still exists.
        elif moved != full:
          changed = True
          names.append(alias.with_changes(name=syntax.dotted_node(moved)))
        else:
          names.append(alias)
      body.append(small.with_changes(names=names))
    else:
      body.append(small)
  return body if changed else None
