# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Which TensorFlow a tree was written for, read from the files that pin it.

TF 2.0 to 2.2's experimental Keras `LossScaleOptimizer` did not advance
`iterations` on a skipped (non-finite) step; TF 2.3 and later did
(docs/design.md, contract 16). The code alone cannot say which of the two a
program was run with, but its tree usually pins TensorFlow:

* `requirements*.txt` (and `*requirements*.txt`, `requirements/*.txt`);
* `setup.py` (`install_requires`) and `setup.cfg`;
* `pyproject.toml`;
* `Dockerfile*` (`FROM tensorflow/tensorflow:2.4.1-gpu`, `pip install
  tensorflow==2.4`);
* conda's `environment.yml` / `environment.yaml`.

`find` reads them (as text: nothing is imported or run) and `Pin.advance`
gives the rule: True when every TensorFlow the pins allow is 2.3 or later,
False when every one is 2.2 or earlier, None when nothing is pinned or the
pins disagree (the caller keeps TF 2.0's rule and says so).

This module needs only the standard library.
"""

import dataclasses
import os
import re
from typing import List, Optional, Tuple

# The distributions that are TensorFlow itself.
_DIST = (r"(?:tensorflow(?:[-_](?:gpu|cpu|macos|intel|aarch64))?|"
         r"intel[-_]tensorflow|tf[-_]nightly(?:[-_](?:gpu|cpu))?)")
# `tensorflow-gpu==2.4.1`, `tensorflow >=2.3,<2.5`, `tensorflow[and-cuda]~=2.4`
# (a version may be quoted in TOML or YAML: the caller strips nothing).
_REQUIREMENT = re.compile(
    r"(?<![\w.-])" + _DIST + r"(?:\[[^\]]*\])?\s*"
    r"(?P<spec>(?:(?:===|==|~=|>=|<=|!=|>|<|=)\s*[0-9][0-9a-zA-Z.*+-]*"
    r"\s*,?\s*)+)", re.I)
_CLAUSE = re.compile(r"(===|==|~=|>=|<=|!=|>|<|=)\s*([0-9][0-9a-zA-Z.*+-]*)")
# TensorFlow's own images: `FROM tensorflow/tensorflow:2.4.1-gpu`.
_DOCKER_IMAGE = re.compile(
    r"^\s*FROM\s+(?:--\S+\s+)*(?:docker\.io/)?tensorflow/tensorflow:"
    r"(?P<version>\d+\.\d+)", re.I | re.M)
# Poetry's `tensorflow = "^2.4"` (or `"~2.4"`, `"2.4.1"`) in pyproject.toml.
_POETRY = re.compile(
    r"^\s*" + _DIST + r"\s*=\s*(?:\{\s*version\s*=\s*)?[\"']"
    r"(?P<op>\^|~|==|>=)?\s*(?P<version>\d+(?:\.\d+)*)(?P<star>\.\*)?[\"']",
    re.I | re.M)
# A requirement named without a version: no pin, but worth saying.
_UNPINNED = re.compile(r"(?<![\w.-])" + _DIST + r"(?![\w.-]|\s*[=<>~!])",
                       re.I)

# Names of the files read, as `fnmatch`-free tests on a base name.
_SKIP_DIRS = frozenset((".git", ".hg", ".svn", "node_modules", "__pycache__",
                        ".venv", "venv", "site-packages", ".tox", ".nox"))
# How deep under the root files are read: pins live at the top of a tree.
_MAX_DEPTH = 3
LOOKED_IN = ("requirements*.txt, setup.py, setup.cfg, pyproject.toml, "
             "Dockerfile*, environment.yml")


def _is_pin_file(name: str, parent: str) -> bool:
  lower = name.lower()
  if lower.endswith(".txt") and ("requirements" in lower or
                                 os.path.basename(parent).lower() ==
                                 "requirements"):
    return True
  return lower in ("setup.py", "setup.cfg", "pyproject.toml",
                   "environment.yml", "environment.yaml") or (
                       lower.startswith("dockerfile") or
                       lower.endswith(".dockerfile"))


@dataclasses.dataclass(frozen=True)
class Found:
  """One pin of TensorFlow in one file.

  Attributes:
    path: The file, relative to the root read, with `/` separators.
    line: Its line (from 1).
    text: The pin as written (`tensorflow-gpu==2.4.1`).
    low: The oldest TensorFlow `(major, minor)` it allows, or None for no
      lower bound.
    high: The newest `(major, minor)` it allows, or None for no upper bound.
  """
  path: str
  line: int
  text: str
  low: Optional[Tuple[int, int]]
  high: Optional[Tuple[int, int]]

  @property
  def advance(self) -> Optional[bool]:
    """Whether skipped steps advanced `iterations` on every TF it allows."""
    if self.low is not None and self.low >= (2, 3):
      return True
    if self.high is not None and self.high <= (2, 2):
      return False
    return None

  def where(self) -> str:
    return "{}:{} `{}`".format(self.path, self.line, self.text)


@dataclasses.dataclass
class Pin:
  """What the tree says about its TensorFlow.

  Attributes:
    found: Every pin read, in file order.
    unpinned: `path:line` of TensorFlow requirements without a version.
  """
  found: List[Found] = dataclasses.field(default_factory=list)
  unpinned: List[str] = dataclasses.field(default_factory=list)

  @property
  def advance(self) -> Optional[bool]:
    """The `iterations` rule all pins agree on, or None (none, or mixed)."""
    rules = {f.advance for f in self.found}
    return rules.pop() if len(rules) == 1 else None

  def describe(self) -> str:
    """One sentence for the report: what was read and the rule chosen."""
    if self.advance is True:
      return ("TensorFlow pinned by the tree: {} (TF 2.3 or later), so "
              "skipped steps advance `iterations` in the converted "
              "Keras optimizers, as TF 2.3 to 2.8 did "
              "(`skipped_steps_advance_iterations=True`).").format(
                  self._list())
    if self.advance is False:
      return ("TensorFlow pinned by the tree: {} (TF 2.2 or earlier), so "
              "skipped steps do not advance `iterations` in the converted "
              "Keras optimizers, as TF 2.0 to 2.2 did.").format(self._list())
    if self.found:
      why = "pins that allow both TF 2.0-2.2 and 2.3+ ({})".format(
          self._list())
    elif self.unpinned:
      why = "TensorFlow required without a version ({})".format(
          ", ".join(self.unpinned[:3]))
    else:
      why = "no TensorFlow pin found (looked in {})".format(LOOKED_IN)
    return (
        "Which TensorFlow the tree was written for: {}. The converted TF "
        "2.0-2.8 experimental Keras optimizers keep TF 2.0-2.2's rule, "
        "where skipped steps do not advance `iterations` (TF 2.4-2.15's "
        "Keras 2 `LossScaleOptimizer` calls advance `iterations` on them, "
        "as every TF that had that class did); if it ran on TF 2.3 to 2.8, "
        "pass "
        "`skipped_steps_advance_iterations=True` to each "
        "`KerasLossScaleOptimizer` the report lists, or pin TensorFlow "
        "(`tensorflow==2.4.*` in requirements.txt) and run this command "
        "again.").format(why)

  def _list(self) -> str:
    shown = ", ".join(f.where() for f in self.found[:3])
    if len(self.found) > 3:
      shown += ", and {} more".format(len(self.found) - 3)
    return shown


def _version(text: str) -> Optional[Tuple[int, ...]]:
  parts = []
  for part in text.split("."):
    match = re.match(r"\d+", part)
    if match is None:
      break
    parts.append(int(match.group()))
    if match.group() != part:
      break
  return tuple(parts) if parts else None


def _bounds(spec: str) -> Tuple[Optional[Tuple[int, int]],
                                 Optional[Tuple[int, int]], bool]:
  """`(low, high, understood)` `(major, minor)` bounds of a specifier."""
  low: Optional[Tuple[int, int]] = None
  high: Optional[Tuple[int, int]] = None
  understood = False

  def raise_low(v):
    nonlocal low
    low = v if low is None else max(low, v)

  def lower_high(v):
    nonlocal high
    high = v if high is None else min(high, v)

  for op, text in _CLAUSE.findall(spec):
    version = _version(text)
    if version is None:
      continue
    major, minor = version[0], version[1] if len(version) > 1 else 0
    understood = True
    if op in ("==", "===", "="):
      raise_low((major, minor))
      lower_high((major, minor))
    elif op == "~=":
      raise_low((major, minor))
      if len(version) >= 3:
        lower_high((major, minor))
    elif op in (">=", ">"):
      # `>2.2` still allows 2.2.1; only `>2.2.*`-style ends say more.
      raise_low((major, minor))
    elif op == "<=":
      lower_high((major, minor))
    elif op == "<":
      if len(version) == 1 or all(v == 0 for v in version[2:]) and (
          len(version) >= 2):
        # `<2.3` and `<2.3.0` stop at 2.2; `<3` at the last 2.x.
        lower_high((major, minor - 1) if minor else (major - 1, 99))
      else:
        lower_high((major, minor))
  return low, high, understood


def _line_of(text: str, offset: int) -> int:
  return text.count("\n", 0, offset) + 1


def _read_file(path: str, name: str, pin: Pin) -> None:
  try:
    with open(path, "rb") as f:
      data = f.read(1 << 20)
  except OSError:
    return
  text = data.decode("utf-8", "replace")
  base = os.path.basename(name).lower()
  docker = base.startswith("dockerfile") or base.endswith(".dockerfile")
  for match in _REQUIREMENT.finditer(text):
    line_start = text.rfind("\n", 0, match.start()) + 1
    if text[line_start:match.start()].lstrip().startswith("#"):
      continue  # A comment.
    low, high, understood = _bounds(match.group("spec"))
    if understood:
      pin.found.append(Found(name, _line_of(text, match.start()),
                             " ".join(match.group().split()).rstrip(", "),
                             low, high))
  if base == "pyproject.toml":
    for match in _POETRY.finditer(text):
      version = _version(match.group("version"))
      minor = version[:2] if len(version) >= 2 else (version[0], 0)
      op = match.group("op")
      # `^2.4` and `>=2.4`: 2.4 or later; `~2.4`, `2.4.1`, `2.4.*`: 2.4.
      high = None if op in ("^", ">=") else minor
      pin.found.append(Found(name, _line_of(text, match.start()),
                             " ".join(match.group().split()), minor, high))
  if docker:
    for match in _DOCKER_IMAGE.finditer(text):
      version = _version(match.group("version"))
      pin.found.append(Found(
          name, _line_of(text, match.start("version")),
          "tensorflow/tensorflow:" + match.group("version"),
          version[:2], version[:2]))
  if not pin.found or all(f.path != name for f in pin.found):
    for match in _UNPINNED.finditer(text):
      line_start = text.rfind("\n", 0, match.start()) + 1
      line_text = text[line_start:text.find("\n", match.start())]
      if line_text.lstrip().startswith("#") or "import" in line_text:
        continue
      if base.endswith(".txt") or base in ("setup.py", "setup.cfg",
                                           "pyproject.toml",
                                           "environment.yml",
                                           "environment.yaml"):
        pin.unpinned.append("{}:{}".format(name, _line_of(text,
                                                          match.start())))
        break


def find(root: Optional[str], single_file: Optional[str] = None) -> Pin:
  """Reads the TensorFlow pins of a tree.

  Args:
    root: The tree's root directory (None with `single_file`).
    single_file: For `--infile`: the file converted. Its own directory is
      read, and each directory above it up to the one holding `.git`.

  Returns:
    A `Pin`; empty when nothing pins TensorFlow.
  """
  pin = Pin()
  if single_file is not None:
    directory = os.path.dirname(os.path.abspath(single_file))
    for _ in range(6):
      try:
        names = sorted(os.listdir(directory))
      except OSError:
        break
      for name in names:
        path = os.path.join(directory, name)
        if _is_pin_file(name, directory) and os.path.isfile(path):
          _read_file(path, os.path.relpath(path, os.path.dirname(
              os.path.abspath(single_file))).replace(os.sep, "/"), pin)
      if ".git" in names or os.path.dirname(directory) == directory:
        break
      directory = os.path.dirname(directory)
    return pin
  root = os.path.abspath(root)
  for directory, dirs, files in os.walk(root):
    relative = os.path.relpath(directory, root)
    depth = 0 if relative == "." else relative.count(os.sep) + 1
    dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and
                     not d.startswith(".") and depth < _MAX_DEPTH)
    for name in sorted(files):
      if _is_pin_file(name, directory):
        path = os.path.join(directory, name)
        if os.path.islink(path) or not os.path.isfile(path):
          continue
        _read_file(path, os.path.relpath(path, root).replace(os.sep, "/"),
                   pin)
  return pin
