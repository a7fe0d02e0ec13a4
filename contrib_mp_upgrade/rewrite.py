# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Rewrites one Python source: `tf.contrib.mixed_precision` to this package.

The rewrite works on libcst's concrete syntax tree, so comments, line endings
and formatting survive wherever the code is not changed. Every name is
resolved in the scope where it is used (libcst's scope analysis), so an
import inside one function serves only that function, and an import this
rewrite needs is added where the code that uses it can see it.

Besides rewriting, `upgrade_source` records what the report needs: other
`tf.contrib` modules still in use, `tf.layers` uses (which need tf-keras on
TensorFlow 2.16 and later), and rewrites that sit under a TF-version check,
a `try/except ImportError` fallback or an `err_if_tf2`-style guard.

This module needs only the standard library and libcst.
"""

import ast
import builtins
import codecs
import dataclasses
import io
import re
import symtable
import tokenize
from typing import Dict, List, Optional, Sequence, Set, Tuple

try:
  import libcst as cst
  from libcst import metadata
except ImportError as e:
  raise ImportError(
      "The contrib-mp-upgrade command needs libcst, which could not be "
      "imported ({}). Install it with `pip install "
      "'contrib_mixed_precision[upgrade]'` (or `pip install libcst`).".format(
          e)) from e

from contrib_mp_upgrade import blockers
from contrib_mp_upgrade import guards
from contrib_mp_upgrade import resolve
from contrib_mp_upgrade import slim
from contrib_mp_upgrade import syntax
from contrib_mp_upgrade import tf2x_names
from contrib_mp_upgrade import uses

# The public names other modules and tests read from here.
PACKAGE = syntax.PACKAGE
STAR_EXPORTS = syntax.STAR_EXPORTS
normalize = syntax.normalize
map_module = syntax.map_module

# Lines that only Python 2 writes: the likely reason a file does not parse.
_PY2_HINT = re.compile(
    rb"^[ \t]*(?:print[ \t]+[^\s(=]|exec[ \t]+[\"']|except[ \t]+[\w.]+[ \t]*,)"
    rb"|\bur[\"']|^[ \t]*raise[ \t]+\w+[ \t]*,",
    re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class Change:
  """One rewritten piece of code: its input-file line, old and new text.

  `column` is where the rewritten code starts on `line`, counted in
  characters from 1 as linters print it (`--check`); 0 when not known.
  `tf2x` is the TF 2.0-2.8 name a change converts (`tf2x_names`), "" for
  `tf.contrib.mixed_precision`.
  """
  line: int
  old: str
  new: str
  column: int = 0
  tf2x: str = ""


@dataclasses.dataclass(frozen=True)
class Added:
  """An import line this command added: its line in the *output* file."""
  new_line: int
  text: str


@dataclasses.dataclass
class FileResult:
  """What upgrading one Python source did, and what it found.

  Attributes:
    new_source: The upgraded source, as bytes in the file's own encoding and
      line endings; the original bytes when nothing changed or the file
      could not be read as Python.
    changes: The `Change`s, in input-line order.
    added: The import lines added, with their output-file line numbers.
    warnings: `(line, message)` pairs about rewrites a person must check;
      line is an input-file line, 0 for the whole file.
    other_contrib: `{module: [input lines]}` for other `tf.contrib` modules
      (`layers`, `opt`, ...) the file still uses: imports and references.
    legacy_layers: Input lines that use `tf.layers` or
      `tf.compat.v1.layers`.
    bare_layers: The subset of `legacy_layers` that says `tf.layers`, which
      TensorFlow 2 does not have at all (only `tf.compat.v1.layers`).
    error: Why the file could not be converted (it does not decode or does
      not parse), or None.
    mentions_api: Whether the file's bytes mention contrib's
      `mixed_precision`; used to make `error` loud when it matters.
    slim_lines: With `--contrib-to-slim`, the input lines rewritten to
      `tf_slim`.
    slim_left: With `--contrib-to-slim`, `(line, why)` for each
      `tf.contrib.layers`/`framework`/`slim` use left unchanged.
    tf2x_notes: `(line, text)`: what a TF 2.0-2.8 name became, where that
      differs from TF 2.x.
    tf2x_lost: `(line, what, fix)`: TF 2.0-2.8 behaviour no spelling keeps.
    tf2x_stops: `(line, what, fix)`: TF 2.x Keras uses left unconverted
      that stop the file or change its numbers on Keras 3: the file is
      not counted as one that runs.
  """
  new_source: bytes
  changes: List[Change] = dataclasses.field(default_factory=list)
  added: List[Added] = dataclasses.field(default_factory=list)
  warnings: List[Tuple[int, str]] = dataclasses.field(default_factory=list)
  other_contrib: Dict[str, List[int]] = dataclasses.field(
      default_factory=dict)
  legacy_layers: List[int] = dataclasses.field(default_factory=list)
  bare_layers: List[int] = dataclasses.field(default_factory=list)
  error: Optional[str] = None
  mentions_api: bool = False
  slim_lines: List[int] = dataclasses.field(default_factory=list)
  slim_left: List[Tuple[int, str]] = dataclasses.field(default_factory=list)
  tf2x_notes: List[Tuple[int, str]] = dataclasses.field(default_factory=list)
  tf2x_lost: List[Tuple[int, str, str]] = dataclasses.field(
      default_factory=list)
  tf2x_stops: List[Tuple[int, str, str]] = dataclasses.field(
      default_factory=list)

  @property
  def changed(self) -> bool:
    return bool(self.changes or self.added)


def _moved(whitespace, delta: int):
  """`whitespace` that starts a new line, its last line `delta` longer."""
  if not isinstance(whitespace, cst.ParenthesizedWhitespace):
    return whitespace
  width = len(whitespace.last_line.value) + delta
  if width < 0 or whitespace.last_line.value.strip(" "):
    return whitespace  # Tabs, or too little room: leave it as it was.
  return whitespace.with_changes(last_line=cst.SimpleWhitespace(" " * width))


class _Rewriter(cst.CSTTransformer):
  """Applies a `uses.Plan`: expressions, import statements, removed bindings."""

  def __init__(self, analysis: resolve.Analysis, plan: uses.Plan):
    super().__init__()
    self.a = analysis
    self.plan = plan
    self.changes: List[Change] = []
    self.warnings: List[Tuple[int, str]] = []
    self.other: List[Tuple[str, int]] = []
    self.layers: List[int] = []
    self._one_line: Optional[Dict[int, List[Tuple[cst.CSTNode, int]]]] = None

  def _note(self, node: cst.CSTNode, line: int, old: str, new: str,
            at: Optional[cst.CSTNode] = None, tf2x: str = "") -> None:
    """Records a change; `at` (else `node`) is where its column is read."""
    start = self.a.positions[node if at is None else at].start
    self.changes.append(Change(line, old, new, column=start.column + 1,
                               tf2x=tf2x))
    self.warnings.extend((line, why) for _, why in guards.guards(self.a, node))

  # -- expressions -----------------------------------------------------------

  def _leave_expression(self, original_node, updated_node):
    name = self.plan.replace.get(original_node)
    if name is None:
      return updated_node
    return (cst.Name(name) if name.isidentifier() else
            syntax.dotted_node(name))

  def leave_Attribute(self, original_node, updated_node):
    return self._leave_expression(original_node, updated_node)

  def leave_Comparison(self, original_node, updated_node):
    # `policy.loss_scale is None` (tf2x_names): the whole test is rewritten.
    return self._leave_expression(original_node, updated_node)

  def _shift(self, func: cst.CSTNode) -> int:
    """How far the rewrite moves the end of `func` along its last line."""
    if self._one_line is None:
      # Replacements by line, built once: looking through all of them for
      # each call made a file of many uses quadratic.
      self._one_line = {}
      for node, name in self.plan.replace.items():
        where = self.a.positions[node]
        if where.start.line == where.end.line:
          self._one_line.setdefault(where.start.line, []).append(
              (node, len(name) - (where.end.column - where.start.column)))
    delta = 0
    for node, change in self._one_line.get(self.a.positions[func].end.line,
                                           ()):
      if node is func or any(p is func for p in self.a.ancestors(node)):
        delta += change
    return delta

  def _realign(self, original: cst.Call, updated: cst.Call) -> cst.Call:
    """Keeps arguments aligned with the `(` of a call whose name changed.

    `tf.contrib.mixed_precision.LossScaleOptimizer(opt,` followed by
    `manager` under `opt` would otherwise leave `manager` three columns to
    the right of where a formatter puts it.
    """
    if not original.args or not self.plan.replace:
      return updated
    delta = self._shift(original.func)
    if not delta:
      return updated
    func_end = self.a.positions[original.func].end
    paren = func_end.column + len(
        syntax.code_raw(original.whitespace_after_func))
    args = list(updated.args)
    before_args = updated.whitespace_before_args
    for i, arg in enumerate(original.args):
      start = self.a.positions[arg].start
      if start.line == func_end.line or start.column != paren + 1:
        continue
      if i == 0:
        before_args = _moved(before_args, delta)
      elif isinstance(args[i - 1].comma, cst.Comma):
        comma = args[i - 1].comma
        args[i - 1] = args[i - 1].with_changes(comma=comma.with_changes(
            whitespace_after=_moved(comma.whitespace_after, delta)))
    return updated.with_changes(args=args, whitespace_before_args=before_args)

  def leave_Call(self, original_node, updated_node):
    updated_node = self._realign(original_node, updated_node)
    if original_node in self.plan.calls:
      # A TF 2.0-2.8 call rewritten as a whole (`tf2x_names`).
      rewrite, name = self.plan.calls[original_node]
      result = rewrite(self._leave_expression(original_node, updated_node))
      self._note(original_node, self.a.line(original_node),
                 syntax.code(original_node), syntax.code(result), tf2x=name)
      return result
    if original_node not in self.plan.literals:
      return self._leave_expression(original_node, updated_node)
    literal, module = self.plan.literals[original_node]
    args = list(updated_node.args)
    for i, arg in enumerate(original_node.args):
      if arg.value is literal:
        args[i] = args[i].with_changes(
            value=syntax.new_literal(literal, module))
    result = updated_node.with_changes(args=args)
    self._note(original_node, self.a.line(original_node),
               syntax.code(original_node), syntax.code(result))
    return result

  def visit_Import(self, node: cst.Import) -> bool:
    return False

  def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
    return False

  # -- import statements -----------------------------------------------------

  def _rewrite_import(self, node: cst.Import) -> List[cst.BaseSmallStatement]:
    line = self.a.line(node)
    names = []
    for alias in node.names:
      full = syntax.dotted(alias.name)
      if alias in self.plan.remove_aliases:
        continue
      if alias in self.plan.rename_aliases:
        names.append(alias.with_changes(
            name=syntax.dotted_node(self.plan.rename_aliases[alias])))
        continue
      new = syntax.map_module(full)
      if new is None:
        other = syntax.other_contrib(syntax.normalize(full))
        if other is not None:
          self.other.append((other, line))
        elif syntax.under(syntax.normalize(full), syntax.LAYERS):
          self.layers.append(line)
        names.append(alias)
        continue
      changes = {"name": syntax.dotted_node(new)}
      if alias.asname is not None and syntax.binding_name(alias) == new:
        changes["asname"] = None  # `import pkg as pkg` says it twice.
      names.append(alias.with_changes(**changes))
    if not names:
      return []
    # `import` takes no parentheses: the last name keeps no comma.
    names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return [node.with_changes(names=names)]

  def _star(self, node: cst.ImportFrom, module: str, new_module: str):
    names = syntax.STAR_EXPORTS.get(syntax.normalize(module))
    if names is None:
      # A module below TF 1.15's modules: keep the star, on our module.
      return [node.with_changes(module=syntax.dotted_node(new_module))]
    text = "from {} import {}".format(new_module, ", ".join(names))
    if len(text) > 79:
      text = "from {} import (\n    {})".format(
          new_module, ",\n    ".join(names))
    statement = cst.parse_statement(text + "\n")
    return [statement.body[0]]

  def _rewrite_import_from(self, node: cst.ImportFrom):
    if node.relative or node.module is None:
      return [node]
    line = self.a.line(node)
    module = syntax.dotted(node.module)
    new_module = syntax.map_module(module)
    if isinstance(node.names, cst.ImportStar):
      if new_module is not None:
        return self._star(node, module, new_module)
      other = syntax.other_contrib(syntax.normalize(module))
      if other is not None:
        self.other.append((other, line))
      elif syntax.under(syntax.normalize(module), syntax.LAYERS):
        self.layers.append(line)
      return [node]
    kept, extra = [], []
    for alias in node.names:
      if alias in self.plan.remove_aliases:
        continue
      if alias in self.plan.move_aliases:
        extra.append(slim.moved_import(alias, self.plan.move_aliases[alias]))
        continue
      name = syntax.dotted(alias.name)
      full = module + "." + name
      new_full = syntax.map_module(full)
      if new_full is None:
        other = syntax.other_contrib(syntax.normalize(full))
        if other is not None:
          self.other.append((other, line))
        elif syntax.under(syntax.normalize(full), syntax.LAYERS):
          self.layers.append(line)
        kept.append(alias)
      elif new_module is not None and new_full == new_module + "." + name:
        kept.append(alias)
      else:
        # A module that moved: `from tensorflow.contrib import
        # mixed_precision` or `from ...mixed_precision import python`.
        bound = syntax.binding_name(alias)
        asname = (None if bound == new_full else
                  cst.AsName(name=cst.Name(bound)))
        extra.append(cst.Import(names=[cst.ImportAlias(
            name=syntax.dotted_node(new_full), asname=asname)]))
    statements = []
    if kept:
      if len(kept) < len(node.names) and not node.lpar:
        # Without parentheses the last name must not keep a trailing comma.
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
      changes = {"names": kept}
      if new_module is not None:
        changes["module"] = syntax.dotted_node(new_module)
      statements.append(
          node.with_changes(**changes)
          if (len(kept) < len(node.names) or new_module is not None)
          else node)
    return statements + extra

  def leave_SimpleStatementLine(self, original_node, updated_node):
    body = []
    changed = False
    first = None  # The first statement of the line that changes.
    tf2x = ""
    pairs = zip(original_node.body, updated_node.body)
    if original_node in self.plan.statements:
      # Imports of TF 2.0-2.8 paths (`tf2x_names`), decided whole.
      body = list(self.plan.statements[original_node])
      changed, first, tf2x, pairs = True, original_node.body[0], "import", ()
    for original, updated in pairs:
      if original in self.plan.remove_statements:
        changed = True
        first = original if first is None else first
        continue
      if isinstance(original, cst.Import):
        new = self._rewrite_import(original)
      elif isinstance(original, cst.ImportFrom):
        new = self._rewrite_import_from(original)
      else:
        body.append(updated)
        continue
      if len(new) != 1 or not new[0].deep_equals(original):
        changed = True
        first = original if first is None else first
      body.extend(new)
    if not changed:
      return updated_node
    line = self.a.line(original_node)
    old = syntax.statement_code(original_node)
    if not body:
      self._note(original_node, line, old, "(removed)", at=first, tf2x=tf2x)
      return cst.RemoveFromParent()
    if len(body) == 1 or not all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in body):
      result = updated_node.with_changes(body=body)
      self._note(original_node, line, old, syntax.statement_code(result),
                 at=first, tf2x=tf2x)
      return result
    # Split imports into one line each; the first keeps the line's comments.
    lines = [updated_node.with_changes(body=[body[0]])]
    lines += [cst.SimpleStatementLine(body=[s]) for s in body[1:]]
    self._note(original_node, line, old,
               "; ".join(syntax.statement_code(s) for s in lines), at=first,
               tf2x=tf2x)
    return cst.FlattenSentinel(lines)


def _unbound_names(wrapper: metadata.MetadataWrapper) -> Set[str]:
  """Names read somewhere in the module that no visible statement binds."""
  unbound = set()
  for scope in set(wrapper.resolve(metadata.ScopeProvider).values()):
    for access in scope.accesses:
      if not access.referents and isinstance(access.node, cst.Name):
        unbound.add(access.node.value)
  return unbound


def _symtable_unbound(code: str) -> Optional[Set[str]]:
  """`_unbound_names` by Python's own symbol table; None if it cannot.

  The compiler's symbol table costs a few milliseconds where libcst's scope
  analysis of the rewritten module cost a third of a file's conversion; it
  answers None for code this Python does not compile (a newer grammar).
  """
  try:
    table = symtable.symtable(code, "<source>", "exec")
  except (SyntaxError, ValueError, RecursionError, MemoryError):
    return None
  bound = set(dir(builtins))
  tables, reads = [table], []
  while tables:
    scope = tables.pop()
    tables.extend(scope.get_children())
    for symbol in scope.get_symbols():
      module_level = scope.get_type() == "module" or (
          symbol.is_declared_global())
      if module_level and (symbol.is_assigned() or symbol.is_imported()):
        bound.add(symbol.get_name())
      if symbol.is_referenced() and (
          symbol.is_global() or scope.get_type() == "module") and not (
              scope.get_type() != "module" and symbol.is_local()):
        reads.append(symbol.get_name())
  return {name for name in reads if name not in bound}


def _missing_names(source: bytes, tree: cst.Module, new_tree: cst.Module,
                   wrapper: metadata.MetadataWrapper) -> Set[str]:
  """Names the rewritten module reads and no statement of it binds."""
  new = old = None
  try:
    old_code = source.decode(tree.encoding)
  except (UnicodeDecodeError, LookupError):
    old_code = None
  if old_code is not None:
    old = _symtable_unbound(old_code)
    if old is not None:
      new = _symtable_unbound(new_tree.code)
  if new is None or old is None:
    new = _unbound_names(metadata.MetadataWrapper(new_tree,
                                                  unsafe_skip_copy=True))
    old = _unbound_names(wrapper)
  return new - old


def _all_names(analysis: resolve.Analysis) -> Set[str]:
  names = set()
  for scope in set(analysis.scopes.values()):
    names.update(a.name for a in scope.assignments)
    names.update(a.node.value for a in scope.accesses
                 if isinstance(a.node, cst.Name))
  return names


def _insert_imports(module: cst.Module, lines: Sequence[str]) -> cst.Module:
  """Adds import `lines` after the first top-level TF import.

  Without a top-level TF import they go after the docstring and any
  `from __future__` imports.
  """
  new_lines = [cst.parse_statement(l + "\n") for l in lines]
  body = list(module.body)
  position = None
  for i, statement in enumerate(body):
    if not isinstance(statement, cst.SimpleStatementLine):
      continue
    for small in statement.body:
      modules = []
      if isinstance(small, cst.Import):
        modules = [syntax.dotted(a.name) for a in small.names]
      elif isinstance(small, cst.ImportFrom) and small.module is not None:
        modules = [syntax.dotted(small.module)]
      if any(m.split(".")[0] in (syntax.TF, "tensorflow_core", syntax.PACKAGE)
             for m in modules):
        position = i + 1
        break
    if position is not None:
      break
  if position is None:
    position = 0
    for i, statement in enumerate(body):
      if not isinstance(statement, cst.SimpleStatementLine):
        break
      small = statement.body[0]
      is_docstring = (i == 0 and isinstance(small, cst.Expr) and
                      isinstance(small.value, (cst.SimpleString,
                                               cst.ConcatenatedString)))
      is_future = (isinstance(small, cst.ImportFrom) and
                   small.module is not None and
                   syntax.dotted(small.module) == "__future__")
      if not (is_docstring or is_future):
        break
      position = i + 1
  body[position:position] = new_lines
  return module.with_changes(body=body)


def decode_error(source: bytes) -> Optional[str]:
  """Why `source` does not decode as Python source text, or None."""
  try:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
  except SyntaxError as e:
    if not str(e).startswith("invalid or missing encoding declaration"):
      return "a bad coding declaration ({})".format(e)
    # No declaration: line 1 or 2 is just not UTF-8; say where.
    encoding = "utf-8"
  try:
    text = source.decode(encoding)
  except UnicodeDecodeError as e:
    codec = codecs.lookup(encoding).name
    name = "UTF-8" if codec in ("utf-8", "utf-8-sig") else encoding
    return "invalid {} at line {} (byte 0x{:02x})".format(
        name, source.count(b"\n", 0, e.start) + 1, source[e.start])
  except (LookupError, UnicodeError) as e:
    # A codec that is not a text encoding (`# coding: rot13`, `undefined`):
    # Python refuses the file too.
    return "a coding declaration Python cannot read ({})".format(e)
  if "\0" in text:
    # Python refuses the file; libcst parses one in a string or comment.
    return _nul_byte(source)
  return None


def _nul_byte(source: bytes) -> str:
  return ("it contains a NUL byte (at line {}), which Python source cannot "
          "hold; it may be a binary or truncated file: remove the byte or "
          "the file".format(source.count(b"\n", 0, source.find(b"\0")) + 1))


_INDENT = re.compile(rb"^[ \t]*(?=\S)", re.MULTILINE)


def _parse_error(source: bytes, error: Exception) -> str:
  if b"\0" in source:
    # Python refuses any NUL byte in source text, wherever it is; its parser
    # names no line for it (or line 1), which points nowhere near it.
    return _nul_byte(source)
  line = getattr(error, "raw_line", None)
  try:
    # Python's own parser names the line a person would look at; libcst's
    # may name the next token's.
    ast.parse(source)
  except SyntaxError as e:
    line = e.lineno or line
  except ValueError:
    pass
  else:
    # Valid Python that libcst rejects: in practice, indentation that mixes
    # tabs and spaces in ways CPython resolves (a tab to the next multiple
    # of 8) and libcst's tokenizer does not.
    why = "Python parses it, but libcst, which this command uses, cannot ({})"
    why = why.format(str(getattr(error, "message", "") or "").replace(
        "tokenizer error: ", ""))
    indents = [m for m in _INDENT.finditer(source) if m.group()]
    tabbed = [m for m in indents if b"\t" in m.group()]
    if tabbed and any(b" " in m.group() for m in indents):
      tab_line = source.count(b"\n", 0, tabbed[0].start()) + 1
      return ("{}: its indentation mixes tabs and spaces (the first tab is "
              "at line {}). Re-indent it with spaces only and run "
              "again".format(why, tab_line))
    return why + "; convert it by hand"
  where = " at line {}".format(line) if line else ""
  hint = ""
  if _PY2_HINT.search(source):
    hint = "; it looks like Python 2: port it to Python 3"
  return "it does not parse as Python 3 (syntax error{}{})".format(where,
                                                                   hint)


def needs_libcst(source: bytes, contrib_to_slim: bool = False) -> bool:
  """Whether `upgrade_source` may rewrite `source` (else it only reads it)."""
  return (b"mixed_precision" in source or tf2x_names.may_apply(source) or
          (contrib_to_slim and slim.may_apply(source)))


_TOO_DEEP = "it nests too deeply for this command to analyse"


def upgrade_source(source: bytes, contrib_to_slim: bool = False,
                   advance_iterations: bool = False) -> FileResult:
  """Upgrades one Python source.

  Args:
    source: The file's bytes. The encoding is detected as Python does (a
      coding cookie, else UTF-8) and kept, as are the line endings.
    contrib_to_slim: Also rewrite the `tf.contrib.layers`, `framework` and
      `slim` names that `tf_slim` provides unchanged (see `slim`).
    advance_iterations: The tree pins TF 2.3+ (`pins`): passed to
      `tf2x_names.plan`.

  Returns:
    A `FileResult`. When the source cannot be decoded or parsed, or does
    not use the API, `new_source` is `source` itself.
  """
  mentions = b"mixed_precision" in source and b"contrib" in source
  error = decode_error(source)
  if error is None and not needs_libcst(source, contrib_to_slim):
    # Nothing here can be a target, so libcst (slow) is not needed: the
    # standard library's parser reads what the report lists.
    return _scan_only(source)
  if error is None:
    try:
      # libcst's native parser crashes the process (SIGSEGV) on brackets
      # nested past Python's own limit; Python's parser names the error.
      compile(source, "<source>", "exec", ast.PyCF_ONLY_AST)
    except SyntaxError as e:
      # Any other syntax error is libcst's to judge: it reads grammar newer
      # than the Python running this command (`match` on 3.9, PEP 701
      # f-strings on 3.11).
      if "nested" in str(e.msg):
        error = _parse_error(source, e)
    except ValueError as e:
      error = _parse_error(source, e)
    except (RecursionError, MemoryError):
      error = _TOO_DEEP
  if error is None:
    try:
      tree = cst.parse_module(source)
    except cst.ParserSyntaxError as e:
      error = _parse_error(source, e)
  if error is not None:
    return FileResult(new_source=source, error=error, mentions_api=mentions)
  if (b"contrib" not in source and b"layers" not in source and
      not tf2x_names.may_apply(source)):
    return FileResult(new_source=source)  # Nothing this command reports.
  try:
    return _upgrade_tree(source, tree, mentions, contrib_to_slim,
                         advance_iterations)
  except RecursionError:
    # libcst recurses per nesting level; generated code can go deeper
    # than the interpreter allows.
    return FileResult(new_source=source, mentions_api=mentions,
                      error=_TOO_DEEP)


def _scan_only(source: bytes) -> FileResult:
  """`upgrade_source` for a source that cannot use the API."""
  if b"contrib" not in source and b"layers" not in source:
    try:
      compile(source, "<source>", "exec", ast.PyCF_ONLY_AST)
    except SyntaxError as e:
      return _newer_grammar(source, e, analyse=False)
    except ValueError as e:
      return FileResult(new_source=source, error=_parse_error(source, e))
    except (RecursionError, MemoryError):
      pass  # Too deep for a parser, but there is nothing to convert.
    return FileResult(new_source=source)  # Nothing this command reports.
  try:
    tree = ast.parse(source)
  except SyntaxError as e:
    return _newer_grammar(source, e, analyse=True)
  except ValueError as e:
    return FileResult(new_source=source, error=_parse_error(source, e))
  except (RecursionError, MemoryError):
    return FileResult(new_source=source)
  found = blockers.uses(tree)
  return FileResult(new_source=source, other_contrib=found.other_contrib,
                    legacy_layers=found.legacy_layers,
                    bare_layers=found.bare_layers)


def _newer_grammar(source: bytes, error: SyntaxError,
                   analyse: bool) -> FileResult:
  """A file this Python's parser rejects, read by libcst if it can.

  libcst reads grammar newer than the Python running this command (`match`
  on 3.9, PEP 701 f-strings on 3.11), so such a file is valid Python, not a
  file that "does not parse". Brackets nested past Python's limit are not
  given to it: its native parser crashes on them.

  Args:
    source: The file's bytes.
    error: What Python's parser said.
    analyse: Also list what the report needs (other contrib modules,
      `tf.layers`), as `_scan_only` does with Python's parser.
  """
  if "nested" not in str(error.msg):
    try:
      tree = cst.parse_module(source)
    except (cst.ParserSyntaxError, RecursionError):
      pass
    else:
      if not analyse:
        return FileResult(new_source=source)
      try:
        return _upgrade_tree(source, tree, False, False)
      except RecursionError:
        return FileResult(new_source=source, error=_TOO_DEEP)
  return FileResult(new_source=source, error=_parse_error(source, error))


def _upgrade_tree(source: bytes, tree: cst.Module, mentions: bool,
                  contrib_to_slim: bool,
                  advance_iterations: bool = False) -> FileResult:
  """`upgrade_source` for a parsed module."""
  wrapper = metadata.MetadataWrapper(tree, unsafe_skip_copy=True)
  analysis = resolve.Analysis(wrapper)
  collector = uses.Collector(analysis)
  analysis.module.visit(collector)
  plan = uses.Plan()
  uses.contrib_objects(analysis, plan)
  to_slim = slim.Plan()
  if contrib_to_slim:
    to_slim = slim.plan_rewrites(analysis, plan)
  targets = uses.outermost(collector.replace, analysis)
  alias_name = None
  for node in targets:
    name = syntax.PACKAGE
    if not _package_name_is_free(analysis, node):
      if alias_name is None:
        alias_name = _fresh_name(analysis, syntax.PACKAGE + "_lib")
      name = alias_name
    plan.replace[node] = name
  # TF 2.0-2.8's names, with this package's name chosen as for contrib's.

  def package_name(node):
    nonlocal alias_name
    if _package_name_is_free(analysis, node):
      return syntax.PACKAGE
    if alias_name is None:
      alias_name = _fresh_name(analysis, syntax.PACKAGE + "_lib")
    return alias_name

  tf2x = tf2x_names.plan(analysis, plan, package_name, advance_iterations)
  # A dynamic import inside a replaced expression goes with it.
  replaced = set(targets)
  plan.literals = {call: change
                   for call, change in collector.literals.items()
                   if not uses.inside(call, replaced, analysis)}
  rewriter = _Rewriter(analysis, plan)
  new_tree = analysis.module.visit(rewriter)
  for node in targets:
    old_node, new = node, plan.replace[node]
    parent = analysis.parents.get(node)
    if isinstance(parent, cst.Attribute) and parent.value is node:
      # Name the symbol in the report: `tf.contrib.mixed_precision.X`.
      old_node, new = parent, new + "." + parent.attr.value
    rewriter._note(  # pylint: disable=protected-access
        node, analysis.line(node), syntax.code(old_node), new)
  for node in to_slim.replaced:
    rewriter._note(  # pylint: disable=protected-access
        node, analysis.line(node), syntax.code(node), plan.replace[node])
  for node, name in tf2x.noted.items():
    call = analysis.parents.get(node)
    if call not in plan.calls or call.func is not node:
      # A call rewritten as a whole is noted whole (`leave_Call`).
      rewriter._note(  # pylint: disable=protected-access
          node, analysis.line(node), syntax.code(node), plan.replace[node],
          tf2x=name)
  result = FileResult(new_source=source, mentions_api=mentions,
                      slim_lines=sorted(to_slim.lines),
                      slim_left=to_slim.left)
  if to_slim.warning is not None:
    rewriter.warnings.append((0, to_slim.warning))
  other = [use for use, node in zip(collector.other, collector.other_nodes)
           if not to_slim.handles(node, analysis)] + rewriter.other
  for module, line in sorted(other, key=lambda x: (x[0], x[1])):
    result.other_contrib.setdefault(module, []).append(line)
  result.legacy_layers = sorted(set(collector.layers + rewriter.layers))
  result.bare_layers = sorted({analysis.line(n)
                               for n in collector.bare_layers})
  result.tf2x_notes = sorted(set(tf2x.notes))
  result.tf2x_lost = sorted(set(tf2x.lost))
  result.tf2x_stops = sorted(set(tf2x.stops))
  warnings = (set(plan.warnings) | set(rewriter.warnings) |
              set(collector.unresolved) | set(tf2x.warnings))
  result.warnings = sorted(warnings)
  if not rewriter.changes:
    return result
  # Add the imports that the rewritten code reads and no scope provides.
  missing = _missing_names(source, tree, new_tree, wrapper)
  lines = []
  for name in sorted(missing):
    if name == syntax.PACKAGE:
      lines.append("import " + syntax.PACKAGE)
    elif name == alias_name:
      lines.append("import {} as {}".format(syntax.PACKAGE, name))
    else:
      # A root name that `import tensorflow.contrib.mixed_precision` bound.
      lines.append("import " + name)
  if lines:
    new_tree = _insert_imports(new_tree, lines)
    new_lines = [l.strip() for l in new_tree.code.splitlines()]
    for text in lines:
      result.added.append(Added(new_lines.index(text) + 1, text))
  result.new_source = new_tree.bytes
  result.changes = sorted(rewriter.changes, key=lambda c: c.line)
  return result


def _package_name_is_free(analysis: resolve.Analysis,
                          node: cst.CSTNode) -> bool:
  """Whether `contrib_mixed_precision` at `node` will mean this package.

  True when nothing binds the name where `node` is, or every binding is an
  import of this package (or of the API, which becomes one) that runs
  before `node` or at module level. A local binding that comes later would
  make the rewritten read an UnboundLocalError.
  """
  scope = analysis.scopes.get(node)
  if scope is None:
    return False
  line = analysis.line(node)
  for assignment in scope[syntax.PACKAGE]:
    if not isinstance(assignment, metadata.ImportAssignment):
      return False
    target = syntax.import_target(assignment.node, syntax.PACKAGE)
    if target is None or (target != syntax.PACKAGE and
                          syntax.map_module(target) !=
                          syntax.PACKAGE):
      return False
    if (not isinstance(assignment.scope, metadata.GlobalScope) and
        analysis.line(assignment.node) >= line):
      return False
  return True


def _fresh_name(analysis: resolve.Analysis, base: str) -> str:
  taken = _all_names(analysis)
  name, i = base, 1
  while name in taken:
    i += 1
    name = "{}{}".format(base, i)
  return name
