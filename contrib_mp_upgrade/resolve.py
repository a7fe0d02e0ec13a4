# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Name resolution: which TensorFlow path an expression is, scope by scope.

`Analysis` wraps libcst's scope, parent and position metadata and answers
"what does this name or attribute chain evaluate to" for imports,
assignments, `getattr` with a literal and dynamic imports of literals.
"""

from typing import Dict, Optional, Set, Tuple

import libcst as cst
from libcst import metadata

from contrib_mp_upgrade import syntax


class Analysis:
  """Resolves names and expressions to TensorFlow paths, scope by scope."""

  def __init__(self, wrapper: metadata.MetadataWrapper):
    self.module = wrapper.module
    # One batched pass over the tree computes all three.
    resolved = wrapper.resolve_many([metadata.ScopeProvider,
                                     metadata.ParentNodeProvider,
                                     metadata.PositionProvider])
    self.scopes = resolved[metadata.ScopeProvider]
    self.parents = resolved[metadata.ParentNodeProvider]
    self.positions = resolved[metadata.PositionProvider]
    self._paths: Dict[Tuple[cst.CSTNode, bool], Optional[str]] = {}
    self._active: Set[Tuple[cst.CSTNode, bool]] = set()
    # What a name means depends on its scope and its assignments there, not
    # on which use of it is asked about: `net = layer(net)` 4,000 times has
    # 4,000 uses of 4,000 assignments, which took 40 s to resolve use by
    # use. Only an answer that no self-reference cut short is kept here.
    self._names: Dict[Tuple[metadata.Scope, str, bool], Optional[str]] = {}
    self._cuts = 0  # Self-references cut short so far.
    # What other modules compute once per node and reuse, so that a file
    # of many uses costs time linear in its length (`guards`).
    self.memo: Dict[Tuple[str, cst.CSTNode], object] = {}

  def line(self, node: cst.CSTNode) -> int:
    return self.positions[node].start.line

  def assignment_path(self, assignment, raw: bool = False) -> Optional[str]:
    """The TF path an assignment binds (normalized unless `raw`), or None."""
    node = getattr(assignment, "node", None)  # Builtins have none.
    if isinstance(assignment, metadata.ImportAssignment):
      target = syntax.import_target(node, assignment.name)
      if target is None or not syntax.under(syntax.normalize(target),
                                            syntax.TF):
        return None
      return target if raw else syntax.normalize(target)
    if not isinstance(assignment, metadata.Assignment) or not isinstance(
        node, cst.Name):
      return None
    value = self.assigned_value(node)
    return None if value is None else self.path(value, raw)

  def assigned_value(self, target: cst.Name) -> Optional[cst.CSTNode]:
    """The value of `target = value` (one target), else None."""
    parent = self.parents.get(target)
    if isinstance(parent, cst.AssignTarget):
      statement = self.parents.get(parent)
      if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
        return statement.value
    elif isinstance(parent, cst.AnnAssign) and parent.target is target:
      return parent.value
    return None

  def path(self, node: cst.CSTNode, raw: bool = False) -> Optional[str]:
    """The TF dotted path `node` evaluates to, or None.

    Args:
      node: An expression.
      raw: Keep the path as written (`tensorflow.compat.v1.layers`) instead
        of normalizing it (`tensorflow.layers`).

    Returns:
      The path, or None when `node` is not (known to be) TensorFlow.
    """
    key = (node, raw)
    if key in self._paths:
      return self._paths[key]
    if key in self._active:
      self._cuts += 1
      return None  # `tf = tf.compat.v1` refers to itself.
    self._active.add(key)
    try:
      result = self._compute_path(node, raw)
    finally:
      self._active.discard(key)
    self._paths[key] = result
    return result

  def imported_path(self, node: cst.CSTNode) -> Optional[str]:
    """What a name or attribute chain is, when it comes only from imports.

    `importlib.import_module` after `import importlib`, `load` after `from
    importlib import import_module as load`, `builtins.__import__` for the
    unshadowed builtin; None for anything a statement other than an import
    could have bound.
    """
    if isinstance(node, cst.Attribute):
      base = self.imported_path(node.value)
      return None if base is None else base + "." + node.attr.value
    scope = self.scopes.get(node) if isinstance(node, cst.Name) else None
    if scope is None:
      return None
    targets = set()
    for assignment in scope[node.value]:
      if isinstance(assignment, metadata.BuiltinAssignment):
        targets.add("builtins." + assignment.name)
      elif isinstance(assignment, metadata.ImportAssignment):
        targets.add(syntax.import_target(assignment.node, assignment.name))
      else:
        return None
    return targets.pop() if len(targets) == 1 else None

  def dynamic_import(self, node: cst.CSTNode) -> Optional[
      Tuple[cst.BaseExpression, str, bool]]:
    """`(literal, module, returns module)` for a dynamic import of a literal.

    `importlib.import_module("a.b")` returns module `a.b`; `__import__("a.b")`
    returns `a` unless it is given a non-empty `fromlist`. None when `node`
    is not such a call, or its module name or result cannot be known.
    """
    if not isinstance(node, cst.Call):
      return None
    function = self.imported_path(node.func)
    if function not in ("importlib.import_module", "builtins.__import__"):
      return None
    known, name = syntax.call_argument(node, 0, "name")
    module = None if name is None else syntax.string_value(name.value)
    if not known or module is None or not all(
        part.isidentifier() for part in module.split(".")):
      return None
    if function == "importlib.import_module":
      # `package` matters only for relative names, which are not literals
      # of TF paths.
      return name.value, module, True
    known, level = syntax.call_argument(node, 4, "level")
    if not known or (level is not None and not (
        isinstance(level.value, cst.Integer) and level.value.value == "0")):
      return None
    known, fromlist = syntax.call_argument(node, 3, "fromlist")
    if not known:
      return None
    if fromlist is None:
      return name.value, module, False
    value = fromlist.value
    if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
      return name.value, module, bool(value.elements)
    if isinstance(value, cst.Name) and value.value == "None":
      return name.value, module, False
    return None  # A fromlist this command cannot see into.

  def _compute_path(self, node: cst.CSTNode, raw: bool) -> Optional[str]:
    norm = (lambda p: p) if raw else syntax.normalize
    dynamic = self.dynamic_import(node)
    if dynamic is not None:
      _, module, returns_module = dynamic
      result = module if returns_module else module.split(".")[0]
      if not syntax.under(syntax.normalize(result), syntax.TF):
        return None
      return norm(result)
    if isinstance(node, cst.Name):
      scope = self.scopes.get(node)
      if scope is None:
        return None
      key = (scope, node.value, raw)
      if key in self._names:
        return self._names[key]
      cuts = self._cuts
      result = self._name_path(scope[node.value], node.value, raw)
      if self._cuts == cuts:
        self._names[key] = result
      return result
    if isinstance(node, cst.Attribute):
      base = self.path(node.value, raw)
      return None if base is None else norm(base + "." + node.attr.value)
    literal = syntax.getattr_literal(node)
    if literal is not None:
      base = self.path(literal[0], raw)
      return None if base is None else norm(base + "." + literal[1])
    return None

  def _name_path(self, assignments, name: str, raw: bool) -> Optional[str]:
    if not assignments:
      # `tf` bound by no statement of the file (a star import, an injected
      # global): in `tf.contrib.mixed_precision` it can only be TF.
      return syntax.TF if name == "tf" else None
    paths = {self.assignment_path(a, raw) for a in assignments}
    paths.discard(None)
    # A fallback such as `except ImportError: contrib = None` is not a
    # second meaning of the name.
    return paths.pop() if len(paths) == 1 else None

  def base_of(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The object an attribute or a literal `getattr` is taken from."""
    if isinstance(node, cst.Attribute):
      return node.value
    literal = syntax.getattr_literal(node)
    return None if literal is None else literal[0]

  def ancestors(self, node: cst.CSTNode):
    node = self.parents.get(node)
    while node is not None:
      yield node
      node = self.parents.get(node)

