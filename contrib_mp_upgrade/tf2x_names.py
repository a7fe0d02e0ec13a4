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

TF 2.4-2.15's Keras 2 API (the third generation) runs on Keras 3 only
with other numbers, or not at all: `LossScaleOptimizer(opt, dynamic,
initial_scale, dynamic_growth_steps)` becomes `KerasLossScaleOptimizer`
with TF's `DynamicLossScale` (multiplier 2) or `FixedLossScale`, counting
skipped steps as Keras 2 did (contract 17). Where a module sets a
`mixed_float16` policy and calls `compile`, the optimizer given to `compile`
is wrapped as Keras 2's (or TF 2.0-2.3's, with the Policy's loss scale)
`compile` wrapped it. What cannot be read exactly is left and recorded as a
"stop": the report names the line, and the file does not "run".

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
    stops: `(line, what, fix)`: uses left unconverted that stop the file
      or change its numbers on Keras 3; the file does not "run".
    noted: `{node: TF 2.x name}` of expressions replaced, for the report.
    advance: Whether skipped steps advance `iterations` in the
      KerasLossScaleOptimizers made (the tree pins TF 2.3+).
  """
  notes: List[Tuple[int, str]] = dataclasses.field(default_factory=list)
  lost: List[Tuple[int, str, str]] = dataclasses.field(default_factory=list)
  warnings: List[Tuple[int, str]] = dataclasses.field(default_factory=list)
  stops: List[Tuple[int, str, str]] = dataclasses.field(default_factory=list)
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
    # `keras.mixed_precision.LossScaleOptimizer` of standalone `keras`.
    self.standalone: List[cst.CSTNode] = []
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
    elif self.a.imported_path(node) == _STANDALONE_LSO:
      self.standalone.append(node)

  def visit_Name(self, node: cst.Name) -> None:
    parent = self.a.parents.get(node)
    if isinstance(parent, cst.Attribute) and parent.attr is node:
      return
    k = key(self.a.path(node, raw=True))
    if k in NAMES or k in _TODAY:
      self.names.append((node, k))
    elif self.a.imported_path(node) == _STANDALONE_LSO:
      self.standalone.append(node)

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
        if kind == TODAY_LSO:
          # Keras 2's class (TF 2.4-2.15), which Keras 3 changed.
          _keras2_lso(analysis, node, call, calls, found, package_name,
                      display(k))
        continue  # Today's Policy, used as today's: nothing to do.
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
  if uses.standalone and _keras2_file(analysis):
    for node in uses.standalone:
      _keras2_lso(analysis, node, _call_of(analysis, node), calls, found,
                  package_name, syntax.code(node))
  for statement in uses.imports:
    new = _imports(analysis, statement, package_name, found)
    if new is not None:
      statements[statement] = new
  _compile_plan(analysis, the_plan, found, package_name)
  _policy_reads(analysis, the_plan, found)
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
    "the optimizer `opt` to `compile` as `opt if isinstance(opt, "
    "tf.keras.mixed_precision.LossScaleOptimizer) else "
    "contrib_mixed_precision.KerasLossScaleOptimizer(opt)` (an optimizer "
    "already wrapped, here or elsewhere, is left alone)")


FIX_POLICY = (
    "pass the optimizer `opt` the model is compiled with as `opt if "
    "isinstance(opt, tf.keras.mixed_precision.LossScaleOptimizer) else "
    "contrib_mixed_precision.KerasLossScaleOptimizer(opt, loss_scale)`, "
    "with the Policy's loss scale (each use below says which). Without "
    "it, Keras' `compile` wraps a `mixed_float16` model's optimizer in its "
    "own LossScaleOptimizer: dynamic, with TF 2.3+'s "
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
        "without loss scaling; in the `compile` fix, use `1` as "
        "`loss_scale` (a fixed scale of 1, which applies every step as "
        "TF 2.x did)").format(name)))
    return
  found.lost.append((line, LOST_POLICY, FIX_POLICY))
  found.notes.append((line, (
      "`loss_scale={}` was dropped from `{}`: in the `compile` fix, use "
      "`{}` as `loss_scale`").format(value, name, value)))


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
      _keras2_lso(analysis, node, call, calls, found, package_name,
                  display(k))
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


# -- TF 2.4-2.15's Keras 2 API (the third generation) ----------------------

# Keras 2's defaults for a dynamic scale (tf-keras'
# `mixed_precision/loss_scale_optimizer.py`, and `compile`'s own wrapper).
KERAS2_INITIAL = "2 ** 15"
KERAS2_GROWTH = "2000"
_KERAS2_LSO_ARGS = ("inner_optimizer", "dynamic", "initial_scale",
                    "dynamic_growth_steps")
_STANDALONE_LSO = "keras.mixed_precision.LossScaleOptimizer"
KERAS2_NOTE = (
    "Keras 2's numbers kept: TF's {} in "
    "`contrib_mixed_precision.KerasLossScaleOptimizer`, whose skipped steps "
    "advance `iterations` as Keras 2's did; `get_scaled_loss`, "
    "`get_unscaled_gradients`, `loss_scale`, `dynamic_counter` and "
    "`inner_optimizer` work on it as on Keras 2's class")
STOP_LSO = ("a Keras 2 `LossScaleOptimizer` call this command cannot map "
            "exactly ({})")
FIX_LSO = (
    "write it as `contrib_mixed_precision.KerasLossScaleOptimizer(opt, "
    "tf.compat.v1.mixed_precision.DynamicLossScale(initial_loss_scale="
    "initial_scale, increment_period=dynamic_growth_steps, multiplier=2.), "
    "skipped_steps_advance_iterations=True)` (defaults 2 ** 15 and 2000), "
    "or, for `dynamic=False`, with "
    "`tf.compat.v1.mixed_precision.FixedLossScale(initial_scale)`; Keras "
    "3's own LossScaleOptimizer has no fixed scale and no floor of 1")


def tf_name(analysis: resolve.Analysis, node: cst.CSTNode) -> str:
  """A name bound to `tensorflow` itself where `node` is, else `tensorflow`.

  `tensorflow` is then imported by the rewrite (a name it reads and no
  statement binds).
  """
  scope = analysis.scopes.get(node)
  for name in ("tf", "tensorflow"):
    assignments = list(scope[name]) if scope is not None else []
    if assignments and all(
        isinstance(a, metadata.ImportAssignment) and
        syntax.import_target(a.node, name) == "tensorflow"
        for a in assignments):
      return name
  return "tensorflow"


def _keras2_scale(tf: str, dynamic: bool, initial: str, growth: str) -> str:
  if dynamic:
    return ("{}.compat.v1.mixed_precision.DynamicLossScale("
            "initial_loss_scale={}, increment_period={}, "
            "multiplier=2.)".format(tf, initial, growth))
  return "{}.compat.v1.mixed_precision.FixedLossScale({})".format(tf, initial)


def _wrapped(package: str, inner: str, scale: Optional[str],
             advance: bool) -> cst.BaseExpression:
  args = [inner] + ([scale] if scale is not None else [])
  if advance:
    args.append("skipped_steps_advance_iterations=True")
  return cst.parse_expression("{}.KerasLossScaleOptimizer({})".format(
      package, ", ".join(args)))


def _keras2_lso(analysis, node, call, calls, found, package_name,
                name) -> None:
  """`LossScaleOptimizer(opt, dynamic, initial_scale, dynamic_growth_steps)`.

  Keras 2's class (TF 2.4-2.15, tf-keras), rewritten to this package's
  optimizer with TF's loss scale of the same numbers (contract 17). A call
  this cannot read exactly is left, and named in "Before you run it".
  """
  if call is None:
    return  # The class itself (`isinstance`): ours is an instance of it.
  line = analysis.line(node)
  args = {}
  for position, keyword in enumerate(_KERAS2_LSO_ARGS):
    known, arg = syntax.call_argument(call, position, keyword)
    if not known:
      found.stops.append((line, STOP_LSO.format("`*args` or `**kwargs`"),
                          FIX_LSO))
      return
    args[keyword] = arg
  given = [a for a in args.values() if a is not None]
  extra = [a for a in call.args if not any(a is g for g in given)]
  if extra or args["inner_optimizer"] is None:
    found.stops.append((line, STOP_LSO.format(
        "arguments Keras 2's class does not take"), FIX_LSO))
    return
  dynamic = args["dynamic"]
  value = True
  if dynamic is not None:
    value = {"True": True, "False": False}.get(
        dynamic.value.value if isinstance(dynamic.value, cst.Name) else "")
    if value is None:
      found.stops.append((line, STOP_LSO.format(
          "`dynamic` is not written as `True` or `False`"), FIX_LSO))
      return
  if not value and (args["initial_scale"] is None or
                    args["dynamic_growth_steps"] is not None):
    found.stops.append((line, STOP_LSO.format(
        "`dynamic=False` without `initial_scale`, or with "
        "`dynamic_growth_steps`, which Keras 2 refused too"), FIX_LSO))
    return
  refused = _keras2_values_refused(args)
  if refused:
    found.stops.append((line, STOP_LSO.format(refused), FIX_LSO))
    return
  index = {k: next(i for i, a in enumerate(call.args) if a is arg)
           for k, arg in args.items() if arg is not None}
  package = package_name(node) + KERAS_LSO[len(syntax.PACKAGE):]
  package = package.rpartition(".")[0]
  tf = tf_name(analysis, node)

  def rewrite(updated: cst.Call, dynamic=value) -> cst.BaseExpression:
    def text(keyword, default):
      if keyword not in index:
        return default
      return syntax.code(updated.args[index[keyword]].value)
    scale = _keras2_scale(tf, dynamic, text("initial_scale", None),
                          text("dynamic_growth_steps", KERAS2_GROWTH))
    if dynamic and "initial_scale" not in index:
      scale = _keras2_scale(tf, True, KERAS2_INITIAL,
                            text("dynamic_growth_steps", KERAS2_GROWTH))
    return _wrapped(package, text("inner_optimizer", None), scale, True)

  _set_call(calls, call, rewrite, name)
  found.notes.append((line, "`{}` became `{}`: {}".format(
      name, display(KERAS_LSO), KERAS2_NOTE.format(
          "`DynamicLossScale` (floor of 1, multiplier 2)" if value else
          "`FixedLossScale` (which applies every step, as Keras 2's fixed "
          "scale did)"))))


def _literal_number(arg):
  """The number an argument is written as (`4`, `.5`, `-1`), or None."""
  if arg is None:
    return None
  expr, sign = arg.value, 1
  if (isinstance(expr, cst.UnaryOperation) and
      isinstance(expr.operator, (cst.Minus, cst.Plus))):
    sign = -1 if isinstance(expr.operator, cst.Minus) else 1
    expr = expr.expression
  if isinstance(expr, (cst.Integer, cst.Float)):
    return sign * expr.evaluated_value
  return None


def _keras2_values_refused(args) -> str:
  """Why TF's loss scales refuse values Keras 2 took; '' when they do not.

  Keras 2 accepted any `initial_scale` and `dynamic_growth_steps`; TF's
  `FixedLossScale` and `DynamicLossScale` refuse a scale below 1 and a
  period below 1 when the program starts, so such a call is named, never
  counted as "will run".
  """
  scale = _literal_number(args["initial_scale"])
  growth = _literal_number(args["dynamic_growth_steps"])
  if scale is not None and not scale >= 1:
    return ("`initial_scale` {} is below 1, which Keras 2 took and TF's "
            "loss scales refuse".format(syntax.code(args["initial_scale"]
                                                    .value)))
  if growth is not None and not growth >= 1:
    return ("`dynamic_growth_steps` {} is below 1, which Keras 2 took and "
            "TF's `DynamicLossScale` refuses".format(
                syntax.code(args["dynamic_growth_steps"].value)))
  return ""


_KERAS2_ONLY = ("get_scaled_loss", "get_unscaled_gradients", "dynamic_counter")


def _keras2_file(analysis: resolve.Analysis) -> bool:
  """Whether a module's standalone `keras` is Keras 2's.

  `keras.mixed_precision.LossScaleOptimizer(opt)` is valid Keras 3 code
  too; a file that calls what only Keras 2's class has, or passes it
  `dynamic`, was written for Keras 2.
  """
  for node in analysis.parents:
    if isinstance(node, cst.Attribute) and node.attr.value in _KERAS2_ONLY:
      return True
    if isinstance(node, cst.Arg) and node.keyword is not None and (
        node.keyword.value == "dynamic"):
      return True
  return False


# -- A mixed_float16 policy and `compile` ----------------------------------

_SET_POLICY = {_KERAS_EXP + ".set_policy": True,
               _KERAS_MP + ".set_global_policy": False}
_POLICY_CLASSES = {_KERAS_EXP + ".Policy": True, _KERAS_MP + ".Policy": False}
_GLOBAL_POLICY = (_KERAS_EXP + ".global_policy",
                  _KERAS_MP + ".global_policy")

LOST_COMPILE = ("the loss scale Keras 2's `compile` gave a `mixed_float16` "
                "model (dynamic from 2 ** 15, floor 1, skipped steps "
                "counted in `iterations`)")
FIX_COMPILE = (
    "Keras 3's `compile` wraps such a model's optimizer in its own "
    "LossScaleOptimizer, which has no floor of 1. To keep Keras 2's numbers, "
    "pass the optimizer `opt` to `compile` as `opt if isinstance(opt, "
    "tf.keras.mixed_precision.LossScaleOptimizer) else "
    "contrib_mixed_precision.KerasLossScaleOptimizer(opt, "
    "tf.compat.v1.mixed_precision.DynamicLossScale(initial_loss_scale="
    "2 ** 15, increment_period=2000, multiplier=2.), "
    "skipped_steps_advance_iterations=True)` (as Keras 2's `compile`, it "
    "leaves an optimizer already wrapped, here or elsewhere, alone)")
NOTE_COMPILE = (
    "if you call `compile` under this policy (this module does not), pass it "
    "the optimizer as `opt if isinstance(opt, tf.keras.mixed_precision."
    "LossScaleOptimizer) else contrib_mixed_precision.KerasLossScaleOptimizer("
    "opt, tf.compat.v1.mixed_precision.DynamicLossScale(initial_loss_scale="
    "2 ** 15, increment_period=2000, multiplier=2.), "
    "skipped_steps_advance_iterations=True)` to keep Keras 2's loss scale "
    "(Keras 3's own has no floor of 1)")
STOP_COMPILE = ("a `compile` under a `mixed_float16` policy whose optimizer "
                "this command cannot wrap ({})")
NOTE_GLOBAL_LOSS_SCALE = (
    "the global policy's `loss_scale` became \"dynamic\", what TF 2.1-2.3's "
    "`mixed_float16` policy held when set by name or without `loss_scale=`; "
    "if the tree sets a Policy with its own `loss_scale=`, write that here")
NOTE_GLOBAL_LOSS_SCALE_IS_NONE = (
    "whether the global policy had a loss scale became whether it is "
    "`mixed_float16`, as TF 2.1-2.3 decided for a policy set by name or "
    "without `loss_scale=`; if the tree sets a Policy with its own "
    "`loss_scale=`, write that here")
STOP_POLICY_READ = ("`{}` of a Policy, which no Keras has today (it raises "
                    "AttributeError)")
FIX_POLICY_LOSS_SCALE = (
    "read the loss scale from the optimizer instead: "
    "`model.optimizer.loss_scale` (a `KerasLossScaleOptimizer`, callable as "
    "in TF 2.0-2.3)")


@dataclasses.dataclass
class _PolicySet:
  """One `set_policy`/`set_global_policy` call, as far as it can be read.

  Attributes:
    line: Its line.
    mixed: Whether the policy is `mixed_float16`; None when not known.
    experimental: TF 2.0-2.3's API (its `compile` took the Policy's loss
      scale and did not count skipped steps), else Keras 2's.
    scale: The Policy's `loss_scale` argument, or None when not given.
  """
  line: int
  mixed: Optional[bool]
  experimental: bool
  scale: Optional[cst.Arg] = None
  scale_site: Optional[cst.CSTNode] = None


def _last_value(analysis: resolve.Analysis,
                name: cst.Name) -> Optional[cst.BaseExpression]:
  """The value last assigned to `name` above it, in its own scope."""
  scope = analysis.scopes.get(name)
  if scope is None:
    return None
  before = []
  for assignment in scope[name.value]:
    node = getattr(assignment, "node", None)
    if not isinstance(assignment, metadata.Assignment) or not isinstance(
        node, cst.Name):
      return None
    if analysis.line(node) <= analysis.line(name) and node is not name:
      before.append(node)
  if not before:
    return None
  return analysis.assigned_value(max(before, key=analysis.line))


def _policy_set(analysis, call, experimental) -> _PolicySet:
  line = analysis.line(call)
  arg = _argument(call, 0, "policy")
  value = None if arg is None else arg.value
  if isinstance(value, cst.Name):
    value = _last_value(analysis, value) or value
  name = syntax.string_value(value) if value is not None else None
  if name is not None:
    return _PolicySet(line, name == "mixed_float16", experimental)
  if isinstance(value, cst.Call):
    cls = key(analysis.path(value.func, raw=True))
    if cls in _POLICY_CLASSES:
      named = _argument(value, 0, "name")
      policy = None if named is None else syntax.string_value(named.value)
      scale = _argument(value, 1, "loss_scale")
      return _PolicySet(
          line, None if policy is None else policy == "mixed_float16",
          experimental or _POLICY_CLASSES[cls] or scale is not None, scale,
          value)
  return _PolicySet(line, None, experimental)


def _policy_sets(analysis: resolve.Analysis) -> List[_PolicySet]:
  sets = []
  for node in analysis.parents:
    if isinstance(node, cst.Call):
      k = key(analysis.path(node.func, raw=True))
      if k in _SET_POLICY:
        sets.append(_policy_set(analysis, node, _SET_POLICY[k]))
  return sets


def _compiles(analysis: resolve.Analysis) -> List[cst.Call]:
  """`model.compile(...)` calls: an attribute `compile` given Keras' args."""
  found = []
  for node in analysis.parents:
    if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "compile" and any(
            a.keyword is not None and a.keyword.value in (
                "optimizer", "loss", "metrics") for a in node.args)):
      found.append(node)
  return found


