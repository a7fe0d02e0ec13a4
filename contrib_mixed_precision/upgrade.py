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
"""Rewrites `tf.contrib.mixed_precision` uses in legacy source trees.

`tf_upgrade_v2` marks every `tf.contrib.mixed_precision` use as "cannot be
converted". This module converts them to this package, and is the code behind
the `contrib-mp-upgrade` command (also `python -m
contrib_mixed_precision.upgrade`). It takes the flags `tf_upgrade_v2` users
know:

```
contrib-mp-upgrade --intree old/ --outtree new/ --reportfile report.txt
contrib-mp-upgrade --infile train.py --outfile train_tf2.py
contrib-mp-upgrade --intree src/ --inplace
contrib-mp-upgrade --intree src/ --dry_run      # prints a diff, writes nothing
```

It rewrites every way TF 1.15 code reached the API:

* `tf.contrib.mixed_precision.X`, whatever name `tensorflow` (or
  `tensorflow.compat.v1`) was imported as, and
  `tf.compat.v1.contrib.mixed_precision.X`, to `contrib_mixed_precision.X`,
  adding `import contrib_mixed_precision` once;
* `from tensorflow.contrib.mixed_precision import X, Y` to
  `from contrib_mixed_precision import X, Y`;
* `from tensorflow.contrib import mixed_precision [as m]` to
  `import contrib_mixed_precision as m` (`as mixed_precision` without `as`);
* `import tensorflow.contrib.mixed_precision as m` to
  `import contrib_mixed_precision as m`;
* the module paths `tensorflow.contrib.mixed_precision.python.
  loss_scale_manager` and `.loss_scale_optimizer`, in `import` and `from`
  forms, to `contrib_mixed_precision.loss_scale_manager` and
  `.loss_scale_optimizer`.

Files that do not use the API are copied byte for byte. Comments and
formatting are kept everywhere the code is not changed (the rewriting works
on a concrete syntax tree, with libcst). Other `tf.contrib` modules are left
alone and reported; a file that does not parse (Python 2 is common in this
code) is copied unchanged and reported. Running the command again over its
own output changes nothing.

This module does not import TensorFlow.
"""

import argparse
import dataclasses
import difflib
import os
import shutil
import sys
from typing import Dict, List, Optional, Sequence, Tuple

try:
  import libcst as cst
  from libcst import metadata
except ImportError as e:
  raise ImportError(
      "The contrib-mp-upgrade command needs libcst, which could not be "
      "imported ({}). Install it with `pip install "
      "'contrib_mixed_precision[upgrade]'` (or `pip install libcst`).".format(
          e)) from e

_PROG = "contrib-mp-upgrade"
_PACKAGE = "contrib_mixed_precision"
_TF = "tensorflow"
_CONTRIB = "tensorflow.contrib"
_MP = "tensorflow.contrib.mixed_precision"

# TF 1.15 module paths, most specific first, and where they live here. The
# TF 1.15 `python` package held the two modules this package has at its top.
_MODULE_MAP = (
    (_MP + ".python.loss_scale_manager", _PACKAGE + ".loss_scale_manager"),
    (_MP + ".python.loss_scale_optimizer", _PACKAGE + ".loss_scale_optimizer"),
    (_MP + ".python", _PACKAGE),
    (_MP, _PACKAGE),
)

_OTHER_CONTRIB_HINT = (
    "`tf.contrib` does not exist in TensorFlow 2 and this tool converts only "
    "`tf.contrib.mixed_precision`; migrate this use separately (see "
    "`tf_upgrade_v2` and the TensorFlow 2 migration guide).")


@dataclasses.dataclass(frozen=True)
class Change:
  """One rewritten piece of code: where, and its text before and after."""
  line: int
  old: str
  new: str


@dataclasses.dataclass
class FileResult:
  """What upgrading one Python source did.

  Attributes:
    new_source: The upgraded source, as bytes in the file's own encoding; the
      original bytes when nothing changed or the file did not parse.
    changes: The `Change`s, in line order.
    warnings: `(line, message)` pairs; line is 0 for the whole file.
    error: Why the file could not be parsed, or None.
  """
  new_source: bytes
  changes: List[Change] = dataclasses.field(default_factory=list)
  warnings: List[Tuple[int, str]] = dataclasses.field(default_factory=list)
  error: Optional[str] = None

  @property
  def changed(self) -> bool:
    return bool(self.changes)


