# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Turns a Jupyter notebook's code cells into one Python source, and back.

The converters work on Python files. A notebook (nbformat 4 JSON) is
converted through a stand-in: its code cells, in order, as one Python
source (`Notebook.source`), each cell after a marker comment that names
it. What is IPython rather than Python (`%matplotlib inline`, a `%%time`
line, `!pip install ...` and its `\\` continuation lines, `obj?` help,
`files = !ls`, the body of a `%%bash` cell) is masked: each such line
becomes `pass` with a numbered marker comment, at the line's own
indentation, so a converter never reads it as code and the indented block
around it still parses; `join` puts the original line back byte for byte.
Each line of a cell stays one line of the stand-in, so a stand-in line maps
to a cell and a line in it (`describe`).

`join` writes the converted stand-in back into the notebook: only the
`source` of code cells whose code changed is replaced, in the form it had
(a string or a list of lines); markdown and raw cells, outputs and metadata
are untouched, and the JSON is written in the notebook's own format where
re-encoding the original reproduces it exactly (else as Jupyter writes:
indent 1, sorted keys, UTF-8, a final newline).

TensorFlow's `tf_upgrade_v2 --infile x.ipynb` does the same in spirit: it
converts code cells only, skips `%%` cells and comments out `%`, `!` and
`?` lines while it converts.

This module needs only the standard library.
"""

import ast
import codecs
import dataclasses
import functools
import json
import re
import tokenize
from typing import Dict, List, Optional, Sequence, Tuple, Union

SUFFIX = ".ipynb"

_TAG = "contrib-mp-upgrade-notebook"

# Cell magics whose body is Python run in the notebook's namespace; the
# body of any other (`%%bash`, `%%writefile`, `%%html`) is not Python.
_PYTHON_CELL_MAGICS = frozenset(("time", "timeit", "capture", "prun",
                                 "debug"))

# IPython's escapes at the start of a logical line: `!cmd`, `%magic`,
# `?obj`, and the autocall forms `,f a`, `;f a`, `/f a`. None of them
# begins valid Python.
_ESCAPES = ("!", "%", "?", ",", ";", "/")
# `files = !ls`, `out = %time f()`.
_MAGIC_ASSIGN = re.compile(
    r"^[ \t]*[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*[ \t]*="
    r"[ \t]*[!%]")
_FUTURE = re.compile(r"^from[ \t]+__future__[ \t]+import[ \t]+[^(\\]*$")
# Lines only Python 2 writes (as `rewrite` checks a file): the likely
# reason a cell does not parse.
_PY2_HINT = re.compile(
    r"^[ \t]*(?:print[ \t]+[^\s(=]|exec[ \t]+[\"']|except[ \t]+[\w.]+[ \t]*,)",
    re.MULTILINE)


class NotebookError(Exception):
  """The notebook cannot be converted; the message says why."""


@dataclasses.dataclass
class Notebook:
  """A notebook read for conversion.

  Attributes:
    raw: The file's bytes.
    data: Its parsed JSON.
    source: Its code cells as one Python source (UTF-8 bytes).
    tag: The marker text of this notebook's stand-in (absent from it).
    masks: `{number: original line}` of each masked IPython line, without
      its "\\n".
    mask_cells: `{number: cell index}` of each masked line.
    code_cells: The indices (in `data["cells"]`) of the cells in `source`.
    newline_added: `{cell index: whether a final "\\n" was added}`.
    warnings: `(stand-in line, message)` about code left as it was: the
      body of a cell magic that is not Python (`%%writefile`) but uses
      `tf.contrib.mixed_precision`.
  """
  raw: bytes
  data: dict
  source: bytes
  tag: str
  masks: Dict[int, str]
  mask_cells: Dict[int, int]
  code_cells: List[int]
  newline_added: Dict[int, bool]
  warnings: List[Tuple[int, str]] = dataclasses.field(default_factory=list)


def _cell_text(source: Union[str, List[str]]) -> str:
  return source if isinstance(source, str) else "".join(source)


def _lines_of(text: str) -> List[str]:
  """`text` split after each "\\n" only (not at "\\r" or form feeds)."""
  parts = text.split("\n")
  lines = [p + "\n" for p in parts[:-1]]
  if parts[-1]:
    lines.append(parts[-1])
  return lines


def _decode(raw: bytes) -> Tuple[str, bool]:
  bom = raw.startswith(codecs.BOM_UTF8)
  body = raw[len(codecs.BOM_UTF8):] if bom else raw
  try:
    return body.decode("utf-8"), bom
  except UnicodeDecodeError as e:
    raise NotebookError(
        "not UTF-8, which a notebook's JSON must be (invalid byte 0x{:02x} at "
        "line {}); convert it to UTF-8 and run again".format(
            body[e.start], body.count(b"\n", 0, e.start) + 1))


def _load(raw: bytes) -> dict:
  """The notebook's JSON, checked to be nbformat 4."""
  text, _ = _decode(raw)
  try:
    data = json.loads(text)
  except json.JSONDecodeError as e:
    raise NotebookError(
        "not valid JSON ({} at line {}, column {}); a notebook is a JSON "
        "file: open it in Jupyter to repair it, or restore it from version "
        "control".format(e.msg, e.lineno, e.colno))
  except RecursionError:
    raise NotebookError("not a notebook: its JSON nests too deeply to read")
  if not isinstance(data, dict):
    raise NotebookError(
        "not a notebook: its JSON is a {}, not a JSON object".format(
            type(data).__name__))
  version = data.get("nbformat")
  if version != 4:
    if version is None:
      raise NotebookError("not a notebook: its JSON has no `nbformat` field")
    raise NotebookError(
        "a notebook in nbformat {!r}; this command reads nbformat 4 only. "
        "Save it from Jupyter, or run `jupyter nbconvert --to notebook "
        "--nbformat 4 --output new.ipynb old.ipynb`, and run "
        "again".format(version))
  cells = data.get("cells")
  if not isinstance(cells, list):
    raise NotebookError(
        "not an nbformat 4 notebook: `cells` is {}, not a list".format(
            "missing" if cells is None else "a " + type(cells).__name__))
  for i, cell in enumerate(cells):
    if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"),
                                                    str):
      raise NotebookError(
          "not an nbformat 4 notebook: cell {} has no `cell_type`".format(
              i + 1))
    source = cell.get("source")
    if cell["cell_type"] == "code" and not (
        isinstance(source, str) or (isinstance(source, list) and all(
            isinstance(s, str) for s in source))):
      raise NotebookError(
          "not an nbformat 4 notebook: the `source` of cell {} is {}, not "
          "text or a list of lines".format(i + 1, type(source).__name__))
  return data