def _is_wrapped(analysis, value, depth=0) -> Optional[bool]:
  """Whether an optimizer expression is a LossScaleOptimizer; None: unknown.

  False only for a Keras optimizer built in place (or assigned once above).
  """
  if depth > 3:
    return None
  if isinstance(value, cst.Name):
    assigned = _last_value(analysis, value)
    return None if assigned is None else _is_wrapped(analysis, assigned,
                                                     depth + 1)
  if isinstance(value, cst.Call):
    path = (analysis.path(value.func, raw=True) or
            analysis.imported_path(value.func) or
            syntax.dotted(value.func) or "")
    if path.endswith("LossScaleOptimizer"):
      return True
    if _optimizer_kind(analysis, value) == "keras":
      return False
  return None


class _Renamed(cst.CSTTransformer):
  """A copy of an expression with the plan's renames applied."""

  def __init__(self, replace):
    super().__init__()
    self.replace = replace

  def _renamed(self, original, updated):
    new = self.replace.get(original)
    return updated if new is None else syntax.dotted_node(new)

  def leave_Attribute(self, original_node, updated_node):
    return self._renamed(original_node, updated_node)

  def leave_Name(self, original_node, updated_node):
    return self._renamed(original_node, updated_node)


def _visible_at(analysis, expression, site) -> bool:
  """Whether every name `expression` reads means the same at `site`."""
  there = analysis.scopes.get(site)
  names: List[cst.Name] = []

  class _Names(cst.CSTVisitor):

    def visit_Name(self, node: cst.Name) -> None:
      names.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
      node.value.visit(self)  # `attr` is no read of a name.
      return False

    def visit_Arg(self, node: cst.Arg) -> bool:
      node.value.visit(self)  # Nor is a keyword.
      return False

  expression.visit(_Names())
  for node in names:
    here = analysis.scopes.get(node)
    if here is None or there is None or (
        set(here[node.value]) != set(there[node.value])):
      return False
  return True