def _normalize(path: str) -> str:
  """Maps `tensorflow.compat.v1.x` (and `.v2`, repeated) to `tensorflow.x`."""
  while True:
    for compat in ("tensorflow.compat.v1", "tensorflow.compat.v2"):
      if path == compat:
        return _TF
      if path.startswith(compat + "."):
        path = _TF + path[len(compat):]
        break
    else:
      return path


def _map_module(path: str) -> Optional[str]:
  """This package's dotted path for TF 1.15 dotted `path`, or None."""
  path = _normalize(path)
  for old, new in _MODULE_MAP:
    if path == old or path.startswith(old + "."):
      return new + path[len(old):]
  return None


def _other_contrib(path: str) -> Optional[str]:
  """`tensorflow.contrib.<name>` for another contrib module, else None."""
  parts = _normalize(path).split(".")
  if parts[:2] == ["tensorflow", "contrib"] and len(parts) >= 3:
    if parts[2] != "mixed_precision":
      return ".".join(parts[:3])
  return None


def _dotted(node: cst.CSTNode) -> Optional[str]:
  """`a.b.c` for a chain of `Name`/`Attribute` nodes, else None."""
  if isinstance(node, cst.Name):
    return node.value
  if isinstance(node, cst.Attribute):
    base = _dotted(node.value)
    if base is not None:
      return base + "." + node.attr.value
  return None


def _dotted_node(path: str):
  """A `Name` or `Attribute` node for dotted `path`."""
  return cst.parse_expression(path)


def _code(node: cst.CSTNode) -> str:
  """The source of `node`, on one line for the report."""
  return " ".join(cst.Module(body=[]).code_for_node(node).split())


def _binding_name(alias: cst.ImportAlias) -> str:
  """The name an `import` or `from` alias binds in its scope."""
  if alias.asname is not None:
    return alias.asname.name.value
  return _dotted(alias.name).split(".")[0]


class _Bindings(cst.CSTVisitor):
  """Collects the names that imports bind to TensorFlow modules.

  Scope-blind on purpose: legacy code imports TensorFlow inside functions and
  `try` blocks as often as at the top, and a name like `tf` means TensorFlow
  wherever it is bound.
  """

  def __init__(self):
    super().__init__()
    self.tf_names: Dict[str, str] = {}
    self.all_names = set()

  def visit_Import(self, node: cst.Import) -> bool:
    for alias in node.names:
      full = _dotted(alias.name)
      name = _binding_name(alias)
      self.all_names.add(name)
      target = full if alias.asname is not None else full.split(".")[0]
      if _normalize(target).split(".")[0] == _TF:
        self.tf_names[name] = _normalize(target)
    return False

  def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
    if node.relative or node.module is None:
      return False
    module = _dotted(node.module)
    if isinstance(node.names, cst.ImportStar):
      return False
    for alias in node.names:
      name = _binding_name(alias)
      self.all_names.add(name)
      full = _normalize(module + "." + _dotted(alias.name))
      if full.split(".")[0] == _TF:
        self.tf_names[name] = full
    return False


class _UsedNames(cst.CSTVisitor):
  """Collects names read outside import statements."""

  def __init__(self):
    super().__init__()
    self.used = set()

  def visit_Import(self, node: cst.Import) -> bool:
    return False

  def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
    return False

  def visit_Name(self, node: cst.Name) -> None:
    self.used.add(node.value)

  def visit_Attribute(self, node: cst.Attribute) -> bool:
    # The `attr` of `a.b` is not a use of the name `b`.
    node.value.visit(self)
    return False