def _is_python(data: dict) -> bool:
  """Whether the kernel runs Python (true where the notebook does not say)."""
  metadata = data.get("metadata")
  if not isinstance(metadata, dict):
    return True
  for key, field in (("kernelspec", "language"), ("language_info", "name")):
    value = metadata.get(key)
    if isinstance(value, dict) and isinstance(value.get(field), str):
      return value[field].lower() == "python"
  return True


def _at_statement_start(lines: Sequence[str]) -> bool:
  """Whether code `lines` end between statements (not inside one)."""
  text = "\n".join(lines) + "\n"
  try:
    for _ in tokenize.generate_tokens(iter(text.splitlines(True)).__next__):
      pass
  except tokenize.TokenError:
    return False  # An open bracket, string or `\` continuation.
  except (SyntaxError, ValueError):
    pass  # Bad code before: the cell's own parse reports it.
  return True


def _is_help(line: str) -> bool:
  """`obj?` or `obj??`: IPython's help, not Python."""
  stripped = line.strip()
  if not stripped.endswith("?"):
    return False
  try:
    ast.parse(stripped)
    return False  # `x = 1  # why?`
  except (SyntaxError, ValueError):
    pass
  try:
    ast.parse(stripped.rstrip("?"))
    return True
  except (SyntaxError, ValueError):
    return False