def _compile_plan(analysis, the_plan, found, package_name) -> None:
  """Wraps the optimizer of each `compile` under a `mixed_float16` policy.

  Keras 2 (and TF 2.0-2.3 with the Policy's loss scale) wrapped a mixed
  model's optimizer in `compile`; Keras 3 wraps it in its own class, of
  other numbers. Where the policy is set in the same module, the optimizer
  given to `compile` is wrapped in `KerasLossScaleOptimizer` with the
  numbers the original Keras used; elsewhere the report names the line.
  """
  sets = [s for s in _policy_sets(analysis) if s.mixed is not False]
  if not sets:
    return
  compiles = _compiles(analysis)
  if not compiles:
    for s in sets:
      if not s.experimental:
        # Nothing is lost unless a `compile` runs: said once, no blocker.
        found.notes.append((s.line, NOTE_COMPILE))
      elif s.scale is None and (s.scale_site is None or s.mixed is None):
        # (A literal `Policy('mixed_float16')` is named at its own line.)
        found.lost.append((s.line, LOST_DEFAULT, FIX_DEFAULT))
    return
  kinds = {(s.experimental, s.mixed,
            None if s.scale is None else syntax.code(s.scale.value))
           for s in sets}
  policy = sets[0]
  lines = syntax.lines_text(sorted(s.line for s in sets))
  wrapped_any = False
  for call in compiles:
    line = analysis.line(call)
    if len(kinds) > 1:
      found.stops.append((line, STOP_COMPILE.format(
          "this module sets several policies ({})".format(lines)),
                          FIX_COMPILE))
      continue
    result = _wrap_compile(analysis, the_plan, found, package_name, call,
                           policy, lines)
    wrapped_any = wrapped_any or result
  if wrapped_any:
    # The loss scale the policy gave `compile` is kept there.
    found.lost = [l for l in found.lost
                  if l[1] not in (LOST_POLICY, LOST_DEFAULT)]


