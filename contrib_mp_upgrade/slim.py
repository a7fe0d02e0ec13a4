# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""`--contrib-to-slim`: the TF 1.15 contrib names `tf_slim` has, rewritten.

`tf_slim` (the tf-slim package) is TF 1.15's `tf.contrib.layers`,
`tf.contrib.framework` (`arg_scope` and the variables functions) and
`tf.contrib.slim` moved out of TensorFlow with their code unchanged. Where a
file uses one of those names, and only then, `plan_rewrites` rewrites it to
the same name under `tf_slim`:

* `tf.contrib.layers.fully_connected(...)` -> `tf_slim.fully_connected(...)`
  (whatever `tf` is bound to, and through `layers = tf.contrib.layers`);
* `from tensorflow.contrib.framework import arg_scope` -> `from tf_slim
  import arg_scope`;
* `import tensorflow.contrib.slim as slim`, `from tensorflow.contrib import
  layers` and `slim = tf.contrib.slim` bind `tf_slim` instead, when every
  use of the name is one that `tf_slim` provides.

Everything else (a name `tf_slim` lacks, a deeper module path, a star
import, the module object passed around) is left as it was and reported,
with the reason. `rewrite.upgrade_source` calls `plan_rewrites` on the
analysis of its own rewrite, so the edits share one pass and one set of
line numbers.
"""

import dataclasses
from typing import List, Optional, Set, Tuple

import libcst as cst
from libcst import metadata

from contrib_mp_upgrade import resolve
from contrib_mp_upgrade import syntax

MODULE = "tf_slim"
INSTALL = "pip install 'contrib_mixed_precision[slim]'"

# -- What tf_slim provides unchanged ------------------------------------------
# The one table that decides what is rewritten. Each name is public in TF
# 1.15's module (its docstring's @@ list or its allowed-symbols list, which
# `remove_undocumented` kept) and is, in tf-slim 1.1.0, the same code at the
# top level of `tf_slim`. Always `tf_slim.X`, never `tf_slim.layers.X`: in
# tf-slim 1.1.0, `tf_slim.layers` is the submodule `tf_slim.layers.layers`
# (its `__init__` star-imports it over the package), which lacks the
# initializers and regularizers. tests/upgrade_slim_test.py checks every
# name against the installed tf_slim.
#
# Left out on purpose (reported, never rewritten):
# - contrib.layers: the feature-column API, `embed_sequence`, `bow_encoder`,
#   `embedding_lookup_unique`, `safe_embedding_lookup_sparse`,
#   `regression_target`: not in tf_slim; `summaries`: `tf_slim.summaries`
#   is a different module (slim's, not layers').
# - contrib.framework: everything but `arg_scope` and the variables
#   functions (`nest`, `sort`, `zero_initializer`, `load_checkpoint`, ...):
#   not in tf_slim; most moved into TensorFlow itself.
# - contrib.slim: its submodules (`losses`, `metrics`, `learning`, ...),
#   whose TF 1.15 contents differ from tf_slim's in places; but `utils`,
#   the same code in both, is rewritten.
_LAYERS = frozenset((
    # Layers.
    "avg_pool2d", "avg_pool3d", "batch_norm", "bias_add", "conv1d",
    "conv2d", "conv3d", "conv2d_in_plane", "conv2d_transpose",
    "conv3d_transpose", "convolution", "convolution1d", "convolution2d",
    "convolution2d_in_plane", "convolution2d_transpose", "convolution3d",
    "convolution3d_transpose", "dense_to_sparse", "dropout", "elu",
    "flatten", "fully_connected", "GDN", "gdn", "group_norm",
    "images_to_sequence", "instance_norm", "layer_norm", "linear",
    "max_pool2d", "max_pool3d", "maxout", "one_hot_encoding", "relu",
    "relu6", "repeat", "scale_gradient", "separable_conv2d",
    "separable_convolution2d", "sequence_to_images", "softmax",
    "spatial_softmax", "stack", "unit_norm", "legacy_fully_connected",
    "legacy_linear", "legacy_relu", "recompute_grad", "RevBlock",
    "rev_block",
    # Regularizers and initializers.
    "apply_regularization", "l1_l2_regularizer", "l1_regularizer",
    "l2_regularizer", "sum_regularizer", "xavier_initializer",
    "xavier_initializer_conv2d", "variance_scaling_initializer",
    # Optimization and summaries.
    "optimize_loss", "OPTIMIZER_CLS_NAMES", "OPTIMIZER_SUMMARIES",
    "summarize_activation", "summarize_activations", "summarize_collection",
    "summarize_tensor", "summarize_tensors",
))
_FRAMEWORK = frozenset((
    "arg_scope", "add_arg_scope", "current_arg_scope", "has_arg_scope",
    "arg_scoped_arguments",
    "add_model_variable", "assert_global_step", "assert_or_get_global_step",
    "assign_from_checkpoint", "assign_from_checkpoint_fn",
    "assign_from_values", "assign_from_values_fn", "create_global_step",
    "filter_variables", "get_global_step", "get_or_create_global_step",
    "get_local_variables", "get_model_variables", "get_trainable_variables",
    "get_unique_variable", "get_variable_full_name", "get_variables",
    "get_variables_by_name", "get_variables_by_suffix",
    "get_variables_to_restore", "global_variable", "local_variable",
    "model_variable", "variable", "VariableDeviceChooser",
))
EXACT = {
    "tensorflow.contrib.layers": _LAYERS,
    "tensorflow.contrib.framework": _FRAMEWORK,
    # contrib.slim star-imported both modules' code, and with it the
    # `utils` submodule (`tensorflow.contrib.layers.python.layers.utils`:
    # `collect_named_outputs`, `convert_collection_to_dict`, ...), which
    # every research/slim network uses. `tf_slim.utils` is that module
    # (`tf_slim.layers.utils`), reached the same way.
    "tensorflow.contrib.slim": _LAYERS | _FRAMEWORK | frozenset(("utils",)),
}


def may_apply(source: bytes) -> bool:
  """Whether `source` can hold anything `plan_rewrites` rewrites (fast)."""
  return b"contrib" in source and (
      b"layers" in source or b"framework" in source or b"slim" in source)


@dataclasses.dataclass
class Plan:
  """What `plan_rewrites` decided, besides what it put in the rewrite plan.

  Attributes:
    replaced: The expressions replaced (keys of the rewrite plan's
      `replace`), to be noted as changes once the rewrite ran.
    lines: Input lines rewritten to `tf_slim`, imports included.
    left: `(line, why)` for each use not rewritten.
    warning: Why nothing was rewritten in the file, or None.
  """
  replaced: List[cst.CSTNode] = dataclasses.field(default_factory=list)
  lines: Set[int] = dataclasses.field(default_factory=set)
  left: List[Tuple[int, str]] = dataclasses.field(default_factory=list)
  warning: Optional[str] = None

  def handles(self, node: cst.CSTNode, analysis: resolve.Analysis) -> bool:
    """Whether `node` is, or is inside, an expression this pass replaced."""
    if not self.replaced:
      return False
    chosen = set(self.replaced)
    return node in chosen or any(p in chosen for p in analysis.ancestors(node))


def _short(path: str) -> str:
  """`tf.contrib.layers.x` for `tensorflow.contrib.layers.x`."""
  return "tf" + path[len(syntax.TF):]


def _not_provided(path: str, name: str) -> str:
  return ("`{}.{}`: tf_slim does not provide `{}` with TF 1.15's meaning, so "
          "it is left unchanged; migrate it by hand").format(
              _short(path), name, name)


def _module_of(analysis: resolve.Analysis, node: cst.CSTNode) -> Optional[str]:
  path = analysis.path(node)
  return path if path in EXACT else None


def _foreign_binding(analysis: resolve.Analysis) -> Optional[int]:
  """The line of a binding of `tf_slim` other than `import tf_slim`."""
  for scope in set(analysis.scopes.values()):
    for assignment in scope.assignments:
      if assignment.name != MODULE:
        continue
      node = getattr(assignment, "node", None)
      if isinstance(assignment, metadata.ImportAssignment) and (
          syntax.import_target(node, MODULE) == MODULE):
        continue
      return analysis.line(node) if node is not None else 0
  return None


def _use_of(analysis: resolve.Analysis, name: cst.Name) -> Optional[
    Tuple[cst.CSTNode, str]]:
  """`(expression, attribute)` when `name` is read as `name.attr`."""
  parent = analysis.parents.get(name)
  if parent is not None and analysis.base_of(parent) is name:
    attr = syntax.attribute_name(parent)
    if attr is not None:
      return parent, attr
  return None


class _Finder(cst.CSTVisitor):
  """Collects attribute reads of the three modules, outermost first."""

  def __init__(self, analysis: resolve.Analysis):
    super().__init__()
    self.a = analysis
    self.found: List[Tuple[cst.CSTNode, str, str]] = []

  def visit_Import(self, node: cst.Import) -> bool:
    return False

  def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
    return False

  def _expression(self, node: cst.CSTNode) -> None:
    base = self.a.base_of(node)
    if base is None:
      return
    module = _module_of(self.a, base)
    if module is not None:
      self.found.append((node, module, syntax.attribute_name(node)))

  def visit_Attribute(self, node: cst.Attribute) -> None:
    self._expression(node)

  def visit_Call(self, node: cst.Call) -> None:
    self._expression(node)


def _rebind(analysis, plan, assignment, module: str,
            result: Plan) -> bool:
  """Binds a name of `module` to `tf_slim` when all its uses allow it.

  Returns:
    Whether the binding now names `tf_slim`, so its uses stay as written.
  """
  node = getattr(assignment, "node", None)
  names = [r.node for r in assignment.references]
  uses = [_use_of(analysis, n) if isinstance(n, cst.Name) else None
          for n in names]
  if not names or any(u is None or u[1] not in EXACT[module] for u in uses):
    return False
  if isinstance(assignment, metadata.ImportAssignment):
    if "." in assignment.name or isinstance(node.names, cst.ImportStar):
      # `import tensorflow.contrib.layers`: its uses are rewritten one by
      # one (see `_dotted_imports`).
      return False
    alias = next(a for a in node.names
                 if syntax.binding_name(a) == assignment.name)
    if isinstance(node, cst.Import):
      plan.rename_aliases[alias] = MODULE
    else:
      plan.move_aliases[alias] = (MODULE, None)
  else:
    value = analysis.assigned_value(node)
    if value is None or _module_of(analysis, value) != module:
      return False
    plan.replace[value] = MODULE
    result.replaced.append(value)
  result.lines.add(analysis.line(node))
  return True


def _from_imports(analysis: resolve.Analysis, plan, result: Plan) -> None:
  """`from tensorflow.contrib.layers import x` -> `from tf_slim import x`."""
  for scope in set(analysis.scopes.values()):
    for assignment in scope.assignments:
      node = getattr(assignment, "node", None)
      if not (isinstance(assignment, metadata.ImportAssignment) and
              isinstance(node, cst.ImportFrom)) or node.relative or (
                  node.module is None):
        continue
      module = syntax.normalize(syntax.dotted(node.module))
      if module not in EXACT or isinstance(node.names, cst.ImportStar):
        continue
      alias = next(a for a in node.names
                   if syntax.binding_name(a) == assignment.name)
      name = syntax.dotted(alias.name)
      if name in EXACT[module]:
        plan.move_aliases[alias] = (MODULE, name)
        result.lines.add(analysis.line(node))
      else:
        result.left.append((analysis.line(node),
                            _not_provided(module, name)))
  for node in _star_imports(analysis):
    result.left.append((analysis.line(node), (
        "`from {} import *`: a star import is left unchanged (tf_slim "
        "exports other names); import the names it uses from tf_slim "
        "instead").format(syntax.dotted(node.module))))


def _star_imports(analysis: resolve.Analysis) -> List[cst.ImportFrom]:
  found = []
  for node in analysis.parents:
    if (isinstance(node, cst.ImportFrom) and not node.relative and
        node.module is not None and isinstance(node.names, cst.ImportStar)
        and syntax.normalize(syntax.dotted(node.module)) in EXACT):
      found.append(node)
  return found


def plan_rewrites(analysis: resolve.Analysis, plan) -> Plan:
  """Adds the `tf_slim` rewrites of one file to the rewrite plan.

  Args:
    analysis: The file's `resolve.Analysis`.
    plan: The `uses.Plan` the file's rewrite applies; this adds to its
      `replace`, `rename_aliases` and `move_aliases`.

  Returns:
    A `Plan`: what was decided, and what was left with the reason.
  """
  result = Plan()
  line = _foreign_binding(analysis)
  if line is not None:
    result.warning = (
        "this file binds the name `tf_slim` itself (line {}), so "
        "--contrib-to-slim rewrote nothing in it; rename that binding and "
        "run again".format(line))
    return result
  rebound: Set[cst.CSTNode] = set()
  for scope in set(analysis.scopes.values()):
    for assignment in scope.assignments:
      module = analysis.assignment_path(assignment)
      if module in EXACT and _rebind(analysis, plan, assignment, module,
                                     result):
        rebound.update(r.node for r in assignment.references)
  _from_imports(analysis, plan, result)
  finder = _Finder(analysis)
  analysis.module.visit(finder)
  for node, module, name in finder.found:
    if analysis.base_of(node) in rebound or node in plan.replace:
      continue
    if name in EXACT[module]:
      plan.replace[node] = MODULE + "." + name
      result.replaced.append(node)
      result.lines.add(analysis.line(node))
    else:
      result.left.append((analysis.line(node), _not_provided(module, name)))
  _dotted_imports(analysis, plan, result)
  result.left.sort()
  return result


def _dotted_imports(analysis: resolve.Analysis, plan, result: Plan) -> None:
  """`import tensorflow.contrib.layers` -> `import tensorflow`, once unused.

  libcst binds such an import as the dotted name, read by the
  `tensorflow.contrib.layers` attribute nodes; when each of those is the
  object of a rewritten use, only the root name is still needed.
  """
  for scope in set(analysis.scopes.values()):
    for assignment in scope.assignments:
      node = getattr(assignment, "node", None)
      if not (isinstance(assignment, metadata.ImportAssignment) and
              isinstance(node, cst.Import) and "." in assignment.name and
              syntax.normalize(assignment.name) in EXACT):
        continue
      names = [r.node for r in assignment.references]
      if not names or any(analysis.parents.get(n) not in plan.replace
                          for n in names):
        continue
      alias = next((a for a in node.names if a.asname is None and
                    syntax.dotted(a.name) == assignment.name), None)
      if alias is not None:
        plan.rename_aliases[alias] = assignment.name.split(".")[0]
        result.lines.add(analysis.line(node))


def moved_import(alias: cst.ImportAlias,
                 target: Tuple[str, Optional[str]]) -> cst.BaseSmallStatement:
  """The import that replaces `alias` of a `from ... import` statement.

  Args:
    alias: The alias, as written.
    target: `(module, name)`: bind `name` from `module`, or, with name
      None, the module itself, under the alias's name.
  """
  module, name = target
  bound = syntax.binding_name(alias)
  asname = None if bound == (name or module) else cst.AsName(
      name=cst.Name(bound))
  if name is None:
    return cst.Import(names=[cst.ImportAlias(
        name=syntax.dotted_node(module), asname=asname)])
  return cst.ImportFrom(module=syntax.dotted_node(module), names=[
      cst.ImportAlias(name=cst.Name(name), asname=asname)])


# The fix the report gives for `tf.contrib.layers`, `framework` or `slim`
# uses that are still in a file after `--contrib-to-slim`.
LEFT_FIX = ("--contrib-to-slim rewrote every use that tf_slim provides "
            "unchanged; these have no exact tf_slim equivalent (the file's "
            "block lists each, with why): migrate them by hand")
