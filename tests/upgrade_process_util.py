# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""What the tests that run `contrib-mp-upgrade` as a process look at.

Shared by `upgrade_interrupt_test.py` and `upgrade_hostile_run_test.py`:
the processes of the command's group, read from /proc (Linux), and the
contents of a directory, to compare before and after a run.
"""

import os


def _stat_fields(pid) -> list:
  """The fields of /proc/PID/stat after the name (the state first), or []."""
  try:
    with open("/proc/{}/stat".format(pid)) as f:
      return f.read().rsplit(")", 1)[1].split()
  except OSError:
    return []


def group_alive(pgid: int) -> list:
  """The pids of the processes of group `pgid` that have not ended."""
  alive = []
  for pid in os.listdir("/proc"):
    fields = _stat_fields(pid) if pid.isdigit() else []
    # Fields after the name: state, ppid, pgrp; a zombie is gone already.
    if fields and int(fields[2]) == pgid and fields[0] != "Z":
      alive.append(int(pid))
  return alive


def workers(pgid: int) -> list:
  """The pids of the command's worker processes (`multiprocessing`'s)."""
  found = []
  for pid in group_alive(pgid):
    try:
      with open("/proc/{}/cmdline".format(pid), "rb") as f:
        if b"spawn_main" in f.read():
          found.append(pid)
    except OSError:
      pass
  return found


def cpu_seconds(pid: int) -> float:
  """User plus system CPU time of process `pid`; -1 once it is gone."""
  fields = _stat_fields(pid)
  if not fields:
    return -1
  # The fields after the name start at the state (field 3): utime and stime
  # are fields 14 and 15, in clock ticks.
  return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def contents(root: str) -> list:
  """Each path under `root`, sorted, with its bytes if it is a file.

  A directory has None; anything else that is not a regular file (a FIFO)
  has "special".
  """
  found = []
  for directory, dirs, files in os.walk(root):
    found += [(os.path.relpath(os.path.join(directory, d), root), None)
              for d in dirs]
    for name in files:
      path = os.path.join(directory, name)
      if not os.path.isfile(path):
        found.append((os.path.relpath(path, root), "special"))
        continue
      with open(path, "rb") as f:
        found.append((os.path.relpath(path, root), f.read()))
  return sorted(found)