def _wrap_compile(analysis, the_plan, found, package_name, call, policy,
                  lines) -> bool:
  line = analysis.line(call)
  known, arg = syntax.call_argument(call, 0, "optimizer")
  if not known or arg is None:
    found.stops.append((line, STOP_COMPILE.format(
        "no `optimizer` argument it can read"), FIX_COMPILE))
    return False
  value = arg.value
  string = syntax.string_value(value)
  wrapped = None if string is not None else _is_wrapped(analysis, value)
  if wrapped:
    return True  # Wrapped by hand; `compile` does not wrap it again.
  if string is None and wrapped is None:
    found.stops.append((line, STOP_COMPILE.format(
        "it cannot see how `{}` was built".format(
            syntax.short(syntax.code(value)))), FIX_COMPILE))
    return False
  tf = tf_name(analysis, call)
  package = (package_name(call) + KERAS_LSO[len(syntax.PACKAGE):]).rpartition(
      ".")[0]
  scale_text = None
  # Keras 2 counted skipped steps; TF 2.0-2.2 did not, and TF 2.3+ did:
  # `Found.advance`, where the tree's TF pin says which (branch
  # keras-report), else TF 2.0's rule, as for the experimental optimizer.
  advance = not policy.experimental or getattr(found, "advance", False)
  if not policy.experimental:
    scale_text = _keras2_scale(tf, True, KERAS2_INITIAL, KERAS2_GROWTH)
    condition = "{}.keras.mixed_precision.global_policy().compute_dtype == " \
                "\"float16\"".format(tf)
  else:
    condition = "{}.keras.mixed_precision.global_policy().name == " \
                "\"mixed_float16\"".format(tf)
    if policy.scale is not None:
      scale = policy.scale.value
      if isinstance(scale, cst.Name) and scale.value == "None":
        scale_text = "1"
      elif not _visible_at(analysis, scale, call):
        found.stops.append((line, STOP_COMPILE.format(
            "the Policy's loss scale (line {}) reads names `compile` does "
            "not see".format(policy.line)), FIX_POLICY))
        return False
      else:
        scale_text = scale
      condition = None  # TF 2.0-2.3 wrapped whenever a loss scale was set.
  if policy.mixed:
    condition = None
  index = next(i for i, a in enumerate(call.args) if a is arg)
  replace = the_plan.replace

  def rewrite(updated: cst.Call) -> cst.Call:
    inner = syntax.code_raw(updated.args[index].value)
    if string is not None:
      inner = "{}.keras.optimizers.get({})".format(tf, inner)
    text = scale_text
    if isinstance(text, cst.CSTNode):
      text = syntax.code(text.visit(_Renamed(replace)))
    new = syntax.code_raw(_wrapped(package, inner, text, advance))
    if condition is not None:
      new = "({} if {} else {})".format(
          new, condition, syntax.code_raw(updated.args[index].value))
    args = list(updated.args)
    args[index] = args[index].with_changes(value=cst.parse_expression(new))
    return updated.with_changes(args=args)

  _set_call(the_plan.calls, call, rewrite, "compile")
  found.notes.append((line, (
      "the optimizer given to `compile` was wrapped in `{}`: {} wrapped it "
      "there under the `mixed_float16` policy set at {}{}; Keras 3 would "
      "wrap it in its own LossScaleOptimizer, which has no floor of "
      "1").format(
          display(KERAS_LSO),
          "Keras 2's `compile`" if not policy.experimental else
          "TF 2.0-2.3's `compile` (with the Policy's loss scale; skipped "
          "steps advance `iterations`, as in TF 2.3, the TF the tree pins)"
          if advance else
          "TF 2.0-2.3's `compile` (with the Policy's loss scale; skipped "
          "steps do not advance `iterations`, as in TF 2.0 to 2.2: pass "
          "`skipped_steps_advance_iterations=True` for TF 2.3's rule)",
          lines, "" if condition is None else
          " (only when the policy is `mixed_float16` at run time, which "
          "this command cannot see)")))
  return True


