# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Guards: why a rewrite may not do what a TF 2 user needs.

A rewrite under a TF-version check, in a `try/except ImportError`
fallback, or after an `err_if_tf2()`-style check may never run on TF 2, or
may switch which implementation runs; `guards` says so, with the line.
"""

import re
from typing import List, Optional, Tuple

import libcst as cst

from contrib_mp_upgrade import resolve
from contrib_mp_upgrade import syntax

# A test that decides by TensorFlow version (or by whether contrib exists).
_VERSION_TEST = re.compile(
    r"__version__|\bversion\b|LooseVersion|StrictVersion|parse_version|"
    r"(?<![A-Za-z0-9])(?:is_)?tf_?[12](?![0-9])|\bcontrib\b",
    re.IGNORECASE)
# A call that raises on TF 2, such as tensor2tensor's `err_if_tf2()`.
_TF2_GUARD_CALL = re.compile(
    r"(?:err|raise|fail|error|check|assert|require|guard)\w*tf_?2|"
    r"tf_?2\w*(?:err|raise|fail|error|check|guard)|require\w*tf_?1",
    re.IGNORECASE)
_IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError", "AttributeError",
                  "Exception", "BaseException")


def guards(analysis: resolve.Analysis,
           node: cst.CSTNode) -> List[Tuple[int, str]]:
  """Why a rewrite at `node` may not do what TF 2 users need, if it may not.

  Returns:
    `(line of the guard, message)` pairs, innermost first.
  """
  reasons = []
  child = node
  for parent in analysis.ancestors(node):
    dead = _dead_code(analysis, parent, child)
    if dead is not None:
      reasons.append(dead)
    if isinstance(parent, (cst.If, cst.IfExp)):
      test = syntax.code(parent.test)
      if _VERSION_TEST.search(test) and child is not parent.test:
        where = "branch of"
        if isinstance(parent, cst.If):
          where = ("`else` branch of" if child is parent.orelse
                   else "body of")
        reasons.append((analysis.line(parent), (
            "this is in the {} the TF-version check `{}` (line {}): on "
            "TensorFlow 2 the rewritten code may never run, or may switch "
            "which implementation runs. Check which branch TF 2 should "
            "take.").format(where, syntax.short(test),
                            analysis.line(parent))))
    elif isinstance(parent, cst.Try):
      handlers = [h for h in parent.handlers if _catches_import(h)]
      if handlers and child is parent.body:
        reasons.append((analysis.line(parent), (
            "this is in a `try` block (line {}) with an `except {}` "
            "fallback (line {}): on TensorFlow 2 the rewritten code now "
            "succeeds, so the fallback no longer runs. Check that this is "
            "the implementation TF 2 should use.").format(
                analysis.line(parent), _handler_type(handlers[0]),
                analysis.line(handlers[0]))))
    elif isinstance(parent, cst.ExceptHandler) and _catches_import(parent):
      reasons.append((analysis.line(parent), (
          "this is in the `except {}` fallback (line {}): it now runs only "
          "if the `try` block above fails. Check which of the two TF 2 "
          "should use.").format(_handler_type(parent),
                                analysis.line(parent))))
    elif isinstance(parent, cst.FunctionDef):
      guard = _tf2_guard_before(analysis, parent, node)
      if guard is not None:
        reasons.append(guard)
      break  # Guards of enclosing functions do not run at call time.
    child = parent
  return reasons



# What starts every warning about code that never ran on TF 1.15; the
# command also prints those on stderr.
NEVER_RAN = "this code never ran on TensorFlow 1.15"


def _always_false(test: cst.BaseExpression) -> bool:
  return syntax.code(test) in ("False", "0", "None", "not True", "not 1")


def _stops(statement: cst.CSTNode) -> Optional[str]:
  """The code of `raise ...` or `assert False` when `statement` is one."""
  if not isinstance(statement, cst.SimpleStatementLine):
    return None
  for small in statement.body:
    if isinstance(small, cst.Raise) or (
        isinstance(small, cst.Assert) and _always_false(small.test)):
      return syntax.code(small)
  return None


def _dead_code(analysis: resolve.Analysis, parent: cst.CSTNode,
               child: cst.CSTNode) -> Optional[Tuple[int, str]]:
  """Why `child` of `parent` can never run, if it cannot.

  Trees guard an unfinished fp16 path with `if False:`, or with `assert
  False` or `raise NotImplementedError` before it. The rewrite still
  applies, and the user learns that the path is untried.
  """
  if (isinstance(parent, cst.If) and child is parent.body and
      _always_false(parent.test)):
    return (analysis.line(parent), (
        "{}: it is in the `if {}:` branch at line {}. It was rewritten "
        "anyway; remove the guard if this path should now run, and test "
        "it.").format(NEVER_RAN, syntax.code(parent.test),
                      analysis.line(parent)))
  if isinstance(parent, (cst.IndentedBlock, cst.Module)):
    first = _first_stop(analysis, parent)
    if first is not None and first[0] is not child and (
        analysis.line(first[0]) < analysis.line(child)):
      statement, stop = first
      return (analysis.line(statement), (
          "{}: `{}` at line {} stops it first. It was rewritten "
          "anyway; remove that line if this path should now run, and "
          "test it.").format(NEVER_RAN, syntax.short(stop),
                             analysis.line(statement)))
  return None


def _first_stop(analysis: resolve.Analysis, block: cst.CSTNode) -> Optional[
    Tuple[cst.CSTNode, str]]:
  """The first statement of `block` that stops it, and its code, if any.

  Computed once per block: each use in a block of thousands of statements
  would otherwise read every statement before it.
  """
  key = ("first_stop", block)
  if key not in analysis.memo:
    analysis.memo[key] = None
    for statement in block.body:
      stop = _stops(statement)
      if stop is not None:
        analysis.memo[key] = (statement, stop)
        break
  return analysis.memo[key]


def _catches_import(handler: cst.ExceptHandler) -> bool:
  if handler.type is None:
    return True
  return any(name in syntax.code(handler.type) for name in _IMPORT_ERRORS)


def _handler_type(handler: cst.ExceptHandler) -> str:
  return "" if handler.type is None else syntax.code(handler.type)


def _tf2_guard_before(analysis, function, node) -> Optional[Tuple[int, str]]:
  """A TF2-raising check that runs in `function` before `node`, if any."""
  first = _first_guard(analysis, function)
  if first is None or analysis.line(first[0]) >= analysis.line(node):
    return None
  statement, what = first
  return (analysis.line(statement), (
      "this is in `{}()`, which runs `{}` at line {} first: on "
      "TensorFlow 2 that check stops the function before the rewritten "
      "code runs. Remove the check if this code should now run on "
      "TF 2.").format(function.name.value, syntax.short(what),
                      analysis.line(statement)))


def _first_guard(analysis: resolve.Analysis, function: cst.FunctionDef
                 ) -> Optional[Tuple[cst.CSTNode, str]]:
  """The first statement of `function` with a TF2 guard, and the guard.

  Computed once per function, as `_first_stop` is per block.
  """
  key = ("first_guard", function)
  if key not in analysis.memo:
    analysis.memo[key] = None
    body = function.body.body if isinstance(function.body,
                                            cst.IndentedBlock) else []
    for statement in body:
      found = _find_guard(statement)
      if found is not None:
        analysis.memo[key] = (statement, found)
        break
  return analysis.memo[key]


def _find_guard(statement: cst.CSTNode) -> Optional[str]:
  """The code of an `err_if_tf2()` call or `if is_tf2: raise` in it."""
  found = []

  class _Finder(cst.CSTVisitor):

    def visit_Call(self, node: cst.Call) -> Optional[bool]:
      name = syntax.dotted(node.func)
      if name and _TF2_GUARD_CALL.search(name.split(".")[-1]):
        found.append(syntax.code(node))
      return None

    def visit_If(self, node: cst.If) -> Optional[bool]:
      test = syntax.code(node.test)
      if _VERSION_TEST.search(test) and re.search(
          r"\braise\b", syntax.EMPTY_MODULE.code_for_node(node.body)):
        found.append("if {}: raise ...".format(test))
      return None

    def visit_FunctionDef(self, node) -> bool:
      return False

    def visit_ClassDef(self, node) -> bool:
      return False

  statement.visit(_Finder())
  return found[0] if found else None
