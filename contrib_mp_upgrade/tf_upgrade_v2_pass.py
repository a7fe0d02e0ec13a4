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
"""Runs TensorFlow's own `tf_upgrade_v2` over a plan (`--tf_upgrade_v2`).

A real migration needs both converters: this one for
`tf.contrib.mixed_precision`, and TensorFlow's for the rest of the TF1 API
(`tf.trainable_variables` and the like). Their edits commute. This module
runs TensorFlow's converter through its console script, in a child process,
so this package still never imports TensorFlow itself.

`tf_upgrade_v2` reads and writes text in the platform encoding, turns CRLF
into LF, and leaves an empty file behind when it cannot parse one. So it
only ever sees a temporary copy of the files that decode as UTF-8; its
result is taken only where it changed the code, with the file's own line
endings restored, and never where it left a file empty.
"""

import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Tuple

from contrib_mp_upgrade import rewrite
from contrib_mp_upgrade import tree

COMMAND = "tf_upgrade_v2"

_ISSUE = re.compile(
    r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<kind>ERROR|WARNING): "
    r"(?P<message>.*)$")


@dataclasses.dataclass
class Summary:
  """What `tf_upgrade_v2` did, for the report.

  Attributes:
    command: The `tf_upgrade_v2` that ran.
    processed: How many files it was given.
    changed: Names of the files whose code it changed.
    issues: `(name, line, kind, message)`: its ERROR and WARNING lines. The
      line numbers are of the converted file.
    not_given: `(name, why)` for Python files it was not given.
    unparsed: Names of the files it could not parse (their conversion by
      this command is kept).
    layers_renamed: `{name: [output lines]}` where `tf.layers` was renamed
      `tf.compat.v1.layers` after it (as tf_upgrade_v2 up to TF 2.15 did).
  """
  command: str
  processed: int = 0
  changed: List[str] = dataclasses.field(default_factory=list)
  issues: List[Tuple[str, int, str, str]] = dataclasses.field(
      default_factory=list)
  not_given: List[Tuple[str, str]] = dataclasses.field(default_factory=list)
  unparsed: List[str] = dataclasses.field(default_factory=list)
  layers_renamed: Dict[str, List[int]] = dataclasses.field(
      default_factory=dict)


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


def run(plan: tree.Plan, command: str, timeout: float = 3600) -> Summary:
  """Runs `command` over the plan's Python files; updates their output.

  Args:
    plan: The plan; each Python entry's `output` is what `tf_upgrade_v2`
      converts, and is replaced by its result where it changed the code.
    command: The `tf_upgrade_v2` executable.
    timeout: Seconds to wait for it.

  Returns:
    A `Summary`.

  Raises:
    tree.UpgradeError: It could not be run, or failed.
  """
  summary = Summary(command=command)
  stage = tempfile.mkdtemp(prefix="contrib-mp-upgrade-tf_upgrade_v2-")
  try:
    given: Dict[str, tree.Entry] = {}
    for entry in plan.python():
      if entry.result.error is not None:
        summary.not_given.append((entry.name, entry.result.error))
        continue
      try:
        entry.output.decode("utf-8")
      except UnicodeDecodeError:
        summary.not_given.append(
            (entry.name, "not UTF-8, which tf_upgrade_v2 requires"))
        continue
      path = os.path.join(stage, "tree", *entry.name.split("/"))
      os.makedirs(os.path.dirname(path), exist_ok=True)
      with open(path, "wb") as f:
        f.write(entry.output)
      given[path] = entry
    summary.processed = len(given)
    if not given:
      return summary
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
      raise tree.UpgradeError(
          "`--tf_upgrade_v2`: {!r} could not be run ({}). Nothing was "
          "written.".format(command, e))
    if proc.returncode != 0 or not os.path.exists(report):
      tail = proc.stdout.decode("utf-8", "replace").strip()[-2000:]
      raise tree.UpgradeError(
          "`--tf_upgrade_v2`: {!r} failed with exit status {}. Nothing was "
          "written. Its output ended with:\n{}".format(
              command, proc.returncode, tail))
    for path, entry in sorted(given.items(), key=lambda x: x[1].name):
      with open(path, "rb") as f:
        new = f.read()
      old = entry.output
      if not new.strip() and old.strip():
        summary.unparsed.append(entry.name)
        continue
      new = new.replace(b"\r\n", b"\n")
      new, renamed = rewrite.rename_bare_layers(new)
      if renamed:
        summary.layers_renamed[entry.name] = renamed
      if new == old.replace(b"\r\n", b"\n"):
        continue
      if _is_crlf(old):
        new = new.replace(b"\n", b"\r\n")
      entry.output = new
      entry.tf_upgrade_v2_changed = True
      summary.changed.append(entry.name)
    by_path = {os.path.realpath(p): e.name for p, e in given.items()}
    with open(report, encoding="utf-8", errors="replace") as f:
      for line in f:
        if line.startswith("Detailed log follows"):
          break
        match = _ISSUE.match(line.rstrip("\n"))
        if match is None:
          continue
        name = by_path.get(os.path.realpath(match.group("path")))
        if name is None:
          continue
        summary.issues.append((name, int(match.group("line")),
                               match.group("kind"),
                               match.group("message").strip()))
    return summary
  finally:
    shutil.rmtree(stage, ignore_errors=True)