# TF 2.0-2.3's private name for a layer's policy, read by layers copied
# from those Keras (`if not self._mixed_precision_policy.should_cast_variables`
# in masked and pruned Dense layers); TF 2.4+ and Keras 3 call it
# `dtype_policy`.
_OLD_LAYER_POLICY = "_mixed_precision_policy"


def _policy_reads(analysis, the_plan, found) -> None:
  """`policy.loss_scale` and `policy.should_cast_variables` (TF 2.0-2.3)."""
  for node in analysis.parents:
    if (isinstance(node, cst.Attribute) and
        node.attr.value == _OLD_LAYER_POLICY and
        not _assigned(analysis, node)):
      the_plan.replace[node] = "{}.dtype_policy".format(
          syntax.code(node.value))
      found.noted[node] = "Layer._mixed_precision_policy"
  for node in analysis.parents:
    if not isinstance(node, cst.Attribute) or node.attr.value not in (
        "loss_scale", "should_cast_variables"):
      continue
    base = node.value
    if not _is_policy(analysis, base):
      continue
    line = analysis.line(node)
    attr = node.attr.value
    if attr == "should_cast_variables" and isinstance(
        base, (cst.Name, cst.Attribute)):
      # What TF 2.1-2.3 computed it from.
      text = "({0}.variable_dtype != {0}.compute_dtype)".format(
          syntax.code(base.visit(_Renamed(the_plan.replace))))
      the_plan.replace[node] = text
      found.noted[node] = "Policy.should_cast_variables"
      continue
    compared = (_compared_with_none(analysis, node)
                if attr == "loss_scale" else None)
    if compared is not None and _default_loss_scale(analysis, base):
      # TF 2.1-2.3 gave a Policy made without `loss_scale=` a loss scale
      # exactly when it was `mixed_float16`.
      comparison, is_none = compared
      the_plan.replace[comparison] = '({}.name {} "mixed_float16")'.format(
          syntax.code_raw(base.visit(_Renamed(the_plan.replace))),
          "!=" if is_none else "==")
      found.noted[comparison] = "Policy.loss_scale"
      if _reads_global_policy(analysis, base):
        found.notes.append((line, NOTE_GLOBAL_LOSS_SCALE_IS_NONE))
      continue
    scale = (_policy_loss_scale(analysis, base)
             if attr == "loss_scale" and _given_to_lso(analysis, node)
             else None)
    if scale is not None:
      # The optimizer is built before `compile`, where
      # `model.optimizer.loss_scale` does not exist yet: write what the
      # Policy held.
      the_plan.replace[node] = scale
      found.noted[node] = "Policy.loss_scale"
      if _reads_global_policy(analysis, base):
        found.notes.append((line, NOTE_GLOBAL_LOSS_SCALE))
      continue
    found.stops.append((line, STOP_POLICY_READ.format(attr), (
        FIX_POLICY_LOSS_SCALE if attr == "loss_scale" else
        "compare `policy.variable_dtype != policy.compute_dtype`")))