def _ipython_lines(lines: List[str]) -> List[bool]:
  """For each line of a cell, whether it is IPython rather than Python."""
  first = lines[0] if lines else ""
  if first.startswith("%%"):
    name = first[2:].split()[0] if first[2:].split() else ""
    if name not in _PYTHON_CELL_MAGICS:
      return [True] * len(lines)  # Not Python at all (%%bash).
  masked = [False] * len(lines)
  kept: List[str] = []  # The cell so far, masked lines left out.
  tail = False
  for i, line in enumerate(lines):
    if tail:
      masked[i] = True
      tail = line.rstrip("\r").endswith("\\")
      continue
    stripped = line.lstrip()
    candidate = (stripped.startswith(_ESCAPES) or
                 _MAGIC_ASSIGN.match(line) is not None or _is_help(line))
    # Only at the start of a statement: `% b` inside brackets is Python.
    if candidate and (not kept or _at_statement_start(kept)):
      masked[i] = True
      tail = line.rstrip("\r").endswith("\\")
    else:
      kept.append(line)
  return masked


def _check_cell(text: str, number: int) -> None:
  if "\0" in text:
    line = text.count("\n", 0, text.find("\0")) + 1
    raise NotebookError("a NUL byte at cell {}, line {}; remove it and run "
                        "again".format(number, line))
  try:
    compile(text, "<cell {}>".format(number), "exec",
            ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
            dont_inherit=True)
  except SyntaxError as e:
    hint = ("; it looks like Python 2: port it to Python 3"
            if _PY2_HINT.search(text) else "")
    raise NotebookError(
        "it does not parse as Python 3 (syntax error at cell {}, line {}{}); "
        "IPython lines (%, !, ?) are not the cause, they are set "
        "aside".format(number, e.lineno or 1, hint))
  except ValueError as e:  # Whatever else `compile` refuses.
    raise NotebookError("cell {} cannot be read as Python ({})".format(
        number, e))


def read(raw: bytes) -> Notebook:
  """Reads a notebook and builds its Python stand-in.

  Args:
    raw: The notebook file's bytes.

  Returns:
    A `Notebook`.

  Raises:
    NotebookError: It is not UTF-8 JSON in nbformat 4, or a code cell does
      not parse as Python once its IPython lines are set aside.
  """
  data = _load(raw)
  cells = data["cells"]
  python = _is_python(data)
  code = [i for i, c in enumerate(cells) if c["cell_type"] == "code"
          and python]
  texts = {i: _cell_text(cells[i]["source"]) for i in code}
  every = "\n".join(texts.values())
  tag, n = _TAG, 0
  while tag in every:
    n += 1
    tag = "{}-{}".format(_TAG, n)
  # The coding cookie keeps a cell's own cookie (line 2 otherwise) from
  # changing how the stand-in is read.
  out = ["# -*- coding: utf-8 -*- {}\n".format(tag)]
  masks: Dict[int, str] = {}
  mask_cells: Dict[int, int] = {}
  added: Dict[int, bool] = {}
  statement_seen = False
  warnings = []
  for i in code:
    lines = texts[i].split("\n")
    masked = _ipython_lines(lines)
    if all(masked) and lines[0].startswith("%%") and (
        "contrib.mixed_precision" in texts[i]):
      line = sum(part.count("\n") for part in out) + 2
      warnings.append((line, (
          "a `{}` cell: its body is not Python run by this notebook, so "
          "its `tf.contrib.mixed_precision` uses were not converted. "
          "Convert what it writes or runs separately.").format(
              lines[0].split()[0])))
    whole = all(masked)  # A `%%bash` cell: no indentation to keep.
    indent, continued = "", False
    body = []
    for line, is_ipython in zip(lines, masked):
      if not is_ipython and _FUTURE.match(line) and statement_seen:
        # Valid first in its cell, but not after other cells' code.
        is_ipython = True
      if is_ipython:
        if not continued:
          # A `\` continuation line takes the indentation of its first.
          indent = "" if whole else line[:len(line) -
                                         len(line.lstrip(" \t"))]
        continued = line.rstrip("\r").endswith("\\")
        number = len(masks) + 1
        masks[number], mask_cells[number] = line, i
        line = "{}pass  # {} magic {}{}".format(
            indent, tag, number, "\r" if line.endswith("\r") else "")
      else:
        continued = False
      body.append(line)
      if line.strip() and not line.lstrip().startswith("#"):
        statement_seen = True
    text = "\n".join(body)
    _check_cell(text, i + 1)
    added[i] = bool(text) and not text.endswith("\n")
    out.append("# {} cell {}\n{}{}".format(tag, i + 1, text,
                                           "\n" if added[i] else ""))
  return Notebook(raw=raw, data=data, source="".join(out).encode("utf-8"),
                  tag=tag, masks=masks, mask_cells=mask_cells,
                  code_cells=code, newline_added=added, warnings=warnings)