class _Rewriter(cst.CSTTransformer):
  """Rewrites imports and attribute chains that reach the contrib API."""

  METADATA_DEPENDENCIES = (metadata.PositionProvider,)

  def __init__(self, bindings: _Bindings):
    super().__init__()
    self._bindings = bindings
    self.changes: List[Change] = []
    self.warnings: List[Tuple[int, str]] = []
    # id() of each replacement node made in `leave_Attribute` -> the index of
    # its `Change`, so that the change can be widened to the parent node.
    self._made: Dict[int, int] = {}

  def _line(self, node: cst.CSTNode) -> int:
    return self.get_metadata(metadata.PositionProvider, node).start.line

  def _warn_other(self, node: cst.CSTNode, module: str) -> None:
    self.warnings.append(
        (self._line(node),
         "`{}` is not converted: {}".format(module, _OTHER_CONTRIB_HINT)))

  # -- attribute chains: tf.contrib.mixed_precision.X -----------------------

  def _resolve(self, node: cst.Attribute) -> Optional[str]:
    """The normalized TF path of a chain rooted at a TF-bound name."""
    path = _dotted(node)
    if path is None:
      return None
    root, _, rest = path.partition(".")
    base = self._bindings.tf_names.get(root)
    if base is None and root == "tf" and root not in self._bindings.all_names:
      # `tf` with no import in this file (a star import, an injected global):
      # in `tf.contrib.mixed_precision` it can only mean TensorFlow.
      base = _TF
    if base is None:
      return None
    # Only chains that *cross into* the API are rewritten; a name already
    # bound to the API (`m` of `import ... as m`) keeps working as it is,
    # because its import is rewritten.
    if _map_module(base) is not None:
      return None
    return _normalize(base + "." + rest)

  def visit_Import(self, node: cst.Import) -> bool:
    return False

  def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
    return False

  def leave_Attribute(self, original_node: cst.Attribute,
                      updated_node: cst.Attribute) -> cst.BaseExpression:
    full = self._resolve(original_node)
    if full in (_MP, _MP + ".python"):
      new = cst.Name(_PACKAGE)
      inner = self._made.pop(id(updated_node.value), None)
      if inner is not None:
        # `...mixed_precision.python` replaces its own `...mixed_precision`.
        del self.changes[inner]
        self._made = {k: (v if v < inner else v - 1)
                      for k, v in self._made.items()}
      self.changes.append(
          Change(self._line(original_node), _code(original_node), _PACKAGE))
      self._made[id(new)] = len(self.changes) - 1
      return new
    index = self._made.pop(id(updated_node.value), None)
    if index is not None:
      # Widen the report to name the symbol: `tf.contrib.mixed_precision.X`.
      self.changes[index] = dataclasses.replace(
          self.changes[index], old=_code(original_node),
          new=_code(updated_node))
    elif full is not None:
      other = _other_contrib(full)
      if other is not None and full == other:
        self._warn_other(original_node, other)
    return updated_node

  # -- import statements -----------------------------------------------------

  def _rewrite_import(self, node: cst.Import):
    """Rewrites `import <contrib path> [as m]` aliases in place."""
    names = []
    for alias in node.names:
      full = _dotted(alias.name)
      new = _map_module(full)
      if new is None:
        other = _other_contrib(full)
        if other is not None:
          self._warn_other(alias, other)
        names.append(alias)
        continue
      names.append(alias.with_changes(name=_dotted_node(new)))
    return node.with_changes(names=names)

  def _rewrite_import_from(self, node: cst.ImportFrom):
    """Returns the statements `from <module> import ...` becomes."""
    if node.relative or node.module is None:
      return [node]
    module = _dotted(node.module)
    new_module = _map_module(module)
    if isinstance(node.names, cst.ImportStar):
      if new_module is not None:
        return [node.with_changes(module=_dotted_node(new_module))]
      other = _other_contrib(module)
      if other is not None:
        self._warn_other(node, other)
      return [node]
    kept, extra = [], []
    for alias in node.names:
      name = _dotted(alias.name)
      full = module + "." + name
      new_full = _map_module(full)
      if new_full is None:
        other = _other_contrib(full)
        if other is not None:
          self._warn_other(alias, other)
        kept.append(alias)
      elif (new_module is not None and
            new_full == new_module + "." + name):
        kept.append(alias)
      else:
        # A module that moved: `from tensorflow.contrib import
        # mixed_precision` or `from ...mixed_precision import python`.
        extra.append(cst.Import(names=[cst.ImportAlias(
            name=_dotted_node(new_full),
            asname=cst.AsName(name=cst.Name(_binding_name(alias))))]))
    statements = []
    if kept:
      if len(kept) < len(node.names) and not node.lpar:
        # Without parentheses the last name must not keep a trailing comma.
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
      changes = {"names": kept}
      if new_module is not None:
        changes["module"] = _dotted_node(new_module)
      statements.append(node.with_changes(**changes)
                        if (extra or new_module is not None) else node)
    return statements + extra

  def leave_SimpleStatementLine(self, original_node, updated_node):
    body = []
    changed = False
    for statement in updated_node.body:
      if isinstance(statement, cst.Import):
        new = [self._rewrite_import(statement)]
      elif isinstance(statement, cst.ImportFrom):
        new = self._rewrite_import_from(statement)
      else:
        body.append(statement)
        continue
      if len(new) != 1 or not new[0].deep_equals(statement):
        changed = True
      body.extend(new)
    if not changed:
      return updated_node
    line = self._line(original_node)
    old = _code(original_node)
    if len(body) == 1 or not all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in body):
      result = updated_node.with_changes(body=body)
      self.changes.append(Change(line, old, _code(result)))
      return result
    # Split imports into one line each; the first keeps the line's comments.
    lines = [updated_node.with_changes(body=[body[0]])]
    lines += [cst.SimpleStatementLine(body=[s]) for s in body[1:]]
    self.changes.append(
        Change(line, old, "; ".join(_code(s) for s in lines)))
    return cst.FlattenSentinel(lines)