def _compared_with_none(analysis, node):
  """`(comparison, True)` for `node is None`, False for `is not None`."""
  parent = analysis.parents.get(node)
  if (not isinstance(parent, cst.Comparison) or parent.left is not node or
      len(parent.comparisons) != 1):
    return None
  target = parent.comparisons[0]
  if not (isinstance(target.comparator, cst.Name) and
          target.comparator.value == "None" and
          isinstance(target.operator, (cst.Is, cst.IsNot))):
    return None
  return parent, isinstance(target.operator, cst.Is)


def _default_loss_scale(analysis, base, depth=0) -> bool:
  """Whether `base` is the global policy or a Policy without `loss_scale=`."""
  if depth > 3:
    return False
  if isinstance(base, cst.Name):
    value = _last_value(analysis, base)
    return value is not None and _default_loss_scale(analysis, value,
                                                     depth + 1)
  if not isinstance(base, cst.Call):
    return False
  k = key(analysis.path(base.func, raw=True))
  return k in _GLOBAL_POLICY or (
      k in _POLICY_CLASSES and _argument(base, 1, "loss_scale") is None)


def _assigned(analysis, node) -> bool:
  """Whether `node` is the target of an assignment (`x.a = ...`)."""
  parent = analysis.parents.get(node)
  return isinstance(parent, (cst.AssignTarget, cst.AugAssign,
                             cst.AnnAssign)) and parent.target is node