@functools.lru_cache(maxsize=64)
def _markers(data: bytes, tag: str) -> Tuple[Tuple[int, int], ...]:
  """`(stand-in line, cell index)` of each cell marker in `data`."""
  pattern = re.compile(rb"^[ \t]*# " + re.escape(tag.encode()) +
                       rb" cell (\d+)\r?$", re.MULTILINE)
  found, line, position = [], 1, 0
  for match in pattern.finditer(data):
    line += data.count(b"\n", position, match.start())
    position = match.start()
    found.append((line, int(match.group(1)) - 1))
  return tuple(found)


def locate(notebook: Notebook, data: bytes,
           line: int) -> Optional[Tuple[int, int]]:
  """`(cell number, line in it)`, both from 1, of stand-in `line` in `data`.

  Args:
    notebook: The notebook.
    data: A stand-in of it: `notebook.source`, or a converted one.
    line: A line of `data`.

  Returns:
    Where it is, or None for the stand-in's own first line (findings about
    the whole file).
  """
  where = None
  for marker, cell in _markers(data, notebook.tag):
    if marker >= line:
      break
    where = (cell + 1, line - marker)
  return where


def describe(notebook: Notebook, data: bytes, line: int) -> str:
  """`cell 3, line 2` for stand-in `line` of `data` (see `locate`)."""
  where = locate(notebook, data, line)
  if where is None:
    return "the whole notebook"
  return "cell {}, line {}".format(*where)


def describe_lines(notebook: Notebook, data: bytes, lines: Sequence[int],
                   limit: int = 3) -> str:
  """`cell 3, lines 2, 5; cell 7, line 1`: up to `limit` lines, by cell."""
  ordered = sorted(set(lines))
  cells: Dict[Optional[int], List[int]] = {}
  for line in ordered[:limit]:
    where = locate(notebook, data, line)
    if where is None:
      cells.setdefault(None, [])
    else:
      cells.setdefault(where[0], []).append(where[1])
  parts = []
  for cell, in_cell in cells.items():
    if cell is None:
      parts.append("the whole notebook")
    else:
      parts.append("cell {}, {} {}".format(
          cell, "line" if len(in_cell) == 1 else "lines",
          ", ".join(str(l) for l in in_cell)))
  text = "; ".join(parts)
  return text + (", ..." if len(ordered) > limit else "")


def relabel(notebook: Notebook, data: bytes, message: str) -> str:
  """`message` with each `line N` (of stand-in `data`) named by cell."""
  return re.sub(r"\b(?:output )?line (\d+)",
                lambda m: describe(notebook, data, int(m.group(1))), message)