def _insert_imports(module: cst.Module, names: Sequence[str]) -> cst.Module:
  """Adds `import <name>` lines after the first top-level TF import.

  Without a top-level TF import they go after the docstring and any
  `from __future__` imports.
  """
  new_lines = [cst.SimpleStatementLine(
      body=[cst.Import(names=[cst.ImportAlias(name=_dotted_node(n))])])
               for n in names]
  body = list(module.body)
  position = None
  for i, statement in enumerate(body):
    if not isinstance(statement, cst.SimpleStatementLine):
      continue
    for small in statement.body:
      modules = []
      if isinstance(small, cst.Import):
        modules = [_dotted(a.name) for a in small.names]
      elif isinstance(small, cst.ImportFrom) and small.module is not None:
        modules = [_dotted(small.module)]
      if any(m.split(".")[0] in (_TF, _PACKAGE) for m in modules):
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
                   _dotted(small.module) == "__future__")
      if not (is_docstring or is_future):
        break
      position = i + 1
  body[position:position] = new_lines
  return module.with_changes(body=body)


def upgrade_source(source: bytes) -> FileResult:
  """Upgrades one Python source.

  Args:
    source: The file's bytes. The encoding is detected as Python does (a
      coding cookie, else UTF-8), and kept.

  Returns:
    A `FileResult`. When the source does not parse, or does not use the
    API, `new_source` is `source` itself.
  """
  try:
    tree = cst.parse_module(source)
  except Exception as e:  # pylint: disable=broad-except
    # libcst raises ParserSyntaxError, and UnicodeDecodeError or others on
    # broken encodings; in every case the file must be copied, not dropped.
    message = " ".join(str(e).split())
    result = FileResult(new_source=source, error=message)
    if b"mixed_precision" in source and b"contrib" in source:
      result.warnings.append(
          (0, "it mentions `tf.contrib.mixed_precision`, which was NOT "
              "converted. Port the file to Python 3 and run this command "
              "again, or call `contrib_mixed_precision.install_alias()` "
              "before it runs."))
    return result
  bindings = _Bindings()
  tree.visit(bindings)
  rewriter = _Rewriter(bindings)
  new_tree = metadata.MetadataWrapper(tree, unsafe_skip_copy=True).visit(
      rewriter)
  result = FileResult(new_source=source, warnings=rewriter.warnings)
  if not rewriter.changes:
    result.warnings.sort()
    return result
  # Add the imports the rewritten code needs and the file does not have.
  after = _Bindings()
  new_tree.visit(after)
  used = _UsedNames()
  new_tree.visit(used)
  missing = []
  if _PACKAGE in used.used and _PACKAGE not in after.all_names:
    missing.append(_PACKAGE)
  # `import tensorflow.contrib.mixed_precision` also bound `tensorflow`.
  for name in sorted(bindings.all_names - after.all_names):
    if name in used.used and name not in missing:
      missing.append(name)
  if missing:
    new_tree = _insert_imports(new_tree, missing)
    # Report where the import landed, as a line of the new file.
    new_lines = [l.strip() for l in new_tree.code.splitlines()]
    for name in missing:
      line = new_lines.index("import " + name) + 1
      rewriter.changes.append(Change(line, "", "import " + name))
  result.new_source = new_tree.bytes
  result.changes = sorted(rewriter.changes, key=lambda c: c.line)
  result.warnings.sort()
  return result


