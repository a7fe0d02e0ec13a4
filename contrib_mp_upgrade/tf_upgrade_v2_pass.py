# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Runs TensorFlow's own `tf_upgrade_v2` over a plan (`--tf_upgrade_v2`).

A real migration needs both converters: this one for
`tf.contrib.mixed_precision`, and TensorFlow's for the rest of the TF1 API
(`tf.trainable_variables` and the like). Their edits commute. This module
runs TensorFlow's converter through its console script, in a child process,
so this package still never imports TensorFlow itself.

`tf_upgrade_v2` reads and writes text in the platform encoding, turns CRLF
into LF, and leaves an empty file behind when it cannot parse one (a UTF-8
byte-order mark is enough). So it only ever sees a temporary copy of each
file as plain UTF-8 (no byte-order mark; a file with a coding declaration
transcoded); its result is taken only where it changed the code, written
back in the file's own encoding, byte-order mark and line endings, and
never where it left a file empty. Every file this command read and it did
not convert, for any reason, is in `Summary.advice`, which the report
counts as not ready (as it does the files this command could not read).

Two of its renames depend on which TensorFlow runs it: up to TF 2.15 it
renamed `tf.layers`, the TF1 `tf.summary` functions (`scalar`, `image`,
`histogram`, `audio`, `text`) and `tf.contrib.tpu`'s Estimator classes;
later versions leave them, and the program then fails. This pass makes
those renames itself after it (`_rename_v1`, `rename_bare_layers`),
so the output is the same whichever TensorFlow ran it.
"""

import ast
import collections
import dataclasses
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tokenize
from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst
from libcst import metadata

from contrib_mp_upgrade import blockers
from contrib_mp_upgrade import commit
from contrib_mp_upgrade import errors
from contrib_mp_upgrade import notebook
from contrib_mp_upgrade import resolve
from contrib_mp_upgrade import uses
from contrib_mp_upgrade import walk

COMMAND = "tf_upgrade_v2"

@dataclasses.dataclass
class Summary:
  """What `tf_upgrade_v2` did, for the report.

  Attributes:
    command: The `tf_upgrade_v2` that ran.
    processed: How many files it converted (given to it, and its result
      taken); `given` minus `unparsed` and `failed` among them.
    given: How many Python files this pass gave it.
    changed: Names of the files whose code it changed.
    issues: `(name, line, kind, message)`: its INFO, WARNING and ERROR
      lines. The line numbers are of the converted file.
    not_given: `(name, why)` for Python files it was not given.
    unparsed: Names of the files it could not parse (it left them empty;
      their conversion by this command is kept).
    failed: `(name, why)` for files it could not convert (its parser
      crashed on them); they keep this command's conversion.
    advice: `{name: what to do}` for each file this command read and it
      did not convert (`failed`, `unparsed`, and any readable file of
      `not_given`).
    layers_renamed: `{name: [output lines]}` where `tf.layers` was renamed
      `tf.compat.v1.layers` after it (as tf_upgrade_v2 up to TF 2.15 did).
    summary_renamed: `{name: [output lines]}` where a TF1 `tf.summary`
      function was renamed `tf.compat.v1.summary.X` after it (the same).
    tpu_renamed: `{name: [output lines]}` where `tf.contrib.tpu.X` (an
      Estimator class) was renamed `tf.compat.v1.estimator.tpu.X` after it
      (the same).
  """
  command: str
  processed: int = 0
  given: int = 0
  changed: List[str] = dataclasses.field(default_factory=list)
  issues: List[Tuple[str, int, str, str]] = dataclasses.field(
      default_factory=list)
  not_given: List[Tuple[str, str]] = dataclasses.field(default_factory=list)
  unparsed: List[str] = dataclasses.field(default_factory=list)
  failed: List[Tuple[str, str]] = dataclasses.field(default_factory=list)
  advice: Dict[str, str] = dataclasses.field(default_factory=dict)
  layers_renamed: Dict[str, List[int]] = dataclasses.field(
      default_factory=dict)
  summary_renamed: Dict[str, List[int]] = dataclasses.field(
      default_factory=dict)
  tpu_renamed: Dict[str, List[int]] = dataclasses.field(
      default_factory=dict)

  def not_converted(self) -> List[str]:
    """Every Python file it did not convert, for whatever reason."""
    return sorted({n for n, _ in self.not_given} | {n for n, _ in self.failed}
                  | set(self.unparsed))


def find_command() -> Optional[str]:
  """The `tf_upgrade_v2` console script on PATH or beside this Python."""
  found = shutil.which(COMMAND)
  if found:
    return found
  candidate = os.path.join(os.path.dirname(sys.executable), COMMAND)
  if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
    return candidate
  return None


def _is_crlf(data: bytes) -> bool:
  return b"\r\n" in data and data.count(b"\r\n") == data.count(b"\n")


def _fstring_debug_line(source: str, node: ast.JoinedStr) -> Optional[int]:
  """The line of an `f"{x=}"` field in `node`, if it has one."""
  values = node.values
  for before, field in zip(values, values[1:]):
    if not (isinstance(before, ast.Constant) and
            isinstance(before.value, str) and
            isinstance(field, ast.FormattedValue)):
      continue
    # Python 3.9 misplaces the nodes inside an f-string, so their source
    # segment is wrong there: the unparsed expression is tried too.
    texts = {ast.get_source_segment(source, field.value),
             ast.unparse(field.value)} - {None}
    if before.value.rstrip().endswith("="):
      squeezed = "".join(before.value.split())
      if any(squeezed.endswith("".join(t.split()) + "=") for t in texts):
        return field.lineno
  return None


def unreadable_syntax(source: bytes) -> Optional[str]:
  """Python 3.8+ syntax that `tf_upgrade_v2`'s parser (pasta) crashes on.

  Its parser stops the whole `tf_upgrade_v2` run on such a file, so this
  command keeps those files away from it and says why.

  Args:
    source: A Python source.

  Returns:
    What it is and where (`an assignment expression `:=` at line 3`), or
    None.
  """
  if b":=" not in source and b"=}" not in source and b"=!" not in source \
      and b"=:" not in source:
    return None
  try:
    text = source.decode("utf-8")
    parsed = ast.parse(text)
  except (SyntaxError, ValueError, UnicodeDecodeError):
    return None
  for node in ast.walk(parsed):
    if isinstance(node, ast.NamedExpr):
      return "an assignment expression `:=` at output line {}".format(
          node.lineno)
    if isinstance(node, ast.JoinedStr):
      line = _fstring_debug_line(text, node)
      if line is not None:
        return ("an f-string with a self-documenting `{{x=}}` field at "
                "output line {}".format(line))
  return None


def _advice(name: str) -> str:
  return (
      "This command's own conversion of it is kept; the rest of its TF1 API "
      "is not converted. Either make it use the TF1 API through "
      "`import tensorflow.compat.v1 as tf` (and call "
      "`tf.disable_v2_behavior()` once in the entry script), or convert it "
      "alone without the second pass (`{prog} --infile {name} --outfile "
      "new.py`), rewrite the construct named above, run `tf_upgrade_v2 "
      "--infile new.py --outfile new.py --reportfile tf_report.txt`, and "
      "restore it".format(prog="contrib-mp-upgrade", name=name))


@dataclasses.dataclass
class _Attempt:
  """One `tf_upgrade_v2` run over a group of entries."""
  ok: bool
  outputs: Dict[str, bytes]
  issues: List[Tuple[str, int, str, str]]
  tail: str


# Appended to a notebook's name for its code cells' Python file.
_NOTEBOOK_SUFFIX = ".contrib-mp-upgrade.py"

_DETAIL_FILE = re.compile(r"^Processing file '(?P<path>.*)'$")
_DETAIL_LINE = re.compile(
    r"^(?P<line>\d+):(?P<col>\d+): (?P<kind>INFO|WARNING|ERROR): "
    r"(?P<message>.*)$")


def _attempt(entries: Sequence["_Given"], command: str,
             timeout: float) -> _Attempt:
  """Runs `command` once over copies of `entries`."""
  stage = tempfile.mkdtemp(prefix="contrib-mp-upgrade-tf_upgrade_v2-")
  try:
    given: Dict[str, walk.Entry] = {}
    for entry in entries:
      path = os.path.join(stage, "tree", *entry.name.split("/"))
      if entry.notebook:
        # Its code cells as a Python file: `--intree` reads `*.py` only.
        path += _NOTEBOOK_SUFFIX
      os.makedirs(os.path.dirname(path), exist_ok=True)
      with open(path, "wb") as f:
        f.write(entry.output)
      given[os.path.realpath(path)] = entry
    report = os.path.join(stage, "report.txt")
    env = dict(os.environ, PYTHONUTF8="1", PYTHONIOENCODING="utf-8",
               TF_CPP_MIN_LOG_LEVEL="3")
    try:
      proc = subprocess.run(
          [command, "--intree", os.path.join(stage, "tree"), "--inplace",
           "--reportfile", report], cwd=stage, env=env,
          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
          timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
      raise errors.UpgradeError(
          "`--tf_upgrade_v2`: {!r} could not be run ({}). Nothing was "
          "written.".format(command, e)) from e
    tail = proc.stdout.decode("utf-8", "replace").strip()
    # Its traceback can end in an exception without a message (pasta).
    if proc.returncode != 0 or not os.path.exists(report) or (
        "Traceback (most recent call last)" in tail):
      return _Attempt(False, {}, [], tail[-2000:])
    outputs = {}
    for path, entry in given.items():
      with open(path, "rb") as f:
        outputs[entry.name] = f.read()
    issues = []
    current = None
    with open(report, encoding="utf-8", errors="replace") as f:
      detail = False
      for line in f:
        line = line.rstrip("\n")
        if line.startswith("Detailed log follows"):
          detail = True
          continue
        if not detail:
          continue
        match = _DETAIL_FILE.match(line)
        if match is not None:
          entry = given.get(os.path.realpath(
              os.path.join(stage, match.group("path"))))
          current = entry.name if entry is not None else None
          continue
        match = _DETAIL_LINE.match(line)
        if match is not None and current is not None:
          issues.append((current, int(match.group("line")),
                         match.group("kind"),
                         match.group("message").strip()))
    return _Attempt(True, outputs, issues, "")
  finally:
    commit.remove_tree(stage)


def _last_line(tail: str) -> str:
  lines = [l.strip() for l in tail.splitlines() if l.strip()]
  return lines[-1] if lines else "no output"


def _convert(entries: List["_Given"], command: str, timeout: float,
             summary: "Summary", outputs: Dict[str, bytes]) -> None:
  """Converts `entries`; a file that makes the run fail is set aside.

  One run converts the group. When it fails, the group is halved and each
  half retried, so the files that break `tf_upgrade_v2` are found in a few
  runs and every other file is still converted.
  """
  if not entries:
    return
  attempt = _attempt(entries, command, timeout)
  if attempt.ok:
    outputs.update(attempt.outputs)
    summary.issues.extend(attempt.issues)
    return
  if len(entries) == 1:
    summary.failed.append((entries[0].name, "tf_upgrade_v2 stopped on it "
                           "({})".format(_last_line(attempt.tail))))
    return
  half = len(entries) // 2
  _convert(entries[:half], command, timeout, summary, outputs)
  _convert(entries[half:], command, timeout, summary, outputs)


# A file given to tf_upgrade_v2: its name, its code as UTF-8, and whether
# it is a notebook's code cells.
_Given = collections.namedtuple("_Given", ["name", "output", "notebook"],
                                defaults=[False])

_TPU_ERROR = re.compile(
    r"Using member tf\.contrib\.tpu\.(\w+)\b.* cannot be converted "
    r"automatically")


def _as_utf8(source: bytes) -> Tuple[bytes, str]:
  """`(the source as plain UTF-8 without a byte-order mark, its encoding)`.

  `source` decodes (the caller checked): as Python reads it, through its
  coding declaration or a byte-order mark.
  """
  encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
  return source.decode(encoding).encode("utf-8"), encoding


def _rename_v1(source: bytes) -> Tuple[bytes, List[int], List[int]]:
  """Makes the renames up to TF 2.15's tf_upgrade_v2 made, that later skip.

  Returns:
    `(new source, summary lines, tpu lines)`; see `blockers.v1_renames`.
  """
  spans = blockers.v1_renames(source)
  if not spans:
    return source, [], []
  parts, at = [], 0
  lines: Dict[str, List[int]] = {"summary": [], "tpu": []}
  for start, end, text, kind, line in spans:
    parts.append(source[at:start])
    parts.append(text)
    at = end
    lines[kind].append(line)
  parts.append(source[at:])
  return (b"".join(parts), sorted(set(lines["summary"])),
          sorted(set(lines["tpu"])))


class _LayersRenamer(cst.CSTTransformer):

  def __init__(self, nodes):
    super().__init__()
    self.nodes = set(nodes)

  def leave_Attribute(self, original_node, updated_node):
    if original_node not in self.nodes:
      return updated_node
    compat = cst.Attribute(value=cst.Attribute(
        value=updated_node.value, attr=cst.Name("compat")),
                           attr=cst.Name("v1"))
    return updated_node.with_changes(value=compat)


# `X.layers` that cannot be TF 1's `tf.layers`: TF 2's successors, and
# what `--tf_upgrade_v2` or contrib already name.
_NOT_BARE_LAYERS = ("v1", "contrib", "keras")
_LAYERS_WORD = re.compile(
    rb"(?<!\bcontrib\.)(?<!\bv1\.)(?<!\bkeras\.)\blayers\b")


def _may_name_tf_layers(source: bytes) -> bool:
  """Whether `source` may use `tf.layers`: Python's parser, before libcst.

  After `tf_upgrade_v2` every file that mentions `layers` would otherwise go
  through libcst's scope analysis, three times the CPU of the two
  converters together on a tree that uses `tf.contrib.layers` throughout.
  It answers True whenever it cannot tell.
  """
  if not _LAYERS_WORD.search(source):
    return False  # Every `layers` is `contrib.`, `v1.` or `keras.layers`.
  try:
    module = ast.parse(source)
  except (SyntaxError, ValueError, RecursionError, MemoryError):
    return True
  for node in ast.walk(module):
    if isinstance(node, ast.Attribute) and node.attr == "layers":
      value = node.value
      if not (isinstance(value, ast.Attribute) and
              value.attr in _NOT_BARE_LAYERS):
        return True
    elif isinstance(node, ast.ImportFrom):
      if "layers" in (node.module or "") or any(
          "layers" in alias.name for alias in node.names):
        return True
    elif isinstance(node, ast.Import):
      if any("layers" in alias.name for alias in node.names):
        return True
    elif isinstance(node, ast.Constant) and node.value == "layers":
      return True  # `getattr(tf, "layers")`.
  return False


def rename_bare_layers(source: bytes) -> Tuple[bytes, List[int]]:
  """Rewrites `tf.layers` as `tf.compat.v1.layers`, as tf_upgrade_v2 did.

  tf_upgrade_v2 up to TensorFlow 2.15 made this rename; later versions
  leave `tf.layers`, which TensorFlow 2 lacks. `--tf_upgrade_v2` applies it
  after TensorFlow's converter, so its result does not depend on which
  TensorFlow ran.

  Args:
    source: A Python source, as bytes.

  Returns:
    `(new source, lines renamed)`; the source itself when nothing changed
    or it does not parse.
  """
  if b"layers" not in source or not _may_name_tf_layers(source):
    return source, []
  try:
    tree = cst.parse_module(source)
  except cst.ParserSyntaxError:
    return source, []
  analysis = resolve.Analysis(
      metadata.MetadataWrapper(tree, unsafe_skip_copy=True))
  collector = uses.Collector(analysis)
  analysis.module.visit(collector)
  if not collector.bare_layers:
    return source, []
  new = analysis.module.visit(_LayersRenamer(collector.bare_layers))
  return new.bytes, sorted({analysis.line(n)
                            for n in collector.bare_layers})


def _unparsed_advice(name: str) -> str:
  return ("tf_upgrade_v2 could not parse it (it left the file empty), so "
          "its TF1 API is not converted. " + _advice(name))


def run(plan: walk.Plan, command: str, timeout: float = 3600) -> Summary:
  """Runs `command` over the plan's Python files; updates their output.

  A file that `tf_upgrade_v2` cannot convert (it crashes on valid Python
  3.8+ syntax) never stops the others: it keeps this command's conversion
  and is listed in `Summary.failed` with the error and what to do.

  Args:
    plan: The plan; each Python entry's `output` is what `tf_upgrade_v2`
      converts, and is replaced by its result where it changed the code.
    command: The `tf_upgrade_v2` executable.
    timeout: Seconds to wait for each run of it.

  Returns:
    A `Summary`.

  Raises:
    errors.UpgradeError: It could not be run, or fails even on a file with
      nothing in it to convert.
  """
  summary = Summary(command=command)
  given: List[_Given] = []
  encodings: Dict[str, str] = {}
  for entry in plan.python():
    if entry.result.error is not None:
      summary.not_given.append((entry.name, entry.result.error))
      continue
    try:
      text, encodings[entry.name] = _as_utf8(entry.output)
    except (SyntaxError, UnicodeDecodeError, LookupError) as e:
      # Not expected (this command read it), but never counted as ready.
      summary.not_given.append(
          (entry.name, "it does not decode as Python source ({})".format(e)))
      summary.advice[entry.name] = (
          "tf_upgrade_v2 was not given it, so its TF1 API is not converted. "
          + _advice(entry.name))
      continue
    unreadable = unreadable_syntax(text)
    if unreadable is not None and entry.notebook is not None:
      unreadable = notebook.relabel(entry.notebook, text, unreadable)
    if unreadable is not None:
      summary.failed.append((entry.name, (
          "tf_upgrade_v2 cannot parse it: its parser (pasta) crashes on "
          "{}, valid Python 3.8+").format(unreadable)))
      continue
    given.append(_Given(entry.name, text, entry.notebook is not None))
  summary.given = len(given) + len(summary.failed)
  outputs: Dict[str, bytes] = {}
  if given:
    first = _attempt(given, command, timeout)
    if first.ok:
      outputs, summary.issues = first.outputs, first.issues
    else:
      probe = _Given("probe.py", b"import tensorflow as tf\n")
      if not _attempt([probe], command, timeout).ok:
        raise errors.UpgradeError(
            "`--tf_upgrade_v2`: {!r} fails even on an empty program. Nothing "
            "was written. Its output ended with:\n{}".format(
                command, first.tail))
      half = len(given) // 2
      _convert(given[:half], command, timeout, summary, outputs)
      _convert(given[half:], command, timeout, summary, outputs)
  by_name = {e.name: e for e in plan.python()}
  for name, text, _ in sorted(given):
    new = outputs.get(name)
    if new is None:
      continue
    entry = by_name[name]
    if not new.strip() and text.strip():
      summary.unparsed.append(name)
      continue
    new = new.replace(b"\r\n", b"\n")
    new, renamed = rename_bare_layers(new)
    if renamed:
      summary.layers_renamed[name] = renamed
    new, summary_lines, tpu_lines = _rename_v1(new)
    if summary_lines:
      summary.summary_renamed[name] = summary_lines
    if tpu_lines:
      summary.tpu_renamed[name] = tpu_lines
      # TF 2.16+'s converter calls these "cannot be converted
      # automatically" (an ERROR); the rename above did convert them.
      summary.issues = [
          i for i in summary.issues
          if not (i[0] == name and i[1] in tpu_lines and i[2] == "ERROR" and
                  _TPU_ERROR.match(i[3]) and _TPU_ERROR.match(i[3]).group(1)
                  in blockers.TPU_ESTIMATOR_NAMES)]
    if new == text.replace(b"\r\n", b"\n"):
      continue
    why = (notebook.check(entry.notebook, new)
           if entry.notebook is not None else None)
    if why is not None:
      summary.failed.append((name, "its result could not be put back "
                             "into the notebook ({})".format(why)))
      continue
    try:
      # Back in the file's own encoding (a byte-order mark included:
      # "utf-8-sig" writes one).
      new = new.decode("utf-8").encode(encodings[name])
    except (UnicodeDecodeError, UnicodeEncodeError) as e:
      summary.failed.append((name, "its result cannot be written back in "
                             "the file's encoding {} ({})".format(
                                 encodings[name], e)))
      continue
    if _is_crlf(entry.output):
      new = new.replace(b"\n", b"\r\n")
    entry.output = new
    entry.tf_upgrade_v2_changed = True
    summary.changed.append(name)
  summary.failed.sort()
  summary.processed = summary.given - len(summary.failed) - len(
      summary.unparsed)
  for name, _ in summary.failed:
    summary.advice[name] = _advice(name)
  for name in summary.unparsed:
    summary.advice[name] = _unparsed_advice(name)
  summary.issues.sort(key=lambda i: (i[0], i[1]))
  return summary