def _restore(notebook: Notebook, output: bytes) -> Dict[int, str]:
  """`{cell index: its new text}` from a converted stand-in."""
  try:
    text = output.decode("utf-8")
  except UnicodeDecodeError:
    raise NotebookError("the converted code is not UTF-8")
  tag = re.escape(notebook.tag)
  marker = re.compile(r"^[ \t]*# " + tag + r" cell (\d+)\r?\n?$")
  mask = re.compile(r"^[ \t]*pass  # " + tag + r" magic (\d+)\r?(\n?)$")
  segments: Dict[int, List[str]] = {}
  order: List[int] = []
  current: Optional[List[str]] = None
  before: List[str] = []
  seen = set()
  header = "# -*- coding: utf-8 -*- {}".format(notebook.tag)
  lines = _lines_of(text)
  if lines and lines[0].rstrip("\r\n") == header:
    lines = lines[1:]
  for line in lines:
    match = marker.match(line)
    if match is not None:
      cell = int(match.group(1)) - 1
      order.append(cell)
      current = segments.setdefault(cell, [])
      continue
    match = mask.match(line)
    if match is not None:
      number = int(match.group(1))
      cell = order[-1] if order else None
      if (number in seen or notebook.mask_cells.get(number) != cell):
        raise NotebookError(
            "an IPython line was moved or repeated by the conversion")
      seen.add(number)
      line = notebook.masks[number] + match.group(2)
    (current if current is not None else before).append(line)
  if order != notebook.code_cells or seen != set(notebook.masks):
    raise NotebookError(
        "the conversion lost or reordered cell boundaries or IPython lines")
  if notebook.code_cells and before:
    # Added ahead of the first cell (an import): it goes at its top.
    segments[notebook.code_cells[0]][:0] = before
  out = {}
  for cell in notebook.code_cells:
    new = "".join(segments[cell])
    if notebook.newline_added[cell] and new.endswith("\n"):
      new = new[:-1]
    out[cell] = new
  return out


def _dump(data: dict, indent, ensure_ascii: bool, separators, sort_keys: bool,
          newline: bool) -> str:
  return json.dumps(data, indent=indent, ensure_ascii=ensure_ascii,
                    separators=separators, sort_keys=sort_keys) + (
                        "\n" if newline else "")


def _format(raw: bytes) -> Tuple[dict, bool]:
  """How to write JSON the way `raw` is written: `json.dumps` arguments."""
  text, bom = _decode(raw)
  data = json.loads(text)
  match = re.match(r"\{\r?\n([ \t]*)", text)
  indent = None
  if match is not None:
    indent = match.group(1) if "\t" in match.group(1) else len(match.group(1))
  ascii_only = all(ord(c) < 128 for c in text)
  newline = text.endswith("\n")
  separators = [None] if indent is not None else [None, (",", ":")]
  for sort_keys in (False, True):
    for seps in separators:
      style = dict(indent=indent, ensure_ascii=ascii_only, separators=seps,
                   sort_keys=sort_keys, newline=newline)
      if _dump(data, **style) == text:
        return style, bom
  # As Jupyter (nbformat) writes notebooks.
  return dict(indent=1, ensure_ascii=False, separators=None, sort_keys=True,
              newline=True), bom


def join(notebook: Notebook, output: bytes) -> bytes:
  """The notebook with its code cells taken from the converted `output`.

  Args:
    notebook: The notebook as read.
    output: Its stand-in after conversion.

  Returns:
    The new notebook file's bytes; `notebook.raw` when no cell changed.

  Raises:
    NotebookError: `output` lost a cell marker or an IPython line, so the
      cells cannot be told apart.
  """
  texts = _restore(notebook, output)
  cells = list(notebook.data["cells"])
  changed = False
  for index, new in texts.items():
    old = cells[index]["source"]
    if new == _cell_text(old):
      continue
    changed = True
    cells[index] = dict(cells[index],
                        source=new if isinstance(old, str) else _lines_of(new))
  if not changed:
    return notebook.raw
  style, bom = _format(notebook.raw)
  data = dict(notebook.data, cells=cells)
  try:
    text = _dump(data, **style).encode("utf-8")
  except UnicodeEncodeError:
    # An unpaired surrogate (`"\ud800"` in the file) has no UTF-8 form:
    # write it escaped, as the file had it.
    text = _dump(data, **dict(style, ensure_ascii=True)).encode("utf-8")
  return (codecs.BOM_UTF8 if bom else b"") + text


def check(notebook: Notebook, output: bytes) -> Optional[str]:
  """Why `output` cannot be joined back into `notebook`, or None."""
  try:
    _restore(notebook, output)
  except NotebookError as e:
    return str(e)
  return None