# ---------------------------------------------------------------------------
# Files, trees and the report.
# ---------------------------------------------------------------------------


class UpgradeError(Exception):
  """The command could not do its job (bad paths or flags)."""


@dataclasses.dataclass
class Report:
  """Everything one run did, per file, to write as the report."""
  results: Dict[str, FileResult] = dataclasses.field(default_factory=dict)
  copied: List[str] = dataclasses.field(default_factory=list)
  skipped: List[Tuple[str, str]] = dataclasses.field(default_factory=list)

  def text(self) -> str:
    """The report, as `file:line: ...` lines."""
    changed = [p for p, r in self.results.items() if r.changed]
    failed = [p for p, r in self.results.items() if r.error]
    n_warnings = sum(len(r.warnings) for r in self.results.values())
    out = [
        "{} report".format(_PROG),
        "=" * 79,
        "Python files processed: {}".format(len(self.results)),
        "Python files changed: {}".format(len(changed)),
        "Python files that could not be parsed (copied unchanged): {}".format(
            len(failed)),
        "Other files copied: {}".format(len(self.copied)),
        "Warnings: {}".format(n_warnings + len(self.skipped)),
        "",
    ]
    for path in sorted(self.results):
      result = self.results[path]
      if not (result.changes or result.warnings or result.error):
        continue
      out.append("-" * 79)
      out.append("File: {}".format(path))
      out.append("-" * 79)
      if result.error:
        out.append("{}: ERROR: could not parse ({}); copied unchanged.".format(
            path, result.error))
      for change in result.changes:
        if change.old:
          out.append("{}:{}: CHANGED `{}` -> `{}`".format(
              path, change.line, change.old, change.new))
        else:
          out.append("{}:{}: ADDED `{}` (line {} of the new file)".format(
              path, change.line, change.new, change.line))
      for line, message in result.warnings:
        where = "{}:{}".format(path, line) if line else path
        out.append("{}: WARNING: {}".format(where, message))
      out.append("")
    for path, why in self.skipped:
      out.append("{}: WARNING: skipped: {}".format(path, why))
    return "\n".join(out) + "\n"


def _diff(path: str, old: bytes, new: bytes) -> str:
  old_lines = old.decode("utf-8", "replace").splitlines(keepends=True)
  new_lines = new.decode("utf-8", "replace").splitlines(keepends=True)
  return "".join(difflib.unified_diff(old_lines, new_lines, "a/" + path,
                                      "b/" + path))


def _write(path: str, data: bytes, like: str) -> None:
  """Writes `data` to `path` with the permissions of file `like`."""
  directory = os.path.dirname(path)
  if directory:
    os.makedirs(directory, exist_ok=True)
  with open(path, "wb") as f:
    f.write(data)
  shutil.copymode(like, path)


def _process(infile: str, outfile: Optional[str], name: str, report: Report,
             copy_other: bool, dry_run: bool, diffs: List[str]) -> None:
  """Upgrades or copies one file into `outfile` (None: in place)."""
  if not infile.endswith(".py"):
    if copy_other and outfile is not None and not dry_run:
      os.makedirs(os.path.dirname(outfile) or ".", exist_ok=True)
      shutil.copy2(infile, outfile)
    if copy_other or outfile is None:
      report.copied.append(name)
    return
  with open(infile, "rb") as f:
    source = f.read()
  result = upgrade_source(source)
  report.results[name] = result
  if result.changed:
    diffs.append(_diff(name, source, result.new_source))
  if dry_run:
    return
  if outfile is None:
    if result.changed:
      _write(infile, result.new_source, infile)
  elif result.changed:
    _write(outfile, result.new_source, infile)
  else:
    # Byte for byte, metadata included.
    os.makedirs(os.path.dirname(outfile) or ".", exist_ok=True)
    shutil.copy2(infile, outfile)