def _reads_global_policy(analysis, base) -> bool:
  if isinstance(base, cst.Name):
    base = _last_value(analysis, base)
  return isinstance(base, cst.Call) and key(
      analysis.path(base.func, raw=True)) in _GLOBAL_POLICY


def _given_to_lso(analysis, node) -> bool:
  """Whether `node` is the loss-scale argument of a LossScaleOptimizer."""
  arg = analysis.parents.get(node)
  call = analysis.parents.get(arg)
  if not isinstance(arg, cst.Arg) or not isinstance(call, cst.Call):
    return False
  if arg.keyword is not None:
    if arg.keyword.value != "loss_scale":
      return False
  elif call.args.index(arg) != 1:
    return False
  path = (analysis.path(call.func, raw=True) or
          analysis.imported_path(call.func) or
          syntax.dotted(call.func) or "")
  return path.endswith("LossScaleOptimizer")


def _policy_loss_scale(analysis, base, depth=0) -> Optional[str]:
  """The code of what `base.loss_scale` held in TF 2.1-2.3; None: unknown.

  A `Policy('mixed_float16')` held its `loss_scale=`, else "dynamic"
  (TF 2.1-2.3's default for that policy). `global_policy()` is taken as
  the `mixed_float16` policy set by a string or a Policy without a
  `loss_scale=`; the report notes the line.
  """
  if depth > 3:
    return None
  if isinstance(base, cst.Name):
    value = _last_value(analysis, base)
    return None if value is None else _policy_loss_scale(analysis, value,
                                                         depth + 1)
  if not isinstance(base, cst.Call):
    return None
  k = key(analysis.path(base.func, raw=True))
  if k in _GLOBAL_POLICY:
    return '"dynamic"'
  if k not in _POLICY_CLASSES:
    return None
  named = _argument(base, 0, "name")
  if named is None or syntax.string_value(named.value) != "mixed_float16":
    return None
  scale = _argument(base, 1, "loss_scale")
  return '"dynamic"' if scale is None else syntax.code(scale.value)


def _is_policy(analysis, base, depth=0) -> bool:
  if depth > 3:
    return False
  if isinstance(base, cst.Call):
    k = key(analysis.path(base.func, raw=True))
    return k in _POLICY_CLASSES or k in _GLOBAL_POLICY or (
        k == _KERAS_EXP + ".get_layer_policy")
  if isinstance(base, cst.Attribute) and base.attr.value in (
      "dtype_policy", "_dtype_policy"):
    return True
  if isinstance(base, cst.Name):
    value = _last_value(analysis, base)
    if value is not None:
      return _is_policy(analysis, value, depth + 1)
  name = base.attr.value if isinstance(base, cst.Attribute) else (
      base.value if isinstance(base, cst.Name) else "")
  return "policy" in name.lower()
