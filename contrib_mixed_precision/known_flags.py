# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Finiteness flags kept with their tensors, from the unscale to the apply.

Where the unscale of `compute_gradients` has already decided whether what
it returns is finite, it notes the flag here (`remember_finite`), by the
identity of the tensors it returns. `skip_decision.all_finite`, handed the
very same tensors, takes the flag instead of checking them again
(`split_known`); a tensor replaced in between (clipped, all-reduced) is a
new object, and is checked as before.

A graph holds its own table, so the flags live as long as it does; eager
mode has one of its own. Entries are weak on their tensors, and a TF1-style
graph has none: there `Session.run` may feed any tensor (`_known_flags`).
Today only eager steps remember flags (`unscale`): in a function graph a
check beside the unscale would change what Grappler folds, so the table a
function graph would hold stays empty.
"""

import threading
import weakref
from typing import Optional, Sequence

import tensorflow as tf

from contrib_mixed_precision import _tf_compat


# The attribute of a graph that holds its `_KnownFlags`: the flags live
# exactly as long as the graph (a global table holding graph tensors would
# keep every graph alive).
_KNOWN_FLAGS_ATTR = "_contrib_mp_known_finite_flags"


class _Group(object):
  """A flag computed for some tensors together, and optionally each one's."""

  __slots__ = ("flag", "size", "flags", "__weakref__")

  def __init__(self, flag, size, flags):
    self.flag = flag
    self.size = size
    self.flags = flags


class _KnownFlags(object):
  """Finiteness flags already computed, by the identity of their tensors.

  Weak on the tensors: an entry goes when its tensor does (a weakref
  callback), and a lookup checks that the tensor found is the one asked
  for, so an id reused by a new object never matches.
  """

  def __init__(self):
    # Re-entrant: a callback may run while this thread holds the lock.
    self._lock = threading.RLock()
    self._entries = {}  # id(tensor) -> (weakref to it, group, index)

  def remember(self, tensors, flag, flags):
    group = _Group(flag, len(tensors), flags)
    with self._lock:
      for index, tensor in enumerate(tensors):
        key = id(tensor)
        self._entries[key] = (weakref.ref(tensor, self._forget(key)), group,
                              index)

  def _forget(self, key):
    """The callback that drops `key`'s entry when its tensor goes."""
    owner = weakref.ref(self)  # The callback must not keep the table alive.

    def callback(ref):
      table = owner()
      if table is None:
        return
      with table._lock:  # pylint: disable=protected-access
        entry = table._entries.get(key)  # pylint: disable=protected-access
        if entry is not None and entry[0] is ref:
          del table._entries[key]  # pylint: disable=protected-access

    return callback

  def lookup(self, tensor):
    """`(group, index)` for `tensor`, or None."""
    with self._lock:
      entry = self._entries.get(id(tensor))
    if entry is None or entry[0]() is not tensor:
      return None
    return entry[1], entry[2]

  def __len__(self):
    with self._lock:
      return len(self._entries)


_EAGER_KNOWN_FLAGS = _KnownFlags()
_KNOWN_FLAGS_CREATION = threading.Lock()


def _known_flags(tensor) -> Optional[_KnownFlags]:
  """The table for `tensor`'s graph (eager mode's own for eager tensors).

  None for a tensor of a TF1-style graph: there `Session.run` may feed any
  tensor a value of the caller's (`{grad: accumulated}`), which the flag
  computed with it would not see, so such a tensor is always checked. So
  may `WrappedFunction.prune` in a `tf.compat.v1.wrap_function` graph.
  Inside a `tf.function` nothing can be fed.
  """
  # An eager tensor has no graph (its `graph` property raises).
  graph = getattr(tensor, "graph", None)
  if graph is None:
    return _EAGER_KNOWN_FLAGS
  if _tf_compat.can_feed_any_tensor(graph):
    return None
  table = getattr(graph, _KNOWN_FLAGS_ATTR, None)
  if table is None:
    with _KNOWN_FLAGS_CREATION:
      table = getattr(graph, _KNOWN_FLAGS_ATTR, None)
      if table is None:
        table = _KnownFlags()
        setattr(graph, _KNOWN_FLAGS_ATTR, table)
  return table


def remember_finite(tensors: Sequence[tf.Tensor], flag: tf.Tensor,
                    flags: Optional[Sequence[tf.Tensor]] = None) -> None:
  """Notes that `flag` says whether every one of `tensors` is finite.

  `skip_decision.all_finite`, handed the same tensor objects, uses `flag`
  (or, for some of them, their entries of `flags`, one per tensor) instead
  of checking them again. It must be exactly `all_finite`'s answer for
  them. Tensors of a TF1-style graph are not remembered (see
  `_known_flags`).
  """
  tensors = list(tensors)
  table = _known_flags(tensors[0]) if tensors else None
  if table is not None:
    table.remember(tensors, flag, None if flags is None else list(flags))


def is_known(tensor) -> bool:
  """Whether a flag was remembered for `tensor` (`remember_finite`)."""
  table = _known_flags(tensor)
  return table is not None and table.lookup(tensor) is not None


def split_known(grads):
  """`(flags, rest)`: known flags covering some of `grads`; the others.

  A group whose every tensor is among `grads` gives its one flag; a part of
  a group gives its tensors' own flags when the group has them, and is
  checked again (in `rest`) when it has not.
  """
  found = {}  # id(group) -> (group, {index: tensor})
  rest = []
  for grad in grads:
    table = _known_flags(grad)
    hit = None if table is None else table.lookup(grad)
    if hit is None:
      rest.append(grad)
      continue
    group, index = hit
    found.setdefault(id(group), (group, {}))[1][index] = grad
  flags = []
  for group, members in found.values():
    if len(members) == group.size:
      flags.append(group.flag)
    elif group.flags is not None:
      flags.extend(group.flags[i] for i in sorted(members))
    else:
      rest.extend(members[i] for i in sorted(members))
  return flags, rest