def _inside(path: str, directory: str) -> bool:
  path, directory = os.path.realpath(path), os.path.realpath(directory)
  return os.path.commonpath([path, directory]) == directory


def run(infile: Optional[str] = None, outfile: Optional[str] = None,
        intree: Optional[str] = None, outtree: Optional[str] = None,
        inplace: bool = False, copy_other_files: bool = True,
        dry_run: bool = False) -> Tuple[Report, List[str]]:
  """Upgrades a file or a tree; the library form of the command.

  Args:
    infile: A Python file to upgrade. Exactly one of `infile` and `intree`.
    outfile: Where to write the upgraded `infile`.
    intree: A directory to upgrade, recursively.
    outtree: Where to write the upgraded tree; must not exist or be empty.
    inplace: Rewrite `infile` or the files under `intree` themselves.
    copy_other_files: In tree mode, also copy files that are not `*.py`.
    dry_run: Write nothing; only compute the report and the diffs.

  Returns:
    `(report, diffs)`: a `Report`, and one unified diff per changed file.

  Raises:
    UpgradeError: The paths or the flag combination cannot work.
  """
  report, diffs = Report(), []
  if (infile is None) == (intree is None):
    raise UpgradeError(
        "Pass exactly one of `--infile` and `--intree`; received {}.".format(
            "both" if infile else "neither"))
  if infile is not None:
    if outtree is not None:
      raise UpgradeError(
          "`--outtree` goes with `--intree`, not `--infile`. Use "
          "`--outfile` to name the upgraded file.")
    if not os.path.isfile(infile):
      raise UpgradeError(
          "`--infile` {!r} is not an existing file. Pass the path of the "
          "Python file to upgrade.".format(infile))
    outfile = _check_out(outfile, "--outfile", inplace, dry_run)
    if (outfile is not None and os.path.exists(outfile) and
        os.path.samefile(infile, outfile)):
      raise UpgradeError(
          "`--outfile` {!r} is `--infile` itself. Use `--inplace` to rewrite "
          "a file in place.".format(outfile))
    _process(infile, outfile, infile, report, True, dry_run, diffs)
    return report, diffs
  if outfile is not None:
    raise UpgradeError(
        "`--outfile` goes with `--infile`, not `--intree`. Use `--outtree` "
        "to name the upgraded tree.")
  if not os.path.isdir(intree):
    raise UpgradeError(
        "`--intree` {!r} is not an existing directory. Pass the root of the "
        "source tree to upgrade.".format(intree))
  outtree = _check_out(outtree, "--outtree", inplace, dry_run)
  if outtree is not None:
    if _inside(outtree, intree):
      raise UpgradeError(
          "`--outtree` {!r} is inside `--intree` {!r}. Choose a directory "
          "outside the input tree, or use `--inplace`.".format(outtree,
                                                              intree))
    if os.path.exists(outtree) and (not os.path.isdir(outtree) or
                                    os.listdir(outtree)):
      raise UpgradeError(
          "`--outtree` {!r} already exists and is not an empty directory. "
          "Choose a new directory; this command never overwrites "
          "one.".format(outtree))
  for root, dirs, files in os.walk(intree):
    dirs.sort()
    for d in list(dirs):
      if os.path.islink(os.path.join(root, d)):
        dirs.remove(d)
        report.skipped.append(
            (os.path.relpath(os.path.join(root, d), intree),
             "a symbolic link to a directory; not followed."))
    for filename in sorted(files):
      path = os.path.join(root, filename)
      name = os.path.relpath(path, intree)
      target = None if outtree is None else os.path.join(outtree, name)
      _process(path, target, name, report, copy_other_files, dry_run, diffs)
  if outtree is not None and not dry_run:
    os.makedirs(outtree, exist_ok=True)
  return report, diffs


def _check_out(out: Optional[str], flag: str, inplace: bool,
               dry_run: bool) -> Optional[str]:
  if inplace and out is not None:
    raise UpgradeError(
        "`--inplace` rewrites the input itself, so `{}` {!r} cannot be used "
        "with it. Drop one of them.".format(flag, out))
  if out is None and not (inplace or dry_run):
    raise UpgradeError(
        "Missing `{}`. Name where to write the result, or pass `--inplace` "
        "to rewrite the input, or `--dry_run` to only see a diff.".format(
            flag))
  return out


def _bool(value: str) -> bool:
  """Parses `--copyotherfiles` values the way users write them."""
  lowered = value.strip().lower()
  if lowered in ("1", "true", "t", "yes", "y"):
    return True
  if lowered in ("0", "false", "f", "no", "n"):
    return False
  raise argparse.ArgumentTypeError(
      "expected true or false, received {!r}".format(value))


def _parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(
      prog=_PROG,
      description=(
          "Convert TensorFlow 1.15 `tf.contrib.mixed_precision` code to the "
          "`contrib_mixed_precision` package, preserving comments and "
          "formatting. Files that do not use the API are copied unchanged."),
      epilog=(
          "Examples:\n"
          "  {0} --intree old/ --outtree new/\n"
          "  {0} --infile train.py --outfile train_tf2.py\n"
          "  {0} --intree src/ --inplace\n"
          "  {0} --intree src/ --dry_run\n"
          "Exit status: 0 when the input was processed (warnings included), "
          "1 when it could not be (bad paths), 2 on bad flags.").format(_PROG),
      formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--infile", help="a Python file to convert")
  parser.add_argument("--outfile", help="where to write the converted file")
  parser.add_argument("--intree", help="a directory to convert recursively")
  parser.add_argument("--outtree",
                      help="where to write the converted tree (new or empty)")
  parser.add_argument("--inplace", action="store_true",
                      help="rewrite the input file or tree in place")
  parser.add_argument("--reportfile", default="report.txt",
                      help="where to write the report (default: %(default)s)")
  parser.add_argument(
      "--copyotherfiles", type=_bool, default=True, metavar="BOOL",
      help="in tree mode, copy files that are not *.py too "
      "(default: %(default)s)")
  parser.add_argument(
      "--dry_run", "--dry-run", dest="dry_run", action="store_true",
      help="print a diff and the report; write nothing")
  return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
  """The `contrib-mp-upgrade` command.

  Args:
    argv: The arguments, without the program name; None for `sys.argv[1:]`.

  Returns:
    The exit status: 0 when the input was processed, 1 when it could not be.
  """
  args = _parser().parse_args(argv)
  try:
    report, diffs = run(infile=args.infile, outfile=args.outfile,
                        intree=args.intree, outtree=args.outtree,
                        inplace=args.inplace,
                        copy_other_files=args.copyotherfiles,
                        dry_run=args.dry_run)
  except (UpgradeError, OSError) as e:
    print("{}: error: {}".format(_PROG, e), file=sys.stderr)
    return 1
  text = report.text()
  n_changed = sum(1 for r in report.results.values() if r.changed)
  if args.dry_run:
    sys.stdout.write("".join(diffs))
    sys.stdout.write(text)
    print("Dry run: {} file(s) would change; nothing was written.".format(
        n_changed))
    return 0
  try:
    with open(args.reportfile, "w", encoding="utf-8") as f:
      f.write(text)
  except OSError as e:
    print("{}: error: the conversion finished, but the report could not be "
          "written to `--reportfile` {!r} ({}). Choose a writable "
          "path.".format(_PROG, args.reportfile, e), file=sys.stderr)
    return 1
  n_failed = sum(1 for r in report.results.values() if r.error)
  print("{}: changed {} file(s); {} could not be parsed and were copied "
        "unchanged. Report: {}".format(_PROG, n_changed, n_failed,
                                       args.reportfile))
  return 0


if __name__ == "__main__":
  sys.exit(main())
